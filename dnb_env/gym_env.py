"""Gymnasium environment: one learner against a built-in opponent, plus a native batched vector env.

=====================  ==========================================================================
Import                 ``import dnb_env; gym.make("DotsAndBoxes-5x5-v0")`` (or ``gym.make("dnb_env:DotsAndBoxes-5x5-v0")``)
Ids                    ``DotsAndBoxes-{R}x{C}-v0`` for 1 <= R, C <= 12; ``DotsAndBoxes-v0`` with ``rows=``, ``cols=``
                       (versions: :mod:`dnb_env.registration`)
Install                ``pip install 'dnb-env[gym]'`` (Gymnasium, PettingZoo, pygame)
Actions                ``Discrete(A)``, OpenSpiel's numbering (A = 60 on 5x5)
Observation            ``Dict(observation=Box(C, H, W) float32, action_mask=Box(0, 1, (A,), int8))``
Vector                 ``gym.make_vec(id, num_envs=N, vectorization_mode="vector_entry_point")``
=====================  ==========================================================================

Options (keyword arguments of ``gym.make``):

* ``obs_type``: any encoder of :mod:`dnb_env.observations` (default ``"chainloop6"``), seen from the
  learner's side.
* ``opponent``: an Agent, a registered agent name (``"random"``, default) or spec (``"alphabeta:depth=3"``,
  an engine program as ``'engine:cmd="./my_engine",name=mine'``), or a callable ``state -> action`` (or
  ``(state, rng) -> action``); ``opponent_kwargs`` go to the named agent. ``env.close()`` closes an
  opponent given by name (an engine's program is stopped). Names are resolved by the registry: the ids'
  entry points (:mod:`registry.envs`) are these classes with the registry's names
  (:attr:`DotsAndBoxesEnv.resolve_opponent`); the classes here, built directly, take the default
  ``"random"`` (:class:`dnb_env.opponents.RandomAgent`), an Agent or a callable (another name is a
  ``ValueError``). Its randomness is seeded from ``self.np_random``. After a
  completed box the opponent keeps moving until it is the learner's turn or the game ends, so every
  observation is the learner's turn.
* ``learner_player``: 0 (moves first), 1, or ``"random"`` (drawn at each reset).
* ``reward``: ``"win"`` (+1/-1/0 at the end), ``"margin"`` (final box margin / boxes) or ``"boxes"``
  (each step: boxes won minus boxes lost since the last step, / boxes).
* ``illegal_action``: ``"lose"`` (default: the episode ends with reward -1 and
  ``info["illegal_action"] = True``, the board unchanged) or ``"raise"`` (``IllegalActionError``, the
  state kept, so the caller can go on).
* ``render_mode``: ``"ansi"``, ``"rgb_array"`` or ``"human"`` (pygame; single env only: the vector env
  refuses it, render its ``"rgb_array"`` frames instead).

Reset options (``env.reset(options={...})``), for that episode only (the next reset without them goes
back to the settings above; a value of None counts as not given); any other key, or options that are not
a dict, raise:

* ``learner_player``: 0, 1 or ``"random"``.
* ``history``: actions played from the empty board; the episode starts from that position (after the
  opponent's replies if it is the opponent's turn there). The learner must have a move left to make,
  else ``ValueError``. E.g. ``env.reset(options={"history": list(state.history)})``.

``action_masks()`` returns the legal mask (for sb3-contrib's MaskablePPO). ``info`` holds
``action_mask``, ``scores`` (learner, opponent), ``current_player``, ``learner_player`` and
``illegal_action``.

Vector env (:class:`DotsAndBoxesVectorEnv`): the same options and rules, ``N`` games at once.

* An action is legal by the same rule as in the single env (an integer action number of an undrawn edge;
  a float such as ``1.5`` is illegal, never rounded). With ``illegal_action="raise"`` the whole batch is
  checked before any board moves, so an ``IllegalActionError`` (naming the env index) leaves every game
  as it was; with ``"lose"`` only the games with an illegal action end.
* ``reset(seed=s)`` seeds game ``i`` with ``s + i`` (a list of seeds seeds each game), as Gymnasium's
  ``SyncVectorEnv``/``AsyncVectorEnv`` seed their sub-envs: ``gym.make_vec(id, num_envs=N, ...)`` plays
  the same games in the ``"vector_entry_point"``, ``"sync"`` and ``"async"`` modes for the same seed and
  actions. ``reset(options=...)`` applies the options to every game; autoresets use the constructor's
  settings (as the sync vector env resets its sub-envs without options).

Backends (:mod:`dnb_env.native`). Under the native backend (the default when the extension is built), with
the random opponent (``"random"``, or a :class:`baselines.random_agent.RandomAgent`) and an encoder of the
native engine (baseline4, chainloop6, chainloop64, alphazero4), the games live in C++
(``dnb_env._native.LearnerGames``): one call plays the learner's move and the opponent's replies, encodes
the observation and fills the mask and the info; the vector env steps, autoresets and encodes all its games in
one call. The opponent's draws are those of ``RandomAgent`` (numpy's ``default_rng`` replayed in C++), so
for the same seeds and actions both backends play the same games and return equal observations, rewards and
infos. (``env.opponent`` itself is then not drawn from: its generator does not advance.) Any other opponent
or encoder, or the ``python`` backend, runs the pure-Python path over :class:`~dnb_env.core.GameState`.
The backend is read when the env is built. ``env.state`` (and ``games[i].state`` of the vector env) builds
a ``GameState`` with its history on each access. Every step returns new arrays, which a caller may keep.

Version history: v0 (this release). Native games (same episodes as before, faster). Opponent names
resolved by the registry through the ids' entry points (:mod:`registry.envs`).
"""

