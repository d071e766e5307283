"""Fingerprints of seeded behaviour, to compare a checkout before and after a restructure.

    python benchmarks/behaviour.py --out before.json            # in the old checkout
    python benchmarks/behaviour.py --out after.json             # in the new one
    python benchmarks/behaviour.py --compare before.json after.json

Each fingerprint is a SHA-256 over what a seeded run produced, with the clock's readings left out:

* ``tournament``: a seeded round robin on 3x3 through ``dnb tournament`` (every game's moves, scores and
  result, the pairs and Elo tables);
* ``agent/NAME/BOARD``: the shipped network agents' raw policies and values, and their searched moves and
  probabilities, on seeded positions; the baselines' moves on the same positions;
* ``env/ENCODER``: a seeded Gymnasium episode's observations, masks and rewards for every encoder;
* ``train``: one ``dnb train`` iteration (the checkpoint's weights, the replay samples and the metrics);
* ``teach`` and ``fit``: a ``dnb teach`` dataset's shards and a short ``dnb fit`` on it.

``--compare`` prints each key as same or DIFFERENT (or missing on one side) and exits 1 on any difference.
Everything runs on the CPU in one process; about two minutes on two cores (``--quick``: a few seconds a part).
"""

from __future__ import annotations

import argparse
import csv
import glob
import hashlib
import json
import os
import pathlib
import sys
import tempfile

import numpy as np

#: Names of fields that read the clock, besides those in seconds (``*_s``, ``*_seconds``).
TIMED = ("seconds", "time", "elapsed", "wall")


def _timed(key: str) -> bool:
    return key in TIMED or key.endswith(("_s", "_seconds", "_elapsed"))


class Digest:
    """A SHA-256 fed with arrays (dtype, shape and bytes) and JSON-able values."""

    def __init__(self):
        self._h = hashlib.sha256()

    def add(self, value) -> None:
        if isinstance(value, np.ndarray):
            arr = np.ascontiguousarray(value)
            self._h.update(f"{arr.dtype}{arr.shape}".encode())
            self._h.update(arr.tobytes())
        else:
            self._h.update(json.dumps(value, sort_keys=True, default=str).encode())

    def hexdigest(self) -> str:
        return self._h.hexdigest()


def _untimed(record):
    """A JSON record without the clock's readings (at any depth)."""
    if isinstance(record, dict):
        return {k: _untimed(v) for k, v in record.items() if not _timed(str(k))}
    if isinstance(record, list):
        return [_untimed(v) for v in record]
    return record


def _cli(args: list[str]) -> None:
    from registry.cli import main

    code = main(args)
    if code not in (0, None):
        raise SystemExit(f"dnb {' '.join(args)} exited with {code}")


def _positions(board: str, count: int, seed: int):
    """Seeded random playouts cut at every few moves: positions from the opening to the endgame."""
    from dnb_env.core import GameState

    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        state = GameState.new(board)
        stop = int(rng.integers(0, len(state.legal_actions()) - 2))
        for _ in range(stop):
            state = state.apply(int(rng.choice(state.legal_actions())))
        out.append(state)
    return out


def tournament(work: str, quick: bool) -> dict:
    agents = "random,greedy,alphabeta:depth=2,prsboxes,alphazero:simulations=20,dotsformer:simulations=20"
    if quick:
        agents = "random,greedy,alphabeta:depth=2"
    out = os.path.join(work, "tournament")
    _cli(["tournament", "--board", "3x3", "--agents", agents, "--games", "2", "--openings", "2:guided",
          "--seed", "7", "--workers", "1", "--out", out, "--no-progress"])
    d = Digest()
    with open(os.path.join(out, "results.jsonl")) as f:
        for line in sorted(f):
            d.add(_untimed(json.loads(line)))
    for name in ("pairs.csv", "elo.csv"):
        with open(os.path.join(out, name), newline="") as f:
            for row in csv.DictReader(f):
                d.add(_untimed(row))
    return {"tournament": d.hexdigest()}


