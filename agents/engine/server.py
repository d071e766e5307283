"""Any Agent as an engine: reads protocol commands, writes replies (``dnb engine SPEC`` runs this).

    serve(build, name="greedy", stdin=sys.stdin, stdout=sys.stdout)   # returns 0 at quit or end of input
    serve(build, name="alphazero", boards=("3x3", "5x5"))             # declares its boards: 'id boards 3x3 5x5'

``build(board, seed) -> Agent`` makes the agent for a board ("RxC") and seed (None when the controller sent
none). The agent of a board is built at the first ``isready``, ``position`` or ``go`` after ``newgame``,
with the seed sent for that game; in later games of the same board it is reseeded (``agent.seed(n)``) where
it can be, else built anew with the game's seed, and ``reset()`` starts each game: the order of
:class:`agents.arena.play.GamePlayer`, so an agent served here plays the moves it plays in process for the
same seeds. A command that cannot be carried out (a bad board, one outside ``boards``, an illegal position,
a number out of range, an agent's error) is answered with one ``error`` line and changes nothing; so is any
command but ``dnbp 1`` (and ``quit``) before the handshake, and a line over 64 KiB, which is read in
bounded pieces and discarded.

Each ``move`` follows one ``info`` line: ``time`` always, and what the agent knows of its last search where
it tells (:func:`move_info`): an optional ``search_info()`` method returning a dict of ``depth``,
``nodes``, ``value`` (for the player who moved, before the move), ``unit`` (``"win"``: -1..1, or
``"margin"``: the final margin in boxes) and ``pv`` (the expected line, its move first), any of them
missing or None; else an integer ``nodes`` attribute (the nodes of the last move).
"""

from __future__ import annotations

import sys
import time
from typing import Callable, Iterator, TextIO

from agents.engine.protocol import (HELLO, MAX_LINE, VERSION, ProtocolError, boards_text, format_info,
                                    parse_boards, parse_go, parse_int)
from dnb_env.agent import Seedable, Timed
from dnb_env.core import GameState, geometry

__all__ = ["EngineServer", "serve", "move_info", "read_lines"]


def move_info(agent, seconds: float) -> dict:
    """The analysis of the move ``agent`` has just chosen in ``seconds``: ``time`` and, from its
    ``search_info()`` (or its integer ``nodes`` attribute), ``depth``, ``nodes``, ``value``, ``unit`` and
    ``pv`` where it has them (module docstring). An agent whose report cannot be read gives ``time`` alone:
    analysis never costs a move."""
    info: dict = {"time": seconds}
    try:
        report = agent.search_info() if callable(getattr(agent, "search_info", None)) else None
        if report is None:
            nodes = getattr(agent, "nodes", None)
            report = {"nodes": nodes} if isinstance(nodes, int) and not isinstance(nodes, bool) else {}
        for key in ("depth", "nodes"):
            if report.get(key) is not None:
                info[key] = int(report[key])
        if report.get("value") is not None and float(report["value"]) == float(report["value"]):  # not NaN
            info["value"] = float(report["value"])
            if report.get("unit") in ("win", "margin"):
                info["unit"] = report["unit"]
        if report.get("pv"):
            info["pv"] = [int(a) for a in report["pv"]]
    except Exception:  # a report of the wrong shape: the time alone
        return {"time": seconds}
    return info