from __future__ import annotations

from typing import Callable

import numpy as np

from dnb_env._extras import requires_extra

with requires_extra("dnb_env.gym_env"):
    import gymnasium as gym
    from gymnasium import spaces
    from gymnasium.vector import AutoresetMode, VectorEnv
    from gymnasium.vector.utils import batch_space

from dnb_env.core import GameState, IllegalActionError, _check_action, geometry, parse_board
from dnb_env.agent import Closeable
from dnb_env.encoders_paper import _bits_rows
from dnb_env.learner_game import _SEATS, _Game, _NativeGame, _NativeGameView, _native_games, _pcg64_state, _reset_options
from dnb_env.observations import DEFAULT_ENCODER, encode, encode_batch, encoder_shape
from dnb_env.opponents import make_opponent

__all__ = ["DotsAndBoxesEnv", "DotsAndBoxesVectorEnv", "make_opponent"]


def _board_args(rows, cols, board) -> tuple[int, int]:
    if board is not None:
        return parse_board(board)
    return parse_board((rows, cols))


def _spaces(obs_type, rows, cols):
    shape = encoder_shape(obs_type, rows, cols)
    n = geometry(rows, cols).num_actions
    obs = spaces.Dict(
        {
            "observation": spaces.Box(-1.0, float(n), shape, np.float32),
            "action_mask": spaces.Box(0, 1, (n,), np.int8),
        }
    )
    return obs, spaces.Discrete(n)


