"""Live games of the web app: who plays, whose turn it is, undo, resign, the state as JSON, and the store
that holds them.

Framework-free (no Starlette import here): :mod:`dnb_web.app` is the HTTP layer over it. Rules come from
:class:`dnb_env.core.GameState`, agents from the registry (a ``make_agent`` callable passed in). Beside it:
:mod:`dnb_web.checks` (WebError, boards), :mod:`dnb_web.options` (agent specs), :mod:`dnb_web.paths`,
:mod:`dnb_web.positions` (positions as JSON) and :mod:`dnb_web.records` (the saved game).

    store = GameStore(max_games=64)
    game = store.add(Game(board=(3, 3), opponent="random", human=0, agent=agent))
    game.play(7, by="human")         # IllegalMove / NotYourTurn (a WebError) leave the game as it was
    game.state_json()
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass, field

from agents.arena.record import GameRecord
from dnb_env.agent import Agent
from dnb_env.core import GameState, IllegalActionError
from dnb_web.checks import WebError
from dnb_web.positions import state_json

__all__ = ["Game", "GameStore"]


@dataclass(eq=False)
class Game:
    """One live game: the human's seat, the opponent's spec and agent, the position, and its activity.

    ``busy`` is True while the agent works on a move (set and cleared by the app); ``generation`` grows with
    every change of the position, so a reply computed for an older position is dropped; ``touched`` is
    the time of the last request about the game (the store drops games idle for too long)."""

    rows: int
    cols: int
    opponent: str
    human: int
    agent: object
    spec: tuple = ("random", {})  # (registry name, options): what the insight view builds its own copy from
    seed: int | None = None
    time_limit: float = 10.0
    move_time: float | None = None  # the clock told to the agent of each move (dnb_web.options.move_clock)
    id: str = field(default_factory=lambda: secrets.token_urlsafe(12))
    state: GameState = None
    resigned: int | None = None  # the seat that resigned
    busy: bool = False
    error: str | None = None
    generation: int = 0
    touched: float = field(default_factory=time.monotonic)
    analyst: object = None  # a second agent of the same spec, for the insight view
    analysis_lock: threading.Lock = field(default_factory=threading.Lock)
    solver: object = None
    labels: tuple[str, str] = ("human", "agent")
    last_again: bool = False

    def __post_init__(self):
        if self.state is None:
            self.state = GameState.new(self.rows, self.cols)
        names = ["human", "human"]
        names[1 - self.human] = self.opponent
        self.labels = tuple(names)

    # ------------------------------------------------------------------ queries
    @property
    def over(self) -> bool:
        return self.resigned is not None or self.state.is_terminal()

    @property
    def turn(self) -> str:
        if self.over:
            return "over"
        return "human" if self.state.current_player == self.human else "agent"

    @property
    def winner(self) -> int | None:
        if self.resigned is not None:
            return 1 - self.resigned
        return self.state.winner

    def state_json(self) -> dict:
        out = state_json(self.state)
        out.update(
            id=self.id, human=self.human, opponent=self.opponent, players=list(self.labels), turn=self.turn,
            status="resigned" if self.resigned is not None else ("over" if self.over else "playing"),
            winner=self.winner, resigned=self.resigned, again=self.last_again and not self.over,
            thinking=self.busy, error=self.error, time_limit=self.time_limit,
            legal=[] if self.over else self.state.legal_actions(),
        )
        return out

    # ------------------------------------------------------------------ changes
    def touch(self) -> None:
        self.touched = time.monotonic()

    def _check_open(self) -> None:
        if self.resigned is not None:
            raise WebError(409, "game_over", f"player {self.resigned} resigned: the game is over")
        if self.state.is_terminal():
            raise WebError(409, "game_over", "the game is over: every edge is drawn")

    def play(self, action, by: str, ply: int | None = None) -> None:
        """Play ``action`` for ``by`` ("human" or "agent"); WebError (game unchanged) when it is not that
        side's turn, ``ply`` (when given) is not the number of moves played so far, or the move is illegal."""
        self._check_open()
        if by == "human" and self.busy:
            raise WebError(409, "agent_thinking", "the agent is thinking; wait for its move")
        if self.turn != by:
            raise WebError(409, "not_your_turn", f"it is the {self.turn}'s turn (player {self.state.current_player})")
        if ply is not None and ply != len(self.state.history):
            raise WebError(409, "stale_ply", f"the move was meant for ply {ply}, but {len(self.state.history)} "
                                             "moves have been played (a repeated or late request)")
        if isinstance(action, bool) or not isinstance(action, int):
            raise WebError(400, "illegal_move", f"action must be an integer action number, got {action!r}")
        mover = self.state.current_player
        try:
            self.state = self.state.apply(action)
        except IllegalActionError as exc:
            raise WebError(400, "illegal_move", str(exc)) from None
        self.last_again = not self.state.is_terminal() and self.state.current_player == mover
        self.generation += 1
        self.error = None
        self.touch()

    def undo(self) -> None:
        """Take back to the position before the human's last move (the agent's replies after it too)."""
        if self.busy:
            raise WebError(409, "agent_thinking", "the agent is thinking; wait for its move before undoing")
        if self.resigned is not None:
            raise WebError(409, "game_over", "the game was resigned; start a new one")
        history = self.state.history
        s = GameState.new(self.rows, self.cols)
        last_human = None
        for i, a in enumerate(history):
            if s.current_player == self.human:
                last_human = i
            s = s.apply(a)
        if last_human is None:
            raise WebError(409, "nothing_to_undo", "the human has not moved yet")
        self.state = GameState.from_actions(self.rows, self.cols, history[:last_human])
        self.last_again = False
        self.generation += 1
        self.error = None
        if isinstance(self.agent, Agent):
            self.agent.reset()  # a search tree kept for the old line is of no use
        self.touch()

    def resign(self) -> None:
        self._check_open()
        self.resigned = self.human
        self.generation += 1
        self.touch()

    def record(self) -> GameRecord:
        """The game's record: its JSON (OpenSpiel action numbers) with ``to_json()``, its text form with
        ``text()``."""
        return GameRecord.of_state(self.state, self.labels, self.resigned)


