"""Observation encoders of the papers, by name: float32, channels first ``(C, H, W)``, mover's view.

========================  ====================  ============================================================
name                      shape                 source
========================  ====================  ============================================================
``baseline4``             (4, 2R+1, 2C+1)       Dotsformer 4.1 "Baseline" (the four shared channels)
``chainloop6``            (6, 2R+1, 2C+1)       Dotsformer 4.1 ChainLoop6
``chainloop64``           (64, 2R+1, 2C+1)      Dotsformer 4.1 ChainLoop64
``edgequad4``             (4, R, C)             Dotsformer Appendix A EdgeQuad4
``edgequad9``             (9, R, C)             Dotsformer Appendix A EdgeQuad9
``edgequad44``            (44, R, C)            Dotsformer Appendix A EdgeQuad44
``alphazero4``            (4, 2R+1, 2C+1)       AlphaZero Dots-and-Boxes report, Fig. 4 (L, P, O, B)
``chainloop6_safe``       (9, 2R+1, 2C+1)       ChainLoop6 + each move's safe-phase value (dnb_env.features)
``chainloop6_safevalue``  (8, 2R+1, 2C+1)       ChainLoop6 + the position's safe-phase value only
``chainloop6_sac2``       (12, 2R+1, 2C+1)      ``chainloop6_safe`` + each move's value with two sacrifices allowed
``chainloop6_sac2_deep``  (12, 2R+1, 2C+1)      ``chainloop6_sac2`` with ten times the search budget
``chainloop6_sac4``       (12, 2R+1, 2C+1)      ``chainloop6_sac2``'s channels with four sacrifices allowed
``chainloop6_lcr``        (7, 2R+1, 2C+1)       ChainLoop6 + the long chain rule of each safe move
``chainloop6_nim``        (12, 2R+1, 2C+1)      ``chainloop6_safe`` + each move's result in Nimstring
``chainloop6_nim38``      (12, 2R+1, 2C+1)      ``chainloop6_nim`` with Nimstring only at <= 38 undrawn edges
========================  ====================  ============================================================

Use :func:`encode` for one state, :func:`encode_batch` for many (faster per state), :func:`encoder_shape`
for the shape and :func:`list_encoders` for the names; :func:`transform_planes` maps planes by a board
symmetry (:mod:`dnb_env.symmetry`). Each encoder's docstring has its channel table; the documentation's
Observations page (``docs/observations.md``) has every table and a picture of each encoder's planes.
With the native backend (:mod:`dnb_env.native`, boards up to 9x9) ``baseline4``, ``chainloop6``,
``chainloop64`` and ``alphazero4`` are computed in C++, bit-identical to the Python code here.
"""

from __future__ import annotations

import functools
from typing import Callable, Sequence

import numpy as np

from dnb_env import native
from dnb_env.analysis import chain_loop_structures, structure_masks
from dnb_env.core import GameState, Geometry, geometry
from dnb_env.symmetry import Symmetry

__all__ = ["encode", "encode_batch", "encoder_shape", "list_encoders", "encoder_layout", "transform_planes", "ENCODERS",
           "EXTENDS", "extends"]

SIDES = ("r", "u", "l", "d")  # EdgeQuad side order: right, up, left, down


