"""The research encoders (registered by name in :mod:`dnb_env.observations`): ``chainloop6`` followed by
planes computed by the searches of :mod:`dnb_env.features`. Shapes are ``(C, 2R+1, 2C+1)``.

========================  ====================  ============================================================
name                      shape                 channels
========================  ====================  ============================================================
``chainloop6_safe``       (9, 2R+1, 2C+1)       ChainLoop6 + each move's safe-phase value (dnb_env.features)
``chainloop6_safevalue``  (8, 2R+1, 2C+1)       ChainLoop6 + the position's safe-phase value only
``chainloop6_sac2``       (12, 2R+1, 2C+1)      ``chainloop6_safe`` + each move's value with two sacrifices allowed
``chainloop6_sac2_deep``  (12, 2R+1, 2C+1)      ``chainloop6_sac2`` with ten times the search budget
``chainloop6_sac4``       (12, 2R+1, 2C+1)      ``chainloop6_sac2``'s channels with four sacrifices allowed
``chainloop6_lcr``        (7, 2R+1, 2C+1)       ChainLoop6 + the long chain rule of each safe move
``chainloop6_nim``        (12, 2R+1, 2C+1)      ``chainloop6_safe`` + each move's result in Nimstring
``chainloop6_nim38``      (12, 2R+1, 2C+1)      ``chainloop6_nim`` with Nimstring only at <= 38 undrawn edges
========================  ====================  ============================================================

Each function takes ``(states, g)``, states of one board of geometry ``g``, and returns ``[N, C, H, W]``;
its docstring has the channel table. They run in Python on either backend (the searches they call use
the native engine where it is built); :mod:`dnb_env.features` is imported when one is first called.
"""

from __future__ import annotations

import numpy as np

from dnb_env.encoders_paper import chainloop6

__all__ = ["chainloop6_safe", "chainloop6_safevalue", "chainloop6_sac2", "chainloop6_sac2_deep", "chainloop6_sac4",
           "chainloop6_lcr", "chainloop6_nim", "chainloop6_nim38"]


def _feature_planes(states, g, channels: int) -> tuple[np.ndarray, np.ndarray]:
    """``chainloop6`` with ``channels - 6`` feature planes after it (zeros): ``(out, flat view)``."""
    base = chainloop6(states, g)
    out = np.zeros((len(states), channels, g.height, g.width), dtype=np.float32)
    out[:, :6] = base
    return out, out.reshape(len(states), channels, -1)


def chainloop6_safe(states, g):
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
         budget, every end of the safe phase it reaches within
         :data:`dnb_env.features.SAFE_PHASE_LEAF_UNDRAWN` undrawn edges), else 0
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


def chainloop6_sac2(states, g):
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


def chainloop6_sac2_deep(states, g):
    """``chainloop6_sac2_deep``: ``chainloop6_sac2`` with the two-sacrifice search (channels 9-11) allowed
    :data:`dnb_env.features.SACRIFICE_DEEP_NODES` positions instead of
    :data:`dnb_env.features.SAFE_PHASE_NODES`, so that it reaches 35-40 undrawn edges (some 5 ms a position
    there, median); the channels are those of ``chainloop6_sac2``."""
    from dnb_env.features import SACRIFICE_DEEP_NODES

    return _sac2_planes(states, g, SACRIFICE_DEEP_NODES)


def chainloop6_sac4(states, g):
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


def chainloop6_safevalue(states, g):
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


def chainloop6_lcr(states, g):
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


def chainloop6_nim(states, g):
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


def chainloop6_nim38(states, g):
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
