"""What the routes of one app share: its limits and folders (:class:`WebConfig`, the ``dnb serve`` options), its
live games, the pools that run agent moves, analyses and agent builds, and how it builds an agent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from dnb_env.core import geometry
from dnb_web.games import GameStore
from dnb_web.server import DaemonPool, MoveRunner

__all__ = ["WebConfig", "WebContext"]


@dataclass(frozen=True)
class WebConfig:
    """Limits and folders of one app (``dnb serve`` options).

    results_roots: folders whose tournament folders (``dnb tournament --out``) may be browsed
    checkpoint_roots: folders from which ``checkpoint=`` paths may be loaded (the shipped weights always)
    max_games: live games at once; max_think_s: the longest time limit per agent move a game may ask for
    time_limit_s: the default time limit per agent move; max_body: largest request body in bytes
    solver_nodes: alpha-beta node budget of each exact-solver query of the insight view
    workers: agent moves at once (a process each) and analyses at once (daemon threads); build_workers:
    agent builds at once
    idle_s: a game without requests for this long is dropped (when ``max_games`` are live, a finished game
    makes room for a new one; a game in play is never dropped for a newcomer: the new one gets 503)
    allowed_hosts: ``Host`` header values served (``"*"``: any), against DNS rebinding
    allowed_engines: engine programs a game may play (an ``engine`` spec whose ``cmd`` starts with one of
    them, exactly, after ``shlex.split``); none: every ``engine`` spec is refused
    """

    results_roots: tuple[str, ...] = ("results",)
    checkpoint_roots: tuple[str, ...] = ("runs",)
    max_games: int = 64
    max_think_s: float = 60.0
    time_limit_s: float = 10.0
    max_body: int = 64 * 1024
    solver_nodes: int = 300_000
    workers: int = 4
    build_workers: int = 2
    idle_s: float = 3600.0
    allowed_hosts: tuple[str, ...] = ("127.0.0.1", "localhost", "::1")
    allowed_engines: tuple[str, ...] = ()


class WebContext:
    """One app's shared state: ``config``, the live games (``store``), the agent moves (``moves``: processes,
    killed at their time limit), the analyses (``pool``: threads, which keep each game's solver and analyst),
    the agent builds (``builds``: for new games and for ``/api/agents``) and the folders ``checkpoint=`` paths
    may come from (``checkpoint_roots``: the configured ones and the shipped weights)."""

    def __init__(self, config: WebConfig, make_agent: Callable):
        from agents.network_agent import SHIPPED_DIR

        self.config, self.make_agent = config, make_agent
        self.store = GameStore(config.max_games, config.idle_s)
        self.moves = MoveRunner(config.workers, make_agent)
        self.pool = DaemonPool(config.workers, "analysis")
        self.builds = DaemonPool(config.build_workers, "build")
        self.checkpoint_roots = list(config.checkpoint_roots) + [SHIPPED_DIR]

    def build(self, name: str, kwargs: dict, rows: int, cols: int, seed):
        """The agent ``name`` with options ``kwargs`` for a ``rows`` x ``cols`` board, seeded with ``seed``."""
        return self.make_agent(name, board=geometry(rows, cols).name, seed=seed, **kwargs)
