"""``dnb report``: iterations per rollback step of training runs, side by side."""

from __future__ import annotations

import argparse


def run(args: argparse.Namespace) -> int:
    from agents.training.report import main

    return main(args.runs, board=args.board, plot=args.plot)


def add_parser(sub: argparse._SubParsersAction) -> None:
    """The ``dnb report`` subcommand's options."""
    rp = sub.add_parser("report", help="iterations per rollback step of training runs, side by side (markdown)")
    rp.add_argument("runs", nargs="+", help="run folders of `dnb train`")
    rp.add_argument("--plot", metavar="PNG", help="also draw each run's first searched move S (and raw accuracy, "
                    "where measured) on --board against the self-play games and positions it cost, pretraining "
                    "of --set init included")
    rp.add_argument("--board", help="board of the plot, RxC (default: each run's --board)")
    rp.set_defaults(func=run)
