"""Gymnasium entry points of the ids ``DotsAndBoxes-{R}x{C}-v0`` and ``DotsAndBoxes-v0`` (registered by
``import dnb_env``, :mod:`dnb_env.registration`): the env classes of :mod:`dnb_env.gym_env` themselves, loaded
through this module so that the registry is imported first and has installed its agent names, which
``opponent="greedy"`` (and the default ``"random"``) resolve to (:mod:`dnb_env.opponents`).
"""

from __future__ import annotations

import registry  # noqa: F401  (installs the agent names the envs' opponent= takes)
from dnb_env.gym_env import DotsAndBoxesEnv, DotsAndBoxesVectorEnv

__all__ = ["DotsAndBoxesEnv", "DotsAndBoxesVectorEnv"]
