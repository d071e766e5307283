"""One PUCT tree search, two backends behind one API (``begin/collect/complete``, ``run``, ``run_many``).

==============  ========================================================================================
backend         what
==============  ========================================================================================
``"python"``    :class:`agents.mcts.MCTS`, the readable reference
``"native"``    :class:`agents.search.native.NativeMCTS`, the same search in C++ (``dnb_env._native``): the
                same visit counts, values and moves for the same evaluator outputs and seeds, tens of
                times faster; many games' trees are driven in lockstep by :func:`run_many`
``"auto"``      native when the extension is built and the board is at most 9x9, else python
==============  ========================================================================================

    search = make_search(evaluator, MCTSConfig(simulations=200), np.random.default_rng(0))
    counts = search.run(state)                                     # [num_actions] visit counts
    counts = run_many(searches, states, evaluator)                 # many games, one evaluator call per round
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from agents.mcts import MCTS, MCTSConfig
from agents.mcts import run_many as _run_many_python
from dnb_env import native as _native_engine

__all__ = ["make_search", "run_many", "choose_backend", "BACKENDS"]

BACKENDS = ("auto", "python", "native")


def choose_backend(backend: str = "auto", board: tuple[int, int] | None = None) -> str:
    """``"python"`` or ``"native"`` for the requested ``backend`` on ``board`` ((rows, cols), None: any
    size the native engine takes). ``"native"`` without the extension is an ImportError; on a board over
    9x9 a ValueError."""
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


def make_search(evaluator, config: MCTSConfig = MCTSConfig(), rng: np.random.Generator | None = None,
                backend: str = "auto", board: tuple[int, int] | None = None):
    """A search over ``evaluator`` with ``config``: :class:`agents.mcts.MCTS` or
    :class:`agents.search.native.NativeMCTS` (:func:`choose_backend`)."""
    if choose_backend(backend, board) == "native":
        from agents.search.native import NativeMCTS

        return NativeMCTS(evaluator, config, rng)
    return MCTS(evaluator, config, rng)


def run_many(searches: Sequence, states: Sequence, evaluator) -> list[np.ndarray]:
    """Run one search per state in lockstep with one evaluator call per round (all native searches: in
    C++, :func:`agents.search.native.run_many_native`; otherwise :func:`agents.mcts.run_many`)."""
    from agents.search.native import NativeMCTS, run_many_native

    searches = list(searches)
    if searches and all(isinstance(s, NativeMCTS) for s in searches):
        return run_many_native(searches, states, evaluator)
    if any(isinstance(s, NativeMCTS) for s in searches):
        raise ValueError("run_many needs searches of one backend")
    return _run_many_python(searches, states, evaluator)
