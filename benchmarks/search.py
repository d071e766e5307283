"""Search and network speed, side by side in one run.

1. MCTS simulations/s on 5x5, from the empty board and from a middle-game position (30 moves of
   realistic play): our PUCT (agents.mcts) with a uniform evaluator vs OpenSpiel's Python ``MCTSBot`` with
   an equally cheap evaluator (uniform prior, value 0) on the registered ``python_dots_and_boxes`` game.
   Ours pauses Python's cyclic garbage collector during a search; MCTSBot is also timed that way, so the
   part of the ratio that comes from the pause alone can be seen.
2. Network forward latency on the CPU at batch 1 and 64 for the ``cpu`` and ``paper`` presets (5x5).
3. Self-play positions per second with the cpu preset on 3x3 (lockstep games, 100 simulations per move).

    python benchmarks/search.py [--simulations 2000]
"""

from __future__ import annotations

import argparse
import contextlib
import random
import time

import numpy as np
import pyspiel
import torch
from open_spiel.python.algorithms import mcts as os_mcts

import dnb_env  # noqa: F401
from agents.mcts import MCTS, MCTSConfig, UniformEvaluator, gc_paused
from agents.models import build_model, make_model_config
from dnb_env.core import GameState
from dnb_env.observations import encode_batch


class _CheapEvaluator(os_mcts.Evaluator):
    def evaluate(self, state):
        return np.zeros(2)

    def prior(self, state):
        legal = state.legal_actions()
        return [(a, 1.0 / len(legal)) for a in legal]


def opening(moves, seed=0):
    """The moves of a 5x5 game of realistic play, stopped after ``moves`` moves."""
    from dnb_env.analysis import realistic_move

    rng = random.Random(seed)
    s = GameState.new(5, 5)
    for _ in range(moves):
        s = s.apply(realistic_move(s, rng))
    return s.history


def ours(sims, history=()):
    search = MCTS(UniformEvaluator(), MCTSConfig(simulations=sims, prune=False, batch_size=8, reuse_tree=False),
                  np.random.default_rng(0))
    state = GameState.new(5, 5)
    for a in history:
        state = state.apply(a)
    t = time.perf_counter()
    search.run(state)
    return sims / (time.perf_counter() - t)


def openspiel(sims, history=(), gc_off=False):
    game = pyspiel.load_game("python_dots_and_boxes", {"num_rows": 5, "num_cols": 5})
    bot = os_mcts.MCTSBot(game, 1.0, sims, _CheapEvaluator(), random_state=np.random.RandomState(0),
                          solve=False)
    state = game.new_initial_state()
    for a in history:
        state.apply_action(a)
    with gc_paused() if gc_off else contextlib.nullcontext():
        t = time.perf_counter()
        bot.mcts_search(state)
        return sims / (time.perf_counter() - t)


def latency(preset, batch, reps=20):
    net = build_model(make_model_config("resnet", preset=preset, board="5x5"))
    x = torch.from_numpy(encode_batch("alphazero4", [GameState.new(5, 5)] * batch))
    with torch.no_grad():
        net(x)
        t = time.perf_counter()
        for _ in range(reps):
            net(x)
    return (time.perf_counter() - t) / reps * 1e3


def self_play_rate():
    from agents.training.config import make_train_config
    from agents.training.selfplay import self_play

    cfg = make_train_config("resnet", "cpu", board="3x3", games_per_iteration=16, extra_nodes=False)
    net = build_model(cfg.model)
    t = time.perf_counter()
    samples, _ = self_play(net, cfg, iteration=1, start=0)
    return len(samples) / (time.perf_counter() - t)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--simulations", type=int, default=2000)
    p.add_argument("--skip-self-play", action="store_true")
    p.add_argument("--reps", type=int, default=20, help="forward passes per latency measurement")
    p.add_argument("--repeats", type=int, default=5, help="interleaved search runs per side (the median counts)")
    args = p.parse_args(argv)
    res = {}
    for label, history in (("empty board", ()), ("after 30 moves", opening(30))):
        runs = [(openspiel(args.simulations, history), ours(args.simulations, history),
                 openspiel(args.simulations, history, gc_off=True)) for _ in range(args.repeats)]  # interleaved
        a, b, c = (float(np.median([r[k] for r in runs])) for k in range(3))
        key = "" if not history else "_middle"
        res["openspiel" + key], res["ours" + key], res["openspiel_gc_off" + key] = a, b, c
        print(f"1. simulations/s on 5x5, {label} (median of {args.repeats} interleaved runs): OpenSpiel "
              f"Python MCTSBot {a:,.0f}, our PUCT {b:,.0f}, ratio {b / a:.1f}x; MCTSBot with the garbage "
              f"collector paused as ours pauses it: {c:,.0f}, ratio {b / c:.1f}x")
    for preset in ("cpu", "paper"):
        for batch in (1, 64):
            res[f"{preset}_{batch}"] = latency(preset, batch, args.reps)
            print(f"2. {preset} network, batch {batch}: {res[f'{preset}_{batch}']:.2f} ms per forward pass")
    if not args.skip_self_play:
        res["self_play"] = self_play_rate()
        print(f"3. self-play, cpu preset on 3x3, 100 simulations per move: {res['self_play']:.0f} positions/s")
    return res


if __name__ == "__main__":
    main()
