"""Exact solver: known values and solve times, 5x5 positions with 20 undrawn edges, and a side-by-side
ratio against OpenSpiel's ``minimax.alpha_beta_search`` on the same late 3x3 positions.

    python benchmarks/solver.py [--positions 20] [--late 16]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

import pyspiel
from open_spiel.python.algorithms import minimax

from baselines.solver import Solver
from dnb_env.analysis import realistic_move
from dnb_env.core import GameState

KNOWN = {"1x1": -1, "1x2": 0, "2x2": 2, "2x3": -2, "2x4": 2, "3x3": -3}


def position(board, undrawn, rng):
    while True:
        s = GameState.new(board)
        while s.num_actions - s.edges.bit_count() > undrawn and not s.is_terminal():
            s = s.apply(realistic_move(s, rng))
        if s.num_actions - s.edges.bit_count() == undrawn:
            return s


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--positions", type=int, default=20)
    p.add_argument("--late", type=int, default=10, help="undrawn edges of the late 3x3 positions")
    args = p.parse_args(argv)
    out = {}
    print("first player's exact margin from the empty board:")
    for board, want in KNOWN.items():
        t = time.perf_counter()
        v = Solver().value(GameState.new(board))
        dt = time.perf_counter() - t
        out[board] = (v, dt)
        print(f"  {board}: {v:+d} (known {want:+d}) {'ok' if v == want else 'WRONG'} in {dt:.2f} s")
    rng = random.Random(0)
    times = []
    for _ in range(args.positions):
        s = position("5x5", 20, rng)
        t = time.perf_counter()
        Solver().value(s)
        times.append(time.perf_counter() - t)
    out["5x5_20_median_s"] = statistics.median(times)
    print(f"5x5 positions with 20 undrawn edges: median {statistics.median(times):.3f} s over {len(times)}")
    game = pyspiel.load_game("dots_and_boxes", {"num_rows": 3, "num_cols": 3, "utility_margin": True})
    ours_t = theirs_t = 0.0
    agree = 0
    for _ in range(args.positions):
        s = position("3x3", args.late, rng)
        t = time.perf_counter()
        v = Solver().game_value(s)
        ours_t += time.perf_counter() - t
        ps = s.to_pyspiel(utility_margin=True)
        t = time.perf_counter()
        value, _ = minimax.alpha_beta_search(game, state=ps, maximizing_player_id=s.current_player)
        theirs_t += time.perf_counter() - t
        agree += int(round(value)) == v
    out["ratio_vs_openspiel"] = theirs_t / ours_t
    print(f"late 3x3 positions ({args.late} undrawn), {args.positions} of them: ours {ours_t:.2f} s, "
          f"OpenSpiel alpha_beta_search {theirs_t:.2f} s, speed ratio {theirs_t / ours_t:.1f}x, "
          f"values agree on {agree}/{args.positions}")
    return out


if __name__ == "__main__":
    main()