class EngineServer:
    """The engine side of one session: :meth:`handle` takes a command line and returns the reply lines."""

    def __init__(self, build: Callable, name: str, clock: Callable[[], float] = time.perf_counter,
                 boards=None):
        self.build, self.name, self.clock = build, name, clock
        #: the boards the agent plays, declared in the handshake ('id boards'); None: every board
        self.boards: tuple[str, ...] | None = None if boards is None else parse_boards(list(boards))
        self.board: str | None = None
        self.agent = None
        self.agent_board: str | None = None
        self.seed: int | None = None
        self.fresh = False  # a newgame whose agent is not prepared yet
        self.state: GameState | None = None
        self.greeted = False  # the handshake ('dnbp 1') is done: the other commands are taken

    def handle(self, line: str) -> list[str] | None:
        """The replies to ``line`` (None: quit)."""
        words = line.split()
        if not words:
            return []
        command, args = words[0], words[1:]
        try:
            if command == "quit":
                return None
            if not self.greeted and command != HELLO:
                raise ProtocolError(f"the handshake comes first: send '{HELLO} {VERSION}' before {command!r}")
            method = getattr(self, f"_cmd_{command}", None)
            if method is None:
                raise ProtocolError(f"unknown command {command!r}; commands: {HELLO}, newgame, seed, isready, "
                                    "position, go, quit")
            return method(args)
        except ProtocolError as exc:
            return [f"error {exc}"]
        except Exception as exc:  # the agent's own failure: reported, the session goes on
            return [f"error {type(exc).__name__}: {' '.join(str(exc).split())}"]

    def _cmd_dnbp(self, args):
        if len(args) != 1 or args[0] != str(VERSION):
            raise ProtocolError(f"this engine speaks protocol version {VERSION}, not {' '.join(args) or 'none'}")
        boards = [] if self.boards is None else ["id boards " + " ".join(self.boards)]
        self.greeted = True
        return [f"id name {self.name}", "id author dnb", *boards, f"{HELLO} ok {VERSION}"]

    def _cmd_newgame(self, args):
        if len(args) != 1:
            raise ProtocolError("newgame takes the board as RxC, e.g. 'newgame 5x5'")
        try:
            g = geometry(args[0])
        except ValueError as exc:
            raise ProtocolError(str(exc)) from None
        if self.boards is not None and g.name not in self.boards:
            raise ProtocolError(f"cannot play {g.name}: this engine plays only {boards_text(self.boards)}")
        self.board, self.seed, self.fresh = g.name, None, True
        self.state = GameState.new(g)
        return []

    def _cmd_seed(self, args):
        if len(args) != 1:
            raise ProtocolError("seed takes one integer, e.g. 'seed 42'")
        self._need_game("seed")
        self.seed = parse_int(args[0], "the seed", 0, 2**31 - 1)
        return []

    def _cmd_isready(self, args):
        if self.board is not None:
            self._prepare()
        return ["readyok"]

    def _cmd_position(self, args):
        self._need_game("position")
        moves = [parse_int(a, "a move") for a in args]
        try:
            state = GameState.from_actions(self.board, actions=moves)
        except ValueError as exc:
            raise ProtocolError(f"not a game on {self.board}: {' '.join(str(exc).split())}") from None
        self._prepare()
        self.state = state
        return []

    def _cmd_go(self, args):
        self._need_game("go")
        limits = parse_go(args)
        if self.state.is_terminal():
            raise ProtocolError("the position is a finished game: there is no move to choose")
        agent = self._prepare()
        budget = limits.budget(len(self.state.legal_actions()))
        if budget is not None and isinstance(agent, Timed):  # else: its own budget
            agent.set_move_time(budget)
        start = self.clock()
        action = int(agent.select_action(self.state))
        elapsed = self.clock() - start
        return [format_info(**move_info(agent, elapsed)), f"move {action}"]

    def _need_game(self, command: str) -> None:
        if self.board is None:
            raise ProtocolError(f"{command} before newgame: send 'newgame RxC' first")

    def _prepare(self):
        """The agent of this game, built or reseeded and reset at the first need after ``newgame``."""
        if not self.fresh:
            return self.agent
        if self.agent is None or self.agent_board != self.board:
            self.agent, self.agent_board = self.build(self.board, self.seed), self.board
        elif isinstance(self.agent, Seedable):
            if self.seed is not None:
                self.agent.seed(self.seed)
        else:
            self.agent = self.build(self.board, self.seed)
        self.agent.reset()
        self.fresh = False
        return self.agent


def serve(build: Callable, name: str, stdin: TextIO | None = None, stdout: TextIO | None = None,
          boards=None) -> int:
    """Answer protocol commands from ``stdin`` on ``stdout`` until ``quit`` or the end of the input; 0.
    ``boards``: the boards the agent plays ("RxC"), declared in the handshake; None: every board. A line
    longer than :data:`~agents.engine.protocol.MAX_LINE` bytes is answered with one ``error`` line and
    discarded, read in bounded pieces."""
    stdin = sys.stdin if stdin is None else stdin
    stdout = sys.stdout if stdout is None else stdout
    server = EngineServer(build, name, boards=boards)
    for line in read_lines(getattr(stdin, "buffer", stdin)):
        replies = server.handle(line) if line is not None else [
            f"error a line is at most {MAX_LINE} bytes (64 KiB): this one was longer and is discarded"]
        if replies is None:
            break
        for reply in replies:
            stdout.write(reply + "\n")
        stdout.flush()
    return 0


def read_lines(stream, limit: int = MAX_LINE) -> Iterator[str | None]:
    """The lines of ``stream`` (binary, or text), read ``limit`` bytes (characters) at most at a time: each
    line as text, or None for a line of ``limit`` or more without its end, whose rest is read and dropped
    (memory stays bounded whatever comes in)."""
    while True:
        raw = stream.readline(limit)
        if not raw:
            return
        end = "\n" if isinstance(raw, str) else b"\n"
        if len(raw) >= limit and not raw.endswith(end):
            while raw and not raw.endswith(end):
                raw = stream.readline(limit)
            yield None
            continue
        yield raw if isinstance(raw, str) else raw.decode("utf-8", "replace")
