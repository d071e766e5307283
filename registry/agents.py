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


def check_spec(name: str, kwargs: dict) -> Callable:
    """The factory of ``name`` after checking that it exists and takes every option in ``kwargs``."""
    try:
        factory = _FACTORIES[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown agent {name!r}; known agents: {', '.join(list_agents())}") from None
    allowed = _options(factory)
    unknown = sorted(set(kwargs) - set(allowed))
    if unknown:
        raise ValueError(
            f"agent {name!r} has no option(s) {', '.join(unknown)}; its options: {', '.join(allowed) or 'none'}"
        )
    return factory


def make_agent(name: str, board="5x5", seed: int | None = None, **kwargs):
    """Build the agent registered as ``name`` for ``board`` ("RxC" or (rows, cols))."""
    factory = check_spec(name, kwargs)
    return factory(board=parse_board(board), seed=seed, **kwargs)


def _random(*, board, seed):
    from baselines.random_agent import RandomAgent

    return RandomAgent(seed=seed)


register_agent("random", _random)


def _greedy(*, board, seed):
    from baselines.greedy import GreedyAgent

    return GreedyAgent(seed=seed)


def _alphabeta(*, board, seed, depth=4, time_limit=None, chain_eval=False, extend_captures=True):
    from baselines.alphabeta import AlphaBetaAgent

    return AlphaBetaAgent(depth=int(depth), time_limit=time_limit, chain_eval=bool(chain_eval),
                          extend_captures=bool(extend_captures), seed=seed)


def _solver(*, board, seed, max_undrawn=24):
    from baselines.solver import SolverAgent

    return SolverAgent(seed=seed, max_undrawn=int(max_undrawn))


def _mcts(*, board, seed, simulations=1000, uct_c=2.0):
    from baselines.uct import UCTAgent

    return UCTAgent(simulations=int(simulations), uct_c=float(uct_c), seed=seed)


register_agent("greedy", _greedy)
register_agent("alphabeta", _alphabeta)
register_agent("solver", _solver)
register_agent("mcts", _mcts)


def _prsboxes(*, board, seed, solver_edges=20, search_safe=9, search_full=4, search_depth=40, search_nodes=300_000):
    from baselines.prsboxes import PRsBoxesAgent

    return PRsBoxesAgent(seed=seed, solver_edges=int(solver_edges), search_safe=int(search_safe),
                         search_full=int(search_full), search_depth=int(search_depth),
                         search_nodes=int(search_nodes))


register_agent("prsboxes", _prsboxes)


_SPIEL_GAMES = {"python": "python_dots_and_boxes", "cpp": "dots_and_boxes"}


def _openspiel_mcts(*, board, seed, simulations=1000, uct_c=2.0, rollouts=1, game="python"):
    """OpenSpiel's Python MCTSBot with random rollouts, as an Agent. ``game="python"`` searches on the
    registered ``python_dots_and_boxes``; ``game="cpp"`` on OpenSpiel's own C++ ``dots_and_boxes`` (same
    rules and action numbers, faster rollouts: about 1.8x the moves per second on 5x5; the bot itself is
    the same Python code)."""
    import numpy as np
    import pyspiel
    from open_spiel.python.algorithms import mcts

    import dnb_env  # noqa: F401  (registers the game)
    from agents.base import SpielBotAgent

    if game not in _SPIEL_GAMES:
        raise ValueError(f"openspiel_mcts: game must be one of {sorted(_SPIEL_GAMES)}, got {game!r}")
    rows, cols = board
    game = pyspiel.load_game(_SPIEL_GAMES[game], {"num_rows": rows, "num_cols": cols})
    rs = np.random.RandomState(None if seed is None else seed % 2**32)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=int(rollouts), random_state=rs)
    bot = mcts.MCTSBot(game, float(uct_c), int(simulations), evaluator, random_state=rs)
    return SpielBotAgent(bot, game, name="openspiel_mcts")


register_agent("openspiel_mcts", _openspiel_mcts)


def _network_factory(agent: str):
    def factory(*, board, seed, checkpoint=None, simulations=200, c_puct=1.0, prune=True, device="cpu"):
        from agents.network_agent import make_network_agent

        rows, cols = board
        return make_network_agent(f"{rows}x{cols}", agent, checkpoint=checkpoint, simulations=int(simulations),
                                  c_puct=float(c_puct), prune=bool(prune), seed=seed, device=device)

    factory.__doc__ = f"PUCT search over the {agent} network (shipped weights unless checkpoint=PATH)."
    return factory


register_agent("alphazero", _network_factory("alphazero"))
register_agent("dotsformer", _network_factory("dotsformer"))
