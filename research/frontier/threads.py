"""Does the solver's second thread make the frontier's win/loss labels faster?

For the first N positions of a set (won or lost, labelled in under 40 s), `Solver.can_win` with one thread and
then with two (lazy SMP over one table, `tt_mb=1024`, a fresh solver each), side by side; prints each
position's times and the median speed-up.

    PYTHONPATH=. python research/frontier/threads.py research/frontier/sets/5x5-s18.json 12
"""

from __future__ import annotations

import json
import statistics
import sys
import time

from dnb_env.core import GameState
from dnb_env.solver import Solver, SolverBudgetExceeded


def main(path: str, n: int, node_limit: int = 300_000_000) -> None:
    data = json.load(open(path))
    positions = [p for p in data["positions"] if p["label"] in ("won", "lost") and p["seconds"] < 40][:n]
    rows = []
    for p in positions:
        s = GameState.from_actions(data["params"]["board"], actions=p["history"])
        row = []
        for threads in (1, 2):
            solver = Solver(60, node_limit=node_limit, threads=threads, tt_mb=1024)
            t = time.perf_counter()
            try:
                won = solver.can_win(s)
            except SolverBudgetExceeded:
                won = None
            row.append((time.perf_counter() - t, won))
        if None not in (row[0][1], row[1][1]) and row[0][1] != row[1][1]:
            raise AssertionError(f"one and two threads disagree on {p['history']}")
        rows.append(row)
        print(f"{p['label']:5} 1 thread {row[0][0]:6.2f} s  2 threads {row[1][0]:6.2f} s  "
              f"speed-up {row[0][0] / row[1][0]:.2f}", flush=True)
    one, two = [a for a, _ in rows], [b for _, b in rows]
    print(f"{len(rows)} positions: median 1 thread {statistics.median(t for t, _ in one):.2f} s, 2 threads "
          f"{statistics.median(t for t, _ in two):.2f} s, median speed-up "
          f"{statistics.median(a[0] / b[0] for a, b in rows):.2f}, in all {sum(t for t, _ in one):.1f} s against "
          f"{sum(t for t, _ in two):.1f} s")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 12)
