"""OpenSpiel Python game ``python_dots_and_boxes`` over :class:`dnb_env.core.GameState`.

Parameters: ``num_rows``, ``num_cols`` (boxes; default 2 x 2 like OpenSpiel's C++ ``dots_and_boxes``),
``utility_margin`` (returns are the box margin instead of +1/-1/0) and ``obs_type`` (any encoder name:
the ``observation_tensor`` of a player is that encoder seen from the player's side, flattened).

    import dnb_env, pyspiel
    game = pyspiel.load_game("python_dots_and_boxes", {"num_rows": 3, "num_cols": 3})

It agrees with the C++ ``dots_and_boxes`` on legal actions, player to move and returns, and works with
OpenSpiel's Python algorithms (``open_spiel.python.algorithms.mcts.MCTSBot``, ``evaluate_bots``,
``rl_environment.Environment``). The C++ ``pyspiel.MCTSBot`` cannot run Python games; use the Python one.
"""

from __future__ import annotations

import numpy as np

from dnb_env._extras import requires_extra

with requires_extra("dnb_env.openspiel_game"):
    import pyspiel

from dnb_env.core import GameState, geometry
from dnb_env.observations import DEFAULT_ENCODER, encode, encoder_shape

__all__ = ["DotsAndBoxesGame", "DotsAndBoxesState", "register"]

GAME_NAME = "python_dots_and_boxes"
_DEFAULTS = {"num_rows": 2, "num_cols": 2, "utility_margin": False, "obs_type": DEFAULT_ENCODER}

_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Python Dots and Boxes",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.DETERMINISTIC,
    information=pyspiel.GameType.Information.PERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=2,
    min_num_players=2,
    provides_information_state_string=True,
    provides_information_state_tensor=False,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=_DEFAULTS,
)


class DotsAndBoxesGame(pyspiel.Game):
    def __init__(self, params=None):
        params = {**_DEFAULTS, **(params or {})}
        g = geometry(params["num_rows"], params["num_cols"])
        rows, cols = g.size
        encoder_shape(params["obs_type"], rows, cols)  # unknown encoder names fail here
        n = g.num_actions
        boxes = g.num_boxes
        margin = bool(params["utility_margin"])
        info = pyspiel.GameInfo(
            num_distinct_actions=n,
            max_chance_outcomes=0,
            num_players=2,
            min_utility=-float(boxes) if margin else -1.0,
            max_utility=float(boxes) if margin else 1.0,
            utility_sum=0.0,
            max_game_length=n,
        )
        super().__init__(_GAME_TYPE, info, params)
        self.rows, self.cols, self.margin, self.obs_type = rows, cols, margin, params["obs_type"]

    def new_initial_state(self):
        return DotsAndBoxesState(self)

    def make_py_observer(self, iig_obs_type=None, params=None):
        return _Observer(self, params)


class DotsAndBoxesState(pyspiel.State):
    def __init__(self, game: DotsAndBoxesGame):
        super().__init__(game)
        self.board = GameState.new(game.rows, game.cols)
        self._margin = game.margin

    def current_player(self):
        return pyspiel.PlayerId.TERMINAL if self.board.is_terminal() else self.board.current_player

    def _legal_actions(self, player):
        return self.board.legal_actions()

    def _apply_action(self, action):
        self.board = self.board.apply(action)

    def _action_to_string(self, player, action):
        return f"P{player}({self.board.geometry.action_name(action)})"

    def is_terminal(self):
        return self.board.is_terminal()

    def returns(self):
        return list(self.board.returns(margin=self._margin))

    def __str__(self):
        return str(self.board)


class _Observer:
    """PyObserver: ``tensor`` is the game's encoder from ``player``'s side, flattened."""

    def __init__(self, game: DotsAndBoxesGame, params):
        if params:
            raise ValueError(f"observation parameters are not supported, got {params}")
        self.obs_type = game.obs_type
        shape = encoder_shape(game.obs_type, game.rows, game.cols)
        self.tensor = np.zeros(int(np.prod(shape)), np.float32)
        self.dict = {"observation": self.tensor.reshape(shape)}

    def set_from(self, state: DotsAndBoxesState, player: int):
        self.tensor[:] = encode(self.obs_type, state.board.as_seen_by(player)).reshape(-1)

    def string_from(self, state: DotsAndBoxesState, player: int):
        return str(state.board.as_seen_by(player))


def register() -> None:
    """Register ``python_dots_and_boxes`` with pyspiel (idempotent)."""
    if GAME_NAME not in pyspiel.registered_names():
        pyspiel.register_game(_GAME_TYPE, DotsAndBoxesGame)
