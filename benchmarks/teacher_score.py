"""Networks' raw policies scored on a held-out teacher dataset, the way ``dnb fit`` scores its runs.

Any checkpoint that plays (shipped weights, ``dnb export`` files, a fit's or a training run's
``checkpoint.pt``) is scored on the same positions: "keep" is the share of winning positions (the mover
can win) where the policy's top move keeps the win, "hard" the same on the greedy-hard ones (a move the
greedy rule allows throws the win away), "optimal" the share of positions where the top move reaches
the best label, "value sign" the share of decided positions where the value head has the sign of the
exact result; then "keep" by moves played, and a second table of the value sign by moves played beside
the share of positions the mover wins, and the value's AUC (won against lost positions; 0.5 knows nothing). Greedy's expected score is the first row. Intervals are
Wilson 95%. With two or more checkpoints, each pair is also compared on the same positions: how many each
keeps that the other throws away, the paired difference with Newcombe's 95% interval, and the exact
McNemar p-value (narrower than comparing the two separate intervals); and their values' AUCs, paired by
DeLong's method. Positions labelled win/loss only (past ``--margin-max`` of ``dnb teach``) count for
"keep" and "hard"; "optimal" there means a winning move.

    python benchmarks/teacher_score.py --held data/teach5-far-held runs/fit/df-100k-safe/checkpoint.pt \\
        runs/exports/df-paper-teach.pt
"""

from __future__ import annotations

import argparse
import itertools
import json
import os

import numpy as np


def _interval(keep: np.ndarray, mask: np.ndarray) -> str:
    from agents.arena.ratings import wilson_interval

    n = int(mask.sum())
    if not n:
        return "-"
    k = float(keep[mask].sum())
    lo, hi = wilson_interval(k, n)
    return f"{k / n:.3f} [{lo:.3f}, {hi:.3f}]"


def main(argv=None) -> dict:
    from agents.checkpoint import load_network
    from agents.training.heldout import HeldOut, held_out_report, policy_and_value
    from agents.training.dataset import TeacherData

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("checkpoints", nargs="+", help="checkpoints to score (NAME=PATH names a row)")
    p.add_argument("--held", required=True, help="teacher dataset folder (dnb teach)")
    p.add_argument("--positions", type=int, default=0, help="its first N positions (0: all)")
    p.add_argument("--json", default="", help="write the figures here")
    args = p.parse_args(argv)
    data = TeacherData.load(args.held)
    if args.positions:
        data = data.take(np.arange(min(args.positions, len(data))))
    held = HeldOut.of(data)
    board = data.config.board
    win = held.winning & held.labelled  # positions labelled with their result only score the value alone
    hard = win & held.hard
    steps = sorted(set(held.step[win].tolist()))
    played = sorted(set(held.step.tolist()))
    print(f"{args.held}: {len(data)} positions ({int((~held.labelled).sum())} with their result only), "
          f"{int(win.sum())} winning with move labels, {int(hard.sum())} greedy-hard; moves played {played[0]}-{played[-1]}")
    print("| policy | keeps the win | greedy-hard | optimal | value sign | "
          + " | ".join(str(k) for k in steps) + " |")
    print("|---|---|---|---|---|" + "---|" * len(steps))
    truth = np.asarray(data.samples.z)
    rows = {}
    keeps = {}
    values_of: dict[str, np.ndarray] = {}

    def show(name, keep, report):
        by_step = " | ".join(f"{report.get(f'keep@{k}', float('nan')):.2f}" for k in steps)
        opt = f"{report['optimal']:.3f}" if "optimal" in report else ""
        sign = f"{report['value_sign']:.3f}" if "value_sign" in report else ""
        print(f"| {name} | {_interval(keep, win)} | {_interval(keep, hard)} | {opt} | {sign} | {by_step} |",
              flush=True)
        rows[name] = report

    show("greedy (expected)", held.greedy_keep, held_out_report(held))
    for spec in args.checkpoints:
        name, _, path = spec.rpartition("=")
        name = name or os.path.relpath(path)
        net, _ = load_network(path, board)
        priors, values = policy_and_value(net, data)
        move = priors.argmax(axis=1)
        keep = held.keeps[np.arange(len(move)), move].astype(float)
        keeps[name] = keep
        values_of[name] = np.asarray(values, dtype=float).reshape(-1)
        show(name, keep, held_out_report(held, priors, values))
    if len(keeps) > 1:
        from agents.arena.ratings import paired_difference
        from agents.training.heldout import paired_auc_difference

        pairs = list(itertools.combinations(keeps, 2))
        if win.any():
            print("\npaired, on the same positions")
            print("| first | second | positions | only the first keeps | only the second keeps | difference | McNemar p |")
            print("|---|---|---|---|---|---|---|")
        for first, second in pairs if win.any() else ():
            for label, mask in (("winning", win), ("greedy-hard", hard)):
                d = paired_difference(keeps[first][mask], keeps[second][mask])
                rows[first][f"paired_{label}_vs_{second}"] = {
                    "only_first": d.only_first, "only_second": d.only_second, "diff": d.diff,
                    "ci": list(d.ci), "p": d.p}
                print(f"| {first} | {second} | {label} ({d.n}) | {d.only_first} | {d.only_second} | "
                      f"{d.diff:+.3f} [{d.ci[0]:+.3f}, {d.ci[1]:+.3f}] | {d.p:.3g} |")
        print("\nvalue AUC, paired (DeLong)")
        print("| first | second | AUC first | AUC second | difference | p |")
        print("|---|---|---|---|---|---|")
        for first, second in pairs:
            a, b, (lo, hi), p_value = paired_auc_difference(values_of[first], values_of[second], truth)
            rows[first][f"paired_auc_vs_{second}"] = {"auc": a, "auc_other": b, "ci": [lo, hi], "p": p_value}
            print(f"| {first} | {second} | {a:.3f} | {b:.3f} | {a - b:+.3f} [{lo:+.3f}, {hi:+.3f}] | "
                  f"{p_value:.3g} |")
    at_steps = sorted(set(held.step[truth != 0].tolist()))
    if len(rows) > 1 and at_steps:
        print("\nvalue sign by moves played (decided positions)")
        print("| network | " + " | ".join(str(k) for k in at_steps) + " | value AUC |")
        print("|---|" + "---|" * (len(at_steps) + 1))
        base = [float((truth[held.step == k] > 0).sum() / max(1, (truth[held.step == k] != 0).sum())) for k in at_steps]
        print("| the mover wins (base rate) | " + " | ".join(f"{b:.2f}" for b in base) + " | |")
        for name, report in rows.items():
            if "value_sign" in report:
                print(f"| {name} | " + " | ".join(f"{report.get(f'value_sign@{k}', float('nan')):.2f}" for k in at_steps)
                      + f" | {report['value_auc']:.3f} |")
    if args.json:
        from dnb_env.io import atomic_write

        atomic_write(args.json, json.dumps({"held": args.held, "positions": len(data), "rows": rows}, indent=1))
    return rows


if __name__ == "__main__":
    main()
