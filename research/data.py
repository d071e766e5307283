"""The research's data: packed archives in git, unpacked into ignored working folders, older files from history.

    python research/data.py list                         # the archives kept in research/, with their sizes
    python research/data.py unpack data/teach5-held      # research/datasets/teach5-held.tar.xz -> data/teach5-held
    python research/data.py unpack runs/nim-eval         # research/runs/nim-eval.tar.xz -> runs/nim-eval
    python research/data.py unpack --all                 # every archive
    python research/data.py pack data/teach5-new         # data/teach5-new -> research/datasets/teach5-new.tar.xz
    python research/data.py restore data/teach5-a runs/fit/df-100k-safe/checkpoint.pt   # from git history

A dataset ``data/NAME`` (a teacher set: manifest.json and its shards) is kept as one archive
``research/datasets/NAME.tar.xz``; a study's run folder ``runs/FOLDER`` (tournament results, fit metrics,
logs) as ``research/runs/FOLDER.tar.xz``, without checkpoints, plots and TensorBoard event files, which the
results do not need to be checked again (the exported weights they refer to are in ``research/weights/``).
``data/`` and ``runs/`` are ignored by git: whatever the research commands write there stays on the machine
until it is packed.

Files that were tracked before the research moved here (every intermediate checkpoint, the 37 MB training
set ``teach5-a``, the large replaced 5x5 weights) are in the repository's history at commit
``HISTORY_COMMIT``: ``restore`` writes them back at their old paths. It needs a full clone (not
``--depth 1``).

Writing is atomic: an archive is written to a temporary file and renamed; an unpacked folder appears whole or
not at all; an existing folder or file is never overwritten unless ``--force`` is given.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shutil
import subprocess
import sys
import tarfile
import tempfile

from dnb_env.io import HOLDER, LOCK, is_temporary

ROOT = pathlib.Path(__file__).resolve().parents[1]
RESEARCH = ROOT / "research"
#: where each kind of working folder is packed: ``data/NAME`` -> ``research/datasets``, ``runs/NAME`` -> ``research/runs``
HOMES = {"data": "datasets", "runs": "runs"}
#: the commit whose tree still held the research's run folders and datasets as loose files
HISTORY_COMMIT = "39cdebd0a84011b35cbe84a79bfe125b50150ffc"
#: what ``pack`` leaves out of a run folder: checkpoints, plots, TensorBoard event files, a killed run's
#: unfinished iterations, and the folder's lock (``dnb_env.io``) and temporary files
SKIP_SUFFIXES = (".pt", ".png")
SKIP_NAMES = (LOCK, HOLDER)
SKIP_DIRS = ("tensorboard",)


class DataError(ValueError):
    """A request that cannot be carried out; the message says why (nothing was changed)."""


def _split(path: str) -> tuple[str, str]:
    """``"data/teach5-held"`` -> ``("data", "teach5-held")``; refuses anything but a folder directly under
    data/ or runs/."""
    parts = pathlib.PurePosixPath(path.strip().rstrip("/")).parts
    if len(parts) != 2 or parts[0] not in HOMES or parts[1] in (".", "..") or parts[1].startswith("."):
        raise DataError(f"expected data/NAME or runs/NAME, got {path!r}")
    return parts[0], parts[1]


def archive_path(path: str, root: pathlib.Path = ROOT) -> pathlib.Path:
    """The archive that holds the working folder ``path`` (``data/NAME`` or ``runs/NAME``)."""
    kind, name = _split(path)
    return root / "research" / HOMES[kind] / f"{name}.tar.xz"


def archives(root: pathlib.Path = ROOT) -> list[str]:
    """Every packed folder, as the working path it unpacks to (``data/teach5-held``, ``runs/nim-eval``)."""
    out = []
    for kind, home in HOMES.items():
        folder = root / "research" / home
        if folder.is_dir():
            out += [f"{kind}/{p.name[:-len('.tar.xz')]}" for p in sorted(folder.glob("*.tar.xz"))]
    return out


def _keep(member: pathlib.Path) -> bool:
    return member.suffix not in SKIP_SUFFIXES and member.name not in SKIP_NAMES and not is_temporary(member.name) \
        and ".tfevents." not in member.name \
        and not any(part in SKIP_DIRS or part.endswith(".partial") for part in member.parts)


def pack(path: str, root: pathlib.Path = ROOT, *, force: bool = False) -> pathlib.Path:
    """Pack the working folder ``root/path`` into its archive (xz); returns the archive's path."""
    kind, name = _split(path)
    folder, out = root / kind / name, archive_path(path, root)
    if not folder.is_dir():
        raise DataError(f"no folder {folder}")
    if out.exists() and not force:
        raise DataError(f"{out.relative_to(root)} exists (use --force to replace it)")
    files = sorted(p for p in folder.rglob("*") if p.is_file() and _keep(p.relative_to(folder)))
    if not files:
        raise DataError(f"{folder} holds nothing to pack")
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.", suffix=".tmp")
    os.close(fd)
    try:
        with tarfile.open(tmp, "w:xz", preset=9) as tar:
            for f in files:
                info = tar.gettarinfo(f, arcname=str(pathlib.PurePosixPath(name, *f.relative_to(folder).parts)))
                info.uid = info.gid = 0
                info.uname = info.gname = ""
                info.mtime = 0          # the same folder packs to the same bytes
                with open(f, "rb") as fh:
                    tar.addfile(info, fh)
        os.replace(tmp, out)
    except BaseException:
        pathlib.Path(tmp).unlink(missing_ok=True)
        raise
    return out