def agents(quick: bool) -> dict:
    from registry import make_agent

    found = {}
    boards = ("3x3",) if quick else ("3x3", "5x5")
    for board in boards:
        states = _positions(board, 6 if quick else 16, seed=11)
        for name in ("alphazero", "dotsformer", "alphavit"):
            raw = make_agent(name, board=board, seed=3, simulations=0)
            searched = make_agent(name, board=board, seed=3, simulations=16 if quick else 64)
            d = Digest()
            for state in states:
                d.add(np.asarray(raw.action_probabilities(state), dtype=np.float64))
                d.add(raw.analyse(state).get("value"))
                searched.reset()
                d.add(int(searched.select_action(state)))
                d.add(np.asarray(searched.action_probabilities(state), dtype=np.float64))
            found[f"agent/{name}/{board}"] = d.hexdigest()
        for spec in ("greedy", "alphabeta:depth=3", "prsboxes", "mcts:simulations=200", "solver"):
            name, _, opts = spec.partition(":")
            kwargs = dict(o.split("=") for o in opts.split(",")) if opts else {}
            kwargs = {k: int(v) for k, v in kwargs.items()}
            d = Digest()
            for state in states:
                if name == "solver" and len(state.legal_actions()) > 20:
                    continue
                agent = make_agent(name, board=board, seed=5, **kwargs)
                d.add(int(agent.select_action(state)))
            found[f"agent/{spec}/{board}"] = d.hexdigest()
    return found


def envs(quick: bool) -> dict:
    import gymnasium as gym

    import dnb_env  # noqa: F401  (registers the ids)
    from dnb_env.observations import list_encoders

    found = {}
    for encoder in list_encoders():
        env = gym.make("DotsAndBoxes-3x3-v0", obs_type=encoder, opponent="greedy")
        d = Digest()
        obs, info = env.reset(seed=9)
        rng = np.random.default_rng(9)
        for _ in range(3 if quick else 30):
            d.add({k: np.asarray(v) for k, v in obs.items()} if isinstance(obs, dict) else np.asarray(obs))
            mask = info.get("action_mask", None)
            legal = np.flatnonzero(mask) if mask is not None else np.flatnonzero(obs["action_mask"])
            obs, reward, terminated, truncated, info = env.step(int(rng.choice(legal)))
            d.add([float(reward), bool(terminated), bool(truncated)])
            if terminated or truncated:
                obs, info = env.reset()
        env.close()
        found[f"env/{encoder}"] = d.hexdigest()
    return found


def _npz_digest(path: str) -> str:
    """The arrays of an ``.npz`` file by name, less those that read the clock."""
    d = Digest()
    with np.load(path) as z:
        for k in sorted(z.files):
            if not _timed(k):
                d.add(k)
                d.add(z[k])
    return d.hexdigest()


def _weights_digest(path: str) -> str:
    import torch

    blob = torch.load(path, map_location="cpu", weights_only=True)
    d = Digest()

    def walk(value, key=""):
        if isinstance(value, torch.Tensor):
            d.add(key)
            d.add(value.detach().cpu().numpy())
        elif isinstance(value, dict):
            for k in sorted(value, key=str):
                walk(value[k], f"{key}/{k}")
        elif isinstance(value, (list, tuple)):
            for i, v in enumerate(value):
                walk(v, f"{key}/{i}")
        else:
            d.add([key, _untimed(value) if isinstance(value, (dict, list)) else value])

    extra = blob.get("extra", {}) if isinstance(blob, dict) else {}
    # the weights and what the checkpoint says of them; the run's config (whose keys a restructure may rename)
    # and the optimiser's moments (fingerprinted through the next iteration's weights) are left out
    walk({k: v for k, v in blob.items() if k != "extra"} if isinstance(blob, dict) else blob)
    walk({k: v for k, v in extra.items() if k not in ("config", "optimizer")}, "extra")
    return d.hexdigest()


def _jsonl_digest(path: str) -> str:
    d = Digest()
    with open(path) as f:
        for line in f:
            d.add(_untimed(json.loads(line)))
    return d.hexdigest()


