"""A training run folder's state between GPU sessions: what it has done, how fast, and a lean archive of it.

    python research/gpu-selfplay/state.py done RUN              # committed iterations (0: none or no folder)
    python research/gpu-selfplay/state.py pace RUN              # median seconds an iteration (0: not known)
    python research/gpu-selfplay/state.py lean RUN ARCHIVE      # RUN as ARCHIVE (.tar.xz), resumable

A lean archive holds one folder named like ``RUN`` with ``config.json``, ``manifest.json``, ``metrics.jsonl``
and the one iteration folder the manifest names (checkpoint, replay, metrics): what ``dnb train --resume``
reads. It leaves out the iteration kept before it, the copies for people (``checkpoint.pt``,
``training.png``), the TensorBoard files and the lock. Its checkpoint keeps the network, the curriculum and
the optimiser's settings but not Adam's moment estimates: those are twice the weights' size, and both
paper-size runs must travel to the GPU machine inside its 64 MiB working tree beside a 46 MiB checkout. A
run resumed from a lean archive therefore restarts Adam's moments (and its bias correction) at that
iteration; everything else continues as committed.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import shutil
import statistics
import sys
import tarfile
import tempfile

KEPT = ("config.json", "manifest.json", "metrics.jsonl")


class StateError(ValueError):
    """A run folder that cannot be read or archived; the message names it and says why."""


def manifest(run: pathlib.Path) -> dict | None:
    """The run's manifest (``{"iteration": i, "dir": ...}``), or None when nothing was committed."""
    path = run / "manifest.json"
    if not path.exists():
        return None
    try:
        m = json.loads(path.read_text())
        if not isinstance(m.get("iteration"), int) or not isinstance(m.get("dir"), str):
            raise ValueError("no iteration and dir")
    except (ValueError, AttributeError) as exc:
        raise StateError(f"{path} is not a run manifest ({exc})") from None
    return m


def done(run: pathlib.Path) -> int:
    """Committed iterations of the run in ``run`` (0 when there is no run yet)."""
    m = manifest(run)
    return 0 if m is None else m["iteration"]


def pace(run: pathlib.Path, last: int = 5) -> float:
    """Median wall seconds of the run's last ``last`` iterations (0.0 when none is recorded)."""
    from agents.training.store import read_metrics

    path = run / "metrics.jsonl"
    if not path.exists():
        return 0.0
    rows = read_metrics(str(path))
    times = [r["iteration_s"] for r in rows if isinstance(r.get("iteration_s"), (int, float))]
    return float(statistics.median(times[-last:])) if times else 0.0


def _drop_moments(checkpoint: pathlib.Path) -> None:
    """Rewrite ``checkpoint`` without Adam's per-weight state (its param groups stay: lr, weight decay)."""
    import torch

    from agents.checkpoint import atomic_torch_save

    payload = torch.load(checkpoint, map_location="cpu", weights_only=True)  # tensors and plain data only
    optimizer = payload.get("extra", {}).get("optimizer")
    if not isinstance(optimizer, dict) or "param_groups" not in optimizer:
        raise StateError(f"{checkpoint} holds no optimiser state to make lean")
    payload["extra"]["optimizer"] = {"state": {}, "param_groups": optimizer["param_groups"]}
    atomic_torch_save(payload, str(checkpoint))


def lean(run: pathlib.Path, archive: pathlib.Path) -> pathlib.Path:
    """Write the lean archive of ``run`` (module docstring) to ``archive``; returns it."""
    m = manifest(run)
    if m is None:
        raise StateError(f"{run} holds no committed iteration to archive")
    with tempfile.TemporaryDirectory() as tmp:
        copy = pathlib.Path(tmp) / run.name
        copy.mkdir()
        for name in KEPT:
            shutil.copy2(run / name, copy / name)
        shutil.copytree(run / m["dir"], copy / m["dir"])
        _drop_moments(copy / m["dir"] / "checkpoint.pt")
        archive.parent.mkdir(parents=True, exist_ok=True)
        part = archive.with_name(archive.name + ".part")
        with tarfile.open(part, "w:xz", preset=6) as tar:
            tar.add(copy, arcname=run.name)
        part.replace(archive)
    return archive


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    for name in ("done", "pace"):
        sub.add_parser(name).add_argument("run", type=pathlib.Path)
    q = sub.add_parser("lean")
    q.add_argument("run", type=pathlib.Path)
    q.add_argument("archive", type=pathlib.Path)
    args = p.parse_args(argv)
    try:
        if args.command == "done":
            print(done(args.run))
        elif args.command == "pace":
            print(f"{pace(args.run):.1f}")
        else:
            print(lean(args.run, args.archive))
    except (StateError, OSError) as exc:
        print(f"state.py: error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
