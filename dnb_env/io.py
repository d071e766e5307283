"""File helpers, one per job, used across the package: atomic writes, JSON-lines append and validated reading.

```python
from dnb_env.io import JsonlAppender, atomic_write, read_jsonl
atomic_write("out/elo.csv", text)                 # readers see the old file or the new one, never a part
log = JsonlAppender("out/results.jsonl"); log.add({"id": "0-1-0", ...}); log.close()
rows = read_jsonl("out/results.jsonl", check)     # bad lines go to out/results.jsonl.rejected, with a warning
with RunLock("out", what="teach"):                # one writer per run folder; a second one: FolderBusy
    ...                                           # (what a killed writer left, *.tmp* files, is gone)
```

Every command that writes a run folder (``dnb teach``, ``fit``, ``train``, ``solve``, ``tournament``) holds
its :class:`RunLock` for the length of the run: a second writer of the same folder is refused at once,
before it changes anything, with an error naming the holder (pid, host, start time). The lock is
``flock`` on ``FOLDER/.lock`` (:mod:`filelock`), released by the kernel when the holder dies, so a killed
run never leaves the folder locked; the holder is described in ``FOLDER/.lock.json``. Taking the lock
removes what a killed writer left (:func:`sweep_temporaries`). Readers (the web
app, ``dnb report``, ``dnb plot``, loading a dataset) never take it; :func:`folder_locked` tells them
whether a writer holds it now.
"""

from __future__ import annotations

import datetime
import errno
import json
import os
import re
import shutil
import socket
import time
import warnings
from typing import Callable

__all__ = ["atomic_write", "JsonlAppender", "read_jsonl", "RunLock", "FolderBusy", "LOCK", "HOLDER",
           "folder_locked", "sweep_temporaries", "is_temporary", "disk_full", "written_name", "parse_json", "read_json"]

#: The lock file of a run folder (``flock`` on it while a writer runs; the file stays after the run).
LOCK = ".lock"
#: Beside it, who holds (or last held) the lock: ``{"what", "pid", "host", "since"}``.
HOLDER = ".lock.json"
#: The name of a temporary file: ``NAME.tmp``, ``NAME.tmpPID`` or ``NAME.tmpPID.EXT`` (:func:`atomic_write`,
#: the solver's table, the training plot).
_TEMPORARY = re.compile(r"\.tmp\d*(\.[A-Za-z0-9]+)?$")


def _write(f, data: bytes) -> None:
    """Write ``data`` whole to the unbuffered file ``f`` and on to the disk (the one place this module
    writes a run's files)."""
    view = memoryview(data)
    while view:
        view = view[f.write(view):]
    os.fsync(f.fileno())


def _named(exc: OSError, path: str) -> OSError:
    """``exc`` with ``path`` as its file name where it has none (a failed write names no file)."""
    if exc.filename is not None:
        return exc
    named = OSError(exc.errno, exc.strerror or str(exc), path)
    named.__cause__ = exc
    return named


