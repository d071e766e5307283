"""How the web app refuses a request (:class:`WebError`: an HTTP status, a code and a message) and its check of
a board (1x1 up to :data:`MAX_BOARD` boxes a side).

Framework-free (no Starlette import here), like the rest of the game logic.
"""

from __future__ import annotations

from dnb_env.core import parse_board

__all__ = ["WebError", "MAX_BOARD", "check_board"]

#: Largest rows / cols the web app offers (the native engine's: analysis and solver take boards up to 12x12).
MAX_BOARD = 12


class WebError(Exception):
    """An error the API reports as ``{"error": code, "message": message}`` with HTTP ``status``."""

    def __init__(self, status: int, code: str, message: str):
        super().__init__(message)
        self.status, self.code, self.message = status, code, message


def check_board(board) -> tuple[int, int]:
    """``"RxC"`` with 1 <= R, C <= MAX_BOARD -> (rows, cols); WebError 400 otherwise."""
    if not isinstance(board, str):
        raise WebError(400, "bad_board", f"board must be a string 'RxC', got {board!r}")
    try:
        rows, cols = parse_board(board)
    except ValueError as exc:
        raise WebError(400, "bad_board", str(exc)) from None
    if not (1 <= rows <= MAX_BOARD and 1 <= cols <= MAX_BOARD):
        raise WebError(400, "bad_board", f"board must be 1x1 .. {MAX_BOARD}x{MAX_BOARD}, got {board!r}")
    return rows, cols
