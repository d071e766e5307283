"""The pyspiel Python game: agreement with the C++ game, OpenSpiel's tools, bots and adapters."""

from __future__ import annotations

import random

import numpy as np
import pyspiel
from open_spiel.python import rl_environment
from open_spiel.python.algorithms import evaluate_bots, mcts

import dnb_env  # noqa: F401
from agents.base import SpielBotAgent, agent_to_bot
from baselines.random_agent import RandomAgent
from dnb_env.core import GameState
from dnb_env.observations import encode


def test_agrees_with_cpp_game():
    rng = random.Random(0)
    for rows, cols, games in [(1, 1, 30), (2, 2, 30), (2, 3, 30), (3, 3, 30), (4, 2, 30), (10, 10, 2), (12, 11, 1)]:
        params = {"num_rows": rows, "num_cols": cols, "utility_margin": True}
        py_game = pyspiel.load_game("python_dots_and_boxes", params)
        cpp_game = pyspiel.load_game("dots_and_boxes", params)
        for _ in range(games):
            a_state, b_state = py_game.new_initial_state(), cpp_game.new_initial_state()
            while not b_state.is_terminal():
                assert a_state.legal_actions() == b_state.legal_actions()
                assert a_state.current_player() == b_state.current_player()
                act = rng.choice(b_state.legal_actions())
                a_state.apply_action(act)
                b_state.apply_action(act)
            assert a_state.is_terminal() and a_state.returns() == b_state.returns()
            assert a_state.current_player() == pyspiel.PlayerId.TERMINAL


def test_random_sim_test():
    game = pyspiel.load_game("python_dots_and_boxes", {"num_rows": 3, "num_cols": 3})
    pyspiel.random_sim_test(game, num_sims=20, serialize=False, verbose=False)


def test_observation_tensor_is_the_encoder():
    game = pyspiel.load_game("python_dots_and_boxes", {"num_rows": 2, "num_cols": 3, "obs_type": "edgequad9"})
    assert game.observation_tensor_shape() == [9, 2, 3]
    st = game.new_initial_state()
    for a in [0, 3, 9, 10]:
        st.apply_action(a)
    ours = GameState.from_actions(2, 3, [0, 3, 9, 10])
    for player in (0, 1):
        np.testing.assert_array_equal(
            np.array(st.observation_tensor(player)), encode("edgequad9", ours.as_seen_by(player)).reshape(-1)
        )


def test_python_mcts_bot_and_evaluate_bots():
    game = pyspiel.load_game("python_dots_and_boxes", {"num_rows": 2, "num_cols": 2})
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(0))
    bot = mcts.MCTSBot(game, uct_c=2.0, max_simulations=50, evaluator=evaluator, random_state=np.random.RandomState(1))
    ours = agent_to_bot(RandomAgent(seed=0))
    returns = evaluate_bots.evaluate_bots(game.new_initial_state(), [bot, ours], np.random.RandomState(2))
    assert returns[0] == -returns[1] and abs(returns[0]) in (0.0, 1.0)


def test_spiel_bot_as_agent_plays_our_states():
    game = pyspiel.load_game("python_dots_and_boxes", {"num_rows": 2, "num_cols": 2})
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=1, random_state=np.random.RandomState(0))
    bot = mcts.MCTSBot(game, 2.0, 30, evaluator, random_state=np.random.RandomState(1))
    agent = SpielBotAgent(bot, game, name="os-mcts")
    s = GameState.new(2, 2)
    opp = RandomAgent(seed=1)
    while not s.is_terminal():
        s = s.apply(agent.select_action(s) if s.current_player == 0 else opp.select_action(s))
    assert s.is_terminal()


def test_rl_environment():
    env = rl_environment.Environment("python_dots_and_boxes", num_rows=2, num_cols=2)
    ts = env.reset()
    steps = 0
    while not ts.last():
        player = ts.observations["current_player"]
        ts = env.step([ts.observations["legal_actions"][player][0]])
        steps += 1
    assert steps == 12 and sum(ts.rewards) == 0
