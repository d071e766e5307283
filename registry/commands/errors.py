"""What ``dnb`` prints for an error a command raised: a full disk (the file, what the run folder holds and how to go
on), a missing extra (which one to install), a ValueError (its message); anything else is a bug, raised as it is."""

from __future__ import annotations

import argparse
import errno
import os

from registry.extras import missing_extra

#: The commands that write a run folder (their --out) and go on from what it holds when run again.
_RUN_FOLDERS = ("teach", "fit", "train", "solve", "tournament")


def error_message(args: argparse.Namespace, exc: Exception) -> str | None:
    """The ``dnb: error:`` line for ``exc``, raised by the command ``args.command``; None for an error that is
    a bug."""
    from dnb_env.io import disk_full

    full = disk_full(exc)  # a full disk, wherever it was met (and whatever error it became): how to go on
    if full is not None:
        return _disk_full_message(args, full)
    if isinstance(exc, ModuleNotFoundError):  # an extra's library: say which extra; any other module is a real error
        return missing_extra(exc, f"dnb {args.command}")
    if isinstance(exc, ValueError):
        return str(exc)
    return None


def _disk_full_message(args: argparse.Namespace, exc: OSError) -> str:
    """What ``dnb`` says when a write found the disk full: the file, the run folder and what it holds
    (every command commits atomically, so what it holds is whole), and how to go on."""
    from dnb_env.io import written_name

    what = "no space left on device" if exc.errno == errno.ENOSPC else "over the disk quota"
    file = written_name(exc.filename) if isinstance(exc.filename, str) else "a file"
    folder = getattr(args, "out", None)
    if args.command not in _RUN_FOLDERS or not folder:
        return f"{what} while writing {file}; free some space and run the same command again"
    started = any(os.path.exists(os.path.join(folder, name)) for name in ("config.json", "manifest.json"))
    again = "run the same command with --resume" if args.command in ("fit", "train") and started and \
        not args.resume else "run the same command again"
    return (f"{what} while writing {file}; the run in {folder} is intact up to {_committed(args.command, folder)}, "
            f"free some space and {again}")


def _committed(command: str, folder: str) -> str:
    """What the run folder ``folder`` of ``command`` holds committed, in words ("iteration 3", "12 finished
    games"), read without trusting it (a damaged file says only "its last commit")."""
    from dnb_env.io import parse_json, read_json

    def load(name: str):
        try:
            return read_json(os.path.join(folder, name))
        except (OSError, ValueError):
            return None

    def rows(name: str) -> list:
        try:
            with open(os.path.join(folder, name), "rb") as f:
                lines = f.read().splitlines()
        except OSError:
            return []
        return [row for row, why in map(parse_json, lines) if why is None]

    if command == "teach":
        m = load("manifest.json")
        if isinstance(m, dict) and isinstance(m.get("positions"), int) and isinstance(m.get("shards"), list):
            return f"its {m['positions']:,} positions in {len(m['shards'])} shards"
    elif command == "train":
        m = load("manifest.json")
        if isinstance(m, dict) and isinstance(m.get("iteration"), int):
            return f"iteration {m['iteration']}"
    elif command == "fit":
        steps = [r["step"] for r in rows("metrics.jsonl") if isinstance(r, dict) and isinstance(r.get("step"), int)]
        if steps and os.path.exists(os.path.join(folder, "checkpoint.pt")):
            return f"step {steps[-1]}"
    elif command == "tournament":
        games = [r for r in rows("results.jsonl") if isinstance(r, dict)]
        return f"{len(games)} finished game{'s' * (len(games) != 1)}"
    elif command == "solve":
        st = load("state.json")
        if isinstance(st, dict) and all(isinstance(st.get(k), int) for k in ("nodes", "lo", "hi")):
            return f"its last save ({st['nodes']:,} nodes searched, value in [{st['lo']}, {st['hi']}])"
    main = {"teach": "manifest.json", "train": "manifest.json", "fit": "checkpoint.pt", "solve": "state.json"}
    if not os.path.exists(os.path.join(folder, main.get(command, "results.jsonl"))):
        return "its start (nothing was committed yet)"
    return "its last commit"
