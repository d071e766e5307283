"""Opponents of the single-learner environments (:mod:`dnb_env.gym_env`): an Agent, a callable policy, or
an agent name.

    make_opponent(agent, (5, 5))                  -> the agent itself (anything with ``select_action``)
    make_opponent(lambda s: s.legal_actions()[0], (5, 5))
                                                  -> a FunctionAgent (``state -> action`` or ``(state, rng) -> action``)
    make_opponent("greedy", (5, 5), {"...": ...}, resolve)
                                                  -> ``resolve("greedy", (5, 5), {"...": ...})``

The game layer knows one agent of its own, the envs' default opponent: :class:`RandomAgent` (uniformly random
legal moves, the registry's ``random``), which ``"random"`` names without a resolver. Any other name goes to
the ``resolve`` its caller passes. The env classes pass their ``resolve_opponent``, which the Gymnasium ids'
entry points (:mod:`registry.envs`) give the registry's agent names, so ``gym.make(..., opponent="greedy")``
finds them; the classes of :mod:`dnb_env.gym_env` built directly take ``"random"``, Agents and callables.
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from dnb_env.agent import FunctionAgent, Probabilistic, Seedable, check_state
from dnb_env.core import GameState

__all__ = ["FunctionAgent", "RandomAgent", "make_opponent"]


def make_opponent(opponent, board: tuple[int, int], opponent_kwargs: dict | None = None,
                  resolve: Callable | None = None):
    """An Agent from an Agent, a callable or an agent name (``resolve(name, board, options) -> Agent``;
    ValueError for a name without one)."""
    if isinstance(opponent, str):
        if resolve is None and opponent == "random" and not opponent_kwargs:
            return RandomAgent(board=board)
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


class RandomAgent(Seedable, Probabilistic):
    """Picks a legal move uniformly at random from its own ``numpy.random.Generator``."""

    name = "random"
    #: ``select_action`` is exactly ``legal_actions()[rng.integers(len(legal))]`` with ``rng`` from
    #: ``numpy.random.default_rng(seed)`` (set by :meth:`seed`): the Gymnasium envs of :mod:`dnb_env.gym_env`
    #: replay these draws in C++ under the native backend (the same games as the Python path for a seed).
    #: The envs read it from the agent's own class only: a subclass that keeps these draws sets it again.
    replays_natively = True

    def __init__(self, seed: int | None = None, board: tuple[int, int] | None = None):
        self.rng = np.random.default_rng(seed)
        self.board = board

    def seed(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def select_action(self, state: GameState) -> int:
        check_state(self, state)
        legal = state.legal_actions()
        return legal[int(self.rng.integers(len(legal)))]

    def action_probabilities(self, state: GameState) -> np.ndarray:
        check_state(self, state)
        mask = state.legal_mask().astype(np.float64)
        return mask / mask.sum()

    def reset(self) -> None:
        pass
