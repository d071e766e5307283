"""Tournament folders (``dnb tournament --out``) as the web app shows them, read only: the folders under the
allowed roots, a folder's standings, plots and games, one game move by move.

The games come from :func:`agents.arena.results.read_games` (the arena's one reader and validator of
``results.jsonl``; lines of the wrong shape are skipped, and a browser moves nothing aside). Every file is
read only when its real path lies inside the folder (symbolic links resolved), so a link cannot leak a file
from elsewhere.
"""

from __future__ import annotations

import csv
import json
import os
import re

from agents.arena.results import CONFIG, RESULTS, read_games
from dnb_web.games import WebError, check_board, frames, inside, walk_within

__all__ = ["list_folders", "folder_view", "plot_file", "folder_game"]


def list_folders(roots) -> list[str]:
    """Folders within three levels of ``roots`` that hold a ``results.jsonl`` of their own (not a link out)."""
    found = []
    for root in roots:
        if not os.path.isdir(root):
            continue
        for dirpath, _, files in walk_within(root):
            if RESULTS in files and inside(os.path.join(dirpath, RESULTS), root):
                found.append(dirpath)
    return found


def _read_csv(folder: str, name: str) -> list[dict]:
    path = inside(os.path.join(folder, name), folder)
    if path is None:
        return []
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except (OSError, csv.Error, UnicodeDecodeError):
        return []


def _read_json(folder: str, name: str):
    path = inside(os.path.join(folder, name), folder)
    if path is None:
        return None
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _games(folder: str) -> list[dict]:
    """The valid game lines of the folder's results file (none when it is missing or a link out)."""
    path = inside(os.path.join(folder, RESULTS), folder)
    return [] if path is None else read_games(path)


def folder_view(path: str, folder: str) -> dict:
    """The tournament in the folder ``path`` (shown as ``folder``): its config, Elo and pair tables, plots and
    a line per game."""
    games = [{"id": r["id"], "first": r.get("first"), "second": r.get("second"), "scores": r.get("scores"),
              "result_first": r.get("result_first"), "moves": len(r["moves"]),
              "opening": len(r.get("opening") or [])} for r in _games(path)]
    plots = sorted(f for f in os.listdir(path) if f.endswith(".png") and inside(os.path.join(path, f), path))
    return {"folder": folder, "config": _read_json(path, CONFIG), "elo": _read_csv(path, "elo.csv"),
            "pairs": _read_csv(path, "pairs.csv"), "plots": plots, "games": games}


def plot_file(path: str, name: str) -> str | None:
    """The real path of the plot ``name`` (a plain ``*.png`` file name) of the folder ``path``, or None."""
    return inside(os.path.join(path, name), path) if re.fullmatch(r"[\w.-]+\.png", name) else None


def folder_game(path: str, folder: str, game_id: str) -> dict:
    """The game ``game_id`` of the folder ``path`` (shown as ``folder``) with every position; WebError 404 when
    the folder has no readable config (its board) or no such game."""
    cfg = _read_json(path, CONFIG)
    if not isinstance(cfg, dict) or "board" not in cfg:
        raise WebError(404, "not_found", f"{folder!r} has no readable config.json (its board)")
    rows, cols = check_board(cfg["board"])
    for rec in _games(path):
        if rec["id"] == game_id:
            return {"board": f"{rows}x{cols}", "players": [str(rec.get("first")), str(rec.get("second"))],
                    "actions": rec["moves"], "opening": len(rec.get("opening") or []),
                    "frames": frames(rows, cols, rec["moves"])}
    raise WebError(404, "not_found", f"no game {game_id!r} in {folder!r}")
