"""One game's record, the one type the arena's results file and the web app's saved games are written from and
read back into: the board, the two players (player 0 moves first), the actions from the empty board (OpenSpiel
numbers), the scores, and the seat that resigned, if one did.

    rec = GameRecord.of_state(state, players=("human", "alphabeta:depth=3"))
    rec.results_fields()                      -> {"scores", "moves"}: how a line of results.jsonl starts
    GameRecord.from_results_line(line, "5x5")    a line of results.jsonl (its players: ``first`` and ``second``)
    rec.to_json(), rec.text()                 the web app's saved game ("format": "dnb-game", version 1), its text
    GameRecord.from_json(data), GameRecord.from_text(text)   a saved game read back (ValueError: what is wrong)

The two files keep their own field names, so that every file written before reads as it did: a line of
results.jsonl names the actions ``moves`` and the players ``first`` and ``second``, beside the schedule and
timing fields the arena adds (:func:`agents.arena.results.game_problem` checks a line); a saved game names them
``actions`` and ``players`` and adds each move's name, the winner and the final board. A record read back holds
its board as written: the reader checks it (the web app takes boards up to 12x12) and the actions (each position).
"""

from __future__ import annotations

from dataclasses import dataclass

from dnb_env.core import GameState, parse_board

__all__ = ["GameRecord", "DEFAULT_PLAYERS"]

#: The players of a record that does not name them.
DEFAULT_PLAYERS = ("player 0", "player 1")
_TEXT_HEAD = "# dnb game "


@dataclass(frozen=True)
class GameRecord:
    """One game: ``board`` ("RxC"), ``players`` (player 0's, then player 1's), ``actions`` (opening included),
    ``scores`` (None where a read record has none) and ``resigned`` (the seat that resigned, or None)."""

    board: str
    players: tuple[str, str] = DEFAULT_PLAYERS
    actions: tuple = ()
    scores: tuple | None = None
    resigned: int | None = None

    @classmethod
    def of_state(cls, state: GameState, players=DEFAULT_PLAYERS, resigned: int | None = None) -> GameRecord:
        """The game that led to ``state``."""
        return cls(state.geometry.name, tuple(players), tuple(state.history), tuple(state.scores),
                   resigned)

    # ------------------------------------------------------------------ results.jsonl
    def results_fields(self) -> dict:
        """The record's part of a line of results.jsonl: ``scores`` and the actions as ``moves``."""
        return {"scores": list(self.scores), "moves": list(self.actions)}

    @classmethod
    def from_results_line(cls, line: dict, board: str) -> GameRecord:
        """The game of a line of results.jsonl (one :func:`~agents.arena.results.game_problem` accepts) of a
        tournament on ``board``."""
        scores = line.get("scores")
        return cls(board, (str(line.get("first")), str(line.get("second"))), tuple(line["moves"]),
                   None if scores is None else tuple(scores))

    # ------------------------------------------------------------------ the saved game
    def final_state(self) -> GameState:
        """The position after every action."""
        rows, cols = parse_board(self.board)
        return GameState.from_actions(rows, cols, list(self.actions))

    def to_json(self) -> dict:
        """The saved game: the actions, their names, scores, the resignation, the winner, whether it is over,
        and the final board as text."""
        s = self.final_state()
        return {
            "format": "dnb-game", "version": 1, "board": self.board,
            "players": list(self.players), "actions": list(self.actions),
            "moves": [s.geometry.action_name(a) for a in self.actions],
            "scores": list(s.scores), "resigned": self.resigned,
            "winner": s.winner if self.resigned is None else 1 - self.resigned,
            "finished": self.resigned is not None or s.is_terminal(), "text": str(s),
        }

    def text(self) -> str:
        """The text form of the saved game: a header, one line of action numbers, the moves, the final board."""
        s = self.final_state()
        lines = [f"{_TEXT_HEAD}{self.board}: player 0 = {self.players[0]}, player 1 = {self.players[1]}",
                 "actions: " + " ".join(map(str, self.actions))]
        lines += [f"{i + 1}. {s.geometry.action_name(a)}" for i, a in enumerate(self.actions)]
        if self.resigned is not None:
            lines.append(f"player {self.resigned} resigned")
        lines.append(str(s))
        return "\n".join(lines) + "\n"

    @classmethod
    def from_json(cls, data) -> GameRecord:
        """A saved game read back from its JSON (a dict): its board, actions and players; ValueError when it
        has no list of actions or its players are not two names."""
        if not isinstance(data, dict):
            raise ValueError("a record is a JSON object or its text form")
        board, actions = data.get("board"), data.get("actions")
        players = data.get("players") or list(DEFAULT_PLAYERS)
        if not isinstance(actions, list):
            raise ValueError("a record needs 'board' ('RxC') and 'actions' (a list of numbers)")
        if not (isinstance(players, list) and len(players) == 2 and all(isinstance(p, str) for p in players)):
            raise ValueError("'players' must be a list of two names")
        return cls(board, tuple(players), tuple(actions))

    @classmethod
    def from_text(cls, text: str) -> GameRecord:
        """A saved game read back from its text form: its board and actions (the players are not read back);
        ValueError without a header and an ``actions:`` line of numbers."""
        board = actions = None
        for line in text.splitlines():
            if line.startswith(_TEXT_HEAD):
                board = line[len(_TEXT_HEAD):].split(":")[0].strip()
            elif line.startswith("actions:"):
                try:
                    actions = [int(t) for t in line[len("actions:"):].split()]
                except ValueError:
                    raise ValueError("the actions line holds something other than numbers") from None
        if board is None or actions is None:
            raise ValueError("a text record needs a '# dnb game RxC' line and an 'actions:' line")
        return cls(board, DEFAULT_PLAYERS, tuple(actions))
