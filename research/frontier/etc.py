"""Does an enhanced transposition cutoff make the solver's win/loss test faster at 40-42 undrawn edges?

`etc.patch` (not kept in the solver) looks each quiet child of a node up in the table before searching the node's
moves, at nodes of at least DNB_ETC_MIN undrawn edges (off without the variable). This script solves the first
N labelled positions of a frontier set with `Solver.can_win` (a fresh solver each, one thread, 512 MB), once per
setting, each in its own process, checks that every answer is the set's label, and prints time and nodes.

    git apply research/frontier/etc.patch && make setup        # the patched build
    ETCS=1000,30,20,14 PYTHONPATH=. python research/frontier/etc.py research/frontier/sets/5x5-s20.json 12
    git apply -R research/frontier/etc.patch && make setup

(1000: off, no node has that many undrawn edges.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time


def solve(path: str, n: int) -> list[tuple[float, int]]:
    from dnb_env.core import GameState
    from dnb_env.solver import Solver

    with open(path) as f:
        data = json.load(f)
    out = []
    for p in [p for p in data["positions"] if p["label"] in ("won", "lost")][:n]:
        s = GameState.from_actions(data["params"]["board"], actions=p["history"])
        solver = Solver(max_undrawn=46, node_limit=2_000_000_000, tt_mb=512)
        t = time.perf_counter()
        won = solver.can_win(s)
        out.append((time.perf_counter() - t, solver.stats()["nodes"]))
        if won != (p["label"] == "won"):
            raise SystemExit(f"position {len(out)}: the answer differs from the set's label")
    return out


def main(path: str, n: int) -> None:
    res = {}
    for setting in os.environ.get("ETCS", "1000,30").split(","):
        r = subprocess.run([sys.executable, __file__, path, str(n), "--one"], env=dict(os.environ, DNB_ETC_MIN=setting),
                           capture_output=True, text=True)
        if r.returncode:
            raise SystemExit(r.stderr)
        res[setting] = json.loads(r.stdout)
        print(f"DNB_ETC_MIN={setting}: {sum(x[0] for x in res[setting]):.1f} s, "
              f"{sum(x[1] for x in res[setting]) / 1e6:.1f}M nodes", flush=True)
    for i in range(n):
        print(i, "  ".join(f"{k}: {v[i][0]:.2f} s {v[i][1] / 1e6:.1f}M" for k, v in res.items()))


if __name__ == "__main__":
    if sys.argv[3:] == ["--one"]:
        print(json.dumps(solve(sys.argv[1], int(sys.argv[2]))))
    else:
        main(sys.argv[1], int(sys.argv[2]))