def atomic_write(path: str, data: str | bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file beside it, fsync and rename. An OSError (a full
    disk: errno ENOSPC) names ``path`` and leaves the old file as it was."""
    tmp = f"{path}.tmp{os.getpid()}"
    try:
        with open(tmp, "wb", buffering=0) as f:
            _write(f, data if isinstance(data, bytes) else data.encode())
        os.replace(tmp, path)
    except OSError as exc:
        raise _named(exc, path) from None
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


class JsonlAppender:
    """Appends one JSON document per line, flushed and fsynced at once: a killed writer loses at most the
    line it was writing. A line that could not be written whole (a full disk) is cut off again, so the file
    ends with a whole line, and the OSError names the file."""

    def __init__(self, path: str):
        self.path = path
        self.f = open(path, "ab", buffering=0)

    def add(self, row) -> None:
        end = self.f.tell()
        try:
            _write(self.f, (json.dumps(row) + "\n").encode())
        except OSError as exc:
            try:
                self.f.truncate(end)
                self.f.seek(end)
            except OSError:
                pass  # a torn last line is moved aside by the next read_jsonl
            raise _named(exc, self.path) from None

    def close(self) -> None:
        try:
            self.f.close()
        except OSError as exc:
            raise _named(exc, self.path) from None


def parse_json(text: bytes) -> tuple[object, str | None]:
    """``(document, None)`` for the JSON text ``text``, or ``(None, why)`` when it is not one: not UTF-8 text,
    cut short, two documents, nested too deeply to read, a number of over 4,300 digits."""
    try:
        return json.loads(text.decode("utf-8")), None
    except UnicodeDecodeError as exc:
        return None, f"not text: byte {exc.object[exc.start]:#04x} at position {exc.start} is not UTF-8"
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON ({exc.msg.removesuffix(' at')} at line {exc.lineno} column {exc.colno})"
    except ValueError:  # Python reads no integer of over 4,300 digits
        return None, "not valid JSON (a number too long to read)"
    except RecursionError:
        return None, "not valid JSON (nested too deeply to read)"


def read_json(path: str, what: str | None = None, error: type[ValueError] = ValueError):
    """The JSON document in the file ``path``. A missing file raises FileNotFoundError; one that cannot be
    read, or is not JSON (:func:`parse_json`), raises ``error`` naming it: "PATH is not WHAT: WHY" (or "PATH
    is WHY" without ``what``)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except FileNotFoundError:
        raise
    except OSError as exc:
        raise error(f"{path} cannot be read ({exc.strerror or exc})") from None
    doc, why = parse_json(data)
    if why is not None:
        raise error(f"{path} is {why}" if what is None else f"{path} is not {what}: {why}")
    return doc


def read_jsonl(path: str, check: Callable[[object], str | None] | None = None) -> list:
    """The rows of the JSON-lines file ``path`` in file order (none when it does not exist).

    A line that is not JSON (or nested too deeply to read), or whose row ``check`` rejects (it returns why, or None for a good row), is
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
        row, problem = parse_json(line)
        if problem is None and check is not None:
            problem = check(row)
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


class FolderBusy(ValueError):
    """Another process holds the :class:`RunLock` of a folder."""


def _holder(folder: str) -> tuple[str, str] | None:
    """(what, " (pid P on HOST, since TIME)") from the holder file of ``folder``; None when it is missing,
    unreadable or names a process of this host that is gone (the holder before the present one, which has
    not yet written its name)."""
    try:
        with open(os.path.join(folder, HOLDER)) as f:
            h = json.load(f)
        what, pid, host, since = str(h["what"]), int(h["pid"]), str(h["host"]), str(h["since"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    if host == socket.gethostname() and pid != os.getpid():
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return None
        except OSError:
            pass
    return what, f" (pid {pid} on {host}, since {since})"


class RunLock:
    """The exclusive lock of the run folder ``folder`` (made if missing) for the length of a run; ``what``
    names the command, as a refused writer reads it: "another teach is writing to FOLDER (pid 14465 on
    HOST, since 2026-11-29 01:23:45 +0000)". Taken at once or never: a held lock raises :class:`FolderBusy` (a
    ValueError; ``dnb`` prints it and exits with code 2). Once taken, what a killed writer left is removed
    (:func:`sweep_temporaries`, with ``partial_dirs``). A context manager, or ``close()`` it."""

    def __init__(self, folder: str, what: str = "run", partial_dirs: str | None = None):
        from filelock import FileLock, Timeout

        self.folder, self.what = folder, what
        os.makedirs(folder, exist_ok=True)
        self.lock = FileLock(os.path.join(folder, LOCK))
        try:
            self.lock.acquire(timeout=0)
        except Timeout:
            holder = _holder(folder)
            for _ in range(20):  # the holder may have taken the lock a moment ago and not yet written its name
                if holder is not None:
                    break
                time.sleep(0.05)
                holder = _holder(folder)
            other, who = holder or (what, "")
            raise FolderBusy(f"another {other} is writing to {folder}{who}; wait for it to finish or stop it "
                             "first") from None
        try:
            since = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S %z")
            atomic_write(os.path.join(folder, HOLDER), json.dumps(
                {"what": what, "pid": os.getpid(), "host": socket.gethostname(), "since": since}) + "\n")
            sweep_temporaries(folder, partial_dirs)
        except BaseException:
            self.lock.release()
            raise

    def close(self) -> None:
        self.lock.release()

    def __enter__(self) -> "RunLock":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def folder_locked(folder: str, locks: str = "/proc/locks") -> bool | None:
    """Whether a writer holds the :class:`RunLock` of ``folder`` now. Read without taking the lock (a probe
    that took it, however briefly, could make a run starting at that moment fail): the ``flock`` locks the
    kernel lists in ``locks`` (Linux's ``/proc/locks``), matched by the lock file's inode number (the device
    there may be named differently from ``os.stat``'s, e.g. on overlay file systems). False when the folder
    has no lock file (no run ever held it); None when it cannot be told (no ``/proc/locks``: another
    system)."""
    try:
        inode = os.stat(os.path.join(folder, LOCK)).st_ino
    except OSError:
        return False
    try:
        with open(locks) as f:
            table = f.read()
    except OSError:
        return None
    for line in table.splitlines():
        # "1: FLOCK  ADVISORY  WRITE 8747 fe:00:5514510 0 EOF"; a waiter's line reads "1: -> FLOCK ..."
        parts = line.split()
        if len(parts) >= 6 and parts[1] == "FLOCK" and parts[5].rpartition(":")[2] == str(inode):
            return True
    return False


def is_temporary(name: str) -> bool:
    """Whether the file name ``name`` is a temporary file's (``x.tmp``, ``x.tmp123``, ``x.tmp123.png``)."""
    return _TEMPORARY.search(name) is not None


def sweep_temporaries(folder: str, partial_dirs: str | None = None) -> list[str]:
    """Remove what a killed writer of ``folder`` left: its temporary files (:func:`is_temporary`) and,
    under the subfolder ``partial_dirs`` where given, the folders named ``*.partial`` (and temporary files
    inside its other folders). :class:`RunLock` calls it once taken; returns the removed paths."""
    removed = []

    def files(where: str) -> None:
        try:
            names = os.listdir(where)
        except OSError:
            return
        for name in names:
            path = os.path.join(where, name)
            if is_temporary(name) and os.path.isfile(path) and not os.path.islink(path):
                os.remove(path)
                removed.append(path)

    files(folder)
    if partial_dirs is not None:
        root = os.path.join(folder, partial_dirs)
        for name in sorted(os.listdir(root)) if os.path.isdir(root) else []:
            path = os.path.join(root, name)
            if not os.path.isdir(path) or os.path.islink(path):
                continue
            if name.endswith(".partial"):
                shutil.rmtree(path)
                removed.append(path)
            else:
                files(path)
    return removed


def disk_full(exc: BaseException | None) -> OSError | None:
    """The OSError of a full disk (errno ENOSPC, or EDQUOT: over a quota) that is ``exc`` or that ``exc``
    came from (its cause or context, at any depth); None when there is none."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT):
            return exc
        exc = exc.__cause__ or exc.__context__
    return None


def written_name(path: str) -> str:
    """The file a temporary file stands in for (``run/table.bin`` for ``run/table.bin.tmp123``); any other
    path as it is."""
    return _TEMPORARY.sub("", path)
