"""Opponents of the single-learner environments (:mod:`dnb_env.gym_env`): an Agent, a callable policy, or
an agent name.

    make_opponent(agent, (5, 5))                  -> the agent itself (anything with ``select_action``)
    make_opponent(lambda s: s.legal_actions()[0], (5, 5))
                                                  -> a FunctionAgent (``state -> action`` or ``(state, rng) -> action``)
    make_opponent("greedy", (5, 5), {"...": ...}, resolve)
                                                  -> ``resolve("greedy", (5, 5), {"...": ...})``

The game layer knows no agent names: a name goes to the ``resolve`` its caller passes. The env classes pass
their ``resolve_opponent``, which the Gymnasium ids' entry points (:mod:`registry.envs`) give the registry's
agent names, so ``gym.make(..., opponent="greedy")`` finds them; the classes of :mod:`dnb_env.gym_env` built
directly take Agents and callables only.
"""

from __future__ import annotations

from typing import Callable

from dnb_env.agent import FunctionAgent

__all__ = ["FunctionAgent", "make_opponent"]


def make_opponent(opponent, board: tuple[int, int], opponent_kwargs: dict | None = None,
                  resolve: Callable | None = None):
    """An Agent from an Agent, a callable or an agent name (``resolve(name, board, options) -> Agent``;
    ValueError for a name without one)."""
    if isinstance(opponent, str):
        if resolve is None:
            raise ValueError(f"opponent {opponent!r} is an agent name, and names are resolved by the registry: "
                             "make the env with gym.make (after `import dnb_env`), or pass an Agent or a callable")
        return resolve(opponent, board, dict(opponent_kwargs or {}))
    if opponent_kwargs:
        raise ValueError("opponent_kwargs only apply to an opponent given by name")
    if hasattr(opponent, "select_action"):
        return opponent
    if callable(opponent):
        return FunctionAgent(opponent)
    raise ValueError(f"opponent must be an Agent, a registered agent name or a callable, got {opponent!r}")
