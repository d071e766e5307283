"""The ``dnb`` command line.

    dnb demo --board 5x5 --seed 0      a random game, printed move by move with the ASCII board
    dnb tournament --board 5x5 --agents random,greedy,alphabeta:depth=3,prsboxes --games 100 \
        --openings 10:guided --workers 2 --threads 1 --out results/5x5
    dnb tournament ... --backend ray [--ray-address auto]    games as Ray tasks (README "Running on a cluster")
    dnb train --board 5x5 --out runs/x --backend ray --set workers=8 [--ray-address auto]   self-play actors on Ray
    dnb engine alphabeta:depth=3        an agent as an engine on stdin/stdout (docs/engine-protocol.md)
    dnb agents [NAME]                   the agents with a summary each; NAME: its options and strength
    dnb serve --port 8000               the web app (play, insight, replays, tournament folders; extra [web])
    dnb --version

Without extras (``pip install dnb-env``) ``demo``, ``agents``, ``teach`` and tournaments of the agents that need no
network run; a command that needs an extra says which (``dnb train needs PyTorch: pip install 'dnb-env[torch]'``,
:mod:`registry.extras`).

Each command is a module of this package: its ``add_parser`` adds its subparser, whose ``func`` default is its
``run``.
"""

from __future__ import annotations

import sys

from registry.cli import agents, demo, engine, errors, export, fit, plot, report, serve, solve, teach, tournament, train
from registry.cli.parsing import Parser, Version, version

__all__ = ["main", "version"]

#: The commands in the order ``dnb --help`` lists them.
COMMANDS = (demo, tournament, train, solve, teach, fit, export, report, plot, serve, engine, agents)


def build_parser() -> Parser:
    """The ``dnb`` parser with every command's subparser."""
    parser = Parser(prog="dnb", description="Dots-and-Boxes for game-AI research")
    parser.add_argument("--version", action=Version)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for command in COMMANDS:
        command.add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the ``dnb`` command line ``argv`` (default: ``sys.argv[1:]``); its exit code. An error the user can
    act on is one ``dnb: error:`` line on stderr and exit code 2 (:func:`registry.cli.errors.error_message`)."""
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)  # `dnb plot attention` hands its options to the plot's parser
    if rest and not getattr(args, "takes_rest", False):
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    args.rest = rest
    try:
        return args.func(args)
    except Exception as exc:
        error = errors.error_message(args, exc)
        if error is None:
            raise
        print(f"dnb: error: {error}", file=sys.stderr)
        return 2
