"""Tournament folders (``dnb tournament --out``) as the web app shows them, read only: the folders under the
allowed roots (named by their path relative to the root, with their progress: games on file, games the
config asks for, and whether a run holds the folder's lock now), a folder's standings (the Elo table by Elo,
best first), plots and games, one game move by move.

The games come from :func:`agents.arena.results.read_games` (the arena's one reader and validator of
``results.jsonl``; lines of the wrong shape are skipped, and a browser moves nothing aside). Every file is
read only when its real path lies inside the folder (symbolic links resolved), so a link cannot leak a file
from elsewhere. The list counts each folder's games through a :class:`PlayedCounts` of the app: a results
file is read again only when it changed (its inode, modification time or size), not on every request.
"""

from __future__ import annotations

import csv
import json
import os
import re
import threading
from collections import OrderedDict

from agents.arena import TournamentConfig
from agents.arena.record import GameRecord
from agents.arena.results import CONFIG, RESULTS, folder_locked, read_games
from dnb_env.core import geometry
from dnb_web.checks import WebError, check_board
from dnb_web.paths import inside, walk_within
from dnb_web.positions import frames

__all__ = ["PlayedCounts", "list_folders", "find_folder", "folder_view", "plot_file", "folder_game", "sorted_elo"]


class PlayedCounts:
    """The distinct games on file of each results file, read again only when the file changed: kept by its
    real path with the file's (device, inode, modification time, size), for at most ``limit`` files (the
    least recently asked for go first). Thread-safe (the app's handlers run in a thread pool)."""

    def __init__(self, limit: int = 1024):
        self.limit = limit
        self._entries: OrderedDict[str, tuple[tuple, int]] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, path: str) -> int:
        """The distinct valid games of the results file ``path`` (a real path; 0 when it cannot be read)."""
        try:
            st = os.stat(path)
        except OSError:
            return 0
        key = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_size)
        with self._lock:
            hit = self._entries.get(path)
            if hit is not None and hit[0] == key:
                self._entries.move_to_end(path)
                return hit[1]
        count = len({r["id"] for r in read_games(path)})  # read outside the lock: others wait for no file
        with self._lock:
            self._entries[path] = (key, count)
            self._entries.move_to_end(path)
            while len(self._entries) > self.limit:
                self._entries.popitem(last=False)
        return count


def list_folders(roots, counts: PlayedCounts | None = None) -> list[dict]:
    """Folders within three levels of ``roots`` that hold a ``results.jsonl`` of their own (not a link out),
    each as ``name`` (its path relative to its root, "/"-separated; "." for a root that is a tournament
    folder itself), ``root`` (the index of that root in ``roots``) and its progress (:func:`progress`).
    ``counts``: the games on file of each results file, kept between calls (None: every file read now)."""
    counts = PlayedCounts() if counts is None else counts
    found = []
    for k, root in enumerate(roots):
        if not os.path.isdir(root):
            continue
        for dirpath, _, files in walk_within(root):
            if RESULTS in files and inside(os.path.join(dirpath, RESULTS), root):
                name = os.path.relpath(dirpath, root).replace(os.sep, "/")
                real = inside(os.path.join(dirpath, RESULTS), dirpath)  # as _games reads it
                found.append({"name": name, "root": k, **progress(dirpath, counts(real) if real else 0)})
    return found


def progress(path: str, played: int | None = None) -> dict:
    """How far the tournament in the folder ``path`` is: ``played`` (distinct games on file; counted now
    unless given), ``scheduled`` (the games its config asks for; None without a readable config),
    ``in_progress`` (a run holds the folder's lock now: :func:`agents.arena.results.folder_locked`; None
    where that cannot be told) and ``complete`` (every scheduled game is on file)."""
    done = len({r["id"] for r in _games(path)}) if played is None else played
    cfg = _read_json(path, CONFIG)
    try:
        config = TournamentConfig.from_json(cfg)
        scheduled = len(config.pairs()) * config.games
    except (TypeError, ValueError, AttributeError):  # no config, or one this version cannot read
        scheduled = None
    return {"played": done, "scheduled": scheduled, "in_progress": folder_locked(path),
            "complete": scheduled is not None and done >= scheduled}


def find_folder(folder: str, roots, root: int | None = None) -> str:
    """The path of the tournament folder named ``folder``: its name relative to ``roots[root]``, or when
    ``root`` is None, to the first root where it exists (a path as the server sees it, absolute or relative
    to its working directory, is taken as well). Whether the result lies inside a root is the caller's check
    (:func:`dnb_web.paths.allowed_path`); WebError 400 for a ``root`` out of range."""
    if root is not None:
        if not 0 <= root < len(roots):
            raise WebError(400, "bad_root", f"root={root} is not one of the {len(roots)} results folders (0..{len(roots) - 1})")
        return os.path.join(roots[root], folder)
    candidates = [os.path.join(r, folder) for r in roots] + [folder]
    for path in candidates:
        if os.path.isdir(path):
            return path
    return candidates[0]


def sorted_elo(rows: list[dict]) -> list[dict]:
    """The rows of ``elo.csv`` by Elo, highest first (ties in file order; a row without a number last)."""
    def key(row):
        try:
            elo = float(row.get("elo"))
        except (TypeError, ValueError):
            return (1, 0.0)
        return (0, -elo) if elo == elo else (1, 0.0)  # NaN last
    return sorted(rows, key=key)


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
    except (OSError, ValueError, RecursionError):  # missing, not JSON (or nested too deeply to read)
        return None


def _games(folder: str) -> list[dict]:
    """The valid game lines of the folder's results file (none when it is missing or a link out)."""
    path = inside(os.path.join(folder, RESULTS), folder)
    return [] if path is None else read_games(path)


def folder_view(path: str, folder: str) -> dict:
    """The tournament in the folder ``path`` (shown as ``folder``): its config, Elo table (by Elo, highest
    first) and pair table, plots, a line per game and its progress (:func:`progress`)."""
    records = _games(path)  # read once: the games and their count
    games = [{"id": r["id"], "first": r.get("first"), "second": r.get("second"), "scores": r.get("scores"),
              "result_first": r.get("result_first"), "moves": len(r["moves"]),
              "opening": len(r.get("opening") or [])} for r in records]
    plots = sorted(f for f in os.listdir(path) if f.endswith(".png") and inside(os.path.join(path, f), path))
    return {"folder": folder, "config": _read_json(path, CONFIG), "elo": sorted_elo(_read_csv(path, "elo.csv")),
            "pairs": _read_csv(path, "pairs.csv"), "plots": plots, "games": games,
            **progress(path, len({r["id"] for r in records}))}


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
    for line in _games(path):
        if line["id"] == game_id:
            rec = GameRecord.from_results_line(line, geometry(rows, cols).name)
            return {"board": rec.board, "players": list(rec.players), "actions": list(rec.actions),
                    "opening": len(line.get("opening") or []), "frames": frames(rows, cols, rec.actions)}
    raise WebError(404, "not_found", f"no game {game_id!r} in {folder!r}")
