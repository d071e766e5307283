"""Agent factories by name.

    make_agent("random", board="5x5", seed=0)
    make_agent("alphabeta", board="5x5", seed=0, depth=4)

Every factory takes ``board`` and ``seed`` plus its own keyword options; an unknown name or option raises
``ValueError`` listing what exists. Third-party code can add names with :func:`register_agent`.
"""

from __future__ import annotations

import inspect
from typing import Callable

from dnb_env.core import parse_board

_FACTORIES: dict[str, Callable] = {}


def register_agent(name: str, factory: Callable, *, override: bool = False) -> None:
    """Register ``factory(board=(rows, cols), seed=..., **options) -> Agent`` under ``name``."""
    if name in _FACTORIES and not override:
        raise ValueError(f"agent name {name!r} is already registered")
    _FACTORIES[name] = factory


def list_agents() -> list[str]:
    return sorted(_FACTORIES)


def _options(factory: Callable) -> list[str]:
    params = inspect.signature(factory).parameters
    return [n for n, p in params.items() if n not in ("board", "seed") and p.kind == p.KEYWORD_ONLY]


def make_agent(name: str, board="5x5", seed: int | None = None, **kwargs):
    """Build the agent registered as ``name`` for ``board`` ("RxC" or (rows, cols))."""
    try:
        factory = _FACTORIES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown agent {name!r}; known agents: {', '.join(list_agents())}") from None
    rows_cols = parse_board(board)
    allowed = _options(factory)
    unknown = sorted(set(kwargs) - set(allowed))
    if unknown:
        raise ValueError(
            f"agent {name!r} has no option(s) {', '.join(unknown)}; its options: {', '.join(allowed) or 'none'}"
        )
    return factory(board=rows_cols, seed=seed, **kwargs)


def _random(*, board, seed):
    from baselines.random_agent import RandomAgent

    return RandomAgent(seed=seed)


register_agent("random", _random)
