"""The Gymnasium envs on the native engine (C++ games, random opponent replayed in C++) against the Python
path: the same episodes for the same seeds and actions, and bad actions that change nothing."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import dnb_env  # noqa: F401
from baselines.random_agent import RandomAgent
from dnb_env import native
from dnb_env.core import IllegalActionError
from registry.envs import DotsAndBoxesEnv, DotsAndBoxesVectorEnv  # the classes with the registry's agent names

pytestmark = pytest.mark.skipif(not native.available(), reason="the C++ extension is not built")

SINGLE = [
    dict(rows=3, cols=3),
    dict(rows=3, cols=3, learner_player="random", reward="boxes"),
    dict(rows=2, cols=4, learner_player=1, reward="margin", obs_type="chainloop64"),
    dict(rows=5, cols=5, obs_type="alphazero4", learner_player="random"),
    dict(rows=1, cols=2, obs_type="baseline4", learner_player="random", reward="margin"),
]


def same(a, b):
    """Equal values, types, dtypes and shapes all the way down (dicts, tuples, arrays, scalars)."""
    assert type(a) is type(b), (a, b)
    if isinstance(a, dict):
        assert sorted(a) == sorted(b)  # (SyncVectorEnv orders the keys as the Dict space does)
        for k in a:
            same(a[k], b[k])
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            same(x, y)
    elif isinstance(a, np.ndarray):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
    else:
        assert a == b, (a, b)


def single_episodes(backend, kwargs, seed, steps=120):
    with native.use_backend(backend):
        env = DotsAndBoxesEnv(**kwargs)
        assert (env._native is not None) == (backend == "native")
        rng = np.random.default_rng(seed)
        obs, info = env.reset(seed=seed)
        out = [obs, info]
        for _ in range(steps):
            a = rng.choice(np.flatnonzero(obs["action_mask"]))
            obs, r, term, trunc, info = env.step(int(a) if rng.random() < 0.5 else a)  # int and numpy int
            out += [obs, r, term, trunc, info, env.state, env.state.history]
            if term:
                obs, info = env.reset(options={"learner_player": 1} if rng.random() < 0.3 else None)
                out += [obs, info, env.state.history]
        return out


@pytest.mark.parametrize("kwargs", SINGLE)
@pytest.mark.parametrize("seed", [0, 1, 2**40 + 7])
def test_single_env_backends_play_identical_episodes(kwargs, seed):
    same(single_episodes("python", kwargs, seed), single_episodes("native", kwargs, seed))


def test_single_env_many_seeds_identical_games():
    # many opponent seeds through numpy's SeedSequence/PCG64/Lemire draws, replayed in C++
    def histories(backend):
        with native.use_backend(backend):
            env = DotsAndBoxesEnv(2, 2, learner_player="random")
            out = []
            for seed in range(300):
                obs, _ = env.reset(seed=seed)
                term = False
                while not term:
                    obs, _, term, _, _ = env.step(int(np.flatnonzero(obs["action_mask"])[-1]))
                out.append(env.state.history)
            return out

    assert histories("python") == histories("native")


def vector_run(backend, kwargs, seed):
    with native.use_backend(backend):
        vec = DotsAndBoxesVectorEnv(num_envs=5, **kwargs)
        assert (vec._native is not None) == (backend == "native")
        rng = np.random.default_rng(0)
        obs, info = vec.reset(seed=seed)
        out = [obs, info]
        for step in range(80):
            actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in obs["action_mask"]])
            obs, r, term, trunc, info = vec.step(actions)
            out += [obs, r, term, trunc, info, [g.state for g in vec.games], [g.state.history for g in vec.games]]
            if step == 40:  # reset without a seed goes on with each game's generator
                obs, info = vec.reset(options={"learner_player": "random"})
                out += [obs, info]
        out.append(vec.action_masks())
        return out


@pytest.mark.parametrize("kwargs", [dict(rows=3, cols=3), dict(rows=2, cols=3, learner_player="random", reward="boxes"),
                                    dict(rows=4, cols=4, reward="margin", obs_type="chainloop64")])
@pytest.mark.parametrize("seed", [3, [5, 1, 4, 1, 5]])
def test_vector_env_backends_play_identical_episodes(kwargs, seed):
    same(vector_run("python", kwargs, seed), vector_run("native", kwargs, seed))


def test_make_vec_native_matches_sync_of_native_single_envs():
    with native.use_backend("native"):
        def run(mode):
            envs = gym.make_vec("DotsAndBoxes-3x3-v0", num_envs=4, vectorization_mode=mode, learner_player="random")
            obs, _ = envs.reset(seed=11)
            rng = np.random.default_rng(1)
            out = [obs]
            for _ in range(50):
                actions = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in obs["action_mask"]])
                obs, r, term, trunc, _ = envs.step(actions)
                out += [obs, r, term, trunc]
            return out

        same(run("sync"), run("vector_entry_point"))


def test_native_is_used_only_where_it_replays_the_opponent():
    class Copy(RandomAgent):  # may draw differently: the marker is not taken from the parent class
        pass

    with native.use_backend("native"):
        assert DotsAndBoxesEnv(3, 3)._native is not None
        assert DotsAndBoxesEnv(3, 3, opponent=RandomAgent(board=(3, 3)))._native is not None
        assert DotsAndBoxesEnv(3, 3, opponent=Copy())._native is None
        assert DotsAndBoxesEnv(3, 3, opponent="greedy")._native is None
        assert DotsAndBoxesEnv(3, 3, obs_type="edgequad9")._native is None  # no native encoder
        # one shared agent object draws for every game in turn: only the Python path does that
        assert DotsAndBoxesVectorEnv(2, 3, 3, opponent=RandomAgent())._native is None
        assert DotsAndBoxesVectorEnv(2, 3, 3)._native is not None


def errors(backend, illegal_action):
    """(message or result) of each bad action, and the state after it, on both kinds of env."""
    with native.use_backend(backend):
        out = []
        for bad in [99, -1, 10**30, 1.5, "3", None, True, np.int64(0), np.float64(2.0)]:
            env = DotsAndBoxesEnv(2, 2, illegal_action=illegal_action)
            with pytest.raises(gym.error.ResetNeeded, match="call reset"):
                env.step(0)
            env.reset(seed=0)
            env.step(0)
            before = env.state
            try:
                result = env.step(bad)
            except IllegalActionError as e:
                result = str(e)
            assert env.state == before and env.state.history == before.history
            out.append((repr(bad), result))
            if illegal_action == "raise":
                out.append(env.step(1))  # the game goes on
            else:
                with pytest.raises(gym.error.ResetNeeded, match="episode is over"):
                    env.step(1)
        vec = DotsAndBoxesVectorEnv(3, 2, 2, illegal_action=illegal_action)
        with pytest.raises(gym.error.ResetNeeded):
            vec.step([0, 1, 2])
        vec.reset(seed=0)
        vec.step([0, 1, 2])
        for bad in [[3, 1, 4], [3, 4, 24], np.array([3, 4, 5.5], dtype=object), np.array([3.0, 4.0, 5.0]),
                    np.array([3, 4, 2**63], dtype=np.uint64), np.array([True, False, True])]:
            before = [g.state for g in vec.games]
            try:
                result = vec.step(bad)
                vec.reset(seed=0)
                vec.step([0, 1, 2])
            except IllegalActionError as e:
                result = str(e)
                assert [g.state for g in vec.games] == before
            out.append((repr(bad), result))
        return out


@pytest.mark.parametrize("illegal_action", ["raise", "lose"])
def test_bad_actions_change_nothing_and_read_the_same_on_both_backends(illegal_action):
    same(errors("python", illegal_action), errors("native", illegal_action))


def test_bad_history_option_under_native():
    with native.use_backend("native"):
        env = DotsAndBoxesEnv(2, 2)
        with pytest.raises(ValueError, match="leaves the learner no move"):
            env.reset(seed=0, options={"history": list(range(12))})
        with pytest.raises(gym.error.ResetNeeded):
            env.step(0)
        with pytest.raises(IllegalActionError, match="already drawn"):
            env.reset(options={"history": [0, 0]})
        obs, info = env.reset(seed=0, options={"history": [0, 6, 7], "learner_player": 1})
        assert env.state.history == (0, 6, 7) and info["current_player"] == 1


def test_returned_arrays_are_fresh():
    with native.use_backend("native"):
        env = DotsAndBoxesEnv(3, 3)
        obs, info = env.reset(seed=0)
        kept = obs["observation"].copy(), obs["action_mask"].copy()
        assert obs["action_mask"] is not info["action_mask"]
        obs2, *_ = env.step(int(np.flatnonzero(obs["action_mask"])[0]))
        assert obs2["observation"] is not obs["observation"]
        np.testing.assert_array_equal(obs["observation"], kept[0])
        np.testing.assert_array_equal(obs["action_mask"], kept[1])


def test_native_envs_copy_and_pickle_mid_game():
    import copy
    import pickle

    with native.use_backend("native"):
        env = DotsAndBoxesEnv(3, 3, learner_player="random")
        vec = DotsAndBoxesVectorEnv(3, 3, 3)
        obs, _ = env.reset(seed=4)
        vobs, _ = vec.reset(seed=4)
        env.step(int(np.flatnonzero(obs["action_mask"])[0]))
        vec.step(np.argmax(vobs["action_mask"], axis=1))
        for clone in (copy.deepcopy, lambda x: pickle.loads(pickle.dumps(x))):
            e2, v2 = clone(env), clone(vec)
            assert e2._native is not env._native and e2._game.games is e2._native
            assert e2.state == env.state and e2.state.history == env.state.history
            a = int(np.flatnonzero(env.action_masks())[0])
            same(e2.step(a), copy.deepcopy(env).step(a))
            actions = np.argmax(vec.action_masks(), axis=1)
            same(v2.step(actions), copy.deepcopy(vec).step(actions))
