"""Evaluators without a network, for either search backend (:class:`agents.search.api.Evaluator`):
:class:`UniformEvaluator` (runs inside the C++ search with no Python call) and :class:`RolloutEvaluator`
(random playouts in Python; :class:`agents.search.native.NativeRolloutEvaluator` plays them in C++); and
:class:`TimedEvaluator`, a wrapper of any evaluator that adds up the time of its calls (for benchmarks).

An evaluator may keep things for one move's search only (a network evaluator's Nimstring table): it then
has ``move_scope()``, a context manager that :class:`agents.search.agent.MCTSAgent` opens around each move's
search (:func:`move_scope`)."""

from __future__ import annotations

import collections
import contextlib
import random
import time

import numpy as np

__all__ = ["UniformEvaluator", "RolloutEvaluator", "TimedEvaluator", "move_scope"]


def move_scope(evaluator):
    """``evaluator.move_scope()`` (what the evaluator keeps for one move's search), or an empty block for an
    evaluator without one (or None)."""
    scope = getattr(evaluator, "move_scope", None)
    return scope() if scope is not None else contextlib.nullcontext()


class TimedEvaluator:
    """Wraps an evaluator: ``seconds`` adds up the time of its ``evaluate`` and ``evaluate_planes`` calls,
    ``sizes`` counts the positions evaluated per batch size; every other attribute is the inner one's."""

    def __init__(self, inner):
        self.inner, self.encoder, self.seconds = inner, inner.encoder, 0.0
        self.sizes: collections.Counter = collections.Counter()

    def __getattr__(self, name):
        return getattr(self.inner, name)

    def evaluate(self, states):
        t = time.perf_counter()
        try:
            return self.inner.evaluate(states)
        finally:
            self.seconds += time.perf_counter() - t
            self.sizes[len(states)] += len(states)

    def evaluate_planes(self, planes, masks):
        t = time.perf_counter()
        try:
            return self.inner.evaluate_planes(planes, masks)
        finally:
            self.seconds += time.perf_counter() - t
            self.sizes[len(planes)] += len(planes)


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
