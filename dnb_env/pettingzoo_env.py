# noqa: D212, D415
"""
# Dots and Boxes

| Import             | `from dnb_env import pettingzoo_env; env = pettingzoo_env.env()` or `pettingzoo.make("aec", "dots_and_boxes_v0")` |
|--------------------|------------------------------------------------------------------|
| Actions            | Discrete                                                         |
| Parallel API       | through `turn_based_aec_to_parallel`                             |
| Manual Control     | No (see `examples/play.py`)                                      |
| Agents             | `agents= ['player_0', 'player_1']`                               |
| Agents             | 2                                                                |
| Action Shape       | (1,)                                                             |
| Action Values      | Discrete(A), A = (R+1)C + R(C+1) (60 on 5x5)                     |
| Observation Shape  | encoder shape, e.g. (6, 11, 11) for `chainloop6` on 5x5          |
| Observation Values | float32; the mask is int8 0/1                                    |

Dots and Boxes on an R x C board of boxes (`rows`, `cols`, default 5 x 5). Players take turns drawing an
edge between two neighbouring dots; whoever draws the fourth side of a box claims it and moves again.
When every edge is drawn, the player with more boxes wins.

### Observation Space

A dict: `observation` is the chosen encoder (`obs_type`, default `chainloop6`; any name of
`dnb_env.observations.list_encoders()`) seen from the observing agent's side (the score channel is
that agent's boxes minus the other's); `action_mask` is int8 over the A actions, 1 on undrawn edges when
that agent is to move and all 0 otherwise.

### Action Space

OpenSpiel's `dots_and_boxes` numbering: horizontal edges `h(r, c) = r*C + c` first, then vertical edges
`v(r, c) = (R+1)*C + r*(C+1) + c`.

### Rewards

At the end: +1 to the winner, -1 to the loser, 0 each for a draw (`reward="margin"`: each agent's
final box margin divided by the number of boxes). An illegal move ends the game with -1 for the agent
that made it (and 0 for the other), through PettingZoo's `TerminateIllegalWrapper`.

The extra turn after a completed box shows in `agent_selection`: the same agent is selected again.

An action must be an integer action number (a float such as `1.5` is illegal, never rounded), as in the
Gymnasium env. In `env()`, an action outside the action space raises `IllegalActionError` (a `ValueError`)
and changes nothing, also under `python -O` (PettingZoo's own check is an `assert`).

Once every agent has stepped `None` after the end and left `agents`, `last()` raises `GameOverError` (a
`KeyError`, as PettingZoo's classic envs raise there, saying that the game is over): `reset()` first.

### Reset options

`reset(options={"history": [a0, a1, ...]})` starts from the position those OpenSpiel actions reach (an
illegal history raises `IllegalActionError` and the env stays as it was). Any other key is not used: it
is named in a warning rather than refused, because PettingZoo's own `api_test` calls
`reset(options={"options": 1})`. Options that are not a dict raise `TypeError`.

### Version History

* v0: first release.
"""

from __future__ import annotations

import warnings

import numpy as np

from dnb_env._extras import requires_extra

with requires_extra("dnb_env.pettingzoo_env"):
    from gymnasium import spaces
    from pettingzoo import AECEnv
    from pettingzoo.utils import AgentSelector, wrappers  # noqa: F401
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel

from dnb_env.core import GameState, IllegalActionError, parse_board
from dnb_env.observations import DEFAULT_ENCODER, encode, encoder_shape

__all__ = ["env", "raw_env", "parallel_env", "GameOverError"]


def env(**kwargs):
    """The wrapped AEC env (illegal moves end the game with -1; out-of-range and order checks)."""
    e = raw_env(**kwargs)
    e = wrappers.TerminateIllegalWrapper(e, illegal_reward=-1)
    e = _OutOfBoundsWrapper(e)
    e = _OrderEnforcingWrapper(e)
    return e


class GameOverError(KeyError):
    """``last()`` asked about an agent that left the game (it stepped None after the end); a KeyError, as
    PettingZoo's classic envs raise there, with a message that says so."""

    def __str__(self):
        return str(self.args[0]) if self.args else ""


def _check_selected(e) -> None:
    agent = e.agent_selection
    if agent not in e.agents:
        raise GameOverError(f"the game is over and {agent} has left it (every agent steps None after its "
                            "termination and is then removed): call reset() to play again")


class _OutOfBoundsWrapper(wrappers.AssertOutOfBoundsWrapper):
    """PettingZoo's AssertOutOfBoundsWrapper as a real check: an action outside the action space raises
    :class:`IllegalActionError` (a ValueError) and changes nothing, also under ``python -O`` (where the
    assert is gone and the mask lookup of TerminateIllegalWrapper raised a bare IndexError)."""

    def step(self, action) -> None:
        agent = self.agent_selection
        dead = self.terminations.get(agent, False) or self.truncations.get(agent, False)
        if not (action is None and dead) and not self.action_space(agent).contains(action):
            raise IllegalActionError(f"action {action!r} of {agent} is not in its action space "
                                     f"{self.action_space(agent)} (None only after the agent's termination)")
        wrappers.BaseWrapper.step(self, action)


