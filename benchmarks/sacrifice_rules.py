"""The safe-phase search with sacrifices as a move rule on the midgame benchmark's positions, by budget.

For each step and each search (``SACRIFICES:POSITIONS[:MAX_SAFE]``: the sacrifices the players may make
between them while safe moves are left, the positions the search may visit, and the most safe moves a
position may have to be searched, by default the feature's own limit; :func:`dnb_env.features.safe_phase_values`),
on the winning positions of :mod:`benchmarks.midgame` (the same games and seed): how many positions the
search gives values for, how often its best moves keep the win there (a uniform pick among them), and
its time per position, beside the exact solver's time to find every winning move of the same positions.

    python benchmarks/sacrifice_rules.py --steps 22,24,26 --positions 300 --searches 0:20000,2:200000,4:2000000
"""

from __future__ import annotations

import argparse
import importlib.util
import time
from pathlib import Path

import numpy as np


def main(argv=None) -> dict:
    from dnb_env.analysis import MoveClass, move_classes
    from dnb_env.features import safe_phase_values
    from dnb_env.solver import Solver

    spec = importlib.util.spec_from_file_location("midgame_benchmark", Path(__file__).with_name("midgame.py"))
    midgame = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(midgame)
    winning_positions = midgame.winning_positions

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--board", default="5x5")
    p.add_argument("--steps", default="22,24,26", help="comma-separated steps (moves played)")
    p.add_argument("--positions", type=int, default=300, help="winning positions per step")
    p.add_argument("--searches", default="0:20000,2:20000,2:200000,4:2000000",
                   help="comma-separated SACRIFICES:POSITIONS[:MAX_SAFE], one row each")
    p.add_argument("--players", default="alphabeta:depth=2,greedy", help="the two agents whose games give positions")
    p.add_argument("--seed", type=int, default=7)
    args = p.parse_args(argv)
    try:
        searches = [tuple(int(x) for x in item.split(":")) for item in args.searches.split(",")]
        steps = [int(k) for k in args.steps.split(",")]
    except ValueError:
        p.error("--searches takes SACRIFICES:POSITIONS[:MAX_SAFE] integers, --steps integers")
    if any(len(s) not in (2, 3) or s[0] < 0 or s[1] <= 0 or (len(s) == 3 and s[2] < 0) for s in searches):
        p.error("--searches takes SACRIFICES:POSITIONS[:MAX_SAFE] with SACRIFICES >= 0, POSITIONS > 0, MAX_SAFE >= 0")
    players = args.players.split(",")
    t0 = time.perf_counter()
    sets = winning_positions(args.board, steps, args.positions, (players[0], players[1]), args.seed)
    solver = Solver()
    print(f"{args.board}: winning positions from {players[0]} vs {players[1]} games ({time.perf_counter() - t0:.0f} s)")
    print(f"{'step':<6}{'search':<38}{'with values':>12}{'keeps the win':>15}{'median ms':>11}{'p90 ms':>8}")
    out = {}
    for k in steps:
        times = []
        for s, _ in sets[k]:
            t = time.perf_counter()
            solver.winning_moves(s)
            times.append(time.perf_counter() - t)
        print(f"{k:<6}{'exact solver, winning moves':<38}{len(sets[k]):>12}{1.0:>15.3f}"
              f"{np.median(times) * 1e3:>11.1f}{np.percentile(times, 90) * 1e3:>8.0f}", flush=True)
        for search in searches:
            sacrifices, nodes = search[:2]
            max_safe = search[2] if len(search) == 3 else None
            keep, times = [], []
            for s, winning in sets[k]:
                t = time.perf_counter()
                if max_safe is None:
                    values = safe_phase_values(s, nodes, sacrifices=sacrifices)
                elif (move_classes(s) == MoveClass.SAFE).sum() > max_safe:
                    values = None
                else:  # a limit of its own: the feature's is lifted
                    values = safe_phase_values(s, nodes, max_safe=None, sacrifices=sacrifices)
                times.append(time.perf_counter() - t)
                if values is not None:
                    best = np.flatnonzero(values == np.nanmax(values))
                    keep.append(np.mean([int(a) in winning for a in best]))
            name = f"{sacrifices} sacrifices, {nodes:,}" + ("" if max_safe is None else f", <= {max_safe} safe")
            out[(k, *search)] = (len(keep), float(np.mean(keep)) if keep else float("nan"))
            print(f"{k:<6}{name:<38}{len(keep):>12}{out[(k, *search)][1]:>15.3f}"
                  f"{np.median(times) * 1e3:>11.1f}{np.percentile(times, 90) * 1e3:>8.0f}", flush=True)
    return out


if __name__ == "__main__":
    main()
