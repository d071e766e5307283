"""Random playouts on 5x5: our GameState vs OpenSpiel's C++ dots_and_boxes through its Python API.

Both loops are the same: ``rng.choice(legal_actions())`` then apply, until the game ends, with the same
``random.Random`` seed, measured side by side in one run (best of several rounds). Prints steps/s and the
ratio ours / pyspiel; the in-place ``MutableState.play`` path used by searchers is reported beside it.

    python benchmarks/engine.py [--games 2000] [--rounds 3] [--board 5x5]
"""

from __future__ import annotations

import argparse
import random
import time

import pyspiel

from dnb_env.core import GameState, MutableState, parse_board


def run_ours(rows, cols, games, seed):
    rng = random.Random(seed)
    steps = 0
    t = time.perf_counter()
    for _ in range(games):
        s = GameState.new(rows, cols)
        while not s.is_terminal():
            s = s.apply(rng.choice(s.legal_actions()))
            steps += 1
    return steps / (time.perf_counter() - t)


def run_inplace(rows, cols, games, seed):
    rng = random.Random(seed)
    steps = 0
    root = GameState.new(rows, cols)
    t = time.perf_counter()
    for _ in range(games):
        m = MutableState(root)
        while not m.is_terminal():
            m.play(rng.choice(m.legal_actions()))
            steps += 1
    return steps / (time.perf_counter() - t)


def run_pyspiel(rows, cols, games, seed):
    game = pyspiel.load_game("dots_and_boxes", {"num_rows": rows, "num_cols": cols})
    rng = random.Random(seed)
    steps = 0
    t = time.perf_counter()
    for _ in range(games):
        s = game.new_initial_state()
        while not s.is_terminal():
            s.apply_action(rng.choice(s.legal_actions()))
            steps += 1
    return steps / (time.perf_counter() - t)


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--board", default="5x5")
    p.add_argument("--games", type=int, default=2000)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args(argv)
    rows, cols = parse_board(args.board)
    best = {"pyspiel": 0.0, "ours": 0.0, "inplace": 0.0}
    for r in range(args.rounds):  # interleaved so that machine noise hits all three alike
        best["pyspiel"] = max(best["pyspiel"], run_pyspiel(rows, cols, args.games, r))
        best["ours"] = max(best["ours"], run_ours(rows, cols, args.games, r))
        best["inplace"] = max(best["inplace"], run_inplace(rows, cols, args.games, r))
    base = best["pyspiel"]
    print(f"random playouts on {rows}x{cols}, {args.games} games x {args.rounds} rounds (best round)")
    print(f"{'engine':<38}{'steps/s':>12}{'ratio':>9}")
    print(f"{'pyspiel C++ (legal_actions+apply_action)':<38}{base:>12,.0f}{1.0:>9.2f}")
    print(f"{'GameState (legal_actions+apply)':<38}{best['ours']:>12,.0f}{best['ours'] / base:>9.2f}")
    print(f"{'MutableState (legal_actions+play)':<38}{best['inplace']:>12,.0f}{best['inplace'] / base:>9.2f}")
    return best


if __name__ == "__main__":
    main()