def _extract(tar: tarfile.TarFile, dest: pathlib.Path) -> None:
    if hasattr(tarfile, "data_filter"):
        tar.extractall(dest, filter="data")
    else:  # Python before 3.10.12 / 3.11.4: check the names by hand
        for m in tar.getmembers():
            p = pathlib.PurePosixPath(m.name)
            if p.is_absolute() or ".." in p.parts or not (m.isfile() or m.isdir()):
                raise DataError(f"refusing archive member {m.name!r}")
        tar.extractall(dest)


def unpack(path: str, root: pathlib.Path = ROOT, *, into: pathlib.Path | None = None,
           force: bool = False) -> pathlib.Path:
    """Unpack the archive of ``path`` kept under ``root/research`` into ``into/path`` (``into`` defaults to
    ``root``), whole or not at all; returns the folder."""
    kind, name = _split(path)
    src, dest = archive_path(path, root), (root if into is None else pathlib.Path(into)) / kind / name
    if not src.exists():
        known = ", ".join(archives(root)) or "none"
        raise DataError(f"no archive for {path} (looked for {src.relative_to(root)}); packed: {known}")
    if dest.exists() and not force:
        raise DataError(f"{dest} exists (use --force to replace it)")
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = pathlib.Path(tempfile.mkdtemp(dir=dest.parent, prefix=f".{name}.", suffix=".tmp"))
    try:
        with tarfile.open(src, "r:xz") as tar:
            names = {pathlib.PurePosixPath(m.name).parts[0] for m in tar.getmembers()}
            if names != {name}:
                raise DataError(f"{src.name} should hold the one folder {name!r}, holds {sorted(names)}")
            _extract(tar, tmp)
        if dest.exists():
            shutil.rmtree(dest)
        os.replace(tmp / name, dest)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return dest


def restore(path: str, root: pathlib.Path = ROOT, *, commit: str = HISTORY_COMMIT, force: bool = False) -> list[str]:
    """Write the files under ``path`` as they were at ``commit`` back into ``root``; returns their paths."""
    rel = pathlib.PurePosixPath(path.strip().rstrip("/"))
    if rel.is_absolute() or ".." in rel.parts or not rel.parts:
        raise DataError(f"expected a path inside the repository, got {path!r}")
    def git(*args):
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True)
    if git("cat-file", "-e", f"{commit}^{{commit}}").returncode != 0:
        raise DataError(f"commit {commit[:12]} is not in this clone: restoring needs the full history "
                        "(a clone without --depth)")
    listed = git("ls-tree", "-r", "--name-only", commit, "--", str(rel))
    files = [f for f in listed.stdout.decode().splitlines() if f == str(rel) or f.startswith(f"{rel}/")]
    if not files:
        raise DataError(f"{rel} was not tracked at commit {commit[:12]}")
    clash = [f for f in files if (root / f).exists()]
    if clash and not force:
        raise DataError(f"{len(clash)} of the files exist already, e.g. {clash[0]} (use --force to replace them)")
    for f in files:
        blob = git("show", f"{commit}:{f}")
        if blob.returncode != 0:
            raise DataError(f"git could not read {f} at {commit[:12]}: {blob.stderr.decode().strip()}")
        target = root / f
        target.parent.mkdir(parents=True, exist_ok=True)
        tmp = target.with_name(f".{target.name}.tmp")
        tmp.write_bytes(blob.stdout)
        os.replace(tmp, target)
    return files


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="research/data.py", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = p.add_subparsers(dest="command", required=True)
    sub.add_parser("list", help="the archives kept in research/")
    for name, text in (("unpack", "unpack archives into data/ or runs/"), ("pack", "pack working folders"),
                       ("restore", f"restore files from history (commit {HISTORY_COMMIT[:12]})")):
        q = sub.add_parser(name, help=text)
        q.add_argument("paths", nargs="*", help="data/NAME or runs/NAME" + (", or any old path" if name == "restore" else ""))
        q.add_argument("--force", action="store_true", help="replace what exists")
        if name == "unpack":
            q.add_argument("--all", action="store_true", help="every archive")
    args = p.parse_args(argv)
    try:
        if args.command == "list":
            for path in archives():
                print(f"{path:32s} {archive_path(path).stat().st_size / 2**20:7.2f} MiB  {archive_path(path).relative_to(ROOT)}")
            return 0
        paths = archives() if getattr(args, "all", False) else args.paths
        if not paths:
            p.error(f"{args.command}: name at least one path")
        for path in paths:
            if args.command == "unpack":
                if getattr(args, "all", False) and (ROOT / path).exists() and not args.force:
                    print(f"{path}: exists, left as it is")
                    continue
                print(f"{path}: unpacked into {unpack(path, force=args.force).relative_to(ROOT)}")
            elif args.command == "pack":
                out = pack(path, force=args.force)
                print(f"{path}: packed into {out.relative_to(ROOT)} ({out.stat().st_size / 2**20:.2f} MiB)")
            else:
                print(f"{path}: {len(restore(path, force=args.force))} files restored")
    except DataError as exc:
        print(f"research/data.py: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
