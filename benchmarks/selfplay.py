"""Self-play at the CPU's limit: the 5x5 networks' FLOP/s against a plain matmul, and self-play positions/s
before and after the inference options, side by side in one run on one torch thread.

Networks (``--nets``): ``resnet6x64`` (the AlphaZero ResNet of 6 blocks x 64 trained by self-play on a GPU,
shipped for 5x5 until the teacher-trained pair replaced it, kept as ``research/weights/az5-selfplay.pt``), and the
``cpu`` presets of the families ``resnet`` (3 x 32), ``dotsformer`` (D 32, T R R) and ``alphavit`` (random
weights, seed 0: speed does not depend on them).

1. FLOPs per position (``torch.utils.flop_counter``, multiply-adds x 2) and the forward pass's achieved
   GFLOP/s at the batch sizes self-play gives the network (``--batches``) for each runtime
   (:func:`agents.models.evaluator.inference_module`: eager, jit, nnpack, int8, and onnx when ONNX Runtime is
   installed; the FLOPs are always the direct
   convolution's, so a Winograd runtime can pass the matmul), against a plain ``torch.matmul`` of the shape a
   3x3 convolution of the network's width has as a GEMM on the same thread (``[B*H*W, 9c] @ [9c, c]``, c =
   ResNet width or transformer dim), and a 512 x 512 x 512 matmul (the core's practical peak). Medians of
   ``--reps`` interleaved runs.
2. Self-play positions/s: :func:`agents.training.selfplay.self_play` with the training ``cpu`` preset (100
   simulations, pruning, margin values, root noise, no tree reuse), ``--games`` games in lockstep from start
   step ``--start`` to the end (every position a sample). ``--solver off`` (the default) turns the exact
   solver zones off, so that the network bounds the run; ``--solver auto`` keeps the preset's zones (on 5x5 the
   C++ solver then takes most of the time of the small networks, which no network option changes). Variants
   ``cache/runtime`` (``--variants``): ``off/eager`` is the path before the options; ``exact`` and
   ``canonical`` are the evaluation cache's keys (:mod:`agents.search.cache`); ``jit``, ``nnpack``, ``int8``,
   ``onnx`` and ``auto`` (self-play's default, :func:`agents.models.evaluator.auto_runtime`) the runtimes;
   ``exact/auto`` is self-play's default path. A third part ``/wN`` plays the games in N processes of one thread
   each, as a training run with ``workers=N`` does (every game has its own seed, so the games are the same;
   each process keeps its own cache): the whole machine's rate against one core's. Each row: positions/s,
   its ratio to ``off/eager``, network rows evaluated and the cache's hit share, the share of time in the network, and the same-moves check against ``off/eager`` with the same
   seed: identical games, and identical moves (each game's moves up to its first difference, over all moves).
   The batch sizes the network saw in ``off/eager`` are listed (share of rows per size).
3. Held-out accuracy of the runtimes that change the numbers (``--held-out N`` positions; 0: none): 5x5
   positions of realistic play (seed 7, apart from the training run's evaluation seeds) after 28, 30 or 32
   moves that the mover can win, labelled by the exact solver (a move is right when it keeps the win,
   BoxesZero's criterion, as in ``benchmarks/midgame.py``): per runtime the raw policy's accuracy, its top
   move's agreement with eager's, and the largest change of a prior and of a value.

    python benchmarks/selfplay.py [--nets resnet6x64,resnet,dotsformer] [--games 8] [--solver off] [--json out.json]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import statistics
import time
import warnings

import numpy as np
import torch

from agents.models import build_model
from agents.models.evaluator import NetworkEvaluator, inference_module
from agents.search.evaluators import TimedEvaluator
from agents.training.config import make_train_config
from dnb_env.core import GameState
from dnb_env.observations import encode_batch

RESNET6X64 = "research/weights/az5-selfplay.pt"
try:  # the optional ONNX Runtime joins the tables when it is installed (pip install 'dnb-env[onnx]')
    import onnx  # noqa: F401
    import onnxruntime  # noqa: F401

    HAVE_ONNX = True
except ImportError:
    HAVE_ONNX = False
VARIANTS = "off/eager,exact/eager,canonical/eager,off/jit,off/nnpack,off/int8," + ("off/onnx,exact/onnx," if HAVE_ONNX else "") \
    + "exact/auto"
RUNTIMES = ("eager", "jit", "nnpack", "int8") + (("onnx",) if HAVE_ONNX else ())


def network(name: str, board: str):
    """``(net, family)`` of a ``--nets`` entry."""
    if name == "resnet6x64":
        from agents.checkpoint import load_network

        return load_network(RESNET6X64, board=board)[0], "resnet"
    torch.manual_seed(0)
    return build_model(make_train_config(name, "cpu", board=board).model).eval(), name


def width(net) -> int:
    cfg = net.config
    return getattr(cfg, "width", None) or getattr(cfg, "dim", None) or 64


def flops_per_position(net, board: str) -> float:
    from torch.utils.flop_counter import FlopCounterMode

    x = torch.from_numpy(encode_batch(net.config.encoder, [GameState.new(board)]))
    with FlopCounterMode(display=False) as counter:  # gradients on: the fused inference paths hide ops
        net(x)
    return counter.get_total_flops()


def flop_rates(net, board: str, batches, reps: int) -> list[dict]:
    """Per batch size: GFLOP/s of the eager and jit forward passes and of the comparable matmul."""
    F = flops_per_position(net, board)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        modules = {r: inference_module(net, r)[0] for r in RUNTIMES}
    rows = []
    c = width(net)
    for B in batches:
        x = torch.from_numpy(encode_batch(net.config.encoder, _positions(board, B)))
        cells = x.shape[-1] * x.shape[-2]
        a, b = torch.randn(B * cells, 9 * c), torch.randn(9 * c, c)
        runs = {**modules, "matmul": lambda _: a @ b}
        times = {k: [] for k in runs}
        with torch.inference_mode():
            for f in runs.values():
                f(x)
            for _ in range(reps):
                for k, f in runs.items():
                    t = time.perf_counter()
                    f(x)
                    times[k].append(time.perf_counter() - t)
        med = {k: statistics.median(v) for k, v in times.items()}
        mm = 2 * B * cells * 9 * c * c
        rows.append({"batch": B, **{r: F * B / med[r] / 1e9 for r in RUNTIMES}, "matmul": mm / med["matmul"] / 1e9,
                     "ms_per_position": med["eager"] / B * 1e3})
    return rows


def peak(reps: int) -> float:
    a, b = torch.randn(512, 512), torch.randn(512, 512)
    a @ b
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        a @ b
        ts.append(time.perf_counter() - t)
    return 2 * 512**3 / statistics.median(ts) / 1e9


def _positions(board: str, n: int, seed: int = 0) -> list[GameState]:
    """``n`` positions of random play (0..half the moves played), as the search's leaves are."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        s = GameState.new(board)
        for _ in range(int(rng.integers(0, s.num_actions // 2))):
            legal = s.legal_actions()
            s = s.apply(legal[int(rng.integers(len(legal)))])
        out.append(s)
    return out


def self_play_run(net, family: str, board: str, games: int, start: int, solver: str, variant: str, seed: int):
    """One self-play call under ``variant`` (``cache/runtime``): a dict of its measurements and moves."""
    from agents.training.selfplay import self_play

    cache, runtime, *procs = variant.split("/")
    workers = int(procs[0].lstrip("w")) if procs else 1
    zones = {} if solver == "auto" else {"search.solve_leaf": 0, "search.solve_root": 0}
    cfg = make_train_config(family, "cpu", board=board, games_per_iteration=games, extra_nodes=False, seed=seed,
                            selfplay_cache=cache, selfplay_runtime=runtime, workers=workers, **zones)
    cfg = dataclasses.replace(cfg, model=net.config)
    if workers > 1:  # the training loop's pool: each process plays a contiguous share of the games
        from agents.training.selfplay import SelfPlayPool

        pool = SelfPlayPool(cfg)  # started before the clock, as a training run starts it once
        try:
            t = time.perf_counter()
            samples, stats = pool.play(net, 1, start)
            dt = time.perf_counter() - t
        finally:
            pool.close()
        return {"variant": variant, "positions": stats["positions"], "seconds": dt, "rate": stats["positions"] / dt,
                "network_share": None, "rows": None, "moves": samples.move.reshape(games, -1), "sizes": {}}
    t = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        evaluator = TimedEvaluator(NetworkEvaluator(net, "cpu", runtime=runtime))
        samples, stats = self_play(net, cfg, iteration=1, start=start, evaluator=evaluator)
    dt = time.perf_counter() - t
    rows = sum(evaluator.sizes.values())
    return {"variant": variant, "positions": stats["positions"], "seconds": dt, "rate": stats["positions"] / dt,
            "network_share": evaluator.seconds / dt, "rows": rows, "moves": samples.move.reshape(games, -1),
            "sizes": dict(evaluator.sizes)}


def held_out_positions(board: str, count: int, seed: int = 7) -> list:
    """``count`` (state, winning moves) pairs: realistic play stopped after 28, 30 or 32 of 60 moves (scaled
    to the board), kept when the mover can win (labels by the exact solver)."""
    import random

    from dnb_env.analysis import realistic_move
    from dnb_env.solver import Solver

    solver, rng, out = Solver(), random.Random(seed), []
    a = GameState.new(board).num_actions
    steps = sorted({round(k * a / 60) for k in (28, 30, 32)})
    while len(out) < count:
        s = GameState.new(board)
        stop = steps[len(out) % len(steps)]
        while len(s.history) < stop and not s.is_terminal():
            s = s.apply(realistic_move(s, rng))
        if not s.is_terminal() and (winning := solver.winning_moves(s)):
            out.append((s, winning))
    return out


def held_out(net, positions) -> dict:
    """Per runtime: raw-policy accuracy on ``positions``, top-move agreement with eager, largest changes."""
    states = [s for s, _ in positions]
    out, ref = {}, None
    for runtime in RUNTIMES:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p, v = NetworkEvaluator(net, runtime=runtime).evaluate(states)
        top = p.argmax(axis=1)
        ref = ref or (p, v, top)
        out[runtime] = {"accuracy": float(np.mean([a in w for a, (_, w) in zip(top, positions)])),
                        "agree": float(np.mean(top == ref[2])), "prior": float(np.abs(p - ref[0]).max()),
                        "value": float(np.abs(v - ref[1]).max())}
    return out


def same_moves(a: np.ndarray, b: np.ndarray) -> tuple[float, float]:
    """(identical games, identical moves): moves of ``[games, moves]`` up to each game's first difference."""
    prefix = [int(np.argmin(x == y)) if (x != y).any() else len(x) for x, y in zip(a, b)]
    return float(np.mean([p == a.shape[1] for p in prefix])), sum(prefix) / a.size


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--board", default="5x5")
    p.add_argument("--nets", default="resnet6x64,resnet,dotsformer", help="resnet6x64, resnet, dotsformer, alphavit")
    p.add_argument("--batches", default="1,8,32,64,128,256", help="batch sizes of the FLOP/s table")
    p.add_argument("--reps", type=int, default=7, help="timed forward passes per batch size")
    p.add_argument("--games", type=int, default=8, help="self-play games in lockstep")
    p.add_argument("--start", type=int, default=0, help="start step of the searched moves (curriculum S)")
    p.add_argument("--solver", choices=("off", "auto"), default="off", help="the preset's exact-solver zones")
    p.add_argument("--variants", default=VARIANTS, help="cache/runtime pairs; the first is the reference")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--held-out", type=int, default=150, help="labelled positions of the accuracy check (0: none)")
    p.add_argument("--skip-flops", action="store_true")
    p.add_argument("--skip-self-play", action="store_true")
    p.add_argument("--json", default="", help="write the results here")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    batches = [int(b) for b in args.batches.split(",")]
    variants = args.variants.split(",")
    res: dict = {"board": args.board, "nets": {}}
    if not args.skip_flops:
        res["peak_gflops"] = pk = peak(args.reps * 3)
        print(f"one thread, torch {torch.__version__}: 512x512x512 matmul {pk:.1f} GFLOP/s (practical peak)")
    positions = held_out_positions(args.board, args.held_out) if args.held_out else []
    for name in args.nets.split(","):
        net, family = network(name, args.board)
        out = res["nets"][name] = {"params": sum(x.numel() for x in net.parameters())}
        if not args.skip_flops:
            out["mflops"] = flops_per_position(net, args.board) / 1e6
            out["flops"] = flop_rates(net, args.board, batches, args.reps)
            print(f"\n{name} ({family}, {out['params']:,} parameters, {out['mflops']:.1f} MFLOPs per position)")
            print("| batch | eager ms/position | GFLOP/s eager | " + " | ".join(RUNTIMES[1:])
                  + " | matmul [B*HW, 9c]@[9c, c] | eager / matmul | eager / peak | best / peak |")
            print("|---:|---:|---:|" + "---:|" * (len(RUNTIMES) - 1) + "---:|---:|---:|---:|")
            for r in out["flops"]:
                best = max(r[k] for k in RUNTIMES)
                print(f"| {r['batch']} | {r['ms_per_position']:.3f} | "
                      + " | ".join(f"{r[k]:.1f}" for k in RUNTIMES)
                      + f" | {r['matmul']:.1f} | {r['eager'] / r['matmul']:.2f} | {r['eager'] / pk:.2f} | "
                      f"{best / pk:.2f} |")
        if positions:
            out["held_out"] = acc = held_out(net, positions)
            print(f"\n{name}: {len(positions)} held-out winning positions (28-32 of 60 moves played), raw policy")
            print("| runtime | winning-move accuracy | top move as eager's | largest prior change | "
                  "largest value change |")
            print("|---|---:|---:|---:|---:|")
            for runtime, r in acc.items():
                print(f"| {runtime} | {r['accuracy']:.3f} | {r['agree']:.1%} | {r['prior']:.1e} | {r['value']:.1e} |")
        if args.skip_self_play:
            continue
        runs = [self_play_run(net, family, args.board, args.games, args.start, args.solver, v, args.seed)
                for v in variants]
        ref = runs[0]
        print(f"\n{name}: self-play, {args.games} games in lockstep from step {args.start}, solver zones "
              f"{args.solver}, 100 simulations a move; rows per batch size in {ref['variant']}: "
              + ", ".join(f"{k}: {v / ref['rows']:.0%}" for k, v in sorted(ref["sizes"].items(), reverse=True)
                          if v / ref["rows"] >= 0.01))
        print("| variant (cache/runtime) | positions/s | ratio | network rows | rows saved | network share "
              "| identical games | identical moves |")
        print("|---|---:|---:|---:|---:|---:|---:|---:|")
        out["self_play"] = []
        for r in runs:
            games_same, moves_same = same_moves(ref["moves"], r["moves"])
            row = {k: v for k, v in r.items() if k not in ("moves",)}
            row.update(ratio=r["rate"] / ref["rate"], identical_games=games_same, identical_moves=moves_same)
            out["self_play"].append(row)
            # a pool of processes (``/wN``) counts neither rows nor network time in this process: "-"
            rows = "- | -" if r["rows"] is None else f"{r['rows']:,} | {1 - r['rows'] / ref['rows']:.0%}"
            share = "-" if r["network_share"] is None else f"{r['network_share']:.0%}"
            print(f"| {r['variant']} | {r['rate']:.2f} | {row['ratio']:.2f}x | {rows} | "
                  f"{share} | {games_same:.0%} | {moves_same:.1%} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(res, f, indent=1, default=lambda o: o.tolist() if hasattr(o, "tolist") else str(o))
    return res


if __name__ == "__main__":
    main()
