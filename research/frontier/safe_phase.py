"""Does the safe-phase search's best move keep the win at the frontier of 5x5, as the Nimstring move does?

For every won position of a frontier set, the safe-phase search (`Solver.safe_phase_values`: both players draw
only safe moves and take boxes until no safe move is left, then play exactly; SACRIFICES sacrifices of at most
two boxes allowed between them) values the safe moves; each of its best moves is labelled by the exact solver
(the set's cached label where there is one, else `Solver.keeps_win` within 300M nodes). Prints one line a
position and the keep rate averaged over each position's best moves (a random pick among them), with the
search's time.

    PYTHONPATH=. python research/frontier/safe_phase.py research/frontier/sets/5x5-s20.json [SACRIFICES]
"""

from __future__ import annotations

import json
import sys
import time

import numpy as np

from dnb_env.analysis import MoveClass, move_classes
from dnb_env.core import GameState
from dnb_env.solver import Solver, SolverBudgetExceeded


def main() -> None:
    path, sacrifices = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 0
    data = json.load(open(path))
    search = Solver(max_undrawn=60, node_limit=2_000_000)
    label = Solver(max_undrawn=60, node_limit=300_000_000)
    kept, scored, failed, unlabelled, times = 0.0, 0, 0, 0, []
    for p in data["positions"]:
        if p["label"] != "won":
            continue
        s = GameState.from_actions(5, 5, p["history"])
        safe = int((move_classes(s) == MoveClass.SAFE).sum())
        search.set_deadline(5.0)
        start = time.perf_counter()
        try:
            values = search.safe_phase_values(s, 5_000_000, sacrifices=sacrifices)
        except SolverBudgetExceeded:
            values = None
        times.append(time.perf_counter() - start)
        if not values:
            failed += 1
            print(f"{safe:2d} safe moves: not settled in {times[-1]:.2f} s")
            continue
        best = max(values.values())
        moves = [a for a, v in values.items() if v == best]
        labels = []
        for a in moves:
            cached = p["moves"].get(str(a))
            if cached is not None:
                labels.append(cached["kept"])
                continue
            try:
                labels.append(label.keeps_win(s, a))
            except SolverBudgetExceeded:
                pass
        if not labels:
            unlabelled += 1
            continue
        share = sum(labels) / len(labels)
        kept += share
        scored += 1
        print(f"{safe:2d} safe moves, {times[-1]:.3f} s: best {best:+d} by {len(moves)} moves, {share:.2f} of them keep the win")
    print(f"keep rate {kept / max(scored, 1):.3f} over {scored} positions; {failed} not settled, {unlabelled} unlabelled;"
          f" search s median {np.median(times):.3f}, max {max(times):.3f}")


if __name__ == "__main__":
    main()
