"""The web app's reading of a saved game (:class:`agents.arena.record.GameRecord`, JSON or text) for a replay:
WebError 400 ``bad_record`` for one it cannot replay."""

from __future__ import annotations

from agents.arena.record import GameRecord
from dnb_web.checks import WebError, check_board

__all__ = ["read_record"]


def read_record(data) -> tuple[int, int, list[int], list[str]]:
    """(rows, cols, actions, players) of a JSON record (a dict) or of its text form (a str)."""
    try:
        rec = GameRecord.from_text(data) if isinstance(data, str) else GameRecord.from_json(data)
    except ValueError as exc:
        raise WebError(400, "bad_record", str(exc)) from None
    try:
        rows, cols = check_board(rec.board)
    except WebError as exc:
        raise WebError(400, "bad_record", f"the record's board: {exc.message}") from None
    return rows, cols, list(rec.actions), [p[:200] for p in rec.players]