class DotsAndBoxesEnv(gym.Env):
    """Dots-and-Boxes for one learner; see the module docstring for every option."""

    metadata = {"render_modes": ["ansi", "rgb_array", "human"], "render_fps": 4}
    #: ``resolve(name, board, options) -> Agent`` of an opponent given by name: none here (the game layer
    #: knows no names); the entry points' classes (:mod:`registry.envs`) set the registry's.
    resolve_opponent: Callable | None = None

    def __init__(
        self,
        rows: int = 5,
        cols: int = 5,
        *,
        board: str | None = None,
        obs_type: str = DEFAULT_ENCODER,
        opponent="random",
        opponent_kwargs: dict | None = None,
        learner_player=0,
        reward: str = "win",
        illegal_action: str = "lose",
        render_mode: str | None = None,
    ):
        super().__init__()
        self.rows, self.cols = _board_args(rows, cols, board)
        encoder_shape(obs_type, self.rows, self.cols)  # unknown names fail here
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.obs_type = obs_type
        self.render_mode = render_mode
        self.observation_space, self.action_space = _spaces(obs_type, self.rows, self.cols)
        self.opponent = make_opponent(opponent, (self.rows, self.cols), opponent_kwargs, self.resolve_opponent)
        self._owns_opponent = isinstance(opponent, str)  # built here from a name: closed by close()
        board = (self.rows, self.cols)
        games = _native_games(board, obs_type, self.opponent, learner_player, reward, illegal_action, 1)
        # _native: the C++ games (native backend, random opponent), stepped in one call; None: Python _Game
        self._native = games
        if games is None:
            self._game = _Game(board, self.opponent, learner_player, reward, illegal_action)
        else:
            self._game = _NativeGame(board, self.opponent, learner_player, illegal_action, games)
        self._window = None

    @property
    def state(self) -> GameState | None:
        """The current position (read-only)."""
        return self._game.state

    @property
    def learner_player(self) -> int:
        return self._game.learner

    def _obs(self) -> dict[str, np.ndarray]:
        return {"observation": encode(self.obs_type, self._game.view()), "action_mask": self._game.mask()}

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        self._game.reset(self.np_random, options)
        if self.render_mode == "human":
            self.render()
        if self._native is not None:
            return self._native.observe()
        return self._obs(), self._game.info()

    def step(self, action):
        if self._native is not None:
            out = self._native.step(action)  # None: not a Python int, or no game to step (the slow path says)
            if out is None:
                out = self._game.step_slow(action)
        else:
            reward, terminated, illegal = self._game.step(action)
            out = self._obs(), reward, terminated, False, self._game.info(illegal)
        if self.render_mode == "human":
            self.render()
        return out

    def action_masks(self) -> np.ndarray:
        """Legal-move mask (bool) for sb3-contrib's MaskablePPO."""
        return self._game.mask().astype(bool)

    def render(self):
        if self._game.state is None:
            raise gym.error.ResetNeeded("call reset() before render()")
        from dnb_env import render

        if self.render_mode == "ansi":
            return render.render_ansi(self._game.state)
        if self.render_mode == "rgb_array":
            return render.render_rgb(self._game.state)
        if self.render_mode == "human":
            if self._window is None:
                self._window = render.HumanWindow(fps=self.metadata["render_fps"])
            self._window.show(self._game.state)
            return None
        gym.logger.warn("render() called without a render_mode; pass render_mode= to gym.make")
        return None

    def close(self):
        """Close the window, and the opponent built from a name where it has ``close()`` (an engine's
        program is stopped; it starts again at the next move it is asked for)."""
        if self._window is not None:
            self._window.close()
            self._window = None
        if self._owns_opponent and isinstance(self.opponent, Closeable):
            self.opponent.close()


