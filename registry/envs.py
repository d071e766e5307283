"""Gymnasium entry points of the ids ``DotsAndBoxes-{R}x{C}-v0`` and ``DotsAndBoxes-v0`` (registered by
``import dnb_env``, :mod:`dnb_env.registration`): the env classes of :mod:`dnb_env.gym_env` with the registry's
agent names as opponents, so ``opponent="greedy"`` (and the default ``"random"``) is
``make_agent("greedy", board=..., seed=None)``, seeded by the env at each reset. Build these classes, not
those of :mod:`dnb_env.gym_env`, to give an opponent by name without ``gym.make``.
"""

from __future__ import annotations

from dnb_env import gym_env
from registry.agents import make_agent

__all__ = ["DotsAndBoxesEnv", "DotsAndBoxesVectorEnv", "named_opponent"]


def named_opponent(name: str, board: tuple[int, int], options: dict):
    """The agent of a name or a whole spec (``'alphabeta:depth=3'``, ``'engine:cmd="./eng",name=e'``); a
    spec's options and ``options`` (the env's ``opponent_kwargs``) together, an option in both refused."""
    from registry.specs import parse_agent_spec

    name, spec_options = parse_agent_spec(name)
    both = sorted(set(spec_options) & set(options))
    if both:
        raise ValueError(f"opponent option(s) {', '.join(both)} given both in the spec and in opponent_kwargs")
    return make_agent(name, board=board, seed=None, **spec_options, **options)


class DotsAndBoxesEnv(gym_env.DotsAndBoxesEnv):
    """:class:`dnb_env.gym_env.DotsAndBoxesEnv` whose ``opponent`` may be an agent name or spec."""

    resolve_opponent = staticmethod(named_opponent)


class DotsAndBoxesVectorEnv(gym_env.DotsAndBoxesVectorEnv):
    """:class:`dnb_env.gym_env.DotsAndBoxesVectorEnv` whose ``opponent`` may be an agent name or spec (an
    agent of its own for each game)."""

    resolve_opponent = staticmethod(named_opponent)
