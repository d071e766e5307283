"""Environment throughput, measured side by side in one run.

1. Single env, learner steps/s on 5x5: ``DotsAndBoxesEnv`` (``gym.make("DotsAndBoxes-5x5-v0", obs_type="chainloop6")``
   unwrapped, default opponent ``"random"``) vs the same loop on OpenSpiel's C++ ``dots_and_boxes``. One
   learner step = the learner's move, the random opponent's replies until it is the learner's turn (or the
   game ends), and the learner's observation: Gymnasium's ``step`` returns the chainloop6 planes, the mask
   and the info dict; on OpenSpiel, ``apply_action`` for every move and then ``observation_tensor()``. Both
   loops draw the learner's move uniformly among the legal ones with the same ``random.Random``
   (``rng.choice`` over the mask's nonzero indices, or over ``legal_actions()``) and start a new game when
   one ends (a ``reset`` on the gym side, counted in the time).
2. Vector env, env-steps/s at ``--envs`` games: the native vector env (``gym.make_vec(...,
   vectorization_mode="vector_entry_point")``, ``DotsAndBoxesVectorEnv``) vs Gymnasium's ``SyncVectorEnv``
   over the same single envs (``vectorization_mode="sync"``); both autoreset and get the same actions, a
   uniformly random legal move per game drawn in one vector operation from the returned masks.
3. PettingZoo ``performance_benchmark`` (5 s of random play) on ``dots_and_boxes_v0`` 5x5 vs ``connect_four_v3``.

Each figure is the best of ``--rounds`` runs (default 3), the two sides of a comparison alternating. The
backend in use (``dnb_env.native.backend()``, ``DNB_BACKEND``) is printed: under ``native`` the envs
step their games in C++ (the random opponent's draws replayed there), under ``python`` in pure Python.

    python benchmarks/envs.py [--steps 20000] [--envs 64] [--rounds 3] [--skip-pettingzoo]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import re
import time

import gymnasium as gym
import numpy as np
import pyspiel

import dnb_env  # noqa: F401


def gym_steps(n, seed=0):
    env = gym.make("DotsAndBoxes-5x5-v0", obs_type="chainloop6").unwrapped  # no checker wrappers
    rng = random.Random(seed)
    obs, _ = env.reset(seed=seed)
    t = time.perf_counter()
    for _ in range(n):
        a = rng.choice(np.flatnonzero(obs["action_mask"]).tolist())
        obs, r, term, trunc, _ = env.step(a)
        if term:
            obs, _ = env.reset()
    return n / (time.perf_counter() - t)


def spiel_steps(n, seed=0):
    game = pyspiel.load_game("dots_and_boxes", {"num_rows": 5, "num_cols": 5})
    rng = random.Random(seed)
    s = game.new_initial_state()
    t = time.perf_counter()
    for _ in range(n):
        learner = s.current_player()
        s.apply_action(rng.choice(s.legal_actions()))
        while not s.is_terminal() and s.current_player() != learner:
            s.apply_action(rng.choice(s.legal_actions()))
        s.observation_tensor(learner if s.is_terminal() else s.current_player())
        if s.is_terminal():
            s = game.new_initial_state()
    return n / (time.perf_counter() - t)


def vector_steps(mode, num_envs, batches, seed=0):
    envs = gym.make_vec("DotsAndBoxes-5x5-v0", num_envs=num_envs, vectorization_mode=mode)
    rng = np.random.default_rng(seed)
    obs, _ = envs.reset(seed=seed)
    t = time.perf_counter()
    for _ in range(batches):
        # a uniformly random legal action per env, drawn in one vector operation
        actions = np.argmax(rng.random(obs["action_mask"].shape) * (obs["action_mask"] + 1e-9), axis=1)
        obs, *_ = envs.step(actions)
    rate = batches * num_envs / (time.perf_counter() - t)
    envs.close()
    return rate


def pz_turns(make_env):
    from pettingzoo.test import performance_benchmark

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        performance_benchmark(make_env())
    return float(re.search(r"([\d.]+) turns per second", buf.getvalue()).group(1))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=20000)
    p.add_argument("--envs", type=int, default=64)
    p.add_argument("--rounds", type=int, default=3, help="rounds of each side, interleaved; the best counts")
    p.add_argument("--skip-pettingzoo", action="store_true")
    args = p.parse_args(argv)
    res = {}
    from dnb_env import native

    print(f"backend: {native.backend()}")
    rounds = range(max(args.rounds, 1))
    batches = max(args.steps // args.envs, 10)
    res["spiel"] = res["gym"] = res["sync"] = res["native"] = 0.0
    for _ in rounds:  # alternating the sides spreads a busy machine's slow spells over both
        res["spiel"] = max(res["spiel"], spiel_steps(args.steps))
        res["gym"] = max(res["gym"], gym_steps(args.steps))
    print(f"1. learner steps/s on 5x5 with observations: pyspiel C++ {res['spiel']:,.0f}, "
          f"DotsAndBoxesEnv {res['gym']:,.0f}, ratio {res['gym'] / res['spiel']:.2f}")
    for _ in rounds:
        res["sync"] = max(res["sync"], vector_steps("sync", args.envs, batches))
        res["native"] = max(res["native"], vector_steps("vector_entry_point", args.envs, batches))
    print(f"2. {args.envs} envs, env-steps/s: SyncVectorEnv {res['sync']:,.0f}, native vector env "
          f"{res['native']:,.0f}, ratio {res['native'] / res['sync']:.2f}")
    if not args.skip_pettingzoo:
        from pettingzoo.classic import connect_four_v3

        from dnb_env import pettingzoo_env

        res["pz_c4"] = pz_turns(connect_four_v3.env)
        res["pz_dnb"] = pz_turns(lambda: pettingzoo_env.env(rows=5, cols=5))
        print(f"3. PettingZoo performance_benchmark turns/s: connect_four_v3 {res['pz_c4']:,.0f}, "
              f"dots_and_boxes_v0 5x5 {res['pz_dnb']:,.0f}, ratio {res['pz_dnb'] / res['pz_c4']:.2f}")
    return res


if __name__ == "__main__":
    main()
