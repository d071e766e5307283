"""Helpers of the lockstep loops of both backends (:func:`agents.search.run_many`): the garbage
collector paused while trees grow, and every root that needs the evaluator evaluated in one call."""

from __future__ import annotations

import contextlib
import gc
from typing import Sequence

from agents.search.api import Evaluator, RootOutput
from dnb_env.core import GameState

__all__ = ["begin_all", "gc_paused"]


@contextlib.contextmanager
def gc_paused():
    """Pause Python's cyclic garbage collector while a search grows its tree (restored after, also on
    error). Tree nodes only point down to their children, so they hold no reference cycles and are freed
    by reference counting as before; the collector would only re-scan the growing tree, which took up to
    half of a search's time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def begin_all(searches: Sequence, states: Sequence[GameState], evaluator: Evaluator) -> None:
    """``begin`` every search on its state, with every root that needs the evaluator in one call (either
    backend's searches)."""
    fresh = [i for i, (search, state) in enumerate(zip(searches, states)) if search.needs_root_evaluation(state)]
    evaluations: dict[int, RootOutput] = {}
    if fresh:
        priors, values = evaluator.evaluate([states[i] for i in fresh])
        evaluations = {i: RootOutput(priors[k], values[k]) for k, i in enumerate(fresh)}
    for i, (search, state) in enumerate(zip(searches, states)):
        search.begin(state, evaluations.get(i))
