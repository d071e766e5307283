"""Evaluators for tests of the searches: stand-ins for a network with a known opinion."""

from __future__ import annotations

import numpy as np


class FavouriteEvaluator:
    """Priors of 0.9 on one move (spread evenly over the rest), value 0: a network with a favourite."""

    def __init__(self, favourite: int):
        self.favourite = favourite

    def evaluate(self, states):
        A = states[0].num_actions
        priors = np.full((len(states), A), 0.1 / (A - 1))
        priors[:, self.favourite] = 0.9
        return priors, np.zeros(len(states))
