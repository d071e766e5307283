"""Self-play with one inference process: the paper-size networks' batched rate on ``--device`` and self-play's
rate in one process against actor processes feeding one inference process (``inference=shared``).

1. The evaluator's batched rate: positions/s of :class:`agents.models.evaluator.NetworkEvaluator` (self-play's
   runtime, ``auto``: eager on a GPU) at ``--batches`` rows (default 64, 512, 2048), for each family of
   ``--families`` at its ``paper`` preset (random weights, seed 0: speed does not depend on them); the
   median of ``--reps`` passes.
2. Self-play at each of ``--simulations``: ``--games`` games of the paper preset (solver zones off, so that the
   network bounds the run; ``--moves`` searched moves a game, from start step edges - moves), played
   ``single`` (:func:`agents.training.selfplay.self_play` in this process, the network on ``--device``, as
   ``dnb train`` with ``workers=1``) and ``shared``
   (:class:`agents.training.selfplay_shared.SharedInferencePool`: ``--actors`` actor processes, default the
   cores less one, and one inference process on ``--device``). Each row: leaf evaluations/s (rows through
   the network), positions/s, the network's busy share (seconds in the evaluator's forward passes / wall;
   for ``shared`` those of the inference process), the rows of an average forward pass, and the share of
   moves equal to ``single``'s (the games are the same up to the float noise of batch composition). The
   processes are started, and a one-move game played, before the clock; the clock includes what an
   iteration does first (``single``: its evaluator made, with the runtime's copy of the weights;
   ``shared``: the weights sent to the inference process, which makes its evaluator).

``--seconds`` is the run's budget: a self-play run whose time, estimated from the same path's earlier rate,
would pass it is skipped (a row saying so). ``--quick``: 3x3, batches 64 and 256, 16 simulations, 4 games of
4 moves (under a minute on 2 CPU cores).

    python benchmarks/selfplay_gpu.py [--device cuda] [--families resnet,dotsformer] [--simulations 100,800]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import statistics
import time
import warnings

import numpy as np
import torch

from agents.models import build_model
from agents.models.evaluator import NetworkEvaluator
from agents.search.evaluators import TimedEvaluator
from agents.training.config import make_train_config
from agents.training.selfplay import self_play
from agents.training.selfplay_shared import SharedInferencePool
from dnb_env.core import GameState, geometry
from dnb_env.observations import encode_batch

QUICK = {"board": "3x3", "batches": "64,256", "simulations": "16", "games": 4, "moves": 4, "reps": 2}


def config(family: str, board: str, simulations: int, games: int, device: str, **kw):
    """The paper preset of ``family`` for the benchmark's self-play (solver zones off, no internal nodes)."""
    return make_train_config(family, "paper", board=board, simulations=simulations, games_per_iteration=games,
                             extra_nodes=False, device=device,
                             **{"search.solve_leaf": 0, "search.solve_root": 0, **kw})


def positions(board: str, n: int, seed: int = 0) -> list[GameState]:
    """``n`` positions of random play (0..half the moves played), as the search's leaves are."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        s = GameState.new(board)
        for _ in range(int(rng.integers(0, s.num_actions // 2))):
            s = s.apply(int(rng.choice(s.legal_actions())))
        out.append(s)
    return out


def batched_rate(net, device: str, board: str, batches, reps: int) -> dict:
    """Positions/s of the evaluator's ``evaluate_planes`` at each batch size (median of ``reps``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        evaluator = NetworkEvaluator(net, device, runtime="auto")
    pool = positions(board, max(batches))
    planes = encode_batch(net.config.encoder, pool)
    masks = np.stack([s.legal_mask() for s in pool]).astype(bool)
    out = {}
    for b in batches:
        evaluator.evaluate_planes(planes[:b], masks[:b])  # warm-up (kernels, caches)
        times = []
        for _ in range(reps):
            t = time.perf_counter()
            evaluator.evaluate_planes(planes[:b], masks[:b])
            times.append(time.perf_counter() - t)
        out[b] = b / statistics.median(times)
    return out


