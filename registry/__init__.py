"""Names -> things: agents (``make_agent``, ``list_agents``; spec strings in :mod:`registry.specs`) and,
through ``import dnb_env``, the Gymnasium ids ``DotsAndBoxes-{R}x{C}-v0`` / ``DotsAndBoxes-v0`` (entry points
in :mod:`registry.envs`, which resolve the environments' ``opponent=`` names to agents), the PettingZoo id
``dots_and_boxes_v0`` and the pyspiel game ``python_dots_and_boxes``."""

from __future__ import annotations

import dnb_env  # noqa: F401  (registers the environments)
from registry.agents import list_agents, make_agent, register_agent

__all__ = ["make_agent", "list_agents", "register_agent"]
