"""The project's clocks: the rules of a time control, the time control itself, and a measured rate for agents
that count work instead of reading a clock.

    TimeControl(0.5)                              every agent at 0.5 s a move (checked when made)
    TimeControl(per_game=60, increment=1)         a game clock of 60 s a side, 1 s more after each move
    clock_move_time(60.0, 1.0, free_edges=60)     3.0: the seconds of one move on a game clock
    move_budget(0.5)                              0.4: the seconds an agent plans to think of a 0.5 s move
    check_time_control(per_move=0.5)              True: the settings are valid and give a clock
    rate = MeasuredRate()                         simulations a second of a search, none measured yet
    rate.add(work=16, seconds=0.004)              one search's work and seconds: 4,000 a second
    rate.work_in(0.5)                             2000.0 (None before the first measurement)

The arena plays games under a :class:`TimeControl`; an ``engine:`` agent and a served agent
(:mod:`agents.engine`) follow the same rules over the engine protocol, which carries times as whole
milliseconds up to :data:`MAX_MS`.
"""

from __future__ import annotations

from dataclasses import InitVar, dataclass

from dnb_env.agent import Timed

__all__ = ["MAX_MS", "MIN_MOVE_TIME", "TIME_MARGIN", "OVERRUN_RULES", "RESOLUTION", "BUDGET_SHARE", "check_seconds",
           "check_time_control", "clock_move_time", "move_budget", "TimeControl", "MeasuredRate", "MoveTimed"]

#: Largest number of milliseconds a time setting may give (2^31 - 1, about 24.8 days): what the engine
#: protocol's ``go`` keys can say.
MAX_MS = 2**31 - 1
#: The least seconds a move is given on a game clock (a clock at or below zero, with overruns only warned).
MIN_MOVE_TIME = 0.01
#: Seconds a move may take past its move time, or past the mover's game clock, before it is late (an
#: overrun): the one tolerance of the project's clocks. The arena's ``time_margin`` (``dnb tournament
#: --time-margin``) and an ``engine:`` agent's ``tolerance`` default to it, and a tournament's time control
#: hands its own margin to the engines it plays (:meth:`agents.engine.EngineAgent.set_overrun`).
TIME_MARGIN = 0.25
#: What a late move costs: the game on time ("lose"), or a line in the game's record ("warn").
OVERRUN_RULES = ("lose", "warn")
#: Seconds below which a measured time is not trusted (about a clock's resolution under load).
RESOLUTION = 1e-3
#: The share of a move's time an agent on a clock plans to think (:func:`move_budget`): the rest is kept for
#: a busy machine (a round, a clock check or a collection that ends late while another process holds the
#: core), before the arena's :data:`TIME_MARGIN`.
BUDGET_SHARE = 0.8

#: The names :func:`check_time_control` gives the settings in its errors, unless told others.
_NAMES = {"per_move": "the time per move", "per_game": "the time per game", "increment": "the increment",
          "margin": "the time margin", "overrun": "overrun"}


def check_seconds(value, name: str, zero: bool = False) -> None:
    """ValueError naming ``name`` unless ``value`` is a positive number of seconds (0 too with ``zero``), at
    most :data:`MAX_MS` milliseconds (what the engine protocol can say: 24 days)."""
    if zero and not value >= 0:
        raise ValueError(f"{name} must be 0 or more seconds, got {value}")
    if not zero and not value > 0:
        raise ValueError(f"{name} must be a positive number of seconds, got {value}")
    if not value <= MAX_MS / 1000:
        raise ValueError(f"{name} must be at most {MAX_MS // 1000:,} seconds (24 days), got {value}")


def check_time_control(per_move: float | None = None, per_game: float | None = None, increment: float = 0.0,
                       margin: float = TIME_MARGIN, overrun: str = "lose", *, names: dict | None = None,
                       required: bool = False) -> bool:
    """The one check of a time control's settings (a :class:`TimeControl` when made, ``dnb tournament``'s
    options, an ``engine:`` agent's ``movetime`` and ``tolerance``): ``per_move`` or ``per_game`` seconds
    (positive; one of them, or neither unless ``required``), ``increment`` (0 or more, with ``per_game``
    only), ``margin`` (0 or more) and ``overrun`` (:data:`OVERRUN_RULES`). ValueError naming each setting as
    ``names`` does (keys as the arguments; e.g. ``{"per_move": "--time-per-move"}``); returns whether there
    is a clock."""
    n = {**_NAMES, **(names or {})}
    if per_move is not None and per_game is not None:
        raise ValueError(f"{n['per_move']} and {n['per_game']} are two kinds of clock: give one of them, not both")
    if required and per_move is None and per_game is None:
        raise ValueError(f"a time control needs {n['per_move']} or {n['per_game']} (with {n['increment']}), "
                         "not neither")
    for key, value in (("per_move", per_move), ("per_game", per_game)):
        if value is not None:
            check_seconds(value, n[key])
    check_seconds(increment, n["increment"], zero=True)
    if increment and per_game is None:
        raise ValueError(f"{n['increment']} is added to a game clock: it needs {n['per_game']}")
    check_seconds(margin, n["margin"], zero=True)
    if overrun not in OVERRUN_RULES:
        raise ValueError(f"{n['overrun']} must be 'lose' or 'warn', got {overrun!r}")
    return per_move is not None or per_game is not None


