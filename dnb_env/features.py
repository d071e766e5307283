"""Computed features of the chain structure still to come, for the encoders that give them to a network.

In the 5x5 midgame the winner is decided by who runs out of safe moves first and what the board looks
like then: how many long chains and loops, and who must open the first. These features compute that
from the position instead of asking a network to infer it from the drawn edges.

* :func:`safe_phase_values`: for each move, the margin the mover gets if both players draw only safe
  moves (no box gets its third side) and free captures while any safe move is left, and play exactly
  once none is (the exact solver scores the end of the safe phase). A search over safe moves only, with
  a transposition table; sacrifices before the safe phase ends are the one thing it leaves out.
* :func:`long_chain_rule_moves`: the safe moves after which Berlekamp's long chain rule favours the
  mover (dots + long chains even for the first player), the PRsBoxes heuristic.

Both are pure functions of the position; :func:`safe_phase_values` is cached per board and drawn-edge
set (the values do not depend on who owns the claimed boxes, only on the edges). With the native
backend (:mod:`dnb_env.native`) the safe-phase search runs in C++ (``ExactSolver.safe_phase_values`` in
``dnb_env/csrc/solver.hpp``, about 15 times faster); the Python search here is its reference.
"""

from __future__ import annotations

import functools

import numpy as np

from dnb_env import native
from dnb_env.analysis import MoveClass, long_chain_count, move_classes
from dnb_env.core import GameState
from dnb_env.solver import Solver, SolverBudgetExceeded, SolverTooLarge

__all__ = ["safe_phase_values", "safe_phase_value", "long_chain_rule_moves", "SAFE_PHASE_NODES", "SAFE_PHASE_MAX_SAFE"]

#: Positions a safe-phase search may visit before it gives up (the feature is then unavailable).
SAFE_PHASE_NODES = 20_000
#: Positions with more safe moves than this get no safe-phase values, without a search: there the search
#: runs out of its :data:`SAFE_PHASE_NODES` positions (none of about 12,000 positions of 5x5 games and
#: teacher sets with more than 20 safe moves finished in it), and giving up took some 25 ms a position,
#: the bulk of a network evaluation's time in the opening.
SAFE_PHASE_MAX_SAFE = 24
#: Exact-solver nodes allowed for one end-of-safe-phase position.
_LEAF_NODES = 500_000


class _OutOfBudget(Exception):
    pass


@functools.lru_cache(maxsize=1)
def _solver() -> Solver:
    return Solver(node_limit=_LEAF_NODES)


def _claimed(state: GameState) -> int:
    return (state.owner0 | state.owner1).bit_count()


class _SafePhase:
    """One safe-phase search: values of positions (by drawn edges) for their mover, remaining boxes."""

    def __init__(self, nodes: int):
        self.table: dict[int, int] = {}
        self.budget = nodes

    def value(self, state: GameState) -> int:
        key = state.edges
        hit = self.table.get(key)
        if hit is not None:
            return hit
        self.budget -= 1
        if self.budget < 0:
            raise _OutOfBudget
        if state.is_terminal():
            v = 0
        else:
            classes = move_classes(state)
            if not (classes == MoveClass.SAFE).any():
                try:
                    v = _solver().value(state)
                except (SolverBudgetExceeded, SolverTooLarge):
                    raise _OutOfBudget from None
            else:
                v = max(self.after(state, int(a)) for a in
                        np.flatnonzero((classes == MoveClass.SAFE) | (classes == MoveClass.SCORING)))
        self.table[key] = v
        return v

    def after(self, state: GameState, action: int) -> int:
        """The mover's margin (remaining boxes) if ``action`` is played and the safe phase follows."""
        child = state.apply(action)
        if child.current_player == state.current_player:
            return _claimed(child) - _claimed(state) + self.value(child)
        return -self.value(child)


def safe_phase_values(state: GameState, nodes: int = SAFE_PHASE_NODES,
                      max_safe: int | None = SAFE_PHASE_MAX_SAFE) -> np.ndarray | None:
    """float32 ``[num_actions]``: for each safe or capturing move, the margin (boxes still unclaimed) the
    mover gets when it is played and both players then draw only safe moves and captures until no safe
    move is left, the rest played exactly; NaN for the other moves (sacrifices, drawn edges). None when
    the position has no safe move or more than ``max_safe`` of them (None: no such limit), or the search
    needs more than ``nodes`` positions or an end position is beyond the exact solver's budget."""
    if max_safe is not None and np.count_nonzero(move_classes(state) == MoveClass.SAFE) > max_safe:
        return None
    out = _values(state.rows, state.cols, state.edges, nodes, native.handles(None, state.geometry))
    return None if out is None else np.array(out, dtype=np.float32)


@functools.lru_cache(maxsize=1 << 18)
def _values(rows: int, cols: int, edges: int, nodes: int, in_cpp: bool) -> tuple | None:
    # the values depend on the drawn edges only: any order of drawing them gives the same answer
    state = GameState.from_actions(rows, cols, [a for a in range(edges.bit_length()) if edges >> a & 1])
    out = [float("nan")] * state.num_actions
    if in_cpp:
        found = _solver().safe_phase_values(state, nodes)
        if not found:  # None (over budget) or {} (no safe move)
            return None
        for a, v in found.items():
            out[a] = float(v)
        return tuple(out)
    return _reference_values(state, nodes, out)


def _reference_values(state: GameState, nodes: int, out: list) -> tuple | None:
    """The Python reference of the search (the C++ one in ``solver.hpp`` is tested against it)."""
    classes = move_classes(state)
    if not (classes == MoveClass.SAFE).any():
        return None
    search = _SafePhase(nodes)
    try:
        for a in np.flatnonzero((classes == MoveClass.SAFE) | (classes == MoveClass.SCORING)):
            out[a] = float(search.after(state, int(a)))
    except _OutOfBudget:
        return None
    return tuple(out)


def safe_phase_value(state: GameState, nodes: int = SAFE_PHASE_NODES) -> float | None:
    """The best of :func:`safe_phase_values` (the mover's margin over the unclaimed boxes), or None."""
    values = safe_phase_values(state, nodes)
    return None if values is None else float(np.nanmax(values))


def long_chain_rule_moves(state: GameState) -> np.ndarray:
    """bool ``[num_actions]``: safe moves after which the long chain rule favours the mover (the first
    player wants dots + long chains even, the second odd)."""
    classes = move_classes(state)
    dots = (state.rows + 1) * (state.cols + 1)
    out = np.zeros(state.num_actions, dtype=bool)
    for a in np.flatnonzero(classes == MoveClass.SAFE):
        even = (dots + long_chain_count(state.apply(int(a)))) % 2 == 0
        out[a] = even if state.current_player == 0 else not even
    return out