class GameStore:
    """The live games of one app, at most ``max_games``. A game untouched (no request about it) for
    ``idle_s`` seconds is dropped by the next sweep (every :meth:`add` and :meth:`get` sweeps). When the
    store is full, a finished game (over or resigned, the least recently used first) makes room for a new
    one; a game still being played is never dropped for a newcomer: while every live game is in play, a
    new game is refused (WebError 503 ``too_many_games``, saying when room will come)."""

    def __init__(self, max_games: int = 64, idle_s: float = 3600.0):
        self.max_games, self.idle_s = max_games, idle_s
        self.games: dict[str, Game] = {}
        self.lock = threading.Lock()

    @staticmethod
    def _idle(game: Game) -> bool:
        return not game.busy and not game.analysis_lock.locked()

    def sweep(self) -> None:
        """Drop the games idle for longer than ``idle_s`` seconds."""
        now = time.monotonic()
        with self.lock:
            for gid in [gid for gid, g in self.games.items() if self._idle(g) and now - g.touched > self.idle_s]:
                del self.games[gid]

    def check_room(self) -> None:
        """Make room for one more game by dropping finished games; WebError 503 when ``max_games`` games
        are live and none of them is finished."""
        self.sweep()
        with self.lock:
            while len(self.games) >= self.max_games:
                finished = [g for g in self.games.values() if g.over and self._idle(g)]
                if not finished:
                    now = time.monotonic()
                    soonest = min(max(0.0, self.idle_s - (now - g.touched)) for g in self.games.values())
                    raise WebError(503, "too_many_games",
                                   f"{self.max_games} games are being played (the server's cap); a game left "
                                   f"without requests for {self.idle_s:g} s ends and makes room (the next in "
                                   f"about {soonest:.0f} s): try again later")
                del self.games[min(finished, key=lambda g: g.touched).id]

    def add(self, game: Game) -> Game:
        self.check_room()
        with self.lock:
            game.touch()
            self.games[game.id] = game
        return game

    def get(self, gid: str) -> Game:
        """The live game ``gid`` (marked as used now); WebError 404 when there is none."""
        self.sweep()
        game = self.games.get(gid)
        if game is None:
            raise WebError(404, "unknown_game", f"no live game has id {gid!r} (finished games are dropped "
                                                "after a while without requests)")
        game.touch()
        return game

    def remove(self, gid: str) -> None:
        with self.lock:
            if self.games.pop(gid, None) is None:
                raise WebError(404, "unknown_game", f"no live game has id {gid!r}")