def clock_move_time(left: float, inc: float = 0.0, free_edges: int = 0, margin: float = 0.0) -> float:
    """The seconds to think about a move on a game clock, the one rule of the project (the arena's
    ``time_per_game`` and a served agent's ``go left ... inc ...``)::

        moves  = max(10, ceil(free_edges / 2))        # the mover draws about half the edges left
        time   = left / moves + inc
        time   = min(time, max(left - margin, left / 2))
        return max(time, MIN_MOVE_TIME)

    ``left``: the mover's clock, this move included; ``inc``: added to it after the move; ``margin``: the
    tolerance past the clock before a move is lost on time (kept in hand where the clock allows)."""
    moves = max(10, -(-int(free_edges) // 2))
    budget = min(left / moves + inc, max(left - margin, left / 2))
    return max(budget, MIN_MOVE_TIME)


def move_budget(seconds: float) -> float:
    """The seconds an agent told a move time of ``seconds`` plans to think, from the moment it is asked:
    :data:`BUDGET_SHARE` of them. Every deadline of the move (its searches' rounds, the exact solver's and
    the Nimstring search's shares) is a share of this budget, read as elapsed time (``time.perf_counter``)."""
    return BUDGET_SHARE * seconds


@dataclass(frozen=True)
class TimeControl:
    """The same clock for every agent: ``per_move`` seconds a move, or a game clock of ``per_game`` seconds
    a side that gains ``increment`` after each of its moves (the engine-match conventions; one of the two).
    Its settings are checked when it is made (:func:`check_time_control`; ``names``: what the errors call
    them, e.g. a config's keys).

    * ``per_move``: each agent that can think to a clock (:class:`~dnb_env.agent.Timed`) is told it before
      each game (``agent.set_move_time(per_move)``; other agents play at their own budget). A move that
      takes longer than ``per_move + margin`` seconds is an overrun.
    * ``per_game``: before each move the mover is told its clock: a :class:`~dnb_env.agent.Clocked` agent
      (an engine: ``go left MS inc MS``) divides it itself, a :class:`~dnb_env.agent.Timed` one gets
      :meth:`move_time` (the rule of :func:`clock_move_time`: the clock over the moves it has left, at least
      10, plus the increment, capped by the clock less the margin). A move that takes longer than the
      mover's clock plus ``margin`` is an overrun (its clock ran out); after a move the clock loses the
      seconds spent and gains ``increment``.

    With ``overrun="lose"`` the mover of an overrun loses the game on time (a ``forfeit`` of kind
    ``"time"``; the move is not played), with ``"warn"`` the move stands and the record lists it under
    ``overruns`` (a game clock then goes below zero, and the mover gets the least move time, 0.01 s plus
    the increment capped like any other, until the increments bring it back).

    ``margin`` defaults to :data:`TIME_MARGIN`, the project's one tolerance. A
    :class:`~dnb_env.agent.Tolerant` agent (an engine, which stops waiting for a move on its own) is told
    both before each game (``set_overrun(margin, overrun)``): with ``"lose"`` it gives up on a move
    ``margin`` seconds late, with ``"warn"`` it waits for a late move up to its own hard cap (an engine's
    ``timeout``)."""

    per_move: float | None = None
    margin: float = TIME_MARGIN
    overrun: str = "lose"
    per_game: float | None = None
    increment: float = 0.0
    names: InitVar[dict | None] = None

    def __post_init__(self, names: dict | None):
        check_time_control(self.per_move, self.per_game, self.increment, self.margin, self.overrun, names=names,
                           required=True)

    def move_time(self, left: float, free_edges: int) -> float:
        """The seconds an agent with ``set_move_time`` gets for a move on a game clock with ``left``
        seconds (this move included) and ``free_edges`` edges still to draw."""
        return clock_move_time(left, self.increment, free_edges, self.margin)


class MoveTimed(Timed):
    """A :class:`~dnb_env.agent.Timed` agent that keeps the time a move is given in ``move_time`` (None:
    it plays at its own budget) and reads it when it moves."""

    move_time: float | None

    def set_move_time(self, seconds: float) -> None:
        """Think ``seconds`` a move from now on (a tournament's time control); the agent plans to use
        :func:`move_budget` of them."""
        self.move_time = seconds


class MeasuredRate:
    """Work a second (a search's simulations), measured call after call, for searchers that count work and
    cannot read a clock themselves; ``rate``: the guess before the first measurement (None: no guess, and
    :meth:`work_in` is None until one). Each measurement moves the rate halfway to its own ``work /
    seconds`` (the first one sets it when there is no guess), so the budget of the next call matches this
    machine and its load. A call of no work is not measured; one quicker than :data:`RESOLUTION` counts as
    taking that long.

    :class:`agents.base.SpielMCTSAgent` measures OpenSpiel's MCTS simulations a second with it (OpenSpiel's
    ``MCTSBot`` takes a number of simulations, not a time). The exact solver reads the clock itself
    (:meth:`dnb_env.solver.Solver.set_deadline`)."""

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