def train(work: str, quick: bool) -> dict:
    out = os.path.join(work, "train")
    _cli(["train", "--model", "resnet", "--board", "2x2", "--iterations", "1" if quick else "2", "--games", "4",
          "--simulations", "8", "--seed", "0", "--out", out, "--no-progress"])
    found = {}
    for ckpt in sorted(glob.glob(os.path.join(out, "iterations", "*", "checkpoint.pt"))):
        found[f"train/{os.path.basename(os.path.dirname(ckpt))}/weights"] = _weights_digest(ckpt)
    for name in sorted(glob.glob(os.path.join(out, "iterations", "*", "*.npz"))):
        found[f"train/{os.path.relpath(name, out)}"] = _npz_digest(name)
    metrics = os.path.join(out, "metrics.jsonl")
    if os.path.exists(metrics):
        found["train/metrics"] = _jsonl_digest(metrics)
    return found


def teach_and_fit(work: str, quick: bool) -> dict:
    data = os.path.join(work, "teach")
    _cli(["teach", "--board", "3x3", "--undrawn", "8-16", "--positions", "40" if quick else "200",
          "--players", "greedy,alphabeta:depth=2,prsboxes", "--shard-size", "50", "--seed", "4",
          "--workers", "1", "--out", data, "--no-progress"])
    found = {}
    for name in sorted(glob.glob(os.path.join(data, "*.npz"))):
        found[f"teach/{os.path.basename(name)}"] = _npz_digest(name)
    fit = os.path.join(work, "fit")
    _cli(["fit", "--model", "resnet", "--board", "3x3", "--data", data, "--steps", "5" if quick else "20",
          "--batch-size", "16", "--eval-every", "5", "--seed", "2", "--threads", "1", "--out", fit,
          "--no-progress"])
    found["fit/weights"] = _weights_digest(os.path.join(fit, "checkpoint.pt"))
    return found


PARTS = {"tournament": tournament, "agents": agents, "envs": envs, "train": train, "teach": teach_and_fit}


def fingerprints(parts=tuple(PARTS), quick: bool = False) -> dict:
    import torch

    torch.set_num_threads(1)
    found = {}
    with tempfile.TemporaryDirectory() as work:
        for part in parts:
            fn = PARTS[part]
            takes_work = fn.__code__.co_varnames[:1] == ("work",)
            found.update(fn(work, quick) if takes_work else fn(quick))
    return found


def compare(before: dict, after: dict) -> list[str]:
    """The keys whose fingerprints differ or that one side lacks, as lines to print."""
    lines = []
    for key in sorted(set(before) | set(after)):
        if key not in after:
            lines.append(f"{key}: missing after")
        elif key not in before:
            lines.append(f"{key}: missing before")
        elif before[key] != after[key]:
            lines.append(f"{key}: DIFFERENT")
    return lines


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", help="write the fingerprints here (JSON)")
    parser.add_argument("--parts", default=",".join(PARTS), help=f"comma-separated, of {', '.join(PARTS)}")
    parser.add_argument("--quick", action="store_true", help="small runs of each part")
    parser.add_argument("--compare", nargs=2, metavar=("BEFORE", "AFTER"), help="compare two fingerprint files")
    args = parser.parse_args(argv)
    if args.compare:
        before, after = (json.loads(pathlib.Path(p).read_text()) for p in args.compare)
        lines = compare(before, after)
        for line in lines:
            print(line)
        print(f"{len(set(before) & set(after)) - sum('DIFFERENT' in x for x in lines)} of "
              f"{len(set(before) | set(after))} fingerprints the same")
        return 1 if lines else 0
    parts = [p for p in args.parts.split(",") if p]
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        parser.error(f"unknown parts {unknown}; choose from {', '.join(PARTS)}")
    found = fingerprints(parts, args.quick)
    text = json.dumps(found, indent=1, sort_keys=True)
    if args.out:
        pathlib.Path(args.out).write_text(text + "\n")
    print(f"{len(found)} fingerprints" + (f" in {args.out}" if args.out else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