def run_single(net, cfg, start: int) -> dict:
    """One ``self_play`` call in this process: its measurements and moves."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        warm = TimedEvaluator(NetworkEvaluator(net, cfg.device, runtime=cfg.selfplay_runtime))
        self_play(net, cfg, 0, geometry(cfg.board).num_actions - 1, games=range(1), evaluator=warm)
        t = time.perf_counter()  # the evaluator made on the clock, as an iteration makes it
        evaluator = TimedEvaluator(NetworkEvaluator(net, cfg.device, runtime=cfg.selfplay_runtime))
        samples, stats = self_play(net, cfg, 1, start, evaluator=evaluator)
        wall = time.perf_counter() - t
    rows = sum(evaluator.sizes.values())
    return {"wall": wall, "positions": stats["positions"], "rows": rows, "busy": evaluator.seconds,
            "forwards": sum(n // k for k, n in evaluator.sizes.items() if k), "moves": samples.move}


def run_shared(net, cfg, start: int, actors: int) -> dict:
    """The same games through a :class:`SharedInferencePool` of ``actors`` actors (started before the clock)."""
    pool = SharedInferencePool(dataclasses.replace(cfg, workers=actors, inference="shared"))
    try:
        pool.play(net, 0, geometry(cfg.board).num_actions - 1, games=range(actors))  # every process up
        before = pool.counts()
        t = time.perf_counter()
        samples, stats = pool.play(net, 1, start)
        wall = time.perf_counter() - t
        after = pool.counts()
    finally:
        pool.close()
    delta = {k: after[k] - before[k] for k in after}
    return {"wall": wall, "positions": stats["positions"], "rows": delta["rows"], "busy": delta["busy_s"],
            "forwards": delta["forwards"], "moves": samples.move}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu", help="cpu or cuda")
    p.add_argument("--families", default="resnet,dotsformer")
    p.add_argument("--board", default="5x5")
    p.add_argument("--batches", default="64,512,2048", help="batch sizes of the evaluator's rate")
    p.add_argument("--reps", type=int, default=5, help="timed passes per batch size")
    p.add_argument("--simulations", default="100,800")
    p.add_argument("--games", type=int, default=120, help="self-play games a run (in lockstep or in shares)")
    p.add_argument("--moves", type=int, default=12, help="searched moves a game (start step: edges - moves)")
    p.add_argument("--actors", type=int, default=max(1, (os.cpu_count() or 2) - 1), help="shared: actor processes")
    p.add_argument("--seconds", type=float, default=420, help="the run's budget (self-play runs past it are skipped)")
    p.add_argument("--quick", action="store_true", help="a smoke run: " + ", ".join(f"{k} {v}" for k, v in QUICK.items()))
    p.add_argument("--json", default="", help="write the results here")
    args = p.parse_args(argv)
    if args.quick:
        for key, value in QUICK.items():
            setattr(args, key, value)
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        p.error(f"--device {args.device}: torch sees no GPU here")
    if not 1 <= args.moves < geometry(args.board).num_actions or args.games < 1 or args.actors < 1:
        p.error(f"--moves must be in 1..{geometry(args.board).num_actions - 1}; --games and --actors >= 1")
    began = time.perf_counter()
    torch.set_num_threads(1)  # as a self-play process runs (threads=1)
    batches = [int(b) for b in args.batches.split(",")]
    sims = sorted(int(s) for s in args.simulations.split(","))
    start = geometry(args.board).num_actions - args.moves
    res: dict = {"device": args.device, "board": args.board, "actors": args.actors, "families": {}}
    print(f"device {args.device}, board {args.board}, torch {torch.__version__}, {os.cpu_count()} cores, "
          f"shared: {args.actors} actor processes + 1 inference process")
    for family in args.families.split(","):
        torch.manual_seed(0)
        net = build_model(config(family, args.board, sims[0], args.games, args.device).model).to(args.device).eval()
        out = res["families"][family] = {"params": sum(x.numel() for x in net.parameters())}
        out["batched"] = batched_rate(net, args.device, args.board, batches, args.reps)
        print(f"\n{family} (paper preset, {out['params']:,} parameters): evaluator positions/s by batch size: "
              + ", ".join(f"{b}: {r:,.0f}" for b, r in out["batched"].items()))
        print(f"self-play, {args.games} games of {args.moves} searched moves (start step {start}, solver zones off)")
        print("| simulations | path | leaf evaluations/s | positions/s | network busy | rows per forward | "
              "ratio | same moves as single |")
        print("|---:|---|---:|---:|---:|---:|---:|---:|")
        out["self_play"], pace = [], {}  # pace: the path's seconds per simulation of its earlier runs
        for s in sims:
            cfg = config(family, args.board, s, args.games, args.device)
            work = args.games * args.moves * s
            runs = {}
            for path in ("single", "shared"):
                left = args.seconds - (time.perf_counter() - began)
                if left <= 0 or (path in pace and pace[path] * work > left):
                    guess = f"about {pace[path] * work:.0f} s, " if path in pace else ""
                    print(f"| {s} | {path} | skipped: {guess}{max(0, left):.0f} s of the budget left | | | | | |")
                    continue
                r = run_single(net, cfg, start) if path == "single" else run_shared(net, cfg, start, args.actors)
                pace[path] = r["wall"] / work
                runs[path] = r
                ref = runs.get("single")
                ratio = f"{ref['wall'] / r['wall'] * r['positions'] / ref['positions']:.2f}x" if ref else "-"
                same = f"{np.mean(ref['moves'] == r['moves']):.1%}" if ref and len(ref["moves"]) == len(r["moves"]) else "-"
                row = {"simulations": s, "path": path, "leaves_per_s": r["rows"] / r["wall"],
                       "positions_per_s": r["positions"] / r["wall"], "busy": r["busy"] / r["wall"],
                       "rows_per_forward": r["rows"] / max(1, r["forwards"]), "wall": r["wall"]}
                out["self_play"].append(row)
                print(f"| {s} | {path} | {row['leaves_per_s']:,.0f} | {row['positions_per_s']:.1f} | "
                      f"{row['busy']:.0%} | {row['rows_per_forward']:.0f} | {ratio} | {same} |")
    res["seconds"] = time.perf_counter() - began
    print(f"\n{res['seconds']:.0f} s in all")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1)
    return res


if __name__ == "__main__":
    main()
