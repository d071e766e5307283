"""PettingZoo AEC env: the ecosystem's own tests, extra turns, rewards, illegal moves."""

from __future__ import annotations

import pickle

import numpy as np
import pettingzoo
import pytest
from pettingzoo.test import api_test, parallel_api_test, render_test, seed_test
from pettingzoo.utils.conversions import turn_based_aec_to_parallel

import dnb_env  # noqa: F401
from dnb_env import pettingzoo_env


# PettingZoo's checkers call reset(seed=0, options={"options": 1}) to see that reset takes options; the env
# warns that it has no option "options" (its only option is history)
def unused_option():
    return pytest.warns(UserWarning, match=r"option\(s\) options not used \(supported: history\)")


def test_api_test():
    with unused_option():
        api_test(pettingzoo_env.env(rows=3, cols=3), num_cycles=300)


def test_api_test_other_encoder():
    with unused_option():
        api_test(pettingzoo_env.env(rows=2, cols=3, obs_type="edgequad44"), num_cycles=100)


def test_seed_test():
    seed_test(lambda: pettingzoo_env.env(rows=2, cols=2), num_cycles=50)


def test_render_test(monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    render_test(lambda render_mode=None: pettingzoo_env.env(rows=2, cols=2, render_mode=render_mode))


def test_parallel_api_test():
    with unused_option():
        parallel_api_test(turn_based_aec_to_parallel(pettingzoo_env.env(rows=2, cols=2)), num_cycles=100)


def test_registered_and_pickles():
    env = pettingzoo.make("aec", "dots_and_boxes_v0", rows=2, cols=2)
    env.reset()
    env.step(0)
    env2 = pickle.loads(pickle.dumps(env))
    assert env2.unwrapped.state_ == env.unwrapped.state_
    assert env2.agent_selection == env.agent_selection


def test_extra_turn_and_terminal_rewards():
    env = pettingzoo_env.env(rows=1, cols=1)
    env.reset()
    order = []
    for a in [0, 1, 2, 3]:
        order.append(env.agent_selection)
        env.step(a)
    # player_0, player_1, player_0 draw three sides; player_1 completes the box
    assert order == ["player_0", "player_1", "player_0", "player_1"]
    assert env.rewards == {"player_0": -1, "player_1": 1}
    assert all(env.terminations.values())


def test_extra_turn_keeps_agent_selection():
    env = pettingzoo_env.env(rows=1, cols=2)
    env.reset()
    for a in [0, 2, 4]:  # box 0 gets three sides; the mover after that takes it
        env.step(a)
    mover = env.agent_selection
    env.step(5)  # completes box 0
    assert env.agent_selection == mover


def test_observation_is_from_the_observers_side():
    env = pettingzoo_env.env(rows=1, cols=2, obs_type="chainloop6")
    env.reset()
    for a in [0, 2, 4, 5]:  # player_1 completes box 0
        env.step(a)
    o0 = env.observe("player_0")
    o1 = env.observe("player_1")
    assert np.all(o0["observation"][3] == -0.5) and np.all(o1["observation"][3] == 0.5)
    assert env.agent_selection == "player_1" and o1["action_mask"].any() and not o0["action_mask"].any()


def test_illegal_move_ends_game_with_minus_one():
    env = pettingzoo_env.env(rows=2, cols=2)
    env.reset()
    env.step(0)
    env.step(0)  # already drawn: PettingZoo's TerminateIllegalWrapper ends the game
    assert env.rewards["player_1"] == -1 and env.rewards["player_0"] == 0
    assert all(env.terminations.values())



# ---------------------------------------------------------------- same action rule as the gym env

def test_float_actions_are_illegal():
    import pytest

    from dnb_env.core import IllegalActionError

    raw = pettingzoo_env.raw_env(rows=2, cols=2)
    raw.reset()
    with pytest.raises(IllegalActionError, match="not an integer"):
        raw.step(1.5)  # was cut to 1
    assert raw.state_.history == ()
    raw.step(np.int64(1))
    assert raw.state_.history == (1,)


def test_reset_history_starts_from_that_position_and_bad_options_change_nothing():
    from dnb_env.core import IllegalActionError

    env = pettingzoo_env.env(rows=2, cols=2, obs_type="baseline4")
    # 2x2: edges 0 (h 0 0), 6 (v 0 0), 2 (h 1 0) then 7 (v 0 1) completes box 0: player 1 moves again
    env.reset(options={"history": [0, 6, 2, 7]})
    raw = env.unwrapped
    assert raw.state_.history == (0, 6, 2, 7) and raw.state_.scores == (0, 1)
    assert env.agent_selection == "player_1"
    mask = env.observe("player_1")["action_mask"]
    assert mask.sum() == 8 and mask[[0, 2, 6, 7]].sum() == 0
    before = raw.state_
    with pytest.raises(IllegalActionError):
        env.reset(options={"history": [0, 0]})
    with pytest.raises(TypeError, match="history"):
        env.reset(options={"history": 5})
    with pytest.raises(TypeError, match="dict"):
        env.reset(options="bad")
    assert raw.state_ is before  # nothing changed
    with pytest.warns(UserWarning, match="learner_player"):
        env.reset(options={"learner_player": 1})
    assert raw.state_.history == ()
    env.reset(options={"history": [0, 6]})
    env.reset(options={"history": None})  # None is the empty board, as in the Gymnasium env
    assert raw.state_.history == () and env.agent_selection == "player_0"


# ---------------------------------------------------------------- misuse gets clear errors
@pytest.mark.parametrize("make", [pettingzoo_env.env, pettingzoo_env.raw_env])
def test_last_after_the_agents_left_says_the_game_is_over(make):
    env = make(rows=1, cols=1)
    env.reset(seed=0)
    for action in (0, 1, 2, 3):  # 1x1: the fourth edge (player 1's) ends the game
        env.step(action)
    final = env.last()  # before the agents step None: the final observation, as in PettingZoo
    assert final[2] is True
    while env.agents:
        env.step(None)
    with pytest.raises(pettingzoo_env.GameOverError, match="game is over.*reset") as info:
        env.last()  # was KeyError: 'player_0'
    assert isinstance(info.value, KeyError)
    env.reset(seed=0)
    assert env.last()[2] is False


@pytest.mark.parametrize("action", [999, -1, 1.5, None])
def test_out_of_range_actions_raise_a_value_error_and_change_nothing(action):
    from dnb_env.core import IllegalActionError

    env = pettingzoo_env.env(rows=1, cols=1)
    env.reset(seed=0)
    with pytest.raises(IllegalActionError, match="not in its action space"):
        env.step(action)  # was an assert (AssertionError; under python -O an IndexError)
    assert env.unwrapped.state_.history == () and not any(env.terminations.values())


def test_out_of_range_actions_are_checked_under_python_O():
    import subprocess
    import sys

    code = ("from dnb_env import pettingzoo_env\nfrom dnb_env.core import IllegalActionError\n"
            "e = pettingzoo_env.env(rows=1, cols=1); e.reset(seed=0)\n"
            "try:\n    e.step(999)\nexcept IllegalActionError as exc:\n    print('refused:', exc)\n")
    done = subprocess.run([sys.executable, "-O", "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("refused: action 999"), done.stdout + done.stderr
