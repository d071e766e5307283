"""Where the widening Nimstring move comes from at 1 s a move, and how often each kind keeps the win.

For every won position of a frontier set, `NimstringMove(widen=True)` chooses as `prsboxes:nimstring_widen=true`
does on a clock of SECONDS (the Nimstring search until 85% of it, the solver's check until the end): a move found
to win Nimstring (checked or not), else the first open move (one not shown to lose Nimstring) that the long chain
rule likes, else the long chain rule's first. Each move is labelled by the set's cached label or the exact
solver (300M nodes). Prints a line per position (safe moves, liked ones, kind, open moves, move, kept) and the
counts per kind.

    PYTHONPATH=. python research/frontier/fallback.py research/frontier/sets/5x5-s18.json 0.8
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from baselines.nimstring import NimstringMove, safe_groups, safe_moves
from dnb_env.core import GameState
from dnb_env.solver import Solver


def main(path: str, seconds: float) -> None:
    with open(path) as f:
        data = json.load(f)
    won = [p for p in data["positions"] if p["label"] == "won"]
    solver = Solver(max_undrawn=44, node_limit=300_000_000, tt_mb=1024)
    kinds: dict[str, list[bool]] = {}
    for i, p in enumerate(won):
        s = GameState.from_actions(data["params"]["board"], actions=p["history"])
        safe = safe_moves(s)
        groups = safe_groups(s, safe)
        t = time.perf_counter()
        c = NimstringMove(widen=True).choose(s, groups, np.random.default_rng(i), search_until=t + 0.85 * seconds,
                                             check_until=t + seconds)
        if c.move is not None:
            move, kind = c.move, f"found, checked={c.kept}"
        elif c.open:
            move, kind = ([a for a in c.open if a in groups[0]] or list(c.open))[0], "open"
        else:
            move, kind = (groups[0] or safe)[0], "none open"
        kept = (p.get("moves", {}).get(str(move)) or {}).get("kept")
        if kept is None:
            kept = solver.keeps_win(s, move)
        kinds.setdefault(kind, []).append(bool(kept))
        print(i, f"{len(safe)} safe, {len(groups[0])} liked; {kind}, {len(c.open)} open; move {move} kept={kept}",
              f"{time.perf_counter() - t:.2f} s", flush=True)
    for kind, kept in kinds.items():
        print(f"{kind}: {len(kept)} positions, {sum(kept)} kept")


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]) if len(sys.argv) > 2 else 0.8)
