"""Exact values inside the search, shared by both backends: game results in the search's units
(:func:`final_value`), the solver's queries for a leaf (:func:`solve_extra`, asked in the same order as the
C++ search's ``Tree::solve``) and the root policy in the solver zone (:class:`ExactRoot`)."""

from __future__ import annotations

import numpy as np

from agents.search.settings import SearchSettings
from dnb_env.analysis import safe_moves
from dnb_env.core import GameState
from dnb_env.solver import (RETROGRADE_REACH, Solver, SolverBudgetExceeded, SolverTooLarge, beyond_native,
                            native_available)

__all__ = ["ExactRoot", "exact_solver", "final_value", "solve_extra"]


def exact_solver(settings: SearchSettings, node_limit: int) -> Solver:
    """The alpha-beta solver of ``settings``' zones (ImportError without the C++ extension)."""
    if not native_available():
        raise ImportError("solve_leaf / solve_root need the C++ extension dnb_env._native (the alpha-beta "
                          "solver), which is not built; reinstall with a C++17 compiler or set them to 0")
    return Solver(max_undrawn=180, engine="alphabeta", node_limit=node_limit, tt_mb=settings.solve_tt_mb)


def solve_extra(solver, state: GameState, value: str) -> int | None:
    """What the open boxes of ``state`` are worth net to its mover under best play, as far as ``value``
    needs: the exact margin (``"margin"``) or one margin of the right sign (``"win"``: one or two
    null-window tests); None when the solver's node budget runs out, and on a board beyond the alpha-beta
    solver (over 12x12 boxes: the retrograde one would build a table for each leaf). The C++ search's
    ``Tree::solve`` asks the same queries in the same order, so both searches agree even where a budget runs
    out."""
    if beyond_native(state):
        return None
    try:
        if value == "margin":
            lo, hi = solver.bounds(state)
            return lo if lo == hi else None
        s0, s1 = state.scores
        have = s0 - s1 if state.current_player == 0 else s1 - s0
        if solver.at_least(state, 1 - have):
            return 1 - have
        return -have if solver.at_least(state, -have) else -have - 1
    except SolverBudgetExceeded:
        return None


class ExactRoot:
    """The root policy in the solver zone (``config.solve_root``): uniform over the moves that keep the
    best margin (so also the best result), with the exact value of the position in the search's units;
    None outside the zone or when ``solve_root_nodes`` do not suffice. The zone also holds every position
    without a safe move left, however many edges are undrawn (the loony endgame: chains and loops, which
    the solver's reductions settle in milliseconds on any board it takes). On a board beyond the alpha-beta
    solver (over 12x12 boxes) the retrograde table solves the root, within :data:`RETROGRADE_REACH` undrawn
    edges at most. Used by both search backends."""

    def __init__(self, config: SearchSettings):
        config.check_resolved()
        self.config = config
        self._solver = None
        self._table = None  # the retrograde solver of a board beyond the alpha-beta one

    def _solver_for(self, state: GameState) -> Solver | None:
        """The solver of ``state``'s root, made on first use; None outside the zone."""
        cfg, undrawn = self.config, state.num_actions - state.edges.bit_count()
        if beyond_native(state):
            if undrawn > min(cfg.solve_root, RETROGRADE_REACH):
                return None
            if self._table is None:
                self._table = Solver(RETROGRADE_REACH, engine="retrograde")
            return self._table
        if not cfg.solve_root or (undrawn > cfg.solve_root and safe_moves(state)):
            return None
        if self._solver is None:
            self._solver = exact_solver(cfg, cfg.solve_root_nodes)
        return self._solver

    def policy(self, state: GameState, seconds: float | None = None) -> tuple[np.ndarray, float] | None:
        """The exact root policy and value of ``state``, or None; ``seconds``: a deadline for the solve
        (a timed move), past which it gives None as when out of nodes."""
        cfg = self.config
        solver = self._solver_for(state)
        if solver is None:
            return None
        solver.set_deadline(seconds)
        try:
            best, moves = solver.best_moves(state)
        except (SolverBudgetExceeded, SolverTooLarge):  # out of nodes or time; a loony endgame past max_undrawn
            return None
        pi = np.zeros(state.num_actions)
        pi[sorted(moves)] = 1.0
        return pi / pi.sum(), final_value(state, cfg.value, best)


def final_value(state: GameState, value: str = "win", extra: int = 0) -> float:
    """Result for ``state.current_player`` when the boxes still open go ``extra`` net to that player
    (0 for a finished game): the sign of the final margin (``"win"``) or the margin over the number of
    boxes (``"margin"``), so both lie in [-1, 1]."""
    s0, s1 = state.scores
    margin = (s0 - s1 if state.current_player == 0 else s1 - s0) + extra
    if value == "margin":
        return margin / (state.rows * state.cols)
    return float((margin > 0) - (margin < 0))
