"""Gymnasium env and vector env: ecosystem checkers, rewards, opponents, illegal actions, rendering."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import dnb_env  # noqa: F401
from dnb_env.core import GameState, IllegalActionError
from dnb_env.observations import list_encoders
from registry.envs import DotsAndBoxesEnv, DotsAndBoxesVectorEnv  # the classes with the registry's agent names

pytestmark = pytest.mark.usefixtures("each_backend")  # the envs encode through the Python and the native engine


def first_legal(obs):
    return int(np.flatnonzero(obs["action_mask"])[0])


def test_registered_ids():
    env = gym.make("DotsAndBoxes-5x5-v0")
    assert env.action_space.n == 60 and env.observation_space["observation"].shape == (6, 11, 11)
    env = gym.make("dnb_env:DotsAndBoxes-2x3-v0")
    assert env.unwrapped.rows == 2 and env.unwrapped.cols == 3
    env = gym.make("DotsAndBoxes-v0", rows=4, cols=2, obs_type="edgequad9")
    assert env.observation_space["observation"].shape == (9, 4, 2)
    ours = sorted(i for i in gym.envs.registry if i.startswith("DotsAndBoxes"))
    assert ours == sorted(["DotsAndBoxes-v0"] + [f"DotsAndBoxes-{r}x{c}-v0" for r in range(1, 13) for c in range(1, 13)])


@pytest.mark.parametrize("rows, cols", [(r, c) for r in range(1, 10) for c in range(1, 10)])
def test_every_board_id_makes_its_board_in_both_forms(rows, cols):
    """``DotsAndBoxes-RxC-v0``, and the id without its version: Gymnasium's name for the latest version, made
    with Gymnasium's own warning."""
    env = gym.make(f"DotsAndBoxes-{rows}x{cols}-v0")
    assert (env.unwrapped.rows, env.unwrapped.cols) == (rows, cols) and env.spec.id == f"DotsAndBoxes-{rows}x{cols}-v0"
    with pytest.warns(UserWarning, match=f"Using the latest versioned environment `DotsAndBoxes-{rows}x{cols}-v0`"):
        env = gym.make(f"DotsAndBoxes-{rows}x{cols}")
    assert (env.unwrapped.rows, env.unwrapped.cols) == (rows, cols) and env.spec.id == f"DotsAndBoxes-{rows}x{cols}-v0"


def test_the_generic_id_in_both_forms_and_unknown_versions():
    env = gym.make("DotsAndBoxes-v0", rows=2, cols=3)
    assert (env.unwrapped.rows, env.unwrapped.cols) == (2, 3)
    with pytest.warns(UserWarning, match="Using the latest versioned environment `DotsAndBoxes-v0`"):
        env = gym.make("DotsAndBoxes", rows=3, cols=2)
    assert (env.unwrapped.rows, env.unwrapped.cols) == (3, 2) and env.spec.id == "DotsAndBoxes-v0"
    with pytest.raises(gym.error.VersionNotFound, match="v0"):
        gym.make("DotsAndBoxes-5x5-v1")
    with pytest.raises(gym.error.NameNotFound):
        gym.make("DotsAndBoxes-13x13-v0")  # past the registered ids (DotsAndBoxes-v0 takes it)


@pytest.mark.parametrize("env_id, kwargs", [("DotsAndBoxes-3x2-v0", {}), ("DotsAndBoxes-v0", {"rows": 3, "cols": 2})])
def test_versioned_ids_make_the_native_vector_env(env_id, kwargs):
    envs = gym.make_vec(env_id, num_envs=3, vectorization_mode="vector_entry_point", **kwargs)
    assert isinstance(envs.unwrapped, DotsAndBoxesVectorEnv) and envs.num_envs == 3
    obs, _ = envs.reset(seed=0)
    assert obs["observation"].shape[0] == 3 and obs["action_mask"].shape == (3, 17)
    envs.close()


@pytest.mark.parametrize("obs_type", list_encoders())
def test_gymnasium_env_checker(obs_type, each_backend):
    """Gymnasium's checker on every encoder: on 3x3 through the native engine, on 2x2 through the Python
    reference (whose computed features search each position in Python: minutes a check on 3x3)."""
    board = (3, 3) if each_backend == "native" else (2, 2)
    check_env(DotsAndBoxesEnv(*board, obs_type=obs_type, learner_player="random"), skip_render_check=True)


