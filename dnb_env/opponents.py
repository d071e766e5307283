"""Opponents of the single-learner environments (:mod:`dnb_env.gym_env`): an Agent, a callable policy, or
an agent name.

    make_opponent(agent, (5, 5))                  -> the agent itself (anything with ``select_action``)
    make_opponent(lambda s: s.legal_actions()[0], (5, 5))
                                                  -> a FunctionAgent (``state -> action`` or ``(state, rng) -> action``)
    make_opponent("greedy", (5, 5), {"...": ...}) -> the resolver's agent for that name and board

The game layer knows no agent names: a name goes to the resolver installed with :func:`set_name_resolver`.
The registry installs its own when it is imported (``registry``: ``make_agent(name, board=board, seed=None,
**options)``), and the Gymnasium ids' entry points live in :mod:`registry.envs`, so ``gym.make(...,
opponent="random")`` always finds the names; a direct ``DotsAndBoxesEnv(opponent="random")`` needs
``import registry`` first (else a ``ValueError`` says so).
"""

from __future__ import annotations

import inspect
from typing import Callable

import numpy as np

from dnb_env.core import GameState

__all__ = ["FunctionAgent", "make_opponent", "set_name_resolver"]

#: ``resolver(name, board, options) -> Agent`` for opponents given by name; None until one is installed.
_NAME_RESOLVER: Callable | None = None


def set_name_resolver(resolver: Callable | None) -> Callable | None:
    """Install ``resolver(name: str, board: (rows, cols), options: dict) -> Agent`` for opponents given by
    name (``None`` removes it); returns the one it replaces."""
    global _NAME_RESOLVER
    previous, _NAME_RESOLVER = _NAME_RESOLVER, resolver
    return previous


def make_opponent(opponent, board: tuple[int, int], opponent_kwargs: dict | None = None):
    """An Agent from an Agent, an agent name (through the installed resolver) or a callable."""
    if isinstance(opponent, str):
        if _NAME_RESOLVER is None:
            raise ValueError(f"opponent {opponent!r} is an agent name, and names are resolved by the registry: "
                             "`import registry` first (gym.make does it), or pass an Agent or a callable")
        return _NAME_RESOLVER(opponent, board, dict(opponent_kwargs or {}))
    if opponent_kwargs:
        raise ValueError("opponent_kwargs only apply to an opponent given by name")
    if hasattr(opponent, "select_action"):
        return opponent
    if callable(opponent):
        return FunctionAgent(opponent)
    raise ValueError(f"opponent must be an Agent, a registered agent name or a callable, got {opponent!r}")


class FunctionAgent:
    """Wrap ``fn(state) -> action`` (or ``fn(state, rng) -> action``) as an Agent."""

    def __init__(self, fn: Callable, name: str | None = None, seed: int | None = None):
        self.fn = fn
        self.name = name or getattr(fn, "__name__", "function")
        try:
            self._takes_rng = len(inspect.signature(fn).parameters) >= 2
        except (TypeError, ValueError):
            self._takes_rng = False
        self.rng = np.random.default_rng(seed)

    def seed(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def select_action(self, state: GameState) -> int:
        return self.fn(state, self.rng) if self._takes_rng else self.fn(state)

    def reset(self) -> None:
        pass
