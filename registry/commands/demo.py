"""``dnb demo``: a random game, printed move by move with the ASCII board."""

from __future__ import annotations

import argparse
import random

from dnb_env.core import DEFAULT_BOARD, GameState
from registry.commands.parsing import Defaults


def run(args: argparse.Namespace) -> int:
    rng = random.Random(args.seed)
    state = GameState.new(args.board)
    print(f"A random game on {state.geometry.name} (seed {args.seed})\n")
    print(state, end="\n\n")
    while not state.is_terminal():
        action = rng.choice(state.legal_actions())
        mover = state.current_player
        state = state.apply(action)
        print(f"move {len(state.history)}: player {mover} draws {action} ({state.geometry.action_name(action)})")
        print(state, end="\n\n")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    """The ``dnb demo`` subcommand's options."""
    demo = sub.add_parser("demo", help="play and print a random game", formatter_class=Defaults)
    demo.add_argument("--board", default=DEFAULT_BOARD, help="board as RxC boxes")
    demo.add_argument("--seed", type=int, default=0, help="seed of the random moves")
    demo.set_defaults(func=run)
