"""Can the safe-phase search judge which Nimstring-winning safe move keeps the win on boxes?

For each position of a ``judge.py label`` file (its Nimstring-winning safe moves, each labelled by the exact
solver), the safe-phase search (``Solver.safe_phase_values``: both players draw only safe moves and take boxes
until none is left, then play exactly; SACRIFICES sacrifices of at most two boxes between them) values the
position's moves within POSITIONS positions; the judge picks the Nimstring-winning moves of the best value (a
random one of them, so their mean label counts). Prints the keep rate of the judge against a random
Nimstring-winning move, on the positions the search settled, and the search's time.

    PYTHONPATH=. python research/frontier/safe_phase_judge.py research/frontier/judge-s20.jsonl 200000 0
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from dnb_env.core import GameState
from dnb_env.solver import Solver


def main(path: str, positions: int, sacrifices: int) -> None:
    solver = Solver(max_undrawn=60, node_limit=2_000_000, tt_mb=256)
    rows = []  # (a random Nimstring-winning move's keep rate, the judge's or None, seconds)
    for line in open(path):
        d = json.loads(line)
        if not d["nim"]:
            continue
        s = GameState.from_actions("5x5", actions=d["history"])
        start = time.perf_counter()
        values = solver.safe_phase_values(s, positions, sacrifices)
        seconds = time.perf_counter() - start
        kept = {int(k): v for k, v in d["kept"].items()}
        rand = float(np.mean([kept[m] for m in d["nim"]]))
        if values is None:
            rows.append((rand, None, seconds))
            continue
        best = max(values[m] for m in d["nim"])
        rows.append((rand, float(np.mean([kept[m] for m in d["nim"] if values[m] == best])), seconds))
    settled = [r for r in rows if r[1] is not None]
    times = [r[2] for r in rows]
    print(f"{path}: {len(rows)} positions, {len(settled)} settled within {positions:,} positions "
          f"({sacrifices} sacrifices); on those a random Nimstring-winning move keeps "
          f"{np.mean([r[0] for r in settled]) if settled else float('nan'):.3f}, the judge's pick "
          f"{np.mean([r[1] for r in settled]) if settled else float('nan'):.3f}; search median {np.median(times):.3f} s, "
          f"longest {max(times):.2f} s")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]))