def test_sb3_env_checker():
    from stable_baselines3.common.env_checker import check_env as sb3_check

    sb3_check(DotsAndBoxesEnv(3, 3), warn=True)


def test_render_check_and_modes(monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")  # the checker also renders in the human mode
    # made by gymnasium.make, whose spec lets the checker make the env again in each of its other render modes
    check_env(gym.make("DotsAndBoxes-2x2-v0", render_mode="rgb_array").unwrapped)
    env = DotsAndBoxesEnv(2, 2, render_mode="rgb_array")
    env.reset(seed=1)
    img = env.render()
    assert img.dtype == np.uint8 and img.ndim == 3 and img.shape[2] == 3
    env = DotsAndBoxesEnv(2, 2, render_mode="ansi")
    env.reset(seed=1)
    assert env.render().splitlines()[0].startswith("+")


def test_human_render_needs_pygame_and_works_headless(monkeypatch):
    monkeypatch.setenv("SDL_VIDEODRIVER", "dummy")
    env = DotsAndBoxesEnv(2, 2, render_mode="human")
    env.reset(seed=0)
    env.step(first_legal(env.reset(seed=0)[0]))
    env.close()


def play_out(env, obs, rng):
    total, steps = 0.0, 0
    while True:
        a = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        obs, r, term, trunc, info = env.step(a)
        total += r
        steps += 1
        if term or trunc:
            return total, info, steps


@pytest.mark.parametrize("learner", [0, 1])
def test_win_reward_matches_final_score(learner):
    env = DotsAndBoxesEnv(3, 3, learner_player=learner)
    rng = np.random.default_rng(0)
    for seed in range(20):
        obs, info = env.reset(seed=seed)
        assert info["learner_player"] == learner and env.state.current_player == learner
        total, info, _ = play_out(env, obs, rng)
        mine, theirs = info["scores"]
        assert total == np.sign(mine - theirs) and mine + theirs == 9


def test_margin_and_boxes_rewards():
    for seed in range(10):
        em = DotsAndBoxesEnv(3, 3, reward="margin", learner_player="random")
        eb = DotsAndBoxesEnv(3, 3, reward="boxes", learner_player="random")
        total_m, info_m, _ = play_out(em, em.reset(seed=seed)[0], np.random.default_rng(seed))
        total_b, info_b, _ = play_out(eb, eb.reset(seed=seed)[0], np.random.default_rng(seed))
        # same seeds, same moves: same game, so the per-step box rewards add up to the final margin
        assert info_m["scores"] == info_b["scores"]
        assert total_m == pytest.approx((info_m["scores"][0] - info_m["scores"][1]) / 9)
        assert total_b == pytest.approx(total_m)


def test_opponent_keeps_moving_after_a_box():
    # the opponent always takes the lowest legal edge; the learner's observation is always its turn
    env = DotsAndBoxesEnv(2, 2, opponent=lambda s: s.legal_actions()[0], learner_player=1)
    obs, _ = env.reset(seed=0)
    rng = np.random.default_rng(3)
    while True:
        assert env.state.is_terminal() or env.state.current_player == 1
        a = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        obs, r, term, _, _ = env.step(a)
        if term:
            break


def test_seeded_opponent_is_reproducible():
    def run(seed):
        env = DotsAndBoxesEnv(3, 3, opponent="random", learner_player="random")
        obs, _ = env.reset(seed=seed)
        play_out(env, obs, np.random.default_rng(0))
        return env.state.history

    assert run(5) == run(5)
    assert run(5) != run(6)


@pytest.mark.parametrize("bad", [99, -1, 1.5, "3", None])
def test_illegal_action_loses(bad):
    env = DotsAndBoxesEnv(2, 2)
    obs, _ = env.reset(seed=0)
    before = env.state
    obs2, r, term, trunc, info = env.step(bad)
    assert r == -1.0 and term and info["illegal_action"] and env.state == before
    assert not obs2["action_mask"].any()
    with pytest.raises(gym.error.ResetNeeded):
        env.step(0)


def test_illegal_action_raise_keeps_state():
    env = DotsAndBoxesEnv(2, 2, illegal_action="raise")
    obs, _ = env.reset(seed=0)
    a = first_legal(obs)
    env.step(a)
    state = env.state
    with pytest.raises(IllegalActionError):
        env.step(a)
    assert env.state == state
    env.step(first_legal({"action_mask": env.action_masks()}))


def test_bad_options():
    with pytest.raises(ValueError, match="known encoders"):
        DotsAndBoxesEnv(obs_type="nope")
    with pytest.raises(ValueError, match="known agents"):
        DotsAndBoxesEnv(opponent="nobody")
    with pytest.raises(ValueError, match="reward"):
        DotsAndBoxesEnv(reward="points")
    with pytest.raises(ValueError, match="learner_player"):
        DotsAndBoxesEnv(learner_player=2)
    with pytest.raises(ValueError, match="RxC"):
        DotsAndBoxesEnv(board="5x")


def test_opponent_names_come_from_the_registry_and_the_game_layer_imports_none():
    """dnb_env resolves no names itself: gym.make's entry points are its classes with the registry's names
    (registry.envs), and its own classes refuse a name clearly (an Agent or a callable still works)."""
    import subprocess
    import sys

    from dnb_env import gym_env, opponents

    with pytest.raises(ValueError, match="gym.make"):
        gym_env.DotsAndBoxesEnv(2, 2, opponent="greedy")
    with pytest.raises(ValueError, match="gym.make"):
        gym_env.DotsAndBoxesVectorEnv(2, 2, 2, opponent="greedy")
    assert gym_env.DotsAndBoxesEnv(2, 2, opponent=lambda s: s.legal_actions()[0]).opponent.name == "<lambda>"
    # the default opponent is the game layer's own: "random" needs no registry, and plays as the registry's
    direct, made = gym_env.DotsAndBoxesEnv(2, 3), gym.make("DotsAndBoxes-2x3-v0").unwrapped
    assert type(direct.opponent) is type(made.opponent) and direct.opponent.name == "random"
    assert direct.reset(seed=4)[0]["observation"].tobytes() == made.reset(seed=4)[0]["observation"].tobytes()
    steps = [env.step(1)[0]["observation"].tobytes() for env in (direct, made)]
    assert steps[0] == steps[1]
    with pytest.raises(ValueError, match="gym.make"):
        gym_env.DotsAndBoxesEnv(2, 2, opponent="random", opponent_kwargs={"seed": 1})
    assert not hasattr(opponents, "set_name_resolver")
    code = ("import sys, gymnasium as gym, dnb_env, dnb_env.gym_env, dnb_env.solver\n"
            "up = [m for m in sys.modules if m.split('.')[0] in ('registry', 'agents', 'baselines', 'dnb_web')]\n"
            "assert not up, up\n"
            "env = gym.make('DotsAndBoxes-3x3-v0', opponent='greedy')\n"
            "print(type(env.unwrapped.opponent).__name__)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "GreedyAgent"


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_make_vec_sync_and_async(mode):
    envs = gym.make_vec("DotsAndBoxes-2x2-v0", num_envs=3, vectorization_mode=mode)
    obs, info = envs.reset(seed=0)
    assert obs["observation"].shape == (3, 6, 5, 5)
    for _ in range(20):
        masks = obs["action_mask"]
        actions = np.array([int(np.flatnonzero(m)[0]) if m.any() else 0 for m in masks])
        obs, r, term, trunc, info = envs.step(actions)
    envs.close()


def test_native_vector_env_matches_single_envs():
    vec = gym.make_vec("DotsAndBoxes-3x3-v0", num_envs=4, vectorization_mode="vector_entry_point")
    assert isinstance(vec.unwrapped, DotsAndBoxesVectorEnv)
    obs, info = vec.reset(seed=[10, 11, 12, 13])
    rng = np.random.default_rng(0)
    finished = 0
    for step in range(60):
        actions = np.array([int(rng.choice(np.flatnonzero(m))) if m.any() else 0 for m in obs["action_mask"]])
        obs, r, term, trunc, info = vec.step(actions)
        finished += term.sum()
        # every observation equals what the single env encoder gives for that game's state
        for i, g in enumerate(vec.unwrapped.games):
            from dnb_env.observations import encode

            np.testing.assert_array_equal(obs["observation"][i], encode("chainloop6", g.view()))
    assert finished > 0


def test_vector_env_autoreset_next_step():
    vec = DotsAndBoxesVectorEnv(num_envs=2, rows=1, cols=1)
    obs, _ = vec.reset(seed=0)
    done = np.zeros(2, bool)
    for _ in range(10):
        obs, r, term, _, _ = vec.step(np.array([int(np.flatnonzero(m)[0]) if m.any() else 0 for m in obs["action_mask"]]))
        if done.any():
            assert (r[done] == 0).all() and not term[done].any()
            assert all(len(vec.games[i].state.history) <= 2 for i in np.flatnonzero(done))
        done = term


def test_sb3_maskable_ppo_trains_a_few_steps():
    from sb3_contrib import MaskablePPO

    env = DotsAndBoxesEnv(2, 2)
    model = MaskablePPO("MultiInputPolicy", env, n_steps=64, batch_size=32, n_epochs=1, seed=0, device="cpu")
    model.learn(128)
    from agents.base import SB3Agent

    agent = SB3Agent(model, obs_type="chainloop6")
    s = GameState.new(2, 2)
    while not s.is_terminal():
        s = s.apply(agent.select_action(s))
    assert agent.illegal_choices == 0


# ---------------------------------------------------------------- vector batches, reset options, seeding

def test_vector_env_raise_checks_the_whole_batch_before_stepping():
    vec = DotsAndBoxesVectorEnv(num_envs=3, rows=3, cols=3, illegal_action="raise")
    vec.reset(seed=0)
    empty = [g.state for g in vec.games]
    with pytest.raises(IllegalActionError, match="env 1: action 24 is out of range.*; no game was stepped"):
        vec.step([0, 24, 1])  # was: env 0 stepped, env 1 raised, env 2 left behind
    assert [g.state for g in vec.games] == empty
    vec.step([0, 1, 2])
    before = [g.state for g in vec.games]
    with pytest.raises(IllegalActionError, match="env 1: action 1 .* is already drawn"):
        vec.step([3, 1, 4])
    with pytest.raises(IllegalActionError, match="env 2: .*not an integer"):
        vec.step(np.array([3, 4, 5.5], dtype=object))
    assert [g.state for g in vec.games] == before


def test_vector_env_float_actions_are_illegal_as_in_the_single_env():
    vec = DotsAndBoxesVectorEnv(num_envs=3, rows=2, cols=2)
    vec.reset(seed=0)
    _, r, term, _, info = vec.step(np.array([0.9, 1.5, 2.2]))  # was cut to [0, 1, 2]
    assert info["illegal_action"].all() and term.all() and (r == -1).all()
    single = DotsAndBoxesEnv(2, 2)
    single.reset(seed=0)
    assert single.step(1.5)[4]["illegal_action"]
    vec.reset(seed=0)
    _, r, term, _, info = vec.step(np.array([0, 1.5, 2], dtype=object))  # only env 1 loses
    assert info["illegal_action"].tolist() == [False, True, False] and r[1] == -1


def test_vector_env_refuses_human_render():
    with pytest.raises(ValueError, match=r"render_mode must be one of \['ansi', 'rgb_array'\].*single env"):
        DotsAndBoxesVectorEnv(num_envs=2, rows=2, cols=2, render_mode="human")
    with pytest.raises(ValueError, match="render_mode must be one of"):
        gym.make_vec("DotsAndBoxes-2x2-v0", num_envs=2, vectorization_mode="vector_entry_point", render_mode="human")
    frames = DotsAndBoxesVectorEnv(num_envs=2, rows=2, cols=2, render_mode="rgb_array")
    frames.reset(seed=0)
    assert len(frames.render()) == 2


def test_reset_options_learner_player_and_history():
    env = DotsAndBoxesEnv(2, 2, opponent=lambda s: s.legal_actions()[0])
    _, info = env.reset(seed=0, options={"learner_player": 1})
    assert info["learner_player"] == 1 and env.state.history == (0,)  # the opponent opened
    _, info = env.reset(seed=0)
    assert info["learner_player"] == 0 and env.state.history == ()  # options last one episode
    start = GameState.from_actions(2, 2, [0, 6, 7])  # player 0 takes nothing: player 1 to move
    _, info = env.reset(options={"history": list(start.history), "learner_player": 1})
    assert env.state == start and info["current_player"] == 1
    _, info = env.reset(options={"history": list(start.history)})  # learner 0: the opponent replies first
    assert env.state.history == (0, 6, 7, 1) and info["current_player"] == 0
    for bad, error, match in [
        ("bad", TypeError, "must be a dict"),
        ({"learner": 1}, ValueError, "unknown reset option.*learner; supported: learner_player, history"),
        ({"learner_player": 2}, ValueError, "learner_player must be one of"),
        ({"history": [0, 0]}, IllegalActionError, "already drawn"),
        ({"history": [0.5]}, IllegalActionError, "not an integer"),
        ({"history": list(range(12))}, ValueError, "leaves the learner no move"),
    ]:
        with pytest.raises(error, match=match):
            env.reset(options=bad)
    _, info = env.reset(options={"history": None, "learner_player": None})  # None: not given, as in Gymnasium
    assert env.state.history == () and info["learner_player"] == 0
    vec = DotsAndBoxesVectorEnv(num_envs=2, rows=2, cols=2, opponent=lambda s: s.legal_actions()[0])
    vec.reset(seed=0, options={"history": None})
    assert [g.state.history for g in vec.games] == [()] * 2
    _, info = vec.reset(seed=0, options={"history": [3], "learner_player": 0})
    assert [g.state.history for g in vec.games] == [(3, 0)] * 2 and info["learner_player"].tolist() == [0, 0]
    with pytest.raises(ValueError, match="unknown reset option"):
        vec.reset(options={"seed": 1})


@pytest.mark.parametrize("kwargs", [{}, {"opponent": "greedy", "learner_player": "random", "reward": "boxes"}])
def test_make_vec_modes_play_the_same_games_for_the_same_seed(kwargs):
    def run(mode):
        envs = gym.make_vec("DotsAndBoxes-2x2-v0", num_envs=3, vectorization_mode=mode, **kwargs)
        obs, _ = envs.reset(seed=7)
        rng = np.random.default_rng(0)
        out = [obs["observation"]]
        for _ in range(30):  # several episodes each, through autoresets
            actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in obs["action_mask"]])
            obs, r, term, trunc, _ = envs.step(actions)
            out += [obs["observation"], obs["action_mask"], r, term, trunc]
        envs.close()
        return out

    for a, b in zip(run("sync"), run("vector_entry_point"), strict=True):
        np.testing.assert_array_equal(a, b)


