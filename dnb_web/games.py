"""Live games of the web app: who plays, whose turn it is, undo, resign, and the state as JSON.

Framework-free (no Starlette import here): :mod:`dnb_web.app` is the HTTP layer over it. Rules come from
:class:`dnb_env.core.GameState`, agents from the registry (a ``make_agent`` callable passed in).

    store = GameStore(max_games=64)
    game = store.add(Game(board=(3, 3), opponent="random", human=0, agent=agent))
    game.play(7, by="human")         # IllegalMove / NotYourTurn (a WebError) leave the game as it was
    game.state_json()
"""

from __future__ import annotations

import os
import secrets
import threading
import time
from dataclasses import dataclass, field

from dnb_env.agent import Agent
from dnb_env.core import GameState, IllegalActionError, parse_board
from dnb_env.render import line_owners

__all__ = ["WebError", "Game", "GameStore", "parse_spec", "check_board", "state_json", "frames", "MAX_BOARD",
           "allowed_path", "inside"]

#: Largest rows / cols the web app offers (the native analysis and solver take boards up to 9x9).
MAX_BOARD = 9


class WebError(Exception):
    """An error the API reports as ``{"error": code, "message": message}`` with HTTP ``status``."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def check_board(board) -> tuple[int, int]:
    """``"RxC"`` with 1 <= R, C <= 9 -> (rows, cols); WebError 400 otherwise."""
    if not isinstance(board, str):
        raise WebError(400, "bad_board", f"board must be a string 'RxC', got {board!r}")
    try:
        rows, cols = parse_board(board)
    except ValueError as exc:
        raise WebError(400, "bad_board", str(exc)) from None
    if not (1 <= rows <= MAX_BOARD and 1 <= cols <= MAX_BOARD):
        raise WebError(400, "bad_board", f"board must be 1x1 .. {MAX_BOARD}x{MAX_BOARD}, got {board!r}")
    return rows, cols


#: Agents the web app does not offer: an ``engine`` runs a program of the request's choosing on the server,
#: so it is built only where the program is on the server's allow-list (``dnb serve --allow-engine CMD``).
REFUSED = ("engine",)
#: Options of an ``engine`` spec the web app refuses: ``log`` would write a file of the request's choosing.
ENGINE_REFUSED_OPTIONS = ("log",)


def check_engine(kwargs: dict, allowed_engines) -> None:
    """WebError 403 unless the program of the engine spec's ``cmd`` (its first word after ``shlex.split``)
    is exactly one of ``allowed_engines``, and the spec has none of :data:`ENGINE_REFUSED_OPTIONS`."""
    import shlex

    if not allowed_engines:
        raise WebError(403, "agent_refused", "the web app does not run 'engine' agents: they start programs on "
                                             "the server (its operator may allow some with dnb serve "
                                             "--allow-engine CMD)")
    try:
        argv = shlex.split(str(kwargs.get("cmd", "")))
    except ValueError as exc:
        raise WebError(400, "bad_agent", f"agent 'engine': cannot split cmd into arguments: {exc}") from None
    if not argv or argv[0] not in allowed_engines:
        program = argv[0] if argv else ""
        raise WebError(403, "agent_refused", f"the engine program {program!r} is not on this server's allow-list "
                                             f"({', '.join(allowed_engines)})")
    refused = sorted(set(kwargs) & set(ENGINE_REFUSED_OPTIONS))
    if refused:
        raise WebError(403, "agent_refused", f"the web app does not take the engine option(s) {', '.join(refused)}")


def parse_spec(spec, checkpoint_roots: list[str], allowed_engines=()) -> tuple[str, dict]:
    """An agent spec ``name[:key=value,...]`` checked against the registry (name, option names and types)
    and, for a ``checkpoint=`` option, against the allowed folders; an ``engine`` spec against
    ``allowed_engines`` (:func:`check_engine`, before the registry looks for its program). WebError 400 / 403
    otherwise."""
    from registry.specs import check_agent_spec, parse_agent_spec

    if not isinstance(spec, str) or not spec.strip() or len(spec) > 500:
        raise WebError(400, "bad_agent", f"opponent must be an agent spec like 'alphabeta:depth=4', got {spec!r}")
    try:
        name, kwargs = parse_agent_spec(spec)
    except ValueError as exc:
        raise WebError(400, "bad_agent", str(exc)) from None
    if name in REFUSED:
        check_engine(kwargs, allowed_engines)
    try:
        name, kwargs = check_agent_spec(spec)
    except ValueError as exc:
        raise WebError(400, "bad_agent", str(exc)) from None
    if "checkpoint" in kwargs and kwargs["checkpoint"] is not None:
        kwargs["checkpoint"] = allowed_path(str(kwargs["checkpoint"]), checkpoint_roots, "checkpoint", want="file")
    return name, kwargs


def allowed_path(path: str, roots: list[str], what: str, want: str = "dir") -> str:
    """``path`` (relative to the working directory) resolved, if it lies inside one of ``roots``; WebError
    403 when outside them, 404 when it does not exist or is not a ``want`` ("dir" or "file"), 400 when it
    cannot be a path at all (a NUL byte, an unencodable character)."""
    try:
        real = os.path.realpath(os.fsdecode(os.fsencode(path)))
    except ValueError as exc:  # "embedded null byte"; UnicodeEncodeError (a lone surrogate) is one too
        raise WebError(400, "bad_path", f"{what} {path!r} is not a usable path ({exc})") from None
    for root in roots:
        root = os.path.realpath(root)
        try:
            inside = os.path.commonpath([real, root]) == root
        except ValueError:  # different drives
            inside = False
        if inside:
            break
    else:
        raise WebError(403, "forbidden_path",
                       f"{what} {path!r} is outside the allowed folders ({', '.join(roots) or 'none'})")
    ok = os.path.isdir(real) if want == "dir" else os.path.isfile(real)
    if not ok:
        raise WebError(404, "not_found", f"{what} {path!r} is not an existing {'folder' if want == 'dir' else 'file'}")
    return real


def walk_within(root: str, levels: int = 3):
    """``os.walk`` of ``root`` that goes at most ``levels`` folders deep (sub-folder lists sorted)."""
    for dirpath, dirnames, files in os.walk(root):
        if dirpath[len(root):].count(os.sep) >= levels:
            dirnames[:] = []
        dirnames.sort()
        yield dirpath, dirnames, files


def inside(path: str, folder: str, want: str = "file") -> str | None:
    """The real path of ``path`` if it is an existing file (``want="file"``) or folder whose real path
    lies inside ``folder``'s real path (symbolic links resolved); None otherwise."""
    real, top = os.path.realpath(path), os.path.realpath(folder)
    try:
        if os.path.commonpath([real, top]) != top:
            return None
    except ValueError:
        return None
    return real if (os.path.isfile(real) if want == "file" else os.path.isdir(real)) else None


