"""Dotsformer and AlphaViT against the ResNet baseline, side by side in one run: parameters, FLOPs, forward
latency at batch 1 and 64 (CPU, and the GPU when there is one), and self-play positions per second.

Groups compared (5x5 by default; ``--board 3x3`` for another board):

* ``paper``: Dotsformer's paper preset (D 84, TR x 6, multiscale4, aux heads; 1.93M parameters) against
  the 6 x 112 ResNet (the AlphaZero baseline of Dotsformer Table 3; Table 3 heads, no aux heads), and
  AlphaViT's paper preset (ViT, 4 layers of 512; 9.0M parameters, one network for every board).
* ``cpu``: Dotsformer's cpu preset against a ResNet of the same size class (4 x 32, Table 3 heads) and
  AlphaViT's cpu preset (ViT, 4 layers of 60; 136k parameters).

FLOPs are counted by ``torch.utils.flop_counter`` for one position (multiply-adds x 2; softmax, norms and
activations not counted). Latency is the
median of ``--reps`` forward passes in inference mode after a warm-up, interleaved between the two
networks. Self-play: lockstep games from the empty board (``--games`` games, ``--simulations`` per
move, pruning and margin values as in the cpu training preset), positions per second.

    python benchmarks/networks.py [--board 5x5] [--reps 20] [--threads 2] [--skip-self-play]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time

import torch

from agents.models import build_model, make_model_config
from dnb_env.core import GameState
from dnb_env.observations import encode_batch

PAIRS = {
    "paper": (dict(preset="paper"), dict(preset="paper", encoder="baseline4", paper_heads=True)),
    "cpu": (dict(preset="cpu"), dict(preset="cpu", encoder="baseline4", blocks=4, paper_heads=True)),
}


def networks(pair: str, board: str):
    df, rn = PAIRS[pair]
    return {"dotsformer": build_model(make_model_config("dotsformer", board=board, **df)),
            "resnet": build_model(make_model_config("resnet", board=board, **rn)),
            "alphavit": build_model(make_model_config("alphavit", board=board, preset=pair))}


def flops(net, board: str) -> float:
    from torch.utils.flop_counter import FlopCounterMode

    x = torch.from_numpy(encode_batch(net.config.encoder, [GameState.new(board)]))
    # gradients on (nothing is kept): without them torch's transformer layers take a fused inference path
    # whose operations the counter does not see
    with FlopCounterMode(display=False) as counter:
        net(x)
    return counter.get_total_flops()


def latency(nets: dict, board: str, batch: int, reps: int, device: str) -> dict:
    xs = {k: torch.from_numpy(encode_batch(n.config.encoder, [GameState.new(board)] * batch)).to(device)
          for k, n in nets.items()}
    times = {k: [] for k in nets}
    with torch.inference_mode():
        for k, n in nets.items():
            n.to(device)(xs[k])  # warm-up
        for _ in range(reps):
            for k, n in nets.items():
                if device == "cuda":
                    torch.cuda.synchronize()
                t = time.perf_counter()
                n(xs[k])
                if device == "cuda":
                    torch.cuda.synchronize()
                times[k].append(time.perf_counter() - t)
    return {k: statistics.median(v) * 1e3 for k, v in times.items()}


def self_play_rate(net, board: str, games: int, simulations: int) -> float:
    from agents.models import family_of
    from agents.training.config import make_train_config
    from agents.training.selfplay import self_play

    cfg = make_train_config(family_of(net.config), "cpu", board=board, games_per_iteration=games,
                            simulations=simulations, extra_nodes=False)
    cfg = dataclasses.replace(cfg, model=net.config)
    t = time.perf_counter()
    _, stats = self_play(net.to("cpu"), cfg, iteration=1, start=0)
    return stats["positions"] / (time.perf_counter() - t)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--board", default="5x5")
    p.add_argument("--pairs", default="paper,cpu")
    p.add_argument("--reps", type=int, default=20)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--games", type=int, default=16, help="self-play games (lockstep)")
    p.add_argument("--simulations", type=int, default=50, help="self-play simulations per move")
    p.add_argument("--skip-self-play", action="store_true")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)
    devices = ["cpu"] + (["cuda"] if torch.cuda.is_available() else [])
    res = {}
    for pair in args.pairs.split(","):
        nets = networks(pair, args.board)
        for k, n in nets.items():
            res[f"{pair}/{k}/params"] = sum(x.numel() for x in n.parameters())
            res[f"{pair}/{k}/gflops"] = flops(n, args.board) / 1e9
        print(f"{pair} group on {args.board}: parameters "
              + ", ".join(f"{k} {res[f'{pair}/{k}/params']:,}" for k in nets) + "; GFLOPs per position "
              + ", ".join(f"{k} {res[f'{pair}/{k}/gflops']:.3f}" for k in nets))
        for device in devices:
            for batch in (1, 64):
                ms = latency(nets, args.board, batch, args.reps, device)
                for k, v in ms.items():
                    res[f"{pair}/{k}/{device}/b{batch}_ms"] = v
                print(f"  {device} batch {batch:>2}: " + ", ".join(
                    f"{k} {v:.2f} ms" + ("" if k == "resnet" else f" ({v / ms['resnet']:.2f}x resnet)")
                    for k, v in ms.items()))
        if not args.skip_self_play:
            for k, n in nets.items():
                res[f"{pair}/{k}/self_play"] = self_play_rate(n, args.board, args.games, args.simulations)
            print(f"  self-play on the CPU ({args.games} games, {args.simulations} simulations a move): "
                  + ", ".join(f"{k} {res[f'{pair}/{k}/self_play']:.1f}" for k in nets) + " positions/s")
    return res


if __name__ == "__main__":
    main()