@functools.lru_cache(maxsize=None)
def _grid_consts(rows: int, cols: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(dots-and-centres plane, edge plane, neither plane) of one board, read-only."""
    g = geometry(rows, cols)
    y, x = np.mgrid[0: g.height, 0: g.width]
    dots_centres = ((y % 2) == (x % 2)).astype(np.float32)
    edge_cells = 1.0 - dots_centres
    neither = ((y % 2 == 0) & (x % 2 == 0)).astype(np.float32)
    for arr in (dots_centres, edge_cells, neither):
        arr.setflags(write=False)
    return dots_centres, edge_cells, neither


@functools.lru_cache(maxsize=None)
def _quad_index(rows: int, cols: int) -> np.ndarray:
    """``[4, R*C]`` action of the r, u, l, d side of each box."""
    g = geometry(rows, cols)
    sides = np.array(g.box_sides, dtype=np.intp)  # (B, 4): top, bottom, left, right
    return np.stack([sides[:, 3], sides[:, 0], sides[:, 2], sides[:, 1]])


_BYTE_BITS = np.unpackbits(np.arange(256, dtype=np.uint8)[:, None], axis=1, bitorder="little").astype(np.float32)


def _bits_rows(masks: Sequence[int], n: int) -> np.ndarray:
    """``[len(masks), n]`` float32 0/1 rows of the low ``n`` bits of each integer bitmask."""
    nbytes = (n + 7) // 8
    buf = b"".join([m.to_bytes(nbytes, "little") for m in masks])
    return _BYTE_BITS[np.frombuffer(buf, dtype=np.uint8)].reshape(len(masks), nbytes * 8)[:, :n]


def _drawn_bits(g: Geometry, states: Sequence[GameState]) -> np.ndarray:
    """``[N, num_actions]`` float32 0/1 of drawn edges."""
    return _bits_rows([s.edges for s in states], g.num_actions)


@functools.lru_cache(maxsize=None)
def _template(rows: int, cols: int, channels: int) -> np.ndarray:
    """``[channels, H, W]`` zeros with the constant channels 0 and 1 of the ChainLoop family filled."""
    dots_centres, edge_cells, _ = _grid_consts(rows, cols)
    g = geometry(rows, cols)
    t = np.zeros((channels, g.height, g.width), dtype=np.float32)
    t[0] = dots_centres
    t[1] = edge_cells
    t.setflags(write=False)
    return t


def _score_diff(states: Sequence[GameState], g: Geometry) -> np.ndarray:
    """``[N, 1]`` (mover's boxes - opponent's boxes) / (R*C)."""
    d = [(s.owner0.bit_count() - s.owner1.bit_count()) * (1 - 2 * s.current_player) / g.num_boxes for s in states]
    return np.array(d, dtype=np.float32)[:, None]


def _blank(g: Geometry, channels: int, n: int) -> np.ndarray:
    """``[n, channels, H, W]`` copies of the ChainLoop template (channels 0 and 1 set, the rest zero)."""
    t = _template(g.rows, g.cols, channels)
    return t.copy()[None] if n == 1 else np.repeat(t[None], n, axis=0)


def _base4(states: Sequence[GameState], g: Geometry, channels: int) -> np.ndarray:
    """``[N, channels, H, W]`` with the four shared channels filled and the rest zero."""
    N = len(states)
    out = _blank(g, channels, N)
    flat = out.reshape(N, channels, -1)
    flat[:, 2, g.action_flat] = _drawn_bits(g, states)
    flat[:, 3] = _score_diff(states, g)
    return out


def _baseline4(states, g):
    """``baseline4``: the four channels every ChainLoop encoding starts with, on the (2R+1, 2C+1) grid.

    ===  ====================================================================
    ch   value
    ===  ====================================================================
    0    1 on dots and box centres
    1    1 on every edge cell (drawn or not)
    2    1 on drawn edges
    3    (mover's boxes - opponent's boxes) / (R*C), the same on every cell
    ===  ====================================================================
    """
    return _base4(states, g, 4)


def _chainloop6(states, g):
    """``chainloop6``: ``baseline4`` plus two chain-loop channels.

    ===  ==========================================================================================
    ch   value
    ===  ==========================================================================================
    0-3  as ``baseline4``
    4    1 on edges of count-1 structures next to a box with three drawn sides (boxes to take now)
    5    the structure's count on edges of structures with count > 2 (chains and loops that matter)
    ===  ==========================================================================================

    Structures are Dotsformer's Chain-Loop Detection (:func:`dnb_env.analysis.chain_loop_structures`).
    """
    N, A = len(states), g.num_actions
    full = g.full
    nplanes = A.bit_length()  # channel 5 is written as binary digit planes of the counts
    rows: list[int] = []
    for s in states:
        edges = s.edges
        groups, three = structure_masks(g, edges)
        paired = 0
        planes = [0] * nplanes
        for gm in groups:
            paired |= gm
            n = gm.bit_count()
            if n > 2:
                k = 0
                while n:
                    if n & 1:
                        planes[k] |= gm
                    n >>= 1
                    k += 1
        rows.append(edges)
        rows.append(full & ~edges & ~paired & three)
        rows.extend(planes)
    # one bit expansion per batch: [drawn edges, channel 4, count digit planes...] per state
    bits = _bits_rows(rows, A).reshape(N, 2 + nplanes, A)
    out = _blank(g, 6, N)
    flat = out.reshape(N, 6, -1)
    af = g.action_flat
    flat[:, 2, af] = bits[:, 0]
    flat[:, 3] = _score_diff(states, g)
    flat[:, 4, af] = bits[:, 1]
    flat[:, 5, af] = _pow2(nplanes) @ bits[:, 2:]
    return out


@functools.lru_cache(maxsize=None)
def _pow2(n: int) -> np.ndarray:
    return (2.0 ** np.arange(n)).astype(np.float32)


def _chainloop64(states, g):
    """``chainloop64``: ``baseline4`` plus one channel per chain-loop structure.

    ======  ==================================================================================
    ch      value
    ======  ==================================================================================
    0-3     as ``baseline4``
    4-63    1 on the edges of one structure each, largest count first (ties: lowest edge first);
            structures beyond the 60th (boards larger than 5x5 early on) are dropped
    ======  ==================================================================================
    """
    N, A = len(states), g.num_actions
    rows: list[int] = []
    for s in states:
        edges = s.edges
        groups, _ = structure_masks(g, edges)
        paired = 0
        for gm in groups:
            paired |= gm
        groups.sort(key=lambda gm: (-gm.bit_count(), (gm & -gm).bit_length()))
        free = g.full & ~edges & ~paired
        while free and len(groups) < 60:  # count-1 structures, lowest edge first
            low = free & -free
            groups.append(low)
            free ^= low
        rows.append(edges)
        rows.extend(groups[:60])
        rows.extend([0] * (60 - min(len(groups), 60)))
    bits = _bits_rows(rows, A).reshape(N, 61, A)
    out = _blank(g, 64, N)
    flat = out.reshape(N, 64, -1)
    af = g.action_flat
    flat[:, 2, af] = bits[:, 0]
    flat[:, 3] = _score_diff(states, g)
    flat[:, 4:, af] = bits[:, 1:]
    return out


def _quad_drawn(states, g) -> np.ndarray:
    """``[N, 4, R, C]`` drawn bits of the r, u, l, d sides of each box."""
    bits = _drawn_bits(g, states)  # (N, A)
    idx = _quad_index(g.rows, g.cols)  # (4, B)
    return bits[:, idx].reshape(len(states), 4, g.rows, g.cols)


def _edgequad4(states, g):
    """``edgequad4`` on the (R, C) box grid.

    ===  ==============================
    ch   value
    ===  ==============================
    0    right side of the box drawn
    1    upper side drawn
    2    left side drawn
    3    lower side drawn
    ===  ==============================
    """
    return _quad_drawn(states, g)


def _onehot5(count: np.ndarray) -> np.ndarray:
    """``[N, R, C]`` integer counts 0..4 -> ``[N, 5, R, C]`` one-hot float32."""
    return (count[:, None] == np.arange(5, dtype=count.dtype)[None, :, None, None]).astype(np.float32)


def _edgequad9(states, g):
    """``edgequad9`` on the (R, C) box grid.

    ===  ========================================
    ch   value
    ===  ========================================
    0-3  as ``edgequad4`` (r, u, l, d drawn)
    4-8  one-hot of the box's drawn sides, 0..4
    ===  ========================================
    """
    q = _quad_drawn(states, g)
    return np.concatenate([q, _onehot5(q.sum(axis=1))], axis=1)


def _edgequad44(states, g):
    """``edgequad44`` on the (R, C) box grid: 11 channels per side, sides in r, u, l, d order.

    ========  =========================================================================
    ch        value (side k = 0 r, 1 u, 2 l, 3 d; base = 11 k)
    ========  =========================================================================
    base      side drawn
    base+1-5  one-hot(0..4) of drawn sides of the box left of (r, l) / above (u, d) it
    base+6-10 one-hot(0..4) of drawn sides of the box right of / below it
    ========  =========================================================================

    A box outside the board counts as having all four sides drawn.
    """
    N, R, C = len(states), g.rows, g.cols
    q = _quad_drawn(states, g)
    count = q.sum(axis=1)  # (N, R, C)
    padded = np.full((N, R + 2, C + 2), 4.0, dtype=np.float32)
    padded[:, 1:-1, 1:-1] = count
    own = padded[:, 1:-1, 1:-1]
    right = padded[:, 1:-1, 2:]
    up = padded[:, :-2, 1:-1]
    left = padded[:, 1:-1, :-2]
    down = padded[:, 2:, 1:-1]
    pairs = ((own, right), (up, own), (left, own), (own, down))  # (left/up box, right/down box) per side
    parts = []
    for k, (first, second) in enumerate(pairs):
        parts.append(q[:, k: k + 1])
        parts.append(_onehot5(first.astype(np.int8)))
        parts.append(_onehot5(second.astype(np.int8)))
    return np.concatenate(parts, axis=1)


def _alphazero4(states, g):
    """``alphazero4``: the four binary planes of the AlphaZero Dots-and-Boxes report on the (2R+1, 2C+1) grid.

    ===  ==============================================================
    ch   value
    ===  ==============================================================
    0    L: 1 on drawn lines
    1    P: 1 on the centres of boxes claimed by the player to move
    2    O: 1 on the centres of boxes claimed by the opponent
    3    B: 1 on cells that are neither a line nor a box (the dots)
    ===  ==============================================================
    """
    N = len(states)
    _, _, neither = _grid_consts(g.rows, g.cols)
    out = np.zeros((N, 4, g.height, g.width), dtype=np.float32)
    out[:, 0].reshape(N, -1)[:, g.action_flat] = _drawn_bits(g, states)
    mine = [s.owner0 if s.current_player == 0 else s.owner1 for s in states]
    theirs = [s.owner1 if s.current_player == 0 else s.owner0 for s in states]
    nb = g.num_boxes
    out[:, 1].reshape(N, -1)[:, g.box_flat] = _bits_rows(mine, nb)
    out[:, 2].reshape(N, -1)[:, g.box_flat] = _bits_rows(theirs, nb)
    out[:, 3] = neither
    return out


def _feature_planes(states, g, channels: int) -> tuple[np.ndarray, np.ndarray]:
    """``chainloop6`` with ``channels - 6`` feature planes after it (zeros): ``(out, flat view)``."""
    base = _chainloop6(states, g)
    out = np.zeros((len(states), channels, g.height, g.width), dtype=np.float32)
    out[:, :6] = base
    return out, out.reshape(len(states), channels, -1)


def _chainloop6_safe(states, g):
    """``chainloop6_safe``: ``chainloop6`` plus the safe-phase search of every move
    (:func:`dnb_env.features.safe_phase_values`).

    ===  ==========================================================================================
    ch   value
    ===  ==========================================================================================
    0-5  as ``chainloop6``
    6    on each safe or capturing move's edge: the mover's margin if both sides then draw only safe
         moves until none is left and play exactly after that, over R*C
    7    1 on the edges of the moves with the best value of channel 6
    8    1 everywhere when channels 6-7 are filled (the position has safe moves and the search fits its
         budget), else 0
    ===  ==========================================================================================
    """
    out, flat = _feature_planes(states, g, 9)
    _search_planes(states, g, out, flat, 6, sacrifices=0)
    return out


def _search_planes(states, g, out, flat, first: int, sacrifices: int, nodes: int | None = None) -> None:
    """Channels ``first`` to ``first + 2`` of the safe-phase encoders: each move's value of
    :func:`dnb_env.features.safe_phase_values` over R*C, its best moves, and the flag "values present"
    (``nodes``: the search's budget; None: the feature's own)."""
    from dnb_env.features import SAFE_PHASE_NODES, safe_phase_values

    nodes = SAFE_PHASE_NODES if nodes is None else nodes
    for i, s in enumerate(states):
        values = safe_phase_values(s, nodes, sacrifices=sacrifices)
        if values is not None:
            _put_values(g, out, flat, i, first, values)


def _put_values(g, out, flat, i: int, first: int, values: np.ndarray) -> None:
    """Row ``i``'s channels ``first`` to ``first + 2``: ``values`` (per move, NaN where none) over R*C,
    the moves with the best of them, and the flag "values present"."""
    af = g.action_flat
    known = ~np.isnan(values)
    flat[i, first, af[known]] = values[known] / g.num_boxes
    flat[i, first + 1, af[known & (values == np.nanmax(values))]] = 1.0
    out[i, first + 2] = 1.0


def _chainloop6_sac2(states, g):
    """``chainloop6_sac2``: ``chainloop6_safe`` plus the same search with two sacrifices allowed
    (:func:`dnb_env.features.safe_phase_values` with ``sacrifices=2``: while safe moves are left the
    players may also make two sacrifices between them, each handing over at most two boxes).

    ===  ==========================================================================================
    ch   value
    ===  ==========================================================================================
    0-8  as ``chainloop6_safe``
    9    on each safe, capturing or short sacrificing move's edge: the mover's margin under that
         search, over R*C
    10   1 on the edges of the moves with the best value of channel 9
    11   1 everywhere when channels 9-10 are filled, else 0
    ===  ==========================================================================================
    """
    return _sac2_planes(states, g, None)


def _sac2_planes(states, g, nodes: int | None, sacrifices: int = 2):
    """The twelve channels of ``chainloop6_sac2``, channels 9-11 from the search with ``sacrifices``
    sacrifices within ``nodes`` positions."""
    out, flat = _feature_planes(states, g, 12)
    _search_planes(states, g, out, flat, 6, sacrifices=0)
    _search_planes(states, g, out, flat, 9, sacrifices=sacrifices, nodes=nodes)
    return out


def _chainloop6_sac2_deep(states, g):
    """``chainloop6_sac2_deep``: ``chainloop6_sac2`` with the two-sacrifice search (channels 9-11) allowed
    :data:`dnb_env.features.SACRIFICE_DEEP_NODES` positions instead of
    :data:`dnb_env.features.SAFE_PHASE_NODES`, so that it reaches 35-40 undrawn edges (some 5 ms a position
    there, median); the channels are those of ``chainloop6_sac2``."""
    from dnb_env.features import SACRIFICE_DEEP_NODES

    return _sac2_planes(states, g, SACRIFICE_DEEP_NODES)


def _chainloop6_sac4(states, g):
    """``chainloop6_sac4``: the channels of ``chainloop6_sac2``, but channels 9-11 come from the search with
    four sacrifices allowed between the players (each still handing over at most two boxes), within
    :data:`dnb_env.features.SACRIFICE_WIDE_NODES` positions, and where no safe move is left they hold
    each move's exact value (:func:`dnb_env.features.endgame_values`: the safe phase is over, the rest is
    played exactly, as at the searches' own ends). With four sacrifices the search's best moves keep the
    win far more often than with two (on 5x5 midgame positions at 34 undrawn edges 0.93 of the time against
    0.81), at a cost above the exact solver's on the same positions: a median of 8 ms a position at 34
    undrawn edges and 140 ms at 36, where the solver finds every winning move in 1 and 17 ms, and up to
    seconds at 38-40 (``benchmarks/sacrifice_rules.py``). Networks trained on ``chainloop6_sac2`` read
    these values in the same channels."""
    from dnb_env.features import SACRIFICE_WIDE_NODES, endgame_values

    out = _sac2_planes(states, g, SACRIFICE_WIDE_NODES, sacrifices=4)
    flat = out.reshape(out.shape[0], out.shape[1], -1)
    for i, s in enumerate(states):
        values = None if out[i, 11, 0, 0] else endgame_values(s)
        if values is not None:
            _put_values(g, out, flat, i, 9, values)
    return out


def _chainloop6_safevalue(states, g):
    """``chainloop6_safevalue``: ``chainloop6`` plus only the position's safe-phase value (the best of
    :func:`dnb_env.features.safe_phase_values`), not the value of each move (an ablation of
    ``chainloop6_safe``).

    ===  ==========================================================================================
    ch   value
    ===  ==========================================================================================
    0-5  as ``chainloop6``
    6    the mover's margin under the safe-phase search, over R*C, the same on every cell
    7    1 everywhere when channel 6 is filled, else 0
    ===  ==========================================================================================
    """
    from dnb_env.features import safe_phase_values

    out, _ = _feature_planes(states, g, 8)
    for i, s in enumerate(states):
        values = safe_phase_values(s)
        if values is not None:
            out[i, 6] = np.nanmax(values) / g.num_boxes
            out[i, 7] = 1.0
    return out


def _chainloop6_lcr(states, g):
    """``chainloop6_lcr``: ``chainloop6`` plus the long chain rule of each safe move
    (:func:`dnb_env.features.long_chain_rule_moves`).

    ===  ==========================================================================================
    ch   value
    ===  ==========================================================================================
    0-5  as ``chainloop6``
    6    1 on the safe moves after which dots + long chains has the parity the mover wants
    ===  ==========================================================================================
    """
    from dnb_env.features import long_chain_rule_moves

    out, flat = _feature_planes(states, g, 7)
    af = g.action_flat
    for i, s in enumerate(states):
        flat[i, 6, af] = long_chain_rule_moves(s)
    return out


def _chainloop6_nim(states, g):
    """``chainloop6_nim``: ``chainloop6_safe`` plus each move's result in Nimstring, the game played for the
    last move whose winner gets control (:func:`dnb_env.features.nimstring_move_wins`). It reaches positions
    with many more safe moves than the safe-phase search; its cost grows with the undrawn edges (on 5x5 a
    median of 0.02 ms a position at 26-35 undrawn edges, 8 ms at 35-40 and 0.23 s at 39-42, where half of the
    positions run out of the search's :data:`dnb_env.features.NIMSTRING_POSITIONS` positions). Boards of at most 64
    edges get the values in C++; larger ones use the Python search, practical only late in a game.

    ===  ==========================================================================================
    ch   value
    ===  ==========================================================================================
    0-8  as ``chainloop6_safe``
    9    1 on the edges whose move wins Nimstring for the mover, 0 on the other undrawn edges
    10   1 everywhere when the mover wins Nimstring (some move of channel 9 does), else 0
    11   1 everywhere when channels 9-10 are filled (the search fits its budget), else 0
    ===  ==========================================================================================
    """
    return _nim_planes(states, g, None)


def _chainloop6_nim38(states, g):
    """``chainloop6_nim38``: the channels of ``chainloop6_nim``, with the Nimstring planes (9-11) only where at
    most 38 edges are undrawn, so that a network that searches pays milliseconds a position for them (a
    median of 2 ms at 36 undrawn edges on 5x5, some 60 ms at 38, against 0.2-0.4 s at 39-42, where the search
    often gives up); a network trained on positions of 38 undrawn edges or fewer reads the same input from
    both encoders."""
    return _nim_planes(states, g, 38)


def _nim_planes(states, g, max_undrawn: int | None):
    """The twelve channels of ``chainloop6_nim``; Nimstring planes only up to ``max_undrawn`` undrawn edges
    (None: the feature's own limit)."""
    from dnb_env.features import NIMSTRING_MAX_UNDRAWN, nimstring_move_wins

    out, flat = _feature_planes(states, g, 12)
    _search_planes(states, g, out, flat, 6, sacrifices=0)
    af = g.action_flat
    for i, s in enumerate(states):
        wins = nimstring_move_wins(s, max_undrawn=NIMSTRING_MAX_UNDRAWN if max_undrawn is None else max_undrawn)
        if wins is None:
            continue
        won = wins > 0  # NaN (drawn edges) compares False
        flat[i, 9, af[won]] = 1.0
        out[i, 10] = float(won.any())
        out[i, 11] = 1.0
    return out


#: Encoders whose first channels are exactly another encoder's (``dnb fit --init`` can start a network of the
#: wider encoder from weights of the narrower one, the new input channels' weights zero).
EXTENDS: dict[str, str] = {
    "chainloop6_safe": "chainloop6",
    "chainloop6_safevalue": "chainloop6",
    "chainloop6_lcr": "chainloop6",
    "chainloop6_sac2": "chainloop6_safe",
    "chainloop6_sac2_deep": "chainloop6_safe",
    "chainloop6_sac4": "chainloop6_safe",
    "chainloop6_nim": "chainloop6_safe",
    "chainloop6_nim38": "chainloop6_safe",
}


def extends(wider: str, narrower: str) -> bool:
    """Whether the first channels of encoder ``wider`` are those of ``narrower`` (through :data:`EXTENDS`)."""
    while wider in EXTENDS:
        wider = EXTENDS[wider]
        if wider == narrower:
            return True
    return False


# name -> (batch function, channels, layout) ; layout "grid" = (2R+1, 2C+1), "box" = (R, C)
ENCODERS: dict[str, tuple[Callable, int, str]] = {
    "baseline4": (_baseline4, 4, "grid"),
    "chainloop6": (_chainloop6, 6, "grid"),
    "chainloop64": (_chainloop64, 64, "grid"),
    "edgequad4": (_edgequad4, 4, "box"),
    "edgequad9": (_edgequad9, 9, "box"),
    "edgequad44": (_edgequad44, 44, "box"),
    "alphazero4": (_alphazero4, 4, "grid"),
    "chainloop6_safe": (_chainloop6_safe, 9, "grid"),
    "chainloop6_safevalue": (_chainloop6_safevalue, 8, "grid"),
    "chainloop6_sac2": (_chainloop6_sac2, 12, "grid"),
    "chainloop6_sac2_deep": (_chainloop6_sac2_deep, 12, "grid"),
    "chainloop6_sac4": (_chainloop6_sac4, 12, "grid"),
    "chainloop6_lcr": (_chainloop6_lcr, 7, "grid"),
    "chainloop6_nim": (_chainloop6_nim, 12, "grid"),
    "chainloop6_nim38": (_chainloop6_nim38, 12, "grid"),
}


def list_encoders() -> list[str]:
    return list(ENCODERS)


def _lookup(name: str):
    try:
        return ENCODERS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown encoder {name!r}; known encoders: {', '.join(ENCODERS)}") from None


def encoder_layout(name: str) -> str:
    """``"grid"`` for (2R+1, 2C+1) planes, ``"box"`` for (R, C) planes."""
    return _lookup(name)[2]


def encoder_shape(name: str, rows: int, cols: int | None = None) -> tuple[int, int, int]:
    """``(C, H, W)`` of encoder ``name`` on a rows x cols board (``cols`` defaults to ``rows``)."""
    _, channels, layout = _lookup(name)
    g = geometry(rows, rows if cols is None else cols) if not isinstance(rows, str) else geometry(rows)
    if layout == "grid":
        return channels, g.height, g.width
    return channels, g.rows, g.cols


def encode(name: str, state: GameState) -> np.ndarray:
    """``[C, H, W]`` float32 observation of ``state`` from the player to move's point of view."""
    fn, _, _ = _lookup(name)
    if native.handles(name, state.geometry):
        return native.encode_batch(name, (state,))[0]
    return fn((state,), state.geometry)[0]


def encode_batch(name: str, states: Sequence[GameState]) -> np.ndarray:
    """``[N, C, H, W]`` float32 observations of states of one board size."""
    fn, channels, layout = _lookup(name)
    states = list(states)
    if not states:
        raise ValueError("encode_batch needs at least one state (the board size comes from the states)")
    g = states[0].geometry
    if any(s.geometry is not g for s in states):
        raise ValueError("encode_batch needs states of one board size")
    if native.handles(name, g):
        return native.encode_batch(name, states)
    return fn(states, g)


# ---------------------------------------------------------------------------------------------- symmetries
_SIDE_DIRS = ((0, 1), (-1, 0), (0, -1), (1, 0))  # r, u, l, d
_OWN_FIRST = (True, False, False, True)  # is the box itself the "left/up" box of its side r, u, l, d?


@functools.lru_cache(maxsize=None)
def _channel_source(sym: Symmetry, name: str, channels: int) -> np.ndarray:
    """``src`` with ``new[c] = old[src[c]]`` for the channel axis of encoder ``name``."""
    src = np.arange(channels)
    if encoder_layout(name) != "box":
        return src
    side_perm = [_SIDE_DIRS.index(sym.map_direction(*d)) for d in _SIDE_DIRS]
    if channels in (4, 9):
        for k, k2 in enumerate(side_perm):
            src[k2] = k
        return src
    for k, k2 in enumerate(side_perm):  # edgequad44: groups of 11 = drawn, first box one-hot, second box
        src[11 * k2] = 11 * k
        first, second = np.arange(11 * k + 1, 11 * k + 6), np.arange(11 * k + 6, 11 * k + 11)
        if _OWN_FIRST[k] != _OWN_FIRST[k2]:
            first, second = second, first
        src[11 * k2 + 1: 11 * k2 + 6] = first
        src[11 * k2 + 6: 11 * k2 + 11] = second
    return src


def transform_planes(sym: Symmetry, name: str, planes: np.ndarray) -> np.ndarray:
    """Map observation planes ``[..., C, H, W]`` of encoder ``name`` by ``sym`` (returns a new array)."""
    x = planes
    if sym.transpose:
        if x.shape[-1] != x.shape[-2]:
            raise ValueError("a transposing symmetry needs square planes")
        x = np.swapaxes(x, -1, -2)
    if sym.flip_y:
        x = x[..., ::-1, :]
    if sym.flip_x:
        x = x[..., ::-1]
    src = _channel_source(sym, name, planes.shape[-3])
    return np.ascontiguousarray(np.take(x, src, axis=-3))