def state_json(state: GameState) -> dict:
    """The board as JSON: who drew each edge (-1: undrawn), who owns each box (-1: nobody), scores, mover."""
    drawn_by = line_owners(state)
    return {
        "board": f"{state.rows}x{state.cols}",
        "rows": state.rows,
        "cols": state.cols,
        "num_actions": state.num_actions,
        "edges": [drawn_by.get(a, -1) for a in range(state.num_actions)],
        "boxes": [-1 if (o := state.box_owner(b)) is None else o for b in range(state.rows * state.cols)],
        "scores": list(state.scores),
        "current_player": state.current_player,
        "history": list(state.history),
        "ply": len(state.history),
        "last_move": state.history[-1] if state.history else None,
        "terminal": state.is_terminal(),
        "winner": state.winner,
        "text": str(state),
    }


def frames(rows: int, cols: int, actions) -> list[dict]:
    """The position after each prefix of ``actions`` (frame 0 = empty board), each with ``again``: the
    player who made the last move moves again. WebError 400 for an illegal sequence."""
    state = GameState.new(rows, cols)
    out = [dict(state_json(state), again=False)]
    for i, a in enumerate(actions):
        if isinstance(a, bool) or not isinstance(a, int):
            raise WebError(400, "bad_record", f"move {i + 1}: {a!r} is not an action number")
        mover = state.current_player
        try:
            state = state.apply(a)
        except IllegalActionError as exc:
            raise WebError(400, "bad_record", f"move {i + 1}: {exc}") from None
        out.append(dict(state_json(state), again=not state.is_terminal() and state.current_player == mover))
    return out


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

    def record(self) -> dict:
        """The game as a JSON record (OpenSpiel action numbers) with its text form."""
        s = self.state
        return {
            "format": "dnb-game", "version": 1, "board": f"{self.rows}x{self.cols}",
            "players": list(self.labels), "actions": list(s.history),
            "moves": [s.geometry.action_name(a) for a in s.history],
            "scores": list(s.scores), "resigned": self.resigned, "winner": self.winner,
            "finished": self.over, "text": str(s),
        }


def record_text(record: dict) -> str:
    """The text form of a record: a header, one line of action numbers, the moves, the final board."""
    lines = [f"# dnb game {record['board']}: player 0 = {record['players'][0]}, player 1 = {record['players'][1]}",
             "actions: " + " ".join(map(str, record["actions"]))]
    lines += [f"{i + 1}. {m}" for i, m in enumerate(record["moves"])]
    if record.get("resigned") is not None:
        lines.append(f"player {record['resigned']} resigned")
    lines.append(record["text"])
    return "\n".join(lines) + "\n"


def read_record(data) -> tuple[int, int, list[int], list[str]]:
    """(rows, cols, actions, players) of a JSON record (a dict) or of its text form (a str)."""
    if isinstance(data, str):
        board = actions = None
        players = ["player 0", "player 1"]
        for line in data.splitlines():
            if line.startswith("# dnb game "):
                head = line[len("# dnb game "):]
                board = head.split(":")[0].strip()
            elif line.startswith("actions:"):
                try:
                    actions = [int(t) for t in line[len("actions:"):].split()]
                except ValueError:
                    raise WebError(400, "bad_record", "the actions line holds something other than numbers") from None
        if board is None or actions is None:
            raise WebError(400, "bad_record", "a text record needs a '# dnb game RxC' line and an 'actions:' line")
    elif isinstance(data, dict):
        board, actions = data.get("board"), data.get("actions")
        players = data.get("players") or ["player 0", "player 1"]
        if not isinstance(actions, list):
            raise WebError(400, "bad_record", "a record needs 'board' ('RxC') and 'actions' (a list of numbers)")
        if not (isinstance(players, list) and len(players) == 2 and all(isinstance(p, str) for p in players)):
            raise WebError(400, "bad_record", "'players' must be a list of two names")
    else:
        raise WebError(400, "bad_record", "a record is a JSON object or its text form")
    try:
        rows, cols = check_board(board)
    except WebError as exc:
        raise WebError(400, "bad_record", f"the record's board: {exc.message}") from None
    return rows, cols, actions, [p[:200] for p in players]


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
