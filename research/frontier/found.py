"""How often does the Nimstring move's search find a move, and its check finish, within a move's time?

For every won position of a frontier set, `NimstringMove(threads=T)` chooses on a clock of SECONDS as `prsboxes`
does (one thread: the search until 85% of it, the check until the end; two threads: both within the whole of
it). Prints, for each outcome (no move found; a move found, with the check's verdict and the moves it refused;
the solver's own move where no Nimstring-winning move keeps the win, which keeps it), the positions and how many of their moves keep the win by the set's cached labels (unlabelled: not yet in the
set file; `benchmarks/frontier.py score` labels them).

    PYTHONPATH=. python research/frontier/found.py research/frontier/sets/5x5-s18.json 0.8 2
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from baselines.nimstring import NimstringMove, safe_groups, safe_moves
from dnb_env.core import GameState


def main(path: str, seconds: float, threads: int) -> None:
    with open(path) as f:
        data = json.load(f)
    outcomes: dict[str, list[bool | None]] = {}
    for i, p in enumerate(q for q in data["positions"] if q["label"] == "won"):
        s = GameState.from_actions(data["params"]["board"], actions=p["history"])
        groups = safe_groups(s, safe_moves(s))
        t = time.perf_counter()
        c = NimstringMove(threads=threads).choose(s, groups, np.random.default_rng(i), search_until=t + 0.85 * seconds,
                                                  check_until=t + seconds)
        kind = "none found" if c.move is None else f"found, checked={c.kept}, refused {len(c.losing)}"
        if c.solved:
            kind = f"the solver's move (no Nimstring move keeps the win), refused {len(c.losing)}"
        kept = None if c.move is None else (p.get("moves", {}).get(str(c.move)) or {}).get("kept")
        outcomes.setdefault(kind, []).append(kept)
    for kind, kept in sorted(outcomes.items()):
        print(f"{kind}: {len(kept)} positions, {sum(1 for k in kept if k)} kept, "
              f"{sum(1 for k in kept if k is None)} unlabelled")


if __name__ == "__main__":
    main(sys.argv[1], float(sys.argv[2]), int(sys.argv[3]))
