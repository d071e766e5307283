"""Playing tournament games: random openings, one game between two agents, and the games of a run.

    make_opening("5x5", 10, "guided", seed=3)      -> the first 10 moves (random safe moves while there are any)
    play_game("5x5", first, second, opening)        -> {"scores", "moves", "think_s", "move_s", ...}
    play_game("5x5", first, second, time_control=TimeControl(0.5))     every agent at 0.5 s a move
    play_game("5x5", first, second, time_control=TimeControl(per_game=60, increment=1))   a game clock
    GamePlayer("5x5", entries, build).play(task)    -> the record of one scheduled game
    player.close()                                  -> every agent of the run that has close() closed

An agent that cannot give a move raises :class:`agents.base.AgentFailure` (an engine that crashed, overran
its time, answered an illegal move or garbage): the game stops there and is lost by that agent, and its
record says so: ``"forfeit": {"player": 0 or 1, "kind": ..., "reason": ...}``, the moves up to the failure.
Any other exception raised inside an agent's move (in ``select_action``, or in the clock or ``prepare`` call
the arena makes for it; a bug, a board beyond what it supports) loses the game the same way, with the kind
``"error"`` and the exception's type and message as the reason: the run goes on. ``KeyboardInterrupt``,
``SystemExit`` and ``MemoryError`` still stop the run, and so does an illegal move of an agent in this
process.

Before a game's clock starts, each agent with ``prepare(state)`` gets ready for it (an engine: started,
``newgame``, ``isready``; its own ``startup`` limit): that time is not a move's (the record's ``ready_s``),
and an agent that fails to get ready loses the game like one that fails a move.

A task is ``(i, j, g, opening, agent_seed)``: game ``g`` of the pair of entries (i, j), whose first seat
alternates (:func:`seats`). Entries are spec strings built by ``build(spec, board, seed)``, ``(label,
factory)`` pairs, or ``(label, spec)`` pairs: a spec built by ``build`` and labelled ``label`` in the
records (an engine's ``name=``).
"""

from __future__ import annotations

import gc
import random
import time
from typing import Callable, Sequence

from agents.arena.record import GameRecord
from agents.base import AgentFailure
from dnb_env.agent import Clocked, Closeable, Preparable, Seedable, Timed, Tolerant
from dnb_env.analysis import MoveClass, move_classes
from dnb_env.clock import TimeControl
from dnb_env.core import GameState

__all__ = ["TimeControl", "make_opening", "play_game", "seats", "label", "entry_spec", "GamePlayer"]


def make_opening(board: str, moves: int, mode: str, seed: int) -> list[int]:
    """The first ``moves`` moves of a game on ``board`` ("RxC", (rows, cols) or a Geometry), random ("pure") or
    random safe moves ("guided")."""
    rng = random.Random(seed)
    s = GameState.new(board)
    out = []
    for _ in range(moves):
        if s.is_terminal():
            break
        legal = s.legal_actions()
        if mode == "guided":
            cls = move_classes(s)
            safe = [a for a in legal if cls[a] == MoveClass.SAFE]
            legal = safe or legal
        a = rng.choice(legal)
        out.append(a)
        s = s.apply(a)
    return out


