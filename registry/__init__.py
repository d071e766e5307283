"""Names -> things: agents (``make_agent``, ``list_agents``; spec strings in :mod:`registry.specs`) and,
through ``import dnb_env``, the Gymnasium ids ``DotsAndBoxes-{R}x{C}-v0`` / ``DotsAndBoxes-v0`` (entry points
in :mod:`registry.envs`), the PettingZoo id ``dots_and_boxes_v0`` and the pyspiel game
``python_dots_and_boxes``.

Importing the package installs the agent names as the resolver of the environments' ``opponent=`` names
(:func:`dnb_env.opponents.set_name_resolver`): ``opponent="greedy"`` is ``make_agent("greedy", board=...,
seed=None)``, seeded by the env at each reset."""

from __future__ import annotations

import dnb_env  # noqa: F401  (registers the environments)
from dnb_env.opponents import set_name_resolver
from registry.agents import list_agents, make_agent, register_agent

__all__ = ["make_agent", "list_agents", "register_agent"]


def _named_opponent(name: str, board: tuple[int, int], options: dict):
    """The agent of a name or a whole spec (``'alphabeta:depth=3'``, ``'engine:cmd="./eng",name=e'``); a
    spec's options and ``options`` (the env's ``opponent_kwargs``) together, an option in both refused."""
    from registry.specs import parse_agent_spec

    name, spec_options = parse_agent_spec(name)
    both = sorted(set(spec_options) & set(options))
    if both:
        raise ValueError(f"opponent option(s) {', '.join(both)} given both in the spec and in opponent_kwargs")
    return make_agent(name, board=board, seed=None, **spec_options, **options)


set_name_resolver(_named_opponent)
