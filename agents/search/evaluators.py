"""Evaluators without a network, for either search backend (:class:`agents.search.api.Evaluator`):
:class:`UniformEvaluator` (runs inside the C++ search with no Python call) and :class:`RolloutEvaluator`
(random playouts in Python; :class:`agents.search.native.NativeRolloutEvaluator` plays them in C++)."""

from __future__ import annotations

import random

import numpy as np

__all__ = ["UniformEvaluator", "RolloutEvaluator"]


class UniformEvaluator:
    """Uniform priors and value 0: the cheapest evaluator (search guided by terminal results only)."""

    def evaluate(self, states):
        A = states[0].num_actions
        return np.full((len(states), A), 1.0 / A), np.zeros(len(states))


class RolloutEvaluator:
    """Uniform priors; value = mean result of ``n_rollouts`` uniformly random playouts for the mover
    (win/loss, or the margin over the number of boxes with ``value="margin"``). The playouts draw from
    ``rng`` when given (e.g. shared with a ``selection="uct"`` search, as OpenSpiel's ``MCTSBot`` and
    ``RandomRolloutEvaluator`` share one ``random_state``), else from ``random.Random(seed)``."""

    def __init__(self, n_rollouts: int = 1, seed: int | None = None, value: str = "win",
                 rng: random.Random | None = None):
        self.n_rollouts = n_rollouts
        self.rng = rng if rng is not None else random.Random(seed)
        self.value = value

    def evaluate(self, states):
        A = states[0].num_actions
        values = np.zeros(len(states))
        for i, s in enumerate(states):
            m = s.to_mutable()
            total = 0.0
            for _ in range(self.n_rollouts):
                d = m.random_playout(self.rng.random)
                r = d / (s.rows * s.cols) if self.value == "margin" else (d > 0) - (d < 0)
                total += r if s.current_player == 0 else -r
            values[i] = total / self.n_rollouts
        return np.full((len(states), A), 1.0 / A), values