def play_game(board: str, first, second, opening: Sequence[int] = (), *, time_control: TimeControl | None = None,
              clock: Callable[[], float] = time.perf_counter) -> dict:
    """Play ``first`` (player 0) against ``second`` from the opening; returns a record: final ``scores``,
    ``moves`` (opening included), ``think_s`` (each player's seconds in all), ``moves_by`` (the moves each
    player was asked for, a failed one included) and ``max_s`` (each player's longest), ``move_s`` (the
    seconds of each move played after the opening) and, where an agent failed or lost on time,
    ``forfeit``; with ``time_control`` and its ``"warn"`` rule, ``overruns``: ``[move number, player,
    seconds]`` of each move over the limit; on a game clock, ``clock_s``: both players' clocks ``[left 0,
    left 1]`` after each move of ``move_s``; where an agent has ``prepare``, ``ready_s``: each player's
    seconds to get ready before the clock started (0 for one without it). ``clock`` measures the moves (a
    fake clock in tests)."""
    s = GameState.from_actions(board, actions=list(opening))
    agents = (first, second)
    tc = time_control
    clocks = [tc.per_game, tc.per_game] if tc is not None and tc.per_game is not None else None
    _reset_agents(agents, tc)
    ready, prepared, forfeit = _prepare_agents(agents, s, clock)
    if tc is not None:  # the last game's garbage is collected now, not by a pause inside a timed move
        gc.collect()
    think, most, count = [0.0, 0.0], [0.0, 0.0], [0, 0]
    move_s: list[float] = []
    clock_s: list[list[float]] = []
    overruns: list[list] = []
    while forfeit is None and not s.is_terminal():
        p = s.current_player
        failure = _set_clock(agents[p], p, tc, clocks[p], s) if clocks is not None else None
        if failure is not None:
            forfeit = failure
            break
        action, failure, spent = _timed_move(agents[p], p, s, clock)
        think[p] += spent
        most[p] = max(most[p], spent)
        count[p] += 1
        if failure is not None:
            forfeit = failure
            break
        if not s.is_legal(action):
            raise RuntimeError(f"agent {agents[p].name!r} chose illegal action {action!r}")
        if _over_limit(tc, clocks, p, spent):
            if tc.overrun == "lose":
                forfeit = _time_forfeit(tc, clocks, p, agents[p].name, spent, len(s.history) + 1)
                break
            overruns.append([len(s.history) + 1, p, round(spent, 6)])
        move_s.append(round(spent, 6))
        if clocks is not None:
            clocks[p] += tc.increment - spent
            clock_s.append([round(c, 6) for c in clocks])
        s = s.apply(action)
    rec = {**GameRecord.of_state(s).results_fields(), "think_s": think, "moves_by": count, "max_s": most,
           "move_s": move_s}
    if clocks is not None:
        rec["clock_s"] = clock_s
    if prepared:
        rec["ready_s"] = [round(x, 6) for x in ready]
    if overruns:
        rec["overruns"] = overruns
    if forfeit is not None:
        rec["forfeit"] = forfeit
    return rec


def _reset_agents(agents, tc: TimeControl | None) -> None:
    """Give each agent the time control's per-move time and overrun rule where it takes them, and reset it."""
    for a in agents:
        if tc is not None and tc.per_move is not None and isinstance(a, Timed):
            a.set_move_time(tc.per_move)
        if tc is not None and isinstance(a, Tolerant):  # an engine judges its lateness by the same rule
            a.set_overrun(tc.margin, tc.overrun)
        a.reset()


def _prepare_agents(agents, s: GameState, clock: Callable[[], float]) -> tuple[list[float], bool, dict | None]:
    """Get each agent with ``prepare`` ready for the game: each player's seconds to get ready, whether any
    agent had ``prepare``, and the forfeit of the first that failed (None if none did)."""
    forfeit = None
    ready = [0.0, 0.0]
    prepared = False
    for p, a in enumerate(agents):  # start-up is not a move: timed apart, under the agent's own limit
        if not isinstance(a, Preparable):
            continue
        prepared = True
        t = clock()
        try:
            a.prepare(s)
        except Exception as exc:
            forfeit = _failure(p, exc)
        ready[p] = clock() - t
        if forfeit is not None:
            break
    return ready, prepared, forfeit


def _failure(p: int, exc: Exception) -> dict:
    """The forfeit of player ``p``, whose agent raised ``exc`` in its move or its preparation: an
    :class:`AgentFailure`'s kind and message, ``"error"`` with the type and message of any other exception.
    A ``MemoryError`` is raised again: it stops the run."""
    if isinstance(exc, AgentFailure):
        return {"player": p, "kind": exc.kind, "reason": str(exc)}
    if isinstance(exc, MemoryError):
        raise exc
    return {"player": p, "kind": "error", "reason": f"{type(exc).__name__}: {exc}"}


def _set_clock(agent, p: int, tc: TimeControl, left: float, s: GameState) -> dict | None:
    """On a game clock, tell player ``p``'s agent to move its clock's time left (or a time for this move);
    the forfeit where the agent raised (None if it did not)."""
    try:
        if isinstance(agent, Clocked):
            agent.set_clock(left, tc.increment)
        elif isinstance(agent, Timed):
            agent.set_move_time(tc.move_time(left, len(s.legal_actions())))
    except Exception as exc:
        return _failure(p, exc)
    return None


