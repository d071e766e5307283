"""The observation encoders of the papers (registered by name in :mod:`dnb_env.observations`): float32,
channels first ``(C, H, W)``, the player to move's view.

=================  ====================  ============================================================
name               shape                 source
=================  ====================  ============================================================
``baseline4``      (4, 2R+1, 2C+1)       Dotsformer 4.1 "Baseline" (the four shared channels)
``chainloop6``     (6, 2R+1, 2C+1)       Dotsformer 4.1 ChainLoop6
``chainloop64``    (64, 2R+1, 2C+1)      Dotsformer 4.1 ChainLoop64
``edgequad4``      (4, R, C)             Dotsformer Appendix A EdgeQuad4
``edgequad9``      (9, R, C)             Dotsformer Appendix A EdgeQuad9
``edgequad44``     (44, R, C)            Dotsformer Appendix A EdgeQuad44
``alphazero4``     (4, 2R+1, 2C+1)       AlphaZero Dots-and-Boxes report, Fig. 4 (L, P, O, B)
=================  ====================  ============================================================

Each function takes ``(states, g)``, states of one board of geometry ``g``, and returns ``[N, C, H, W]``;
its docstring has the channel table. The native engine computes ``baseline4``, ``chainloop6``,
``chainloop64`` and ``alphazero4`` bit-identically in C++ (``dnb_env/csrc/encoders.hpp``).
"""

from __future__ import annotations

import functools
from typing import Sequence

import numpy as np

from dnb_env.analysis import structure_masks
from dnb_env.core import GameState, Geometry, geometry

__all__ = ["baseline4", "chainloop6", "chainloop64", "edgequad4", "edgequad9", "edgequad44", "alphazero4", "SIDES"]

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


def baseline4(states, g):
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


def chainloop6(states, g):
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


def chainloop64(states, g):
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


def edgequad4(states, g):
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


def edgequad9(states, g):
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


def edgequad44(states, g):
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


def alphazero4(states, g):
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
