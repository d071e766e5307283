"""Exact solvers: known values, the alpha-beta engine on realistic 5x5 midgame positions, the two engines
side by side, and a speed ratio against OpenSpiel's ``minimax.alpha_beta_search`` on late 3x3 positions.

    python benchmarks/solver.py [--positions 20] [--late 10] [--budget 20000000] [--empty-boards]

Tables printed:

1. first player's exact margin from the empty board (1x1 .. 3x3, 2x5 with alpha-beta), both engines' times;
2. realistic 5x5 positions (``dnb_env.analysis.realistic_move`` play, as the tests) with 24, 26, ..., 38
   undrawn edges, ``--positions`` of each: time of the exact value (up to 36) and of the win/loss query
   ``Solver.can_win`` (38), median / p90 / max, nodes, and how many ran past the node budget;
3. 5x5 positions with 20, 22, 24 undrawn edges solved by both engines: values agree, time ratio;
4. late 3x3 positions: our solver against OpenSpiel's alpha-beta;
5. with ``--empty-boards``: 3x4 and 4x4 solved from the empty board (minutes; 4x4 may exceed the budget).

Every position gets a fresh solver (nothing carried over in the transposition table between positions).
Goals of the issue on a 2-core machine: exact value at 30 undrawn < 5 ms median, at 36 < 0.1 s median,
win/loss at 38 < 1 s.
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import time

import pyspiel
from open_spiel.python.algorithms import minimax

from dnb_env.analysis import realistic_position
from dnb_env.core import GameState
from dnb_env.solver import Solver, SolverBudgetExceeded, native_available

KNOWN = {"1x1": -1, "1x2": 0, "2x2": 2, "2x3": -2, "2x4": 2, "3x3": -3}
KNOWN_ALPHABETA_ONLY = {"2x5": -2}
EMPTY_BOARDS = {"3x4": 0, "4x4": 0}
MIDGAME = (24, 26, 28, 30, 32, 34, 36, 38)
WIN_QUERY_FROM = 38  # from this many undrawn edges on, the table times the win/loss query
COMPARE = (20, 22, 24)


def p90(xs):
    xs = sorted(xs)
    return xs[max(0, math.ceil(0.9 * len(xs)) - 1)]


def timed(fn):
    t = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t


def known_values(out, ab):
    print("first player's exact margin from the empty board:")
    for board, want in {**KNOWN, **(KNOWN_ALPHABETA_ONLY if ab else {})}.items():
        s = GameState.new(board)
        cells = []
        v = None
        for engine in (("alphabeta",) if ab else ()) + (("retrograde",) if board in KNOWN else ()):
            v, dt = timed(lambda: Solver(engine=engine).value(s))
            cells.append(f"{engine} {dt:.3f} s")
            if engine == "alphabeta" or not ab:
                out[board] = (v, dt)
        print(f"  {board}: {v:+d} (known {want:+d}) {'ok' if v == want else 'WRONG'}  [{', '.join(cells)}]")


def midgame_table(out, n, budget, rng):
    print(f"\nrealistic 5x5 positions, alpha-beta engine, {n} positions per row, node budget {budget:,}:")
    print(f"  {'undrawn':>7}  {'query':<8} {'median':>9} {'p90':>9} {'max':>9} {'nodes med':>10} {'nodes max':>10}"
          f"  over budget  results")
    for k in MIDGAME:
        query = "win/loss" if k >= WIN_QUERY_FROM else "value"
        times, nodes, results, over = [], [], [], 0
        for _ in range(n):
            s = realistic_position("5x5", k, rng)
            solver = Solver(engine="alphabeta", max_undrawn=60, node_limit=budget)
            try:
                if query == "value":
                    r, dt = timed(lambda: solver.value(s))
                else:
                    r, dt = timed(lambda: solver.can_win(s))
                results.append(r)
            except SolverBudgetExceeded:
                over += 1
                dt = float("nan")
            times.append(dt)
            nodes.append(solver.stats()["nodes"])
        done = [t for t in times if not math.isnan(t)]
        if not done:
            print(f"  {k:>7}  {query:<8} every position ran past the budget")
            continue
        med, q90, mx = statistics.median(done), p90(done), max(done)
        out[f"5x5_{k}_{query}"] = {"median_s": med, "p90_s": q90, "max_s": mx, "over_budget": over,
                                   "nodes_median": statistics.median(nodes)}
        if query == "value":
            summary = f"values {min(results):+d}..{max(results):+d}"
        else:
            summary = f"{sum(results)}/{len(results)} mover wins"
        print(f"  {k:>7}  {query:<8} {med * 1e3:>7.2f}ms {q90 * 1e3:>7.2f}ms {mx * 1e3:>7.1f}ms "
              f"{statistics.median(nodes):>10,.0f} {max(nodes):>10,}  {over:>11}  {summary}")


def compare_engines(out, n, rng):
    print(f"\nboth engines on realistic 5x5 positions, {n} per row (retrograde: the 2^k table):")
    for k in COMPARE:
        ab_t = rg_t = 0.0
        agree = 0
        for _ in range(n):
            s = realistic_position("5x5", k, rng)
            va, dt = timed(lambda: Solver(engine="alphabeta").value(s))
            ab_t += dt
            vr, dt = timed(lambda: Solver(engine="retrograde").value(s))
            rg_t += dt
            agree += va == vr
        out[f"compare_{k}"] = {"agree": agree, "n": n, "alphabeta_s": ab_t / n, "retrograde_s": rg_t / n}
        print(f"  {k} undrawn: values agree {agree}/{n}; mean time alphabeta {ab_t / n * 1e3:.2f} ms, "
              f"retrograde {rg_t / n * 1e3:.0f} ms, ratio {rg_t / ab_t:,.0f}x")


def versus_openspiel(out, n, late, rng):
    game = pyspiel.load_game("dots_and_boxes", {"num_rows": 3, "num_cols": 3, "utility_margin": True})
    ours_t = theirs_t = 0.0
    agree = 0
    for _ in range(n):
        s = realistic_position("3x3", late, rng)
        t = time.perf_counter()
        v = Solver().game_value(s)
        ours_t += time.perf_counter() - t
        ps = s.to_pyspiel(utility_margin=True)
        t = time.perf_counter()
        value, _ = minimax.alpha_beta_search(game, state=ps, maximizing_player_id=s.current_player)
        theirs_t += time.perf_counter() - t
        agree += int(round(value)) == v
    out["ratio_vs_openspiel"] = theirs_t / ours_t
    print(f"\nlate 3x3 positions ({late} undrawn), {n} of them: ours {ours_t:.3f} s, "
          f"OpenSpiel alpha_beta_search {theirs_t:.2f} s, speed ratio {theirs_t / ours_t:.1f}x, "
          f"values agree on {agree}/{n}")


def empty_boards(out, budget):
    print(f"\nfrom the empty board, alpha-beta engine, node budget {budget:,}:")
    for board, want in EMPTY_BOARDS.items():
        s = GameState.new(board)
        solver = Solver(engine="alphabeta", node_limit=budget)
        t = time.perf_counter()
        try:
            v = solver.value(s)
        except SolverBudgetExceeded as e:
            print(f"  {board}: past the budget after {time.perf_counter() - t:.0f} s (bounds {e.bounds})")
            continue
        dt = time.perf_counter() - t
        out[f"empty_{board}"] = (v, dt)
        print(f"  {board}: {v:+d} (known {want:+d}) {'ok' if v == want else 'WRONG'} in {dt:.1f} s")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--positions", type=int, default=20, help="positions per row of the 5x5 midgame table")
    p.add_argument("--compare", type=int, default=5, help="positions per row of the engine comparison")
    p.add_argument("--late", type=int, default=10, help="undrawn edges of the late 3x3 positions")
    p.add_argument("--budget", type=int, default=20_000_000, help="alpha-beta node budget per position")
    p.add_argument("--empty-boards", action="store_true", help="also solve 3x4 and 4x4 from the empty board")
    p.add_argument("--empty-budget", type=int, default=2_000_000_000, help="node budget of --empty-boards")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    ab = native_available()
    print(f"machine: {os.cpu_count()} cores; alpha-beta engine {'built' if ab else 'NOT BUILT (C++ extension missing)'}")
    out = {}
    rng = random.Random(args.seed)
    known_values(out, ab)
    if ab:
        midgame_table(out, args.positions, args.budget, rng)
        compare_engines(out, min(args.compare, args.positions), rng)
    versus_openspiel(out, args.positions, args.late, rng)
    if ab and args.empty_boards:
        empty_boards(out, args.empty_budget)
    return out


if __name__ == "__main__":
    main()
