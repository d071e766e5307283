"""The learner's game of the Gymnasium envs (:mod:`dnb_env.gym_env`): one learner against an opponent.

:class:`_Game` plays it over :class:`~dnb_env.core.GameState` with any opponent. Under the native backend,
with an opponent whose draws the C++ games replay (the registry's ``random``), the games live in C++
(``dnb_env._native.LearnerGames``): :func:`_native_games` builds them, :class:`_NativeGame` holds the single
env's game and :class:`_NativeGameView` reads one game of the vector env. The options (``learner_player``,
``reward``, ``illegal_action``, the reset options) are those of the module docstring of :mod:`dnb_env.gym_env`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from dnb_env._extras import requires_extra

with requires_extra("dnb_env.learner_game"):
    import gymnasium as gym

from dnb_env import native
from dnb_env.agent import Seedable
from dnb_env.core import GameState, IllegalActionError, _check_action, geometry

REWARDS = ("win", "margin", "boxes")
ILLEGAL = ("lose", "raise")
RESET_OPTIONS = ("learner_player", "history")
_SEATS = {0: 0, 1: 1, "random": 2}  # learner_player as LearnerGames takes it
_M64 = (1 << 64) - 1


def _check_choice(name, value, options):
    if value not in options or isinstance(value, bool):
        raise ValueError(f"{name} must be one of {', '.join(map(repr, options))}, got {value!r}")


def _reset_options(options) -> dict:
    """The ``options`` of ``reset`` checked: None or a dict with keys from ``RESET_OPTIONS``."""
    if options is None:
        return {}
    if not isinstance(options, dict):
        raise TypeError(f"reset options must be a dict with keys from {RESET_OPTIONS}, got {options!r}")
    unknown = sorted(map(str, set(options) - set(RESET_OPTIONS)))
    if unknown:
        raise ValueError(f"unknown reset option(s) {', '.join(unknown)}; supported: {', '.join(RESET_OPTIONS)}")
    options = {k: v for k, v in options.items() if v is not None}  # None: not given (the env's own setting)
    if "learner_player" in options:
        _check_choice("learner_player", options["learner_player"], (0, 1, "random"))
    return options


class _Game:
    """One learner-vs-opponent game; shared by the single env and the vector env."""

    __slots__ = ("board", "opponent", "learner_option", "reward_mode", "illegal_mode", "state", "learner", "done")

    def __init__(self, board, opponent, learner_player, reward, illegal_action):
        self.board = board
        self.opponent = opponent
        _check_choice("learner_player", learner_player, (0, 1, "random"))
        _check_choice("reward", reward, REWARDS)
        _check_choice("illegal_action", illegal_action, ILLEGAL)
        self.learner_option = learner_player
        self.reward_mode = reward
        self.illegal_mode = illegal_action
        self.state: GameState | None = None
        self.learner = 0
        self.done = False

    def reset(self, np_random: np.random.Generator, options: dict | None = None) -> None:
        """A new game; ``options`` as in the module docstring (checked before anything changes)."""
        options = _reset_options(options)
        history = options.get("history", ())
        start = GameState.from_actions(*self.board, history)  # IllegalActionError (a ValueError) if illegal
        learner = options.get("learner_player", self.learner_option)
        self.learner = int(np_random.integers(2)) if learner == "random" else learner
        if isinstance(self.opponent, Seedable):
            self.opponent.seed(int(np_random.integers(2**63 - 1)))
        self.opponent.reset()
        self.state = start
        self.done = False
        self._opponent_turns()
        if self.state.is_terminal():
            self.state = None
            raise ValueError(f"reset option history={list(history)!r} leaves the learner no move to make")

    def _margin(self) -> int:
        s0, s1 = self.state.scores
        return s0 - s1 if self.learner == 0 else s1 - s0

    def _opponent_turns(self) -> None:
        s = self.state
        while not s.is_terminal() and s.current_player != self.learner:
            a = self.opponent.select_action(s)
            if not s.is_legal(a):
                raise RuntimeError(f"opponent {getattr(self.opponent, 'name', self.opponent)!r} chose illegal action {a!r}")
            s = s.apply(a)
        self.state = s

    def check(self, action) -> int:
        """``action`` as an int if the learner may play it; ResetNeeded or IllegalActionError otherwise."""
        if self.state is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        if self.done:
            raise gym.error.ResetNeeded("the episode is over; call reset() before step()")
        return _check_action(self.state, action)

    def step(self, action) -> tuple[float, bool, bool]:
        """Learner plays ``action``, the opponent replies; returns (reward, terminated, illegal)."""
        s = self.state
        try:
            action = self.check(action)
        except IllegalActionError:
            if self.illegal_mode == "raise":
                raise
            self.done = True
            return -1.0, True, True
        before = self._margin()
        self.state = s.apply(action)
        self._opponent_turns()
        s = self.state
        n = s.geometry.num_boxes
        if self.reward_mode == "boxes":
            reward = (self._margin() - before) / n
        else:
            reward = 0.0
        if s.is_terminal():
            self.done = True
            if self.reward_mode == "win":
                reward = s.returns()[self.learner]
            elif self.reward_mode == "margin":
                reward = s.returns(margin=True)[self.learner] / n
        return float(reward), s.is_terminal(), False

    def view(self) -> GameState:
        return self.state.as_seen_by(self.learner)

    def mask(self) -> np.ndarray:
        if self.done:
            return np.zeros(self.state.num_actions, dtype=np.int8)
        return self.state.legal_mask()

    def info(self, illegal: bool = False) -> dict[str, Any]:
        s0, s1 = self.state.scores
        return {
            "action_mask": self.mask(),
            "scores": (s0, s1) if self.learner == 0 else (s1, s0),
            "current_player": self.state.current_player,
            "learner_player": self.learner,
            "illegal_action": illegal,
        }


def _replays_natively(opponent, board: tuple[int, int]) -> bool:
    """Whether ``opponent`` is an agent whose draws the native games replay (the registry's ``random``:
    :class:`baselines.random_agent.RandomAgent`, marked ``replays_natively`` on its own class) for ``board``."""
    if type(opponent).__dict__.get("replays_natively") is not True:
        return False
    own = getattr(opponent, "board", None)
    try:
        return own is None or geometry(own).size == board
    except ValueError:
        return False


def _native_games(board, obs_type, opponent, learner_player, reward, illegal_action, n):
    """``dnb_env._native.LearnerGames`` of ``n`` games when the native backend is selected, encodes
    ``obs_type`` and the opponent is replayed natively; else None (the Python ``_Game`` path)."""
    if not (native.handles(obs_type, geometry(*board)) and _replays_natively(opponent, board)):
        return None
    _check_choice("learner_player", learner_player, (0, 1, "random"))
    _check_choice("reward", reward, REWARDS)
    _check_choice("illegal_action", illegal_action, ILLEGAL)
    return native.module(*board).LearnerGames(*board, n, obs_type, reward, illegal_action, _SEATS[learner_player])


def _native_state(games, i: int, g) -> GameState | None:
    """Game ``i`` of ``LearnerGames`` as a GameState (with its history); None before a reset."""
    pos = games.position(i)
    if pos is None:
        return None
    edges, owner0, owner1, player, history = pos
    frm = int.from_bytes
    return GameState._make(g, frm(edges, "little"), frm(owner0, "little"), frm(owner1, "little"), player, history)


class _NativeGame:
    """The single env's game held in C++ (``LearnerGames`` of one game, random opponent): the interface of
    ``_Game`` for everything but the step, which ``DotsAndBoxesEnv.step`` hands to ``games.step`` (one call:
    learner move, the opponent's replies, observation, mask, reward, info)."""

    __slots__ = ("board", "opponent", "learner_option", "illegal_mode", "games", "geometry")

    def __init__(self, board, opponent, learner_player, illegal_action, games):
        self.board = board
        self.opponent = opponent
        self.learner_option = learner_player
        self.illegal_mode = illegal_action
        self.games = games
        self.geometry = geometry(*board)

    def reset(self, np_random: np.random.Generator, options: dict | None = None) -> None:
        """As ``_Game.reset``, drawing the same numbers from ``np_random`` (the learner seat when random,
        then the opponent's seed, which seeds the C++ copy of its generator)."""
        options = _reset_options(options)
        history = options.get("history", ())
        start = GameState.from_actions(*self.board, history)  # IllegalActionError (a ValueError) if illegal
        learner = options.get("learner_player", self.learner_option)
        learner = int(np_random.integers(2)) if learner == "random" else learner
        if not self.games.reset(0, learner, int(np_random.integers(2**63 - 1)), start.history):
            raise ValueError(f"reset option history={list(history)!r} leaves the learner no move to make")

    @property
    def state(self) -> GameState | None:
        return _native_state(self.games, 0, self.geometry)

    @property
    def learner(self) -> int:
        return self.games.learner(0)

    @property
    def done(self) -> bool:
        return self.games.done(0)

    def view(self) -> GameState:
        return self.state.as_seen_by(self.learner)

    def mask(self) -> np.ndarray:
        return self.games.masks()[0]

    def step_slow(self, action):
        """What ``games.step`` leaves to Python: ResetNeeded, and actions that are not Python ints."""
        if not self.games.ready(0):
            raise gym.error.ResetNeeded("call reset() before step()")
        if self.games.done(0):
            raise gym.error.ResetNeeded("the episode is over; call reset() before step()")
        try:
            action = _check_action(self.state, action)
        except IllegalActionError:
            if self.illegal_mode == "raise":
                raise
            return self.games.lose()
        return self.games.step(action)


class _NativeGameView:
    """Game ``i`` of a native vector env, read-only: ``state``, ``learner``, ``done``, ``view()``, ``mask()``."""

    __slots__ = ("games", "i", "geometry", "board", "opponent")

    def __init__(self, games, i, board, opponent):
        self.games, self.i, self.board, self.opponent = games, i, board, opponent
        self.geometry = geometry(*board)

    @property
    def state(self) -> GameState | None:
        return _native_state(self.games, self.i, self.geometry)

    @property
    def learner(self) -> int:
        return self.games.learner(self.i)

    @property
    def done(self) -> bool:
        return self.games.done(self.i)

    def view(self) -> GameState:
        return self.state.as_seen_by(self.learner)

    def mask(self) -> np.ndarray:
        return self.games.masks()[self.i]


def _pcg64_state(rng: np.random.Generator) -> tuple:
    """``rng``'s PCG64 state as ``LearnerGames.set_generators`` takes it."""
    s = rng.bit_generator.state
    if s["bit_generator"] != "PCG64":
        raise ValueError(f"the native vector env needs PCG64 generators, got {s['bit_generator']}")
    st, inc = s["state"]["state"], s["state"]["inc"]
    return st >> 64, st & _M64, inc >> 64, inc & _M64, bool(s["has_uint32"]), int(s["uinteger"])
