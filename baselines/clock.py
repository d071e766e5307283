"""A budget that follows a clock, for searchers that count work and cannot read a clock themselves: one
measured rate (work a second).

    rate = MeasuredRate()                      # simulations a second of a search, none measured yet
    rate.add(work=16, seconds=0.004)           # one search's work and seconds: 4,000 a second
    rate.work_in(0.5)                          # 2000.0 (None before the first measurement)

Each measurement moves the rate halfway to its own ``work / seconds`` (the first one sets it when there is
no guess), so the budget of the next call matches this machine and its load.
:class:`agents.base.SpielMCTSAgent` measures OpenSpiel's MCTS simulations a second with it (OpenSpiel's
``MCTSBot`` takes a number of simulations, not a time). The exact solver reads the clock itself
(:meth:`dnb_env.solver.Solver.set_deadline`).
"""

from __future__ import annotations

__all__ = ["RESOLUTION", "MeasuredRate"]

#: Seconds below which a measured time is not trusted (about a clock's resolution under load).
RESOLUTION = 1e-3


class MeasuredRate:
    """Work a second (a search's simulations), measured call after call; ``rate``: the guess before the
    first measurement (None: no guess, and :meth:`work_in` is None until one). A call of no work is not
    measured; one quicker than :data:`RESOLUTION` counts as taking that long."""

    __slots__ = ("rate",)

    def __init__(self, rate: float | None = None):
        self.rate = None if rate is None else float(rate)

    def add(self, work: float, seconds: float) -> None:
        """One call's ``work`` done in ``seconds``: the rate moves halfway to ``work / seconds``."""
        if work <= 0:
            return
        rate = work / max(seconds, RESOLUTION)
        self.rate = rate if self.rate is None else 0.5 * self.rate + 0.5 * rate

    def work_in(self, seconds: float) -> float | None:
        """The work that fits in ``seconds`` at the measured rate (None before any rate)."""
        return None if self.rate is None else self.rate * seconds
