"""Within a move's Nimstring share, does a widening budget over the candidates find a winning safe move more
often than `first_win` over them in order?

For every won position of a frontier set, the safe moves are ordered as prsboxes orders them (parity-good
first, each group shuffled by a fixed seed). In order: one `first_win` call over all of them, stopped at
SECONDS. Widening: each candidate in turn gets `first_win` on itself alone with 2,000 positions, then every
candidate still open 8,000, 32,000, ... (the table is kept between calls, so work is not repeated), until
SECONDS; a candidate shown to lose Nimstring is dropped. Prints, per position, the move each found, its time
and whether it keeps the win (the set's cached label, when there is one), then the counts.

    PYTHONPATH=. python research/frontier/widen.py research/frontier/sets/5x5-s18.json 0.4
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from baselines.nimstring import safe_groups, safe_moves, search_order
from dnb_env import native
from dnb_env.core import GameState


def candidates(s: GameState, rng: np.random.Generator) -> list[int]:
    """The safe moves in prsboxes' order: the long chain rule's first, each group shuffled."""
    return search_order(safe_groups(s, safe_moves(s)), rng)


def in_order(s: GameState, moves: list[int], seconds: float) -> int | None:
    nim = native.module(s.rows, s.cols).Nimstring(s.rows, s.cols, table_mb=64.0)
    found = nim.first_win(s.edges, moves, 2**62, keep=True, seconds=seconds)
    return found if found is not None and found >= 0 else None


def widening(s: GameState, moves: list[int], seconds: float) -> int | None:
    nim = native.module(s.rows, s.cols).Nimstring(s.rows, s.cols, table_mb=64.0)
    end = time.perf_counter() + seconds
    live, budget = list(moves), 2000
    while live and time.perf_counter() < end:
        for m in list(live):
            left = end - time.perf_counter()
            if left <= 0:
                return None
            r = nim.first_win(s.edges, [m], budget, keep=True, seconds=left)
            if r == m:
                return m
            if r == -1:
                live.remove(m)
        budget *= 4
    return None


def main(path: str, seconds: float) -> None:
    data = json.load(open(path))
    rng = np.random.default_rng(0)
    found = {"in order": 0, "widening": 0}
    kept = {"in order": 0, "widening": 0}
    won = [p for p in data["positions"] if p["label"] == "won"]
    for i, p in enumerate(won):
        s = GameState.from_actions(data["params"]["board"], actions=p["history"])
        moves = candidates(s, rng)
        row = []
        for name, fn in (("in order", in_order), ("widening", widening)):
            t = time.perf_counter()
            m = fn(s, moves, seconds)
            label = (p.get("moves", {}).get(str(m)) or {}).get("kept") if m is not None else None
            found[name] += m is not None
            kept[name] += label is True
            row.append(f"{name} {m} {time.perf_counter() - t:.2f} s kept={label}")
        print(i + 1, len(moves), "safe;", "; ".join(row), flush=True)
    print(f"won positions {len(won)}, {seconds} s: found " + ", ".join(f"{k} {v}" for k, v in found.items())
          + "; found and labelled kept " + ", ".join(f"{k} {v}" for k, v in kept.items()))


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 0.4)
