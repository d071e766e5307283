"""The web app's game record: the JSON a game is saved as (``GET /api/games/{id}/record``), its text form,
and the reading of either back for a replay.
"""

from __future__ import annotations

from dnb_web.checks import WebError, check_board

__all__ = ["record_text", "read_record"]


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
