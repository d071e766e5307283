"""Teacher labels per core-second, by undrawn count: what a `dnb teach` dataset costs.

For each undrawn count, ``--positions`` realistic positions (:func:`dnb_env.analysis.realistic_position`)
are labelled as `dnb teach` labels them (:func:`agents.training.teacher.label_position`: every legal move's
exact margin up to ``--margin-max`` undrawn edges, its win/loss above) on one core; the table gives the
labels per core-second, the median and 90th percentile seconds per position and the positions over the
node budget.

    python benchmarks/teacher.py --board 5x5 --undrawn 26-38 --positions 20
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np

from agents.training.teacher import MARGIN, label_position
from dnb_env.analysis import realistic_position
from dnb_env.solver import Solver, SolverTooLarge


def measure(board: str, undrawn: list[int], positions: int, margin_max: int, node_limit: int, seed: int) -> list[dict]:
    rng = random.Random(seed)
    solver = Solver(max(undrawn), node_limit=node_limit)
    rows = []
    for k in undrawn:
        times, over, kind = [], 0, None
        for _ in range(positions):
            s = realistic_position(board, k, rng)
            t = time.process_time()
            try:
                kind, _ = label_position(solver, s, margin_max)
            except SolverTooLarge:
                over += 1
                continue
            finally:
                elapsed = time.process_time() - t
            times.append(elapsed)
        total = sum(times)
        rows.append({"undrawn": k, "labels": "margin" if kind == MARGIN else "win/loss", "n": len(times),
                     "per_core_second": len(times) / total if total else float("inf"),
                     "median_s": float(np.median(times)) if times else float("nan"),
                     "p90_s": float(np.percentile(times, 90)) if times else float("nan"), "over_budget": over})
    return rows


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--board", default="5x5")
    p.add_argument("--undrawn", default="26-38", help="MIN-MAX undrawn edges")
    p.add_argument("--positions", type=int, default=20, help="positions per undrawn count")
    p.add_argument("--margin-max", type=int, default=36, help="as for dnb teach")
    p.add_argument("--node-limit", type=int, default=20_000_000)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    lo, _, hi = args.undrawn.partition("-")
    rows = measure(args.board, list(range(int(lo), int(hi or lo) + 1)), args.positions, args.margin_max,
                   args.node_limit, args.seed)
    print(f"| undrawn | labels | n | labels per core-second | median s | p90 s | over budget |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['undrawn']} | {r['labels']} | {r['n']} | {r['per_core_second']:.1f} | {r['median_s']:.4f} | "
              f"{r['p90_s']:.4f} | {r['over_budget']} |")
    return rows


if __name__ == "__main__":
    main()
