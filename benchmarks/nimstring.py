"""The Nimstring search (``dnb_env._native.Nimstring.move_wins``, as the ``chainloop6_nim`` encoders call it)
with and without its reductions (move ordering by earlier winning moves, one border side a box), side by side
on the same positions: by undrawn edges, how many positions each finishes within the position budget, and its
time per position (median and mean, finished or not). Where both finish, the answers must agree (the
reductions change how much is searched, not what is found); a disagreement stops the benchmark.

Positions come from teacher datasets (``--held``, repeatable), taken in order, at most ``--per-count`` a count
of undrawn edges within ``--undrawn``; each is searched in the board's canonical orientation, as the encoders
do.

    python benchmarks/nimstring.py --held data/teach5-gfar-held --held data/teach5-nfar-held --undrawn 36-42
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict


def main(argv=None) -> dict:
    from agents.training.dataset import TeacherData
    from dnb_env import native
    from dnb_env.features import NIMSTRING_POSITIONS, _canonical_edges

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--held", action="append", required=True, metavar="DIR", help="teacher dataset (repeatable)")
    p.add_argument("--undrawn", default="36-42", help="MIN-MAX undrawn edges (default 36-42)")
    p.add_argument("--per-count", type=int, default=20, help="positions at most per undrawn count (default 20)")
    p.add_argument("--positions", type=int, default=NIMSTRING_POSITIONS,
                   help=f"the search's position budget (default {NIMSTRING_POSITIONS})")
    args = p.parse_args(argv)
    lo, _, hi = args.undrawn.partition("-")
    lo, hi = int(lo), int(hi or lo)
    if not 1 <= lo <= hi or args.per_count < 1 or args.positions < 1:
        p.error("--undrawn MIN-MAX with 1 <= MIN <= MAX; --per-count and --positions >= 1")

    chosen: dict[int, list] = defaultdict(list)
    for held in args.held:
        for s in TeacherData.load(held).samples.states():
            u = s.num_actions - bin(s.edges).count("1")
            if lo <= u <= hi and len(chosen[u]) < args.per_count and not s.is_terminal():
                chosen[u].append(s)
    if not chosen:
        p.error("no position of the datasets has that many undrawn edges")
    rows, cols = next(iter(chosen.values()))[0].rows, next(iter(chosen.values()))[0].cols
    searches = {"plain": native._require().Nimstring(rows, cols, reductions=False),
                "reduced": native._require().Nimstring(rows, cols, reductions=True)}
    out = {}
    print(f"{rows}x{cols}, budget {args.positions:,} positions; time per position in ms, finished or not")
    print("| undrawn | positions | plain: finished | median | mean | reduced: finished | median | mean | "
          "mean time, plain / reduced |")
    print("|---|---|---|---|---|---|---|---|---|")
    for u in sorted(chosen):
        done = {k: 0 for k in searches}
        times = {k: [] for k in searches}
        for s in chosen[u]:
            _, edges = _canonical_edges(s.rows, s.cols, s.edges)
            answers = {}
            for name, nim in searches.items():
                t = time.perf_counter()
                answers[name] = nim.move_wins(edges, args.positions)
                times[name].append(1000 * (time.perf_counter() - t))
                done[name] += answers[name] is not None
            if None not in answers.values() and answers["plain"] != answers["reduced"]:
                raise SystemExit(f"the searches disagree on the position {s.edges:#x}")
        row = {k: {"finished": done[k], "median_ms": statistics.median(times[k]),
                   "mean_ms": statistics.fmean(times[k])} for k in searches}
        ratio = row["plain"]["mean_ms"] / max(row["reduced"]["mean_ms"], 1e-9)
        out[u] = row | {"positions": len(chosen[u]), "ratio": ratio}
        a, b = row["plain"], row["reduced"]
        print(f"| {u} | {len(chosen[u])} | {a['finished']} | {a['median_ms']:.1f} | {a['mean_ms']:.1f} | "
              f"{b['finished']} | {b['median_ms']:.1f} | {b['mean_ms']:.1f} | {ratio:.2f} |")
    return out


if __name__ == "__main__":
    main()
