"""How many positions does the Nimstring search need to settle each won position of a frontier set?

``first_win`` over the safe moves in prsboxes' order (the long chain rule's groups, each in random order, seed
= the position's count among the won ones), from an empty table of the agents' 64 MB, with a budget of
positions; prints, as JSON, [position index, the move found (-1: none wins, null: out of positions), positions
searched] for each, then the totals. Positions, not seconds: the count does not depend on the machine's load,
and the same command in two checkouts compares their searches exactly (the answers must be the same).

    PYTHONPATH=. python research/frontier/positions.py research/frontier/sets/5x5-s18.json 5000000 > after.json

The search before a change: build another checkout (a git worktree) and run the same command there; for the
rule that a lost part's heap is its Grundy value, commit ``480409e`` with ``lossg-off.patch`` applied (the
research README has the commands).
"""

from __future__ import annotations

import json
import sys
import time

from research.frontier.budget import nimstring, won_searches  # the same positions, order and table as budget.py


def main(path: str, positions: int) -> list[tuple[int, int | None, int]]:
    rows = []
    start = time.perf_counter()
    for index, s, moves in won_searches(path):
        nim = nimstring(s)
        found = nim.first_win(s.edges, moves, positions)
        rows.append((index, found, nim.positions_searched))
    print(json.dumps(rows))
    used = sorted(n for _, _, n in rows)
    print(f"{len(rows)} won positions with a safe move, {sum(f is not None for _, f, _ in rows)} settled within "
          f"{positions:,} positions; {sum(used):,} positions in all, median {used[len(used) // 2]:,}; "
          f"{time.perf_counter() - start:.1f} s", file=sys.stderr)
    return rows


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
