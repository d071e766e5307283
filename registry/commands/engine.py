"""``dnb engine``: an agent served over stdin/stdout with the engine protocol."""

from __future__ import annotations

import argparse

from registry.commands.parsing import Defaults


def run(args: argparse.Namespace) -> int:
    from agents.engine import serve
    from registry.agents import make_agent
    from registry.specs import agent_boards, check_agent_spec

    name, kwargs = check_agent_spec(args.spec)  # a bad spec: an error here, before any line is read
    if name == "engine":
        raise ValueError("dnb engine serves the registry's agents; an engine program speaks the protocol itself")
    return serve(lambda board, seed: make_agent(name, board=board, seed=seed, **kwargs), name=args.spec,
                 boards=agent_boards(args.spec))


def add_parser(sub: argparse._SubParsersAction) -> None:
    """The ``dnb engine`` subcommand's options."""
    en = sub.add_parser("engine", help="serve an agent over stdin/stdout with the engine protocol "
                                       "(docs/engine-protocol.md)", formatter_class=Defaults)
    en.add_argument("spec", help="agent spec name[:key=value,...], e.g. greedy or alphabeta:depth=3")
    en.set_defaults(func=run)
