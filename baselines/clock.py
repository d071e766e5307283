"""A node budget that follows a clock, for the exact solver (it counts nodes, it cannot read a clock).

    clock = NodeClock(rate=1_000_000)          # nodes a second, a first guess corrected by every call
    values = clock.run(solver, 0.25, solver.move_values, state)   # node_limit = rate x 0.25 s for this call

After each call the rate is corrected from the nodes the solver reports (``solver.stats()["nodes"]``) and
the seconds it took, so the budget of the next call matches this machine and its load; a call past its
budget raises the solver's :class:`~dnb_env.solver.SolverBudgetExceeded` as before.
"""

from __future__ import annotations

import time
from typing import Callable

__all__ = ["NodeClock"]


class NodeClock:
    """Nodes a second of a solver, measured call after call (``rate``: the guess before the first)."""

    def __init__(self, rate: float = 1_000_000.0, clock: Callable[[], float] = time.perf_counter):
        self.rate, self.clock = float(rate), clock

    def run(self, solver, seconds: float, fn: Callable, *args):
        """``fn(*args)`` with ``solver.node_limit`` set to about ``seconds`` of nodes (restored after)."""
        saved = solver.node_limit
        solver.node_limit = max(1_000, int(self.rate * seconds))
        before, start = solver.stats()["nodes"], self.clock()
        try:
            return fn(*args)
        finally:
            spent, nodes = self.clock() - start, solver.stats()["nodes"] - before
            solver.node_limit = saved
            if spent > 1e-3 and nodes >= 1_000:
                self.rate = 0.5 * self.rate + 0.5 * nodes / spent
