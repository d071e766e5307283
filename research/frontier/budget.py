"""Within a budget of positions instead of time, how many won positions of a frontier set does the Nimstring
search settle (``first_win`` over the safe moves in prsboxes' order), with the agent's table size?

Positions, not seconds, so that the answer does not depend on the machine's load, and the same command in two
checkouts compares their builds. Each position is searched from an empty table of ``TABLE_MB`` megabytes
(the agents' 64 by default); prints the positions settled and the time they took.

    PYTHONPATH=. python research/frontier/budget.py research/frontier/sets/5x5-s18.json 24 1000000 [TABLE_MB]
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from baselines.nimstring import safe_groups, safe_moves, search_order
from dnb_env import native
from dnb_env.core import GameState


def won_searches(path: str, count: int | None = None):
    """(index in the set, state, safe moves in prsboxes' order) for the first ``count`` won positions of a set
    (all by default) that have a safe move; the order's seed is the position's count among the won ones."""
    data = json.load(open(path))
    won = [(i, p) for i, p in enumerate(data["positions"]) if p["label"] == "won"][:count]
    for k, (index, p) in enumerate(won):
        s = GameState.from_actions(data["params"]["board"], actions=p["history"])
        moves = search_order(safe_groups(s, safe_moves(s)), np.random.default_rng(k))
        if moves:
            yield index, s, moves


def nimstring(s: GameState, table_mb: float = 64.0):
    """A Nimstring search of the state's board with an empty table of ``table_mb`` megabytes."""
    return native.module(s.rows, s.cols).Nimstring(s.rows, s.cols, table_mb=table_mb)


def main(path: str, count: int, positions: int, table_mb: float = 64.0) -> tuple[int, int]:
    settled, spent, n = 0, 0.0, 0
    for _, s, moves in won_searches(path, count):
        n += 1
        nim = nimstring(s, table_mb)
        t = time.perf_counter()
        found = nim.first_win(s.edges, moves, positions)
        if found is not None:
            settled += 1
            spent += time.perf_counter() - t
    print(f"{settled} of {n} settled within {positions:,} positions ({table_mb:g} MB table), "
          f"{spent:.1f} s for those")
    return settled, n


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), *(float(a) for a in sys.argv[4:5]))
