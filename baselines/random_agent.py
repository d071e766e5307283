"""Uniformly random legal moves (seeded)."""

from __future__ import annotations

import numpy as np

from dnb_env.agent import Probabilistic, Seedable, check_state
from dnb_env.core import GameState


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