def test_an_engine_program_as_the_opponent_through_gym_make(tmp_path):
    import os
    import shlex
    import sys
    from pathlib import Path

    tiny = Path(__file__).parent / "fixtures" / "engine_tiny.py"
    pids = tmp_path / "pid"
    cmd = " ".join(shlex.quote(str(a)) for a in (sys.executable, tiny, "--pidfile", pids))
    env = gym.make("DotsAndBoxes-3x3-v0", opponent=f'engine:cmd="{cmd}",name=tiny', learner_player=1)
    obs, info = env.reset(seed=3)  # the engine moved first, in its own process
    assert env.unwrapped.opponent.name == "tiny" and info["current_player"] == 1
    pid = int(pids.read_text())
    terminated = False
    while not terminated:
        action = int(np.flatnonzero(obs["action_mask"])[0])
        obs, reward, terminated, _, info = env.step(action)
    assert sum(info["scores"]) == 9
    env.close()  # the engine's program is stopped
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)
    with pytest.raises(ValueError, match="both in the spec and in opponent_kwargs"):
        gym.make("DotsAndBoxes-3x3-v0", opponent=f'engine:cmd="{cmd}",name=tiny', opponent_kwargs={"name": "x"})
    env = gym.make("DotsAndBoxes-3x3-v0", opponent="alphabeta:depth=1")  # any spec, not only engines
    assert env.unwrapped.opponent.depth == 1


@pytest.mark.parametrize("board", [(10, 10), (12, 11)])
def test_the_ids_past_the_native_engine_play_whole_games(board):
    """The ids go to 12x12: past the C++ engine's 9x9 the envs run on the Python rules, single and vector."""
    rows, cols = board
    env = gym.make(f"DotsAndBoxes-{rows}x{cols}-v0", opponent="greedy")
    obs, info = env.reset(seed=3)
    assert obs["observation"].shape == (6, 2 * rows + 1, 2 * cols + 1)
    rng, done, steps = np.random.default_rng(3), False, 0
    while not done:
        obs, reward, terminated, truncated, info = env.step(int(rng.choice(np.flatnonzero(obs["action_mask"]))))
        done, steps = terminated or truncated, steps + 1
    assert sum(info["scores"]) == rows * cols and reward in (-1.0, 0.0, 1.0) and steps > 0
    vec = gym.make_vec(f"DotsAndBoxes-{rows}x{cols}-v0", num_envs=2, vectorization_mode="vector_entry_point")
    assert vec.reset(seed=0)[0]["action_mask"].shape == (2, (rows + 1) * cols + rows * (cols + 1))
