"""Hand-written move rules scored on a held-out teacher dataset, the way ``dnb fit`` scores networks.

Rows: greedy (its expected score, uniform over the moves it allows), the long chain rule (among
greedy's moves, the safe ones after which dots + long chains has the parity the mover wants) and the
safe-phase search of :func:`dnb_env.features.safe_phase_values` (the moves it rates best; greedy where
the feature is empty). "keep" is the share of winning positions where the rule keeps the win,
"hard" the same on the greedy-hard ones, then "keep" by moves played.

    python benchmarks/teacher_rules.py --held data/teach5-held --positions 2000
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def main(argv=None) -> dict:
    from agents.training.supervised import HeldOut
    from agents.training.teacher import TeacherData
    from baselines.greedy import GreedyAgent
    from dnb_env.features import long_chain_rule_moves, safe_phase_values

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--held", required=True, help="teacher dataset folder (dnb teach)")
    p.add_argument("--positions", type=int, default=2000, help="its first N positions (0: all)")
    args = p.parse_args(argv)
    data = TeacherData.load(args.held)
    if args.positions:
        data = data.take(np.arange(min(args.positions, len(data))))
    held = HeldOut.of(data)
    win, hard = held.winning, held.winning & held.hard
    safe = held.greedy_keep.copy()
    chain = held.greedy_keep.copy()
    found = 0
    t0 = time.perf_counter()
    for i, state in enumerate(data.samples.states()):
        values = safe_phase_values(state)
        if values is not None:
            found += 1
            safe[i] = held.keeps[i, np.flatnonzero(values == np.nanmax(values))].mean()
        good = set(np.flatnonzero(long_chain_rule_moves(state)).tolist())
        moves = [a for a in GreedyAgent.candidates(state) if a in good]
        if moves:
            chain[i] = held.keeps[i, moves].mean()
    seconds = time.perf_counter() - t0
    steps = sorted(set(held.step.tolist()))
    print(f"{len(data)} positions ({int(win.sum())} winning, {int(hard.sum())} greedy-hard); the safe-phase "
          f"feature on {found}; {seconds:.1f} s")
    print(f"{'rule':<18}{'keep':>7}{'hard':>7}  " + " ".join(f"{k:>5}" for k in steps))
    out = {}
    for name, keep in (("greedy", held.greedy_keep), ("long chain rule", chain), ("safe-phase search", safe)):
        by_step = [float(keep[win & (held.step == k)].mean()) if (win & (held.step == k)).any() else float("nan")
                   for k in steps]
        out[name] = {"keep": float(keep[win].mean()), "keep_hard": float(keep[hard].mean()) if hard.any() else float("nan"),
                     "by_step": dict(zip(steps, by_step))}
        print(f"{name:<18}{out[name]['keep']:>7.3f}{out[name]['keep_hard']:>7.3f}  "
              + " ".join(f"{v:>5.2f}" for v in by_step))
    return out


if __name__ == "__main__":
    main()