class _OrderEnforcingWrapper(wrappers.OrderEnforcingWrapper):
    """PettingZoo's order checks, and :class:`GameOverError` from ``last()`` once the agents have left."""

    def last(self, observe: bool = True):
        if self._has_reset:
            _check_selected(self)
        return super().last(observe)

    def __str__(self) -> str:
        return str(self.env)


def parallel_env(**kwargs):
    return turn_based_aec_to_parallel(env(**kwargs))


class raw_env(AECEnv):
    metadata = {
        "render_modes": ["ansi", "rgb_array", "human"],
        "name": "dots_and_boxes_v0",
        "is_parallelizable": True,
        "render_fps": 4,
    }

    def __init__(
        self,
        rows: int = 5,
        cols: int = 5,
        *,
        board: str | None = None,
        obs_type: str = DEFAULT_ENCODER,
        reward: str = "win",
        render_mode: str | None = None,
    ):
        super().__init__()
        self.rows, self.cols = parse_board(board) if board is not None else parse_board((rows, cols))
        shape = encoder_shape(obs_type, self.rows, self.cols)
        if reward not in ("win", "margin"):
            raise ValueError(f"reward must be 'win' or 'margin', got {reward!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.obs_type, self.reward_mode, self.render_mode = obs_type, reward, render_mode
        self.possible_agents = ["player_0", "player_1"]
        self.agents = self.possible_agents[:]
        n = (self.rows + 1) * self.cols + self.rows * (self.cols + 1)
        self.action_spaces = {a: spaces.Discrete(n) for a in self.possible_agents}
        self.observation_spaces = {
            a: spaces.Dict(
                {
                    "observation": spaces.Box(-1.0, float(n), shape, np.float32),
                    "action_mask": spaces.Box(0, 1, (n,), np.int8),
                }
            )
            for a in self.possible_agents
        }
        self.state_: GameState = GameState.new(self.rows, self.cols)
        self._window = None

    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    def observe(self, agent):
        player = self.possible_agents.index(agent)
        s = self.state_
        mask = s.legal_mask() if (agent == self.agent_selection and not s.is_terminal()) else np.zeros(s.num_actions, np.int8)
        return {"observation": encode(self.obs_type, s.as_seen_by(player)), "action_mask": mask}

    def last(self, observe: bool = True):
        _check_selected(self)
        return super().last(observe)

    def reset(self, seed=None, options=None):
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"reset options must be a dict (key: history), got {options!r}")
        options = options or {}
        unused = sorted(map(str, set(options) - {"history"}))
        if unused:
            warnings.warn(f"dots_and_boxes_v0 reset: option(s) {', '.join(unused)} not used (supported: history)",
                          stacklevel=2)
        history = options.get("history")
        if history is None:  # as in the Gymnasium env: None is the empty board
            history = ()
        if not isinstance(history, (list, tuple, np.ndarray)):
            raise TypeError(f"reset option history must be a list of action numbers, got {history!r}")
        start = GameState.from_actions(self.rows, self.cols, history)  # IllegalActionError if illegal
        if start.is_terminal():
            raise ValueError(f"reset option history={list(options['history'])!r} ends the game")
        self.state_ = start
        self.agents = self.possible_agents[:]
        self.rewards = {a: 0 for a in self.agents}
        self._cumulative_rewards = {a: 0 for a in self.agents}
        self.terminations = {a: False for a in self.agents}
        self.truncations = {a: False for a in self.agents}
        self.infos = {a: {} for a in self.agents}
        self.agent_selection = self.possible_agents[start.current_player]
        if self.render_mode == "human":
            self.render()

    def step(self, action):
        if self.terminations[self.agent_selection] or self.truncations[self.agent_selection]:
            return self._was_dead_step(action)
        self._cumulative_rewards[self.agent_selection] = 0
        s = self.state_.apply(action)  # an illegal action (a float too) raises IllegalActionError, nothing changes
        self.state_ = s
        self.rewards = {a: 0 for a in self.agents}
        if s.is_terminal():
            values = s.returns(margin=self.reward_mode == "margin")
            scale = s.geometry.num_boxes if self.reward_mode == "margin" else 1
            for i, a in enumerate(self.possible_agents):
                self.rewards[a] = values[i] / scale
            self.terminations = {a: True for a in self.agents}
        self.agent_selection = self.possible_agents[s.current_player]
        self._accumulate_rewards()
        if self.render_mode == "human":
            self.render()

    def render(self):
        from dnb_env import render

        if self.render_mode is None:
            import gymnasium

            gymnasium.logger.warn("render() called without a render_mode")
            return None
        if self.render_mode == "ansi":
            return render.render_ansi(self.state_)
        if self.render_mode == "rgb_array":
            return render.render_rgb(self.state_)
        if self._window is None:
            self._window = render.HumanWindow(fps=self.metadata["render_fps"])
        self._window.show(self.state_)
        return None

    def close(self):
        if self._window is not None:
            self._window.close()
            self._window = None
