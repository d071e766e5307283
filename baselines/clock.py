"""Budgets that follow a clock, for searchers that count work instead of reading a clock: one measured
rate (work a second) and the exact solver's node budget built on it.

    rate = MeasuredRate()                      # simulations a second of a search, none measured yet
    rate.add(work=16, seconds=0.004)           # one search's work and seconds: 4,000 a second
    rate.work_in(0.5)                          # 2000.0 (None before the first measurement)

    clock = NodeClock(rate=1_000_000)          # nodes a second, a first guess corrected by every call
    values = clock.run(solver, 0.25, solver.move_values, state)   # node_limit = rate x 0.25 s for this call

Each measurement moves the rate halfway to its own ``work / seconds`` (the first one sets it when there is
no guess), so the budget of the next call matches this machine and its load. :class:`NodeClock` corrects
its rate from the nodes the solver reports (``solver.stats()["nodes"]``) and the seconds it took; a call
past its budget raises the solver's :class:`~dnb_env.solver.SolverBudgetExceeded` as before.
:class:`agents.base.SpielMCTSAgent` measures OpenSpiel's MCTS simulations a second with the same rule.
"""

from __future__ import annotations

import time
from typing import Callable

__all__ = ["RESOLUTION", "MeasuredRate", "NodeClock"]

#: Seconds below which a measured time is not trusted (about a clock's resolution under load).
RESOLUTION = 1e-3


class MeasuredRate:
    """Work a second (a solver's nodes, a search's simulations), measured call after call.

    Args:
        rate: the guess before the first measurement (None: no guess; :meth:`work_in` is None until one)
        least_work: a measurement of less work is skipped (too little to time)
        skip_quick: a measurement under :data:`RESOLUTION` seconds is skipped (True) or counts as taking
            :data:`RESOLUTION` (False: a quick call still gives a rate, never none)
    """

    __slots__ = ("rate", "least_work", "skip_quick")

    def __init__(self, rate: float | None = None, *, least_work: float = 1, skip_quick: bool = False):
        self.rate = None if rate is None else float(rate)
        self.least_work, self.skip_quick = least_work, skip_quick

    def add(self, work: float, seconds: float) -> None:
        """One call's ``work`` done in ``seconds``: the rate moves halfway to ``work / seconds``."""
        if work < self.least_work or (self.skip_quick and not seconds > RESOLUTION):
            return
        rate = work / max(seconds, RESOLUTION)
        self.rate = rate if self.rate is None else 0.5 * self.rate + 0.5 * rate

    def work_in(self, seconds: float) -> float | None:
        """The work that fits in ``seconds`` at the measured rate (None before any rate)."""
        return None if self.rate is None else self.rate * seconds


class NodeClock:
    """Nodes a second of a solver, measured call after call (``rate``: the guess before the first)."""

    def __init__(self, rate: float = 1_000_000.0, clock: Callable[[], float] = time.perf_counter):
        self.measured, self.clock = MeasuredRate(rate, least_work=1_000, skip_quick=True), clock

    @property
    def rate(self) -> float:
        """Nodes a second: the guess, then the measured rate."""
        return self.measured.rate

    @rate.setter
    def rate(self, value: float) -> None:
        self.measured.rate = float(value)

    def run(self, solver, seconds: float, fn: Callable, *args):
        """``fn(*args)`` with ``solver.node_limit`` set to about ``seconds`` of nodes (restored after)."""
        saved = solver.node_limit
        solver.node_limit = max(1_000, int(self.measured.work_in(seconds)))
        before, start = solver.stats()["nodes"], self.clock()
        try:
            return fn(*args)
        finally:
            spent, nodes = self.clock() - start, solver.stats()["nodes"] - before
            solver.node_limit = saved
            self.measured.add(nodes, spent)
