"""How well an agent's searched value predicts the exact result of held-out teacher positions.

``benchmarks/teacher_score.py`` scores a network's raw value head; this benchmark runs an agent's whole
search on each decided position of a teacher dataset (``dnb teach``) and scores the search's root value
the same way: the share of positions where its sign is the exact result's, and its AUC (won against lost
positions; 0.5 knows nothing), overall and by moves played, beside the share the mover wins. With two or
more agents their AUCs are compared on the same positions by DeLong's method. It says whether search adds
to the value where games are decided, and so whether the searched value is worth distilling back into the
network. Each agent is given as NAME=SPEC (any agent whose ``analyse`` gives a value: the network agents,
searched or raw). Positions run in ``--workers`` processes; the figures do not depend on their number.

    python benchmarks/searched_value.py --held data/teach5-nfar-held --positions 200 \\
        raw=dotsformer:simulations=0 searched=dotsformer
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import time

import numpy as np


def main(argv=None) -> dict:
    from agents.processes import call_worker, spawn_worker_pool
    from agents.training.heldout import paired_auc_difference, value_auc, value_report
    from agents.training.dataset import TeacherData
    from registry.specs import agent_from_spec, check_agent_spec

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("agents", nargs="+", help="agents to score, NAME=SPEC (e.g. searched=dotsformer)")
    p.add_argument("--held", required=True, help="teacher dataset folder (dnb teach)")
    p.add_argument("--positions", type=int, default=0, help="its first N positions (0: all)")
    p.add_argument("--workers", type=int, default=1, help="processes (default 1)")
    p.add_argument("--json", default="", help="write the figures here")
    args = p.parse_args(argv)
    if args.workers < 1:
        p.error(f"--workers must be >= 1, got {args.workers}")
    named = []
    for item in args.agents:
        name, sep, spec = item.partition("=")
        if not sep or not name or not spec or any(c in name for c in ":,"):
            p.error(f"an agent is NAME=SPEC (e.g. searched=dotsformer), got {item!r}")
        try:
            check_agent_spec(spec)
        except ValueError as exc:
            p.error(str(exc))
        named.append((name, spec))
    data = TeacherData.load(args.held)
    if args.positions:
        data = data.take(np.arange(min(args.positions, len(data))))
    truth = np.asarray(data.samples.z, dtype=float)
    decided = np.flatnonzero(truth != 0)
    truth = truth[decided]
    step = np.asarray(data.samples.step)[decided]
    board = data.config.board
    states = data.samples.states(decided)
    print(f"{args.held}: {len(states)} decided positions, moves played {step.min()}-{step.max()}, "
          f"the mover wins {float((truth > 0).mean()):.3f}", flush=True)
    values: dict[str, np.ndarray] = {}
    seconds: dict[str, float] = {}
    for name, spec in named:  # each process builds the agent once; every position gets a fresh search
        pool = spawn_worker_pool(args.workers, 1, agent_from_spec, (spec, board, 0))
        try:
            t0 = time.perf_counter()
            views = pool.map(functools.partial(call_worker, "analyse"), states, chunksize=8)
            dt = time.perf_counter() - t0
        finally:
            pool.close()
            pool.join()
        if any(v.get("value") is None for v in views):
            raise SystemExit(f"agent {spec!r} gives no value of a position (a network agent does)")
        v = values[name] = np.array([float(view["value"]) for view in views])
        seconds[name] = dt * args.workers / max(1, len(states))
        print(f"{name}: AUC {value_auc(v, truth):.3f}, {seconds[name]:.2f} s a position", flush=True)
    steps = sorted(set(step.tolist()))
    rows: dict[str, dict] = {}
    print("\n| agent | value sign | value AUC | " + " | ".join(f"AUC at move {k}" for k in steps) + " | s a position |")
    print("|---|---|---|" + "---|" * len(steps) + "---|")
    base = " | ".join(f"wins {float((truth[step == k] > 0).mean()):.2f}" for k in steps)
    print(f"| the mover wins (base rate) | {float((truth > 0).mean()):.3f} | 0.5 | {base} | |")
    for name, spec in named:
        v = values[name]
        row = rows[name] = {"spec": spec, "seconds": seconds[name], **value_report(v, truth, step)}
        print(f"| {name} | {row['value_sign']:.3f} | {row['value_auc']:.3f} | "
              + " | ".join(f"{row[f'value_auc@{k}']:.2f}" for k in steps) + f" | {row['seconds']:.2f} |")
    if len(named) > 1:
        print("\nvalue AUC, paired (DeLong)")
        print("| first | second | AUC first | AUC second | difference | p |")
        print("|---|---|---|---|---|---|")
        for (first, _), (second, _) in itertools.combinations(named, 2):
            a, b, (lo, hi), p_value = paired_auc_difference(values[first], values[second], truth)
            rows[first][f"paired_auc_vs_{second}"] = {"auc": a, "auc_other": b, "ci": [lo, hi], "p": p_value}
            print(f"| {first} | {second} | {a:.3f} | {b:.3f} | {a - b:+.3f} [{lo:+.3f}, {hi:+.3f}] | {p_value:.3g} |")
    if args.json:
        from dnb_env.io import atomic_write

        atomic_write(args.json, json.dumps({"held": args.held, "positions": int(len(states)), "rows": rows}, indent=1))
    return rows


if __name__ == "__main__":
    main()
