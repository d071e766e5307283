"""How much of a run's replay can a network learn? A fresh network of any configuration trained on a
training run's replay, scored every epoch by winning-move accuracy of its raw policy on the positions of
one iteration it has not trained on (and, beside them, on one it has), per step, by the exact solver.

The training is the run's own (:func:`agents.training.loop.train_steps`: the same losses, experience decay,
symmetries and batch size) on the samples of the iterations before ``--held`` (from ``--first`` on); the
positions and labels are those of ``benchmarks/midgame.py --replay``. If networks of very different
sizes level off at the same accuracy, capacity is not what limits the run at that data budget; if fewer
iterations of data give the same, the amount of data at this scale is not either.

    python benchmarks/replay_fit.py --replay runs/df5-cpu/iterations/000135/replay.npz --held 135 \\
        --model dotsformer --set model.dim=64 --set model.heads=4 --set model.layers=6 --epochs 5
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from agents.models import build_model
from agents.training.config import make_train_config
from agents.training.overrides import parse_settings
from agents.training.evaluation import midgame_steps, policy_moves, replay_positions
from agents.training.loop import train_steps
from agents.training.replay import Replay


def accuracy(net, sets: dict[int, list]) -> dict[int, float]:
    """Per step, the share of positions where the raw policy's most probable move keeps the win."""
    return {k: float(np.mean([m in win for m, (_, win) in zip(policy_moves(net, [s for s, _ in items]), items)]))
            for k, items in sets.items() if items}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--replay", required=True, help="a run's replay.npz")
    p.add_argument("--held", type=int, required=True, help="the iteration held out (scored, not trained on)")
    p.add_argument("--seen", type=int, default=None, help="a trained-on iteration also scored (default held - 2)")
    p.add_argument("--first", type=int, default=None, help="train on iterations from this one (default: all)")
    p.add_argument("--model", default="dotsformer", help="model family")
    p.add_argument("--preset", default="cpu")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="settings, as for `dnb train`")
    p.add_argument("--epochs", type=int, default=5, help="passes over the training samples (scored after each)")
    p.add_argument("--steps", default=None, help="comma-separated steps (default: midgame's)")
    p.add_argument("--positions", type=int, default=200, help="positions per step and iteration, at most")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    samples = Replay.load(args.replay).samples
    seen = args.held - 2 if args.seen is None else args.seen
    config = make_train_config(args.model, args.preset, **{"board": samples.board, "seed": args.seed, "epochs": 1,
                                                           **parse_settings(args.model, args.set)})
    train = samples.iteration < args.held
    if args.first is not None:
        train &= samples.iteration >= args.first
    if not (samples.iteration == args.held).any() or not train.any() or not (train & (samples.iteration == seen)).any():
        raise SystemExit(f"{args.replay} holds iterations {sorted(set(samples.iteration.tolist()))}: it needs "
                         f"--held {args.held}, --seen {seen} and training iterations before --held")
    steps = [int(k) for k in args.steps.split(",")] if args.steps else midgame_steps(samples.board)
    t0 = time.perf_counter()
    sets = {tag: replay_positions(samples, steps, args.positions, it)[0]
            for tag, it in (("held", args.held), ("seen", seen))}
    replay = Replay(samples.take(train))
    torch.manual_seed(args.seed)
    torch.set_num_threads(config.threads)
    net = build_model(config.model)
    optimizer = torch.optim.Adam(net.parameters(), lr=config.lr, weight_decay=config.loss.l2)
    rng = np.random.default_rng(args.seed)
    print(f"{samples.board}: {config.model} ({sum(q.numel() for q in net.parameters()):,} parameters), "
          f"{len(replay):,} training samples; labelled in {time.perf_counter() - t0:.0f} s; n per step "
          + ", ".join(f"{tag} {[len(sets[tag][k]) for k in steps]}" for tag in sets))
    print(f"{'epoch':<7}{'steps':<7}{'policy loss':<13}" + "".join(f"{tag} {k:<6}" for tag in sets for k in steps))
    rows = []
    for epoch in range(1, args.epochs + 1):
        losses = train_steps(net, optimizer, replay, config, args.held - 1, rng)
        acc = {tag: accuracy(net, sets[tag]) for tag in sets}
        rows.append({"epoch": epoch, **losses, **{f"{tag}{k}": v for tag in acc for k, v in acc[tag].items()}})
        print(f"{epoch:<7}{losses['train_steps'] * epoch:<7}{losses['policy_loss']:<13.3f}"
              + "".join(f"{acc[tag].get(k, float('nan')):<11.2f}" for tag in sets for k in steps), flush=True)
    return rows


if __name__ == "__main__":
    main()