def _timed_move(agent, p: int, s: GameState, clock: Callable[[], float]) -> tuple[int | None, dict | None, float]:
    """Ask player ``p``'s agent for a move: the action, the forfeit where the agent failed (None if it did
    not) and the seconds it took."""
    t = clock()
    action, failure = None, None
    try:
        action = agent.select_action(s)
    except Exception as exc:
        failure = _failure(p, exc)
    return action, failure, clock() - t


def _over_limit(tc: TimeControl | None, clocks: list[float] | None, p: int, spent: float) -> bool:
    """Whether player ``p``'s move took longer than its limit (a move's time, or its clock) and the margin."""
    limit = tc.per_move if clocks is None and tc is not None else (clocks[p] if clocks is not None else None)
    return limit is not None and spent > limit + tc.margin


def _time_forfeit(tc: TimeControl, clocks: list[float] | None, p: int, name: str, spent: float,
                  move: int) -> dict:
    """The forfeit of player ``p``, whose agent ``name`` lost on time at move number ``move``."""
    if clocks is None:
        over = f"over {tc.per_move:g} s a move and {tc.margin:g} s of tolerance"
    else:
        over = f"with {clocks[p]:.3f} s on its clock and {tc.margin:g} s of tolerance"
    return {"player": p, "kind": "time",
            "reason": f"agent {name!r} took {spent:.3f} s for move {move}, " + over}


def seats(i: int, j: int, g: int) -> tuple[int, int]:
    """(first, second) agent of game ``g`` of pair (i, j): the first seat alternates."""
    return (i, j) if g % 2 == 0 else (j, i)


def label(entry) -> str:
    """The label of an entry: the spec string itself, or a ``(label, factory)`` or ``(label, spec)``
    pair's label."""
    return entry if isinstance(entry, str) else entry[0]


def entry_spec(entry) -> str | None:
    """The spec string of an entry (a spec, or a ``(label, spec)`` pair's); None for a factory."""
    if isinstance(entry, str):
        return entry
    return entry[1] if isinstance(entry[1], str) else None


def _build(entry, board: str, seed: int, build: Callable | None):
    spec = entry_spec(entry)
    if spec is not None:
        return build(spec, board, seed)
    _, factory = entry
    return factory()


class GamePlayer:
    """Plays the games of one run: one agent per entry, reseeded with each game's seed (an agent without
    ``seed`` is built anew for every game). Owned by the run: made by the driver for in-process play, or
    once in each worker process or Ray worker of the run (:mod:`agents.arena.runners`); no agent outlives
    its run."""

    def __init__(self, board: str, entries: Sequence, build: Callable | None = None,
                 time_control: TimeControl | None = None):
        self.board, self.entries, self.build, self.agents = board, entries, build, {}
        self.time_control = time_control

    def agent(self, k: int, seed: int):
        agent = self.agents.get(k)
        if agent is None:
            agent = _build(self.entries[k], self.board, seed, self.build)
            if isinstance(agent, Seedable):
                self.agents[k] = agent
                if entry_spec(self.entries[k]) is None:  # a factory's agent: seeded like every later game
                    agent.seed(seed)
        else:
            agent.seed(seed)
        return agent

    def play(self, task) -> dict:
        i, j, g, opening, agent_seed = task
        first_idx, second_idx = seats(i, j, g)
        a = self.agent(first_idx, agent_seed)
        b = self.agent(second_idx, agent_seed + 1)
        t = time.perf_counter()
        try:
            rec = play_game(self.board, a, b, opening, time_control=self.time_control)
        finally:  # an agent built for this game only is done with
            for agent in (a, b):
                if agent not in self.agents.values() and isinstance(agent, Closeable):
                    agent.close()
        rec.update(
            id=f"{i}-{j}-{g}", pair=[i, j], game=g, first=label(self.entries[first_idx]),
            second=label(self.entries[second_idx]), opening=list(opening), seconds=time.perf_counter() - t,
        )
        s0, s1 = rec["scores"]
        if "forfeit" in rec:
            rec["result_first"] = 0.0 if rec["forfeit"]["player"] == 0 else 1.0
        else:
            rec["result_first"] = 1.0 if s0 > s1 else (0.0 if s0 < s1 else 0.5)
        return rec

    def close(self) -> None:
        """Close every agent of the run that has ``close()`` (an engine's program is stopped)."""
        agents, self.agents = list(self.agents.values()), {}
        for agent in agents:
            if isinstance(agent, Closeable):
                agent.close()
