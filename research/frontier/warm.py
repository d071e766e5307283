"""Does a Nimstring table kept from other positions (as a book of part forms shipped with an agent would be)
settle the won step-18 positions in fewer positions or less time?

``cold``: each position of the step-18 set from an empty table of the agents' 64 MB (as ``positions.py``).
``warm TABLE_MB``: one table of TABLE_MB megabytes, first filled by the searches of the step-20 set, then kept
through the step-18 positions (each also warms the next). The same moves and order as ``budget.py``; prints the
positions and seconds of each position as JSON, and the totals.

    PYTHONPATH=. python research/frontier/warm.py cold & PYTHONPATH=. python research/frontier/warm.py warm 512
"""

from __future__ import annotations

import json
import sys
import time

from dnb_env.core import GameState
from research.frontier.budget import nimstring, won_searches

SETS = "research/frontier/sets/5x5-{}.json"
BUDGET = 5_000_000


def run(path: str, nim=None) -> list[tuple[int, int | None, int, float]]:
    """(index, move found, positions searched, seconds) for each won position of a set: in ``nim`` with its
    table kept when given, else from an empty table each."""
    rows = []
    for index, s, moves in won_searches(path):
        search = nim if nim is not None else nimstring(s)
        start = time.perf_counter()
        found = search.first_win(s.edges, moves, BUDGET, keep=nim is not None)
        rows.append((index, found, search.positions_searched, time.perf_counter() - start))
    return rows


def main(mode: str, table_mb: float = 512.0) -> None:
    if mode == "cold":
        rows = run(SETS.format("s18"))
    else:
        nim = nimstring(GameState.from_actions("5x5", actions=[]), table_mb)
        start = time.perf_counter()
        before = run(SETS.format("s20"), nim)
        print(f"warmed by {len(before)} step-20 searches: {sum(r[2] for r in before):,} positions, "
              f"{time.perf_counter() - start:.1f} s, {nim.entries:,} entries", file=sys.stderr)
        rows = run(SETS.format("s18"), nim)
    print(json.dumps(rows))
    used = sorted(r[2] for r in rows)
    print(f"{mode}: {sum(r[1] is not None for r in rows)} of {len(rows)} settled, {sum(used):,} positions, median "
          f"{used[len(used) // 2]:,}, {sum(r[3] for r in rows):.1f} s", file=sys.stderr)


if __name__ == "__main__":
    main(sys.argv[1], *(float(a) for a in sys.argv[2:3]))
