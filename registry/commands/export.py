"""``dnb export``: a training run's network as playing weights."""

from __future__ import annotations

import argparse
import os


def run(args: argparse.Namespace) -> int:
    from agents.training.store import export_weights

    if not os.path.exists(os.path.join(args.run, "manifest.json")) and \
            os.path.exists(os.path.join(args.run, "metrics.jsonl")) and \
            os.path.exists(os.path.join(args.run, "checkpoint.pt")):  # a `dnb fit` run
        from agents.training.supervised import playing_weights

        info = playing_weights(args.run, args.out)
        print(f"{args.out}: {info['step']} supervised steps on {info['positions']} teacher positions")
        return 0
    info = export_weights(args.run, args.out)
    print(f"{args.out}: {info['iterations']} iterations, {info['self_play_games']} self-play games, "
          f"{info['training_seconds']} s of training")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    """The ``dnb export`` subcommand's options."""
    ex = sub.add_parser("export", help="a training run's network as playing weights (e.g. to ship)")
    ex.add_argument("run", help="run folder of `dnb train` or `dnb fit`")
    ex.add_argument("out", help="checkpoint to write, e.g. agents/checkpoints/alphazero-3x3.pt")
    ex.set_defaults(func=run)
