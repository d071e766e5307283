"""Search and network speed, side by side in one run.

1. MCTS simulations/s on 5x5, from the empty board and from a middle-game position (30 moves of
   realistic play): our PUCT (agents.search) with a uniform evaluator vs OpenSpiel's Python ``MCTSBot`` with
   an equally cheap evaluator (uniform prior, value 0) on the registered ``python_dots_and_boxes`` game.
   Ours pauses Python's cyclic garbage collector during a search; MCTSBot is also timed that way, so the
   part of the ratio that comes from the pause alone can be seen.
   Then the same search in C++ (agents.search.native.NativeMCTS, uniform evaluator run inside the
   native search) against the Python search with the same settings: identical visit counts, the ratio of
   simulations/s (goal >= 30x).
2. The native search against OpenSpiel's C++ ``pyspiel.MCTSBot`` on OpenSpiel's C++ ``dots_and_boxes``
   (5x5), both with uniform priors and ONE uniformly random playout per leaf, played in C++ on both sides
   (pyspiel's ``RandomRolloutEvaluator(1)``; ours ``NativeRolloutEvaluator(1)``). A rollout-free C++
   evaluator cannot be given to MCTSBot from Python (``pyspiel.Evaluator`` has no Python subclassing and
   ``RandomRolloutEvaluator(0)`` crashes), so this is the equally cheap pair; ours with the uniform evaluator
   (no playout) is printed beside it for reference.
3. Network forward latency on the CPU at batch 1 and 64 for the ``cpu`` and ``paper`` presets (5x5).
4. Self-play positions per second with the cpu preset on 3x3 (lockstep games, 100 simulations per move),
   and with the shipped 5x5 AlphaZero net (``make_network_agent("5x5", "alphazero", simulations=100)``)
   over ``--games`` games in lockstep (``agents.search.run_many``: one network call per round) for the
   first ``--moves`` moves of each game, on the Python and the native search, with the share of the time
   spent in the network.

    python benchmarks/search.py [--simulations 2000] [--torch-threads 1]
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
from agents.models import build_model, make_model_config
from agents.search import SearchSettings, UniformEvaluator, make_search, run_many
from agents.search.evaluators import TimedEvaluator
from agents.search.lockstep import gc_paused
from agents.search.python import MCTS
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


def _config(sims, batch_size=8):
    return SearchSettings(simulations=sims, prune=False, batch_size=batch_size, reuse_tree=False)


def _timed_run(search, sims, history):
    """(simulations/s, visit counts) of one search from the 5x5 position after ``history``."""
    state = GameState.from_actions(5, 5, history)
    t = time.perf_counter()
    counts = search.run(state)
    return sims / (time.perf_counter() - t), counts


def ours(sims, history=()):
    return _timed_run(MCTS(UniformEvaluator(), _config(sims), np.random.default_rng(0)), sims, history)[0]


def native_search(sims, history=(), evaluator=None, batch_size=8):
    from agents.search.native import NativeMCTS

    search = NativeMCTS(evaluator or UniformEvaluator(), _config(sims, batch_size), np.random.default_rng(0))
    return _timed_run(search, sims, history)


def python_counts(sims, history=()):
    return _timed_run(MCTS(UniformEvaluator(), _config(sims), np.random.default_rng(0)), sims, history)[1]


def openspiel_cpp(sims, history=()):
    """pyspiel.MCTSBot (C++) with one random playout per leaf on the C++ dots_and_boxes, UCT c = 1."""
    game = pyspiel.load_game("dots_and_boxes", {"num_rows": 5, "num_cols": 5})
    bot = pyspiel.MCTSBot(game, pyspiel.RandomRolloutEvaluator(1, 0), 1.0, sims, 1000, False, 0, False)
    state = game.new_initial_state()
    for a in history:
        state.apply_action(a)
    t = time.perf_counter()
    bot.step(state)
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


def shipped_self_play(backend, games, moves, simulations=100):
    """Positions/s and the network's share of the time: ``games`` 5x5 games in lockstep under the shipped
    AlphaZero net, ``moves`` searched moves each (Dirichlet noise, most visited move, tree reuse)."""
    from dataclasses import replace

    from agents.network_agent import make_network_agent

    agent = make_network_agent("5x5", "alphazero", simulations=simulations, seed=0, search=backend)
    evaluator = TimedEvaluator(agent.search.evaluator)
    config = replace(agent.search.config, add_noise=True)
    rngs = [np.random.default_rng(g) for g in range(games)]
    searches = [make_search(evaluator, config, rngs[g], backend=backend, board=(5, 5)) for g in range(games)]
    states = [GameState.new(5, 5) for _ in range(games)]
    t = time.perf_counter()
    for _ in range(moves):
        counts = run_many(searches, states, evaluator)
        for g in range(games):
            a = int(rngs[g].choice(np.flatnonzero(counts[g] == counts[g].max())))
            searches[g].advance(a)
            states[g] = states[g].apply(a)
    dt = time.perf_counter() - t
    return games * moves / dt, evaluator.seconds / dt, [s.history for s in states]


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--simulations", type=int, default=2000)
    p.add_argument("--skip-self-play", action="store_true")
    p.add_argument("--reps", type=int, default=20, help="forward passes per latency measurement")
    p.add_argument("--repeats", type=int, default=5, help="interleaved search runs per side (the median counts)")
    p.add_argument("--games", type=int, default=16, help="lockstep games of the shipped 5x5 net's self-play")
    p.add_argument("--moves", type=int, default=2, help="searched moves per game of the shipped net's self-play")
    p.add_argument("--torch-threads", type=int, default=None, help="torch.set_num_threads (default: torch's)")
    args = p.parse_args(argv)
    if args.torch_threads:
        torch.set_num_threads(args.torch_threads)
    from dnb_env import native

    has_native = native.available()
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
    if has_native:
        sims = args.simulations
        for label, history in (("empty board", ()), ("after 30 moves", opening(30))):
            same = np.array_equal(native_search(args.simulations, history)[1], python_counts(args.simulations, history))
            runs = [(ours(args.simulations, history), native_search(sims, history)[0]) for _ in range(args.repeats)]
            a, b = (float(np.median([r[k] for r in runs])) for k in range(2))
            key = "" if not history else "_middle"
            res["native" + key] = b
            print(f"1. native PUCT on 5x5, {label}: {b:,.0f} simulations/s vs our Python PUCT {a:,.0f}: "
                  f"ratio {b / a:.0f}x (uniform evaluator, batch 8; identical visit counts: {same})")
        from agents.search.native import NativeRolloutEvaluator

        for label, history in (("empty board", ()), ("after 30 moves", opening(30))):
            runs = [(openspiel_cpp(sims, history),
                     native_search(sims, history, NativeRolloutEvaluator(1, seed=0), batch_size=1)[0],
                     native_search(sims, history)[0]) for _ in range(args.repeats)]
            a, b, c = (float(np.median([r[k] for r in runs])) for k in range(3))
            key = "" if not history else "_middle"
            res["openspiel_cpp" + key], res["native_rollout" + key] = a, b
            print(f"2. 5x5 {label}, one random playout per leaf: OpenSpiel C++ MCTSBot {a:,.0f} simulations/s, "
                  f"native PUCT {b:,.0f}: ratio {b / a:.1f}x (native PUCT without playouts: {c:,.0f}, "
                  f"{c / a:.0f}x)")
    for preset in ("cpu", "paper"):
        for batch in (1, 64):
            res[f"{preset}_{batch}"] = latency(preset, batch, args.reps)
            print(f"3. {preset} network, batch {batch}: {res[f'{preset}_{batch}']:.2f} ms per forward pass")
    if not args.skip_self_play:
        res["self_play"] = self_play_rate()
        print(f"4. self-play, cpu preset on 3x3, 100 simulations per move: {res['self_play']:.0f} positions/s")
        backends = ("python", "native") if has_native else ("python",)
        played = {}
        for backend in backends:
            rate, share, played[backend] = shipped_self_play(backend, args.games, args.moves)
            res[f"shipped_self_play_{backend}"] = rate
            print(f"4. self-play, shipped 5x5 AlphaZero net, {args.games} games in lockstep, 100 simulations per "
                  f"move, first {args.moves} moves: {backend} search {rate:.2f} positions/s "
                  f"({share:.0%} of the time in the network)")
        if has_native:
            r = res["shipped_self_play_native"] / res["shipped_self_play_python"]
            print(f"4. native / python: {r:.2f}x; same games: {played['python'] == played['native']}")
    return res


if __name__ == "__main__":
    main()
