"""The exact solver of two revisions side by side on the same realistic 5x5 positions: exact value at 38
undrawn edges, win/loss (one null-window test) at 40 and 42, each query on a fresh solver.

The C++ sources of the base revision (``git archive``) and of the working tree are each compiled with
``benchmarks/solver_driver.cpp`` (g++ -O3, the flags of the extension) and run in turn on every row, the
working tree's solver once with one thread and once with ``--threads``. The table prints, per row and
solver, the median / p90 / max seconds, the median and total nodes and how many positions ran past the node budget,
and the ratio of the base's median time to each new one; the answers must agree.

    python benchmarks/solver_versions.py [--base b463afe] [--positions 20] [--rows 38:value,40:win,42:win]
        [--budget 200000000] [--tt-mb 256] [--threads 2] [--json out.json]

The default base, ``b463afe``, is the solver before the border-side rule, the incremental symmetry keys
and threads.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import statistics
import subprocess
import tempfile

from dnb_env.analysis import realistic_position

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
FLAGS = ["-O3", "-std=c++17", "-pthread"]


def compile_driver(csrc: str, out: str) -> str:
    subprocess.run(["g++", *FLAGS, f"-I{csrc}", os.path.join(HERE, "solver_driver.cpp"), "-o", out], check=True)
    return out


def base_sources(rev: str, into: str) -> str:
    archive = subprocess.run(["git", "-C", ROOT, "archive", rev, "dnb_env/csrc"], check=True,
                             capture_output=True).stdout
    subprocess.run(["tar", "-x", "-C", into], input=archive, check=True)
    return os.path.join(into, "dnb_env", "csrc")


def position_lines(rows: list[tuple[int, str]], n: int, seed: int) -> dict[int, list[str]]:
    mask = (1 << 64) - 1
    out = {}
    for k, query in rows:
        rng = random.Random(seed + k)
        lines = []
        for _ in range(n):
            s = realistic_position("5x5", k, rng)
            s0, s1 = s.scores
            have = s0 - s1 if s.current_player == 0 else s1 - s0
            e = s.edges
            lines.append(f"5 5 {query} {e & mask} {(e >> 64) & mask} {(e >> 128) & mask} {1 - have}")
        out[k] = lines
    return out


def run(driver: str, lines: list[str], budget: int, tt_mb: float, threads: int, tmp: str) -> list[tuple]:
    path = os.path.join(tmp, "positions.txt")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")
    text = subprocess.run([driver, path, str(budget), str(tt_mb), str(threads)], check=True,
                          capture_output=True, text=True).stdout
    return [(int(a), float(t), int(nodes)) for a, t, nodes in (ln.split() for ln in text.splitlines())]


def p90(xs):
    xs = sorted(xs)
    return xs[max(0, math.ceil(0.9 * len(xs)) - 1)]


def summary(results: list[tuple], query: str) -> dict:
    over = [r for r in results if (r[0] == 999 if query == "value" else r[0] < 0)]
    times = [r[1] for r in results]
    return {"median_s": statistics.median(times), "p90_s": p90(times), "max_s": max(times),
            "nodes_median": statistics.median(r[2] for r in results), "nodes_total": sum(r[2] for r in results),
            "over_budget": len(over),
            "answers": [r[0] for r in results]}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--base", default="b463afe", help="git revision of the solver to compare against")
    p.add_argument("--positions", type=int, default=20, help="positions per row")
    p.add_argument("--rows", default="38:value,40:win,42:win", help="undrawn:query rows (query value or win)")
    p.add_argument("--budget", type=int, default=200_000_000, help="node budget per query")
    p.add_argument("--tt-mb", type=float, default=256.0, help="transposition table size of every solver")
    p.add_argument("--threads", type=int, default=2, help="threads of the new solver's second column")
    p.add_argument("--seed", type=int, default=1000)
    p.add_argument("--json", default=None, help="write the figures to this file")
    args = p.parse_args(argv)
    rows = [(int(k), q) for k, q in (r.split(":") for r in args.rows.split(","))]
    if any(q not in ("value", "win") for _, q in rows):
        p.error("each row is UNDRAWN:value or UNDRAWN:win")
    tmp = tempfile.mkdtemp(prefix="dnb-solver-versions-")
    try:
        drivers = {
            f"base {args.base}": (compile_driver(base_sources(args.base, tmp), os.path.join(tmp, "base")), 1),
            "new, 1 thread": (compile_driver(os.path.join(ROOT, "dnb_env", "csrc"), os.path.join(tmp, "new")), 1),
        }
        if args.threads > 1:
            drivers[f"new, {args.threads} threads"] = (drivers["new, 1 thread"][0], args.threads)
        positions = position_lines(rows, args.positions, args.seed)
        out = {"positions": args.positions, "budget": args.budget, "tt_mb": args.tt_mb, "cpus": os.cpu_count(),
               "rows": {}}
        print(f"realistic 5x5 positions, {args.positions} per row, node budget {args.budget:,}, "
              f"table {args.tt_mb:g} MB, {os.cpu_count()} CPUs")
        print(f"  {'row':<12} {'solver':<22} {'median':>9} {'p90':>9} {'max':>9} {'nodes med':>12} "
              f"{'nodes total':>13} {'over budget':>11} {'speed-up':>8}")
        for k, query in rows:
            row = {}
            for name, (driver, threads) in drivers.items():
                row[name] = summary(run(driver, positions[k], args.budget, args.tt_mb, threads, tmp), query)
            base = row[f"base {args.base}"]
            for name, r in row.items():
                ratio = base["median_s"] / r["median_s"] if r["median_s"] > 0 else float("inf")
                r["speedup_vs_base"] = ratio
                print(f"  {f'{k} {query}':<12} {name:<22} {r['median_s']:>8.3f}s {r['p90_s']:>8.3f}s "
                      f"{r['max_s']:>8.2f}s {r['nodes_median']:>12,.0f} {r['nodes_total']:>13,} {r['over_budget']:>11} {ratio:>7.2f}x")
            answered = [r["answers"] for r in row.values()]
            agree = all(
                a == b for i in range(len(answered[0]))
                for a, b in [(answered[0][i], x[i]) for x in answered[1:]]
                if a not in (999, -1) and b not in (999, -1)
            )
            print(f"  {'':<12} answers agree: {'yes' if agree else 'NO'}")
            row["agree"] = agree
            out["rows"][f"{k}_{query}"] = row
        if args.json:
            with open(args.json, "w") as f:
                json.dump(out, f, indent=1)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
