"""The agent contract: what every player implements, the optional capabilities it may declare, and the checks
of its input and output.

```python
class Agent(Protocol):
    name: str
    def select_action(self, state: GameState) -> int: ...
    def reset(self) -> None: ...          # a new game starts
```

Optional capabilities, each a runtime-checkable protocol that an agent class lists among its bases when it
has the method; callers test ``isinstance(agent, Seedable)`` and so on:

======================  =========================================  ==============================================
capability              method                                     used by
======================  =========================================  ==============================================
:class:`Seedable`       ``seed(seed: int)``                        the arena (each game), the envs (each episode)
:class:`Closeable`      ``close()``                                its owner when done (an engine stopped)
:class:`Timed`          ``set_move_time(seconds)``                 a time control: think ``seconds`` a move
:class:`Clocked`        ``set_clock(left, inc=0.0)``               a game clock, which the agent divides itself
:class:`Tolerant`       ``set_overrun(margin, rule)``              a time control's overrun rule (an engine)
:class:`Preparable`     ``prepare(state)``                         getting ready before a game's clock starts
:class:`Analysable`     ``analyse(state, deadline=None) -> dict``  the web app's insight view (below)
:class:`Probabilistic`  ``action_probabilities(state) -> [A]``     a policy over the actions
======================  =========================================  ==============================================

``analyse`` shows what an agent thinks of a position without playing in it (the web app's insight view calls
it on an agent of its own): a dict with ``kind`` and, where the agent has them, ``values`` (``[num_actions]``,
one number per action, None where it has none), ``value`` (for the player to move, in ``unit``), ``unit``,
``move`` (a move of its own choosing, e.g. alpha-beta's; else the reader takes the best of ``values``) and
``message`` (why there is no view). Kinds: ``"visits"`` (a tree search's root visit counts), ``"policy"``
(a network's raw policy and value head), ``"values"`` (exact move values), ``"search"`` (a depth-limited
search's move and value, deepened until ``deadline``, a ``time.perf_counter()`` time), ``"probabilities"``
and ``"none"``. An agent that is not :class:`Analysable` is read through ``action_probabilities`` where it
is :class:`Probabilistic`.

Every registered agent starts ``select_action`` with :func:`check_state`: a finished game, or a board
other than the one the agent was built for (``board``, set by the registry's factory; ``None`` for an
agent built directly skips only the board check), raises :class:`AgentInputError` (a ``ValueError``).
An agent that cannot give a move at all (an engine) raises :class:`AgentFailure`.

:class:`FunctionAgent` makes a plain callable ``state -> action`` an Agent.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Protocol, runtime_checkable

import numpy as np

from dnb_env.core import GameState, IllegalActionError, geometry

__all__ = ["Agent", "AgentInputError", "AgentFailure", "check_state", "check_agent_action", "FunctionAgent",
           "Seedable", "Closeable", "Timed", "Clocked", "Tolerant", "Preparable", "Analysable", "Probabilistic"]


@runtime_checkable
class Agent(Protocol):
    name: str

    def select_action(self, state: GameState) -> int: ...

    def reset(self) -> None: ...


@runtime_checkable
class Seedable(Protocol):
    """An agent whose randomness is reseeded (each game of a tournament, each episode of an env)."""

    def seed(self, seed: int) -> None: ...


@runtime_checkable
class Closeable(Protocol):
    """An agent holding something to release when done with it (an engine's program)."""

    def close(self) -> None: ...


@runtime_checkable
class Timed(Protocol):
    """An agent that thinks to a clock: ``seconds`` a move from now on (a time control)."""

    def set_move_time(self, seconds: float) -> None: ...


@runtime_checkable
class Clocked(Protocol):
    """An agent that divides a game clock itself: ``left`` seconds for the rest of the game, this move
    included, and ``inc`` added after each move; told before each move."""

    def set_clock(self, left: float, inc: float = 0.0) -> None: ...


@runtime_checkable
class Tolerant(Protocol):
    """An agent that judges its own lateness (an engine, which stops waiting for a move by itself): told a
    time control's ``margin`` and overrun ``rule`` before each game."""

    def set_overrun(self, margin: float, rule: str) -> None: ...


@runtime_checkable
class Preparable(Protocol):
    """An agent that gets ready for the game of ``state`` before its clock starts (an engine started)."""

    def prepare(self, state: GameState) -> None: ...


@runtime_checkable
class Analysable(Protocol):
    """An agent with its own view of a position (the module docstring says what the dict holds)."""

    def analyse(self, state: GameState, deadline: float | None = None) -> dict: ...


@runtime_checkable
class Probabilistic(Protocol):
    """An agent with a policy: ``[num_actions]`` probabilities of its moves in ``state``."""

    def action_probabilities(self, state: GameState) -> np.ndarray: ...


class AgentInputError(ValueError):
    """A state an agent cannot play: the game is over, or the board is not the one it was built for."""


class AgentFailure(RuntimeError):
    """An agent that could not give a move (an engine that crashed, overran its time, answered an illegal
    move or a line outside the protocol): the arena scores the game as lost by the agent to move and records
    ``kind`` (``"crash"``, ``"time"``, ``"illegal"``, ``"protocol"``, ``"error"``) and the message."""

    def __init__(self, kind: str, message: str):
        super().__init__(message)
        self.kind = kind


def check_state(agent: Any, state: GameState) -> None:
    """Raise :class:`AgentInputError` unless ``agent`` can choose a move in ``state``.

    ``agent.board`` is the board it was built for (``(rows, cols)`` or ``"RxC"``), or ``None`` (no board
    check).
    """
    name = getattr(agent, "name", agent)
    board = getattr(agent, "board", None)
    if board is not None and state.geometry.size != (built := geometry(board)).size:
        raise AgentInputError(f"agent {name!r} was built for a {built.name} board, got a {state.geometry.name} state")
    if state.is_terminal():
        raise AgentInputError(f"agent {name!r} got a finished game: there is no move to choose")


def check_agent_action(agent: Any, state: GameState, action: Any) -> int:
    """Validate an agent's chosen action; raise IllegalActionError naming the agent otherwise."""
    if not state.is_legal(action):
        raise IllegalActionError(
            f"agent {getattr(agent, 'name', agent)!r} chose illegal action {action!r} in\n{state}"
        )
    return int(action)


class FunctionAgent(Seedable):
    """Wrap ``fn(state) -> action`` (or ``fn(state, rng) -> action``) as an Agent."""

    def __init__(self, fn: Callable, name: str | None = None, seed: int | None = None):
        self.fn = fn
        self.name = name or getattr(fn, "__name__", "function")
        try:
            self._takes_rng = len(inspect.signature(fn).parameters) >= 2
        except (TypeError, ValueError):
            self._takes_rng = False
        self.rng = np.random.default_rng(seed)

    def seed(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def select_action(self, state: GameState) -> int:
        return self.fn(state, self.rng) if self._takes_rng else self.fn(state)

    def reset(self) -> None:
        pass
