"""Tournaments with the registry's names: the arena (:mod:`agents.arena`) plays Agent factories and spec
strings it cannot read itself; these check every spec before anything is played or written
(:func:`registry.specs.check_agent_spec`) and hand the arena :func:`registry.specs.agent_from_spec` to build
them, in this process, in its worker processes or in Ray tasks.

```python
from agents.arena import TournamentConfig
from registry.tournaments import gauntlet, run_tournament
run_tournament(TournamentConfig(board="3x3", agents=("random", "greedy", "alphabeta:depth=3")), out="results/3x3")
gauntlet("3x3", ("mine", lambda: MyAgent()), ("random", "greedy"), games=100).results_of(0)
```
"""

from __future__ import annotations

from typing import Callable, Sequence

from agents import arena
from agents.arena import TournamentConfig, TournamentReport
from registry.specs import agent_from_spec, check_agent_spec, describe_spec

__all__ = ["run_tournament", "gauntlet"]


def _check(entries: Sequence) -> None:
    """Fail early on an unknown name, option or option type of any spec entry."""
    for e in entries:
        if isinstance(e, str):
            check_agent_spec(e)


def run_tournament(config: TournamentConfig, out: str | None = None, agents: Sequence | None = None,
                   progress: bool = True, echo: Callable[[str], None] | None = print) -> TournamentReport:
    """:func:`agents.arena.run_tournament` with the spec strings among the entries (those of
    ``config.agents``, or of ``agents``) checked and built by the registry."""
    _check(config.agents if agents is None else agents)
    return arena.run_tournament(config, out=out, agents=agents, progress=progress, echo=echo,
                                build=agent_from_spec, describe=describe_spec)


def gauntlet(board: str, entry, opponents: Sequence = ("random", "greedy"), games: int = 400, seed: int = 0,
             openings: int = 0, progress: bool = False) -> TournamentReport:
    """:func:`agents.arena.gauntlet` with spec strings (``entry`` or ``opponents``) checked and built by the
    registry."""
    _check([entry, *opponents])
    return arena.gauntlet(board, entry, opponents, games=games, seed=seed, openings=openings, progress=progress,
                          build=agent_from_spec, describe=describe_spec)
