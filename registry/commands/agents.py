"""``dnb agents``: the agents with a summary each, or one agent's options and strength."""

from __future__ import annotations

import argparse

from registry.commands.parsing import Defaults
from registry.extras import extra_hint


def run(args: argparse.Namespace) -> int:
    """``dnb agents``: each agent with its one-line summary, marked with the extra it needs where that is not
    installed; ``dnb agents NAME``: the agent's section of the reference (:func:`registry.docs.render_agent`)."""
    from registry import list_agents
    from registry.agents import NETWORK_AGENTS, agent_needs, describe_agent
    from registry.docs import render_agent

    if args.name:
        print(render_agent(args.name), end="")  # an unknown name: ValueError listing the known ones (exit 2)
        return 0
    names = sorted(set(list_agents()) | set(NETWORK_AGENTS))
    width = max(map(len, names))
    for name in names:
        summary = describe_agent(name).summary.replace("``", "")
        needs = agent_needs(name)
        print(f"{name:<{width}}  {summary}" + (f" [needs {extra_hint(needs)}]" if needs else ""))
    print("\n`dnb agents NAME` shows an agent's options and strength.")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    """The ``dnb agents`` subcommand's options."""
    ag = sub.add_parser("agents", help="list the agents, or show one agent's options and strength",
                        formatter_class=Defaults)
    ag.add_argument("name", nargs="?", default=None,
                    help="an agent: print its description, options (type, default, meaning) and strength")
    ag.set_defaults(func=run)
