"""The ``dnb`` command line.

    dnb demo --board 5x5 --seed 0      a random game, printed move by move with the ASCII board
"""

from __future__ import annotations

import argparse
import random
import sys

from dnb_env.core import GameState


def _demo(args: argparse.Namespace) -> int:
    rng = random.Random(args.seed)
    state = GameState.new(args.board)
    print(f"A random game on {state.rows}x{state.cols} (seed {args.seed})\n")
    print(state, end="\n\n")
    while not state.is_terminal():
        action = rng.choice(state.legal_actions())
        mover = state.current_player
        state = state.apply(action)
        print(f"move {len(state.history)}: player {mover} draws {action} ({state.geometry.action_name(action)})")
        print(state, end="\n\n")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="dnb", description="Dots-and-Boxes for game-AI research")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="play and print a random game")
    demo.add_argument("--board", default="5x5", help="board as RxC boxes (default 5x5)")
    demo.add_argument("--seed", type=int, default=0)
    demo.set_defaults(func=_demo)
    args = parser.parse_args(argv)
    try:
        return args.func(args)
    except ValueError as exc:
        print(f"dnb: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
