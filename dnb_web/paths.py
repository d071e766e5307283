"""Paths the web app reads: a path given in a request only inside the allowed folders, the files of a
folder only where their real path stays inside it (symbolic links resolved), folder walks of bounded depth.
"""

from __future__ import annotations

import os

from dnb_web.checks import WebError

__all__ = ["allowed_path", "walk_within", "inside"]


def allowed_path(path: str, roots: list[str], what: str, want: str = "dir") -> str:
    """``path`` (relative to the working directory) resolved, if it lies inside one of ``roots``; WebError
    403 when outside them, 404 when it does not exist or is not a ``want`` ("dir" or "file"), 400 when it
    cannot be a path at all (a NUL byte, an unencodable character)."""
    try:
        real = os.path.realpath(os.fsdecode(os.fsencode(path)))
    except ValueError as exc:  # "embedded null byte"; UnicodeEncodeError (a lone surrogate) is one too
        raise WebError(400, "bad_path", f"{what} {path!r} is not a usable path ({exc})") from None
    for root in roots:
        root = os.path.realpath(root)
        try:
            inside = os.path.commonpath([real, root]) == root
        except ValueError:  # different drives
            inside = False
        if inside:
            break
    else:
        raise WebError(403, "forbidden_path",
                       f"{what} {path!r} is outside the allowed folders ({', '.join(roots) or 'none'})")
    ok = os.path.isdir(real) if want == "dir" else os.path.isfile(real)
    if not ok:
        raise WebError(404, "not_found", f"{what} {path!r} is not an existing {'folder' if want == 'dir' else 'file'}")
    return real


def walk_within(root: str, levels: int = 3):
    """``os.walk`` of ``root`` that goes at most ``levels`` folders deep (sub-folder lists sorted)."""
    for dirpath, dirnames, files in os.walk(root):
        if dirpath[len(root):].count(os.sep) >= levels:
            dirnames[:] = []
        dirnames.sort()
        yield dirpath, dirnames, files


def inside(path: str, folder: str, want: str = "file") -> str | None:
    """The real path of ``path`` if it is an existing file (``want="file"``) or folder whose real path
    lies inside ``folder``'s real path (symbolic links resolved); None otherwise."""
    real, top = os.path.realpath(path), os.path.realpath(folder)
    try:
        if os.path.commonpath([real, top]) != top:
            return None
    except ValueError:
        return None
    return real if (os.path.isfile(real) if want == "file" else os.path.isdir(real)) else None
