"""Names -> things: agents (``make_agent``, ``list_agents``; spec strings in :mod:`registry.specs`) and,
through ``import dnb_env``, the Gymnasium ids ``DotsAndBoxes-{R}x{C}`` / ``DotsAndBoxes-v0`` (entry points
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
    return make_agent(name, board=board, seed=None, **options)


set_name_resolver(_named_opponent)
