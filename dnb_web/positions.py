"""Positions as the page draws them: a :class:`dnb_env.core.GameState` as JSON, and every position of a
sequence of moves (a replay).
"""

from __future__ import annotations

from dnb_env.core import GameState, IllegalActionError
from dnb_env.render import line_owners
from dnb_web.checks import WebError

__all__ = ["state_json", "frames"]


def state_json(state: GameState) -> dict:
    """The board as JSON: who drew each edge (-1: undrawn), who owns each box (-1: nobody), scores, mover."""
    drawn_by = line_owners(state)
    return {
        "board": state.geometry.name,
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
