"""One tree search, two backends behind one API and one settings type; its selection rule is PUCT
(AlphaZero) or plain UCT (``SearchSettings(selection="uct")``, the registry's ``mcts`` agent).

==================  ====================================================================================
module              what
==================  ====================================================================================
``settings``        :class:`SearchSettings`, the one frozen settings type (and the home of every search
                    default: :data:`~agents.search.settings.PLAY`, :data:`~agents.search.settings.SELF_PLAY`)
``api``             typed inputs and outputs: :class:`RootOutput` (the root's ``priors [A]``, ``value``),
                    :class:`SearchOutput` (``visit_counts [A]``, ``q_values [A]``, ``priors [A]``,
                    ``value``, ``net_value``), the ``Evaluator`` protocol, :func:`visits_to_policy`
``python``          backend ``"python"``: :class:`agents.search.python.MCTS`, the readable reference
``native``          backend ``"native"``: :class:`agents.search.native.NativeMCTS`, the same search in C++
                    (``dnb_env._native``): the same visit counts, values and moves for the same evaluator
                    outputs and seeds (uct: the same rule, move orders from its own generator), tens of
                    times faster
``exact``           the exact solver inside the search (leaves, the root policy in the solver zone)
``evaluators``      ``UniformEvaluator``, ``RolloutEvaluator`` (no network)
``cache``           :class:`~agents.search.cache.CachedEvaluator`: a network evaluator behind an evaluation
                    cache keyed by the position (``"exact"``) or its symmetry class (``"canonical"``)
``agent``           :class:`MCTSAgent`, an Agent over either backend
==================  ====================================================================================

Backends: ``"auto"`` is native when the extension is built and the board is at most 12x12, else python.
Both expose the same methods (``begin/collect/complete``, ``run``, ``counts``, ``root_value``,
``output``, ``visit_order``, ``advance``, ``internal_nodes``, ``exact_root``) and the same root statistics;
which one a search is, is its ``backend`` attribute.

    search = make_search(evaluator, SearchSettings(simulations=200), np.random.default_rng(0))
    counts = search.run(state)                                     # [num_actions] visit counts
    out = search.output()                                          # SearchOutput
    counts = run_many(searches, states, evaluator)                 # many games, one evaluator call per round
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from agents.search.agent import MCTSAgent
from agents.search.api import Evaluator, RootOutput, SearchOutput, visits_to_policy
from agents.search.evaluators import RolloutEvaluator, UniformEvaluator
from agents.search.exact import ExactRoot, final_value
from agents.search.native import NativeMCTS, run_many_native
from agents.search.python import MCTS
from agents.search.python import run_many as _run_many_python
from agents.search.settings import SearchSettings
from dnb_env import native as _native_engine

__all__ = ["make_search", "run_many", "choose_backend", "BACKENDS", "SearchSettings", "RootOutput", "SearchOutput",
           "Evaluator", "visits_to_policy", "MCTSAgent", "UniformEvaluator", "RolloutEvaluator", "ExactRoot",
           "final_value"]

BACKENDS = ("auto", "python", "native")


def choose_backend(backend: str = "auto", board: tuple[int, int] | None = None) -> str:
    """``"python"`` or ``"native"`` for the requested ``backend`` on ``board`` ((rows, cols), None: any
    size the native engine takes). ``"native"`` without the extension is an ImportError; on a board over
    MAX_SIZE (12 with the wide build) a ValueError."""
    if backend not in BACKENDS:
        raise ValueError(f"search backend must be one of {', '.join(BACKENDS)}, got {backend!r}")
    fits = board is None or (board[0] <= _native_engine.MAX_SIZE and board[1] <= _native_engine.MAX_SIZE)
    if backend == "auto":
        return "native" if _native_engine.available() and fits else "python"
    if backend == "native":
        _native_engine._require()
        if not fits:
            raise ValueError(f"the native search takes boards up to {_native_engine.MAX_SIZE}x"
                             f"{_native_engine.MAX_SIZE}, got {board[0]}x{board[1]}")
    return backend


def make_search(evaluator, config: SearchSettings = SearchSettings(), rng: np.random.Generator | None = None,
                backend: str = "auto", board: tuple[int, int] | None = None):
    """A search over ``evaluator`` with ``config``: :class:`agents.search.python.MCTS` or
    :class:`agents.search.native.NativeMCTS` (:func:`choose_backend`)."""
    if choose_backend(backend, board) == "native":
        return NativeMCTS(evaluator, config, rng)
    return MCTS(evaluator, config, rng)


def run_many(searches: Sequence, states: Sequence, evaluator) -> list[np.ndarray]:
    """Run one search per state in lockstep with one evaluator call per round (all native searches: in
    C++, :func:`agents.search.native.run_many_native`; all Python: :func:`agents.search.python.run_many`)."""
    searches = list(searches)
    backends = {getattr(s, "backend", "python") for s in searches}
    if len(backends) > 1:
        raise ValueError("run_many needs searches of one backend")
    if backends == {"native"}:
        return run_many_native(searches, states, evaluator)
    return _run_many_python(searches, states, evaluator)
