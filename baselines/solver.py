"""The exact player: optimal moves from the exact solver engine (:mod:`dnb_env.solver`).

    SolverAgent(seed=0).select_action(state)   optimal move (by margin), ties broken at random
    SolverAgent(seed=0, fallback=agent)        ``agent`` plays where the solver cannot (too many undrawn
                                               edges, or the node budget runs out)

The registry's ``solver`` agent composes the fallback: ``make_agent("solver", fallback="prsboxes")`` (the
default) hands :class:`baselines.prsboxes.PRsBoxesAgent` in, ``fallback="none"`` none.

Version history: 0.1 retrograde solver; 0.2 the native alpha-beta engine; 0.3 the engine moves to
:mod:`dnb_env.solver`, and ``fallback`` is an Agent or a factory (composed by the registry), no longer a name.
"""

from __future__ import annotations

import contextlib
import time
from typing import Callable

import numpy as np

from dnb_env.agent import Analysable, Seedable, Timed, check_state
from dnb_env.clock import MoveTimed, move_budget
from dnb_env.core import GameState
from dnb_env.solver import DEFAULT_NODE_LIMIT, Solver, SolverBudgetExceeded, SolverTooLarge

__all__ = ["SolverAgent", "best_solver_moves", "on_clock"]


def best_solver_moves(solver: Solver, state: GameState, move_time: float | None = None) -> list[int]:
    """The moves of best margin by the exact solver (:meth:`Solver.best_moves`), in increasing order. Under
    a move time (the seconds the move may still take) the solver searches for half of it, whatever its node
    budget (:meth:`Solver.set_deadline`); past its budget or deadline :class:`SolverBudgetExceeded` is
    raised."""
    with on_clock(solver, None if move_time is None else move_time / 2):
        return sorted(solver.best_moves(state)[1])


@contextlib.contextmanager
def on_clock(solver: Solver, seconds: float | None):
    """Within the block ``solver`` searches until ``seconds`` from now instead of its node budget
    (:meth:`Solver.set_deadline`); ``None``: within its node budget, as outside the block."""
    if seconds is None:
        yield solver
        return
    saved = solver.node_limit
    solver.node_limit = 0
    solver.set_deadline(seconds)
    try:
        yield solver
    finally:
        solver.node_limit = saved
        solver.set_deadline(None)


class SolverAgent(Seedable, MoveTimed, Analysable):
    """Plays an exactly optimal move (by margin); ties broken by its seeded generator. Where the position is
    beyond ``max_undrawn`` or the node budget runs out, the ``fallback`` plays instead and the move is
    counted in ``fallbacks``; without one, :class:`~dnb_env.solver.SolverTooLarge` is raised.

    Args:
        fallback: ``None``, an Agent, or ``factory(seed) -> Agent`` called on the first fallback with the
            agent's current seed (the registry passes :class:`baselines.prsboxes.PRsBoxesAgent` for
            ``fallback="prsboxes"``). An agent in hand is reseeded with the agent's seed by :meth:`seed`.
    """

    name = "solver"

    def __init__(self, seed: int | None = None, max_undrawn: int | None = None,
                 board: tuple[int, int] | None = None, *, engine: str = "auto",
                 node_limit: int = DEFAULT_NODE_LIMIT, fallback: Callable[[int | None], object] | object | None = None):
        if fallback is not None and not callable(fallback) and not hasattr(fallback, "select_action"):
            raise ValueError(f"fallback must be None, an Agent or a factory(seed) -> Agent, got {fallback!r}")
        self.solver = Solver(max_undrawn, engine=engine, node_limit=node_limit)
        self.rng = np.random.default_rng(seed)
        self.board = board
        self.fallback = fallback
        self.fallbacks = 0
        self.move_time: float | None = None  # set_move_time: a clock instead of the node budget
        self._fallback_agent = fallback if hasattr(fallback, "select_action") else None
        self._seed = seed

    def seed(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self._seed = seed
        if isinstance(self._fallback_agent, Seedable):
            self._fallback_agent.seed(seed)

    def value(self, state: GameState) -> int:
        return self.solver.value(state)

    def move_values(self, state: GameState) -> dict[int, int]:
        return self.solver.move_values(state)

    def set_move_time(self, seconds: float) -> None:
        """Play within ``seconds`` a move (a tournament's time control): the solver searches for half of
        their :func:`~dnb_env.clock.move_budget` instead of its node budget, the fallback is told what is
        left of ``seconds`` (and keeps its own share of it)."""
        super().set_move_time(seconds)

    def select_action(self, state: GameState) -> int:
        check_state(self, state)
        start = time.perf_counter()
        move_time = self.move_time
        try:
            choices = best_solver_moves(self.solver, state, None if move_time is None else move_budget(move_time))
        except SolverTooLarge:
            if self.fallback is None:
                raise
            if self._fallback_agent is None:
                self._fallback_agent = self.fallback(self._seed)
            self.fallbacks += 1
            if move_time is not None and isinstance(self._fallback_agent, Timed):
                self._fallback_agent.set_move_time(max(0.01, move_time - (time.perf_counter() - start)))
            return self._fallback_agent.select_action(state)
        return choices[int(self.rng.integers(len(choices)))]

    def analyse(self, state: GameState, deadline: float | None = None) -> dict:
        """The exact value of each legal move (the box margin the player to move gets from the open boxes)
        and of the position; ``"none"`` with a ``message`` beyond the solver's reach or node budget."""
        try:
            mv = self.solver.move_values(state)
        except (SolverBudgetExceeded, SolverTooLarge) as exc:
            return {"kind": "none", "message": f"the solver cannot value this position: {exc}"}
        values = [None] * state.num_actions
        for a, v in mv.items():
            values[a] = float(v)
        return {"kind": "values", "values": values, "value": float(max(mv.values())),
                "unit": "margin / boxes (exact)"}

    def reset(self) -> None:
        pass
