"""File helpers, one per job, used across the package: atomic writes, JSON-lines append and validated reading.

```python
from dnb_env.io import JsonlAppender, atomic_write, read_jsonl
atomic_write("out/elo.csv", text)                 # readers see the old file or the new one, never a part
log = JsonlAppender("out/results.jsonl"); log.add({"id": "0-1-0", ...}); log.close()
rows = read_jsonl("out/results.jsonl", check)     # bad lines go to out/results.jsonl.rejected, with a warning
```
"""

from __future__ import annotations

import json
import os
import warnings
from typing import Callable

__all__ = ["atomic_write", "JsonlAppender", "read_jsonl"]


def atomic_write(path: str, data: str | bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file beside it, fsync and rename."""
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "wb" if isinstance(data, bytes) else "w") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


class JsonlAppender:
    """Appends one JSON document per line, flushed and fsynced at once: a killed writer loses at most the
    line it was writing."""

    def __init__(self, path: str):
        self.f = open(path, "a")

    def add(self, row) -> None:
        self.f.write(json.dumps(row) + "\n")
        self.f.flush()
        os.fsync(self.f.fileno())

    def close(self) -> None:
        self.f.close()


def read_jsonl(path: str, check: Callable[[object], str | None] | None = None) -> list:
    """The rows of the JSON-lines file ``path`` in file order (none when it does not exist).

    A line that is not JSON, or whose row ``check`` rejects (it returns why, or None for a good row), is
    moved aside: appended to ``path + ".rejected"`` and removed from ``path``, which is rewritten atomically
    with every other line as it was; a warning says how many lines went where, and why. Nothing readable is
    ever dropped. A last line without its newline (a killed writer's, if valid) gets one, so that appending
    goes on cleanly."""
    try:
        with open(path, "rb") as f:
            lines = f.read().splitlines(keepends=True)
    except FileNotFoundError:
        return []
    rows, kept, rejected, why = [], [], [], []
    for n, line in enumerate(lines, 1):
        if not line.strip():
            kept.append(line)
            continue
        try:
            row = json.loads(line)
        except ValueError as exc:  # JSONDecodeError, or bytes that are not text
            problem = f"not valid JSON ({getattr(exc, 'msg', exc)})"
        else:
            problem = check(row) if check else None
        if problem is None:
            rows.append(row)
            kept.append(line)
        else:
            rejected.append(line.rstrip(b"\r\n") + b"\n")
            why.append(f"line {n}: {problem}")
    if rejected:
        aside = path + ".rejected"
        with open(aside, "ab") as f:
            f.writelines(rejected)
            f.flush()
            os.fsync(f.fileno())
        more = f"; and {len(why) - 3} more" if len(why) > 3 else ""
        warnings.warn(f"{path}: moved {len(rejected)} unreadable line(s) to {aside} ({'; '.join(why[:3])}{more})",
                      stacklevel=2)
    if kept and not kept[-1].endswith(b"\n"):
        kept[-1] += b"\n"
    elif not rejected:
        return rows
    atomic_write(path, b"".join(kept))
    return rows