class DotsAndBoxesVectorEnv(VectorEnv):
    """``num_envs`` games stepped together, observations encoded in one batch, next-step autoreset.

    Takes the options of :class:`DotsAndBoxesEnv` (each sub-game gets its own opponent instance when the
    opponent is given by name). ``infos`` holds ``action_mask`` ``[N, A]`` int8, ``illegal_action`` ``[N]``
    and the learner seats. ``action_masks()`` returns ``[N, A]`` bool.
    """

    metadata = {"render_modes": ["ansi", "rgb_array"], "render_fps": 4, "autoreset_mode": AutoresetMode.NEXT_STEP}
    # no "human": one window per game is not useful; render "rgb_array" frames and show or tile them
    #: as :attr:`DotsAndBoxesEnv.resolve_opponent`
    resolve_opponent: Callable | None = None

    def __init__(
        self,
        num_envs: int = 8,
        rows: int = 5,
        cols: int = 5,
        *,
        board: str | None = None,
        obs_type: str = DEFAULT_ENCODER,
        opponent="random",
        opponent_kwargs: dict | None = None,
        learner_player=0,
        reward: str = "win",
        illegal_action: str = "lose",
        render_mode: str | None = None,
    ):
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        self.rows, self.cols = _board_args(rows, cols, board)
        encoder_shape(obs_type, self.rows, self.cols)
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(
                f"render_mode must be one of {self.metadata['render_modes']} for the vector env, got {render_mode!r}"
                + (" (human rendering is for the single env DotsAndBoxesEnv)" if render_mode == "human" else "")
            )
        self.num_envs = num_envs
        self.obs_type = obs_type
        self.render_mode = render_mode
        self.single_observation_space, self.single_action_space = _spaces(obs_type, self.rows, self.cols)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        board_rc = (self.rows, self.cols)
        if isinstance(opponent, str):
            opponents = [make_opponent(opponent, board_rc, opponent_kwargs, self.resolve_opponent)
                         for _ in range(num_envs)]
        else:
            opponents = [make_opponent(opponent, board_rc, opponent_kwargs)] * num_envs
        self._owned_opponents = opponents if isinstance(opponent, str) else []  # closed by close()
        self._illegal_mode = illegal_action
        # _native: the C++ games (native backend, random opponent by name: one generator per game), all
        # stepped, autoreset and encoded in one call; None: one Python _Game per game
        self._native = None
        if isinstance(opponent, str):
            self._native = _native_games(board_rc, obs_type, opponents[0], learner_player, reward, illegal_action, num_envs)
        if self._native is None:
            self.games = [_Game(board_rc, o, learner_player, reward, illegal_action) for o in opponents]
        else:
            self.games = [_NativeGameView(self._native, i, board_rc, o) for i, o in enumerate(opponents)]
        self._autoreset = np.zeros(num_envs, dtype=bool)
        self._rngs: list[np.random.Generator] | None = None

    def _masks(self) -> np.ndarray:
        """``[N, A]`` int8 legal masks of all games in one bit expansion (all 0 for finished games)."""
        full = self.games[0].state.geometry.full
        undrawn = [0 if g.done else full & ~g.state.edges for g in self.games]
        return _bits_rows(undrawn, self.single_action_space.n).astype(np.int8)

    def _obs(self):
        views = [g.view() for g in self.games]
        masks = self._masks()
        return {"observation": encode_batch(self.obs_type, views), "action_mask": masks}, masks

    def _infos(self, masks, illegal, learners=None):
        ones = np.ones(self.num_envs, dtype=bool)
        return {
            "action_mask": masks,
            "_action_mask": ones,
            "illegal_action": illegal,
            "_illegal_action": ones.copy(),
            "learner_player": np.array([g.learner for g in self.games]) if learners is None else learners,
            "_learner_player": ones.copy(),
        }

    def _reset_native(self, seed, options):
        """``reset`` of the C++ games: numpy generators made as the Python path makes them, their states
        handed to C++, which draws from them (learner seats, opponent seeds) at every reset and autoreset."""
        options = _reset_options(options)
        history = GameState.from_actions(self.rows, self.cols, options.get("history", ())).history
        rngs = None
        if isinstance(seed, (list, tuple)):
            if len(seed) != self.num_envs:
                raise ValueError(f"seed must be an int or a list of {self.num_envs} seeds, got {seed!r}")
            rngs = [np.random.default_rng(s) for s in seed]
        elif seed is not None:
            rngs = [np.random.default_rng(seed + i) for i in range(self.num_envs)]
        elif self._rngs is None:
            rngs = [np.random.default_rng(int(self.np_random.integers(2**63 - 1))) for _ in range(self.num_envs)]
        if rngs is not None:
            self._native.set_generators([_pcg64_state(r) for r in rngs])
            self._rngs = rngs  # as seeded; the C++ copies are the ones drawn from
        seat = -1 if "learner_player" not in options else _SEATS[options["learner_player"]]
        if not self._native.reset_all(seat, history):
            raise ValueError(f"reset option history={list(history)!r} leaves the learner no move to make")
        obs, masks, learners = self._native.observe_all()
        return {"observation": obs, "action_mask": masks}, self._infos(masks, np.zeros(self.num_envs, dtype=bool), learners)

    def _action_numbers(self, actions: np.ndarray):
        """Actions that are not all of an integer dtype (floats, bools, objects), checked one by one as the
        single env checks them: (int64 actions, marked [N] bool = illegal, {index: reason})."""
        ints = np.zeros(self.num_envs, dtype=np.int64)
        marked = np.zeros(self.num_envs, dtype=bool)
        why = {}
        for i, g in enumerate(self.games):
            if self._native.autoreset(i):
                continue
            state = g.state
            if state is None or g.done:
                raise gym.error.ResetNeeded("call reset() before step()")
            try:
                ints[i] = _check_action(state, actions[i])
            except IllegalActionError as e:
                marked[i], why[i] = True, str(e)
        return ints, marked, why

    def _step_native(self, actions: np.ndarray):
        marked = None
        if actions.dtype.kind not in "iu" or actions.dtype == np.uint64:
            actions, marked, why = self._action_numbers(actions)
            if self._illegal_mode == "raise" and marked.any():
                i = int(np.flatnonzero(marked)[0])
                raise IllegalActionError(f"env {i}: {why[i]}; no game was stepped")
        out = self._native.step_all(actions, marked)
        if out is None:
            raise gym.error.ResetNeeded("call reset() before step()")
        obs, masks, rewards, terminated, illegal, learners = out
        truncated = np.zeros(self.num_envs, dtype=bool)
        return {"observation": obs, "action_mask": masks}, rewards, terminated, truncated, self._infos(masks, illegal, learners)

    def reset(self, *, seed: int | list[int] | None = None, options: dict | None = None):
        """``seed``: game ``i`` gets ``seed + i`` (a list: one seed per game), as the sync vector env seeds
        its sub-envs; None goes on with each game's generator."""
        super().reset(seed=seed if isinstance(seed, int) or seed is None else None)
        if self._native is not None:
            return self._reset_native(seed, options)
        if isinstance(seed, (list, tuple)):
            if len(seed) != self.num_envs:
                raise ValueError(f"seed must be an int or a list of {self.num_envs} seeds, got {seed!r}")
            self._rngs = [np.random.default_rng(s) for s in seed]
        elif seed is not None:
            self._rngs = [np.random.default_rng(seed + i) for i in range(self.num_envs)]
        elif self._rngs is None:
            self._rngs = [np.random.default_rng(int(self.np_random.integers(2**63 - 1))) for _ in self.games]
        for g, rng in zip(self.games, self._rngs):
            g.reset(rng, options)
        self._autoreset[:] = False
        obs, masks = self._obs()
        return obs, self._infos(masks, np.zeros(self.num_envs, dtype=bool))

    def step(self, actions):
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs,):
            raise ValueError(f"actions must have shape ({self.num_envs},), got {actions.shape}")
        if self._native is not None:
            return self._step_native(actions)
        if self._illegal_mode == "raise":  # check the whole batch before any board moves
            for i, g in enumerate(self.games):
                if not self._autoreset[i]:
                    try:
                        g.check(actions[i])
                    except IllegalActionError as e:
                        raise IllegalActionError(f"env {i}: {e}; no game was stepped") from None
        rewards = np.zeros(self.num_envs, dtype=np.float64)
        terminated = np.zeros(self.num_envs, dtype=bool)
        illegal = np.zeros(self.num_envs, dtype=bool)
        for i, g in enumerate(self.games):
            if self._autoreset[i]:
                g.reset(self._rngs[i])
                continue
            rewards[i], terminated[i], illegal[i] = g.step(actions[i])
        self._autoreset = terminated.copy()
        obs, masks = self._obs()
        return obs, rewards, terminated, np.zeros(self.num_envs, dtype=bool), self._infos(masks, illegal)

    def action_masks(self) -> np.ndarray:
        if self._native is not None:
            return self._native.masks().astype(bool)
        return self._masks().astype(bool)

    def close_extras(self, **kwargs):
        """Close the opponents built from a name where they have ``close()`` (engines' programs stopped)."""
        for opponent in self._owned_opponents:
            if isinstance(opponent, Closeable):
                opponent.close()

    def render(self):
        from dnb_env import render

        if self.render_mode == "ansi":
            return tuple(render.render_ansi(g.state) for g in self.games)
        if self.render_mode == "rgb_array":
            return tuple(render.render_rgb(g.state) for g in self.games)
        return None
