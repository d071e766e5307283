"""Can random safe play to the solver's zone tell the Nimstring-winning moves that keep the win from the rest?

At steps 18-20 a random safe move that wins Nimstring keeps the win about 0.7 of the time, and the solver's
check that would pick a keeping one takes 2-3 s at 41 undrawn edges (``judge.py`` labels every such move).
This study judges each of them instead by rollouts: from the position after the move both players draw
random safe moves until at most ``--undrawn`` edges are undrawn (or no safe move is left), and the exact
solver values the end (the final margin for the player who chose the move). The judge plays the move with
the best mean (``margin``) or the most wins (``wins``) over ``--rollouts`` rollouts, the same random
continuations for every move of a position.

    PYTHONPATH=. python research/frontier/rollout.py research/frontier/judge-s18.jsonl research/frontier/judge-s20.jsonl \
        --rollouts 8 --undrawn 38 --test --seed 0 > research/frontier/scores/rollout-u38-r8-test-s0.txt
    PYTHONPATH=. python research/frontier/rollout.py --auc research/frontier/scores/rollout-u38-r8-test-s0.txt
    PYTHONPATH=. python research/frontier/rollout.py --first research/frontier/scores/rollout-u38-r8-test-s0.txt

The outputs in ``research/frontier/scores/rollout-*.txt`` hold one line a position (each move's rollout mean and
label) and each label file's summary.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from agents.arena.ratings import wilson_interval
from dnb_env.analysis import safe_moves
from dnb_env.core import GameState
from dnb_env.solver import Solver

BOARD = "5x5"


def rollout_margin(s: GameState, mover: int, undrawn: int, rng: np.random.Generator, solver: Solver,
                   test: bool = False) -> int:
    """The exact final margin for ``mover`` after random safe moves from ``s`` down to ``undrawn`` edges;
    ``test``: only its sign, +1 or -1 (a draw counts as -1), from one null-window search."""
    while s.num_actions - s.edges.bit_count() > undrawn:
        safe = safe_moves(s)
        if not safe:
            break
        s = s.apply(safe[int(rng.integers(len(safe)))])
    if test:
        if s.current_player == mover:
            return 1 if solver.can_win(s) else -1
        return -1 if solver.at_least(s, -Solver._owned_margin(s)) else 1
    v = solver.game_value(s)
    return v if s.current_player == mover else -v


def saved(path: str) -> list[list[dict]]:
    """The positions of a saved output of this script, one list per label file judged."""
    parts, rows = [], []
    for line in open(path):
        if line.startswith("{"):
            rows.append(json.loads(line))
        elif line.strip() and rows:  # a label file's summary ends its positions
            parts.append(rows)
            rows = []
    return parts


def auc(paths: list[str]) -> None:
    """For saved outputs of this script: how often a candidate's rollout mean ranks a move that keeps the win
    above one that does not (ties count half), per label file judged."""
    for path in paths:
        for rows in saved(path):
            pairs = [(m, k) for r in rows for m, k in zip(r["mean"], r["kept"])]
            kept = [m for m, k in pairs if k]
            lost = [m for m, k in pairs if not k]
            score = np.mean([(a > b) + 0.5 * (a == b) for a in kept for b in lost])
            print(f"{path}: {len(rows)} positions, {len(pairs)} moves ({len(kept)} keep), AUC {score:.3f}")


def first(paths: list[str], ks=(1, 2, 3, 4, 6), draws: int = 2000, seed: int = 0) -> None:
    """For saved outputs of this script: the keep rate of the judge when it sees only the first k candidates
    of a random order (as an agent would that judges the Nimstring-winning moves as its search finds them) and
    breaks ties of the rollout mean at random; k = all is the whole judge with random ties. Expected values
    over ``draws`` random orders a position."""
    for path in paths:
        for rows in saved(path):
            rng = np.random.default_rng(seed)
            cells = []
            for k in (*ks, None):
                rate = 0.0
                for r in rows:
                    mean, kept = np.asarray(r["mean"]), np.asarray(r["kept"])
                    n = len(mean)
                    m = n if k is None else min(k, n)
                    order = np.argsort(rng.random((draws, n)), axis=1)[:, :m]  # a random order, its first m
                    seen = mean[order] + 1e-6 * rng.random((draws, m))  # random ties
                    rate += kept[order[np.arange(draws), seen.argmax(axis=1)]].mean()
                cells.append(f"{'all' if k is None else k}: {rate / len(rows):.3f}")
            print(f"{path}: {len(rows)} positions, keeps with the first k candidates: " + ", ".join(cells))


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("files", nargs="*", help="judge.py label files (one labelled position a line)")
    p.add_argument("--auc", nargs="+", metavar="OUT", help="instead: the AUC of saved outputs of this script")
    p.add_argument("--first", nargs="+", metavar="OUT",
                   help="instead: the keep rate of saved outputs judging the first k candidates, ties at random")
    p.add_argument("--rollouts", type=int, default=8)
    p.add_argument("--undrawn", type=int, default=34, help="stop the random safe moves at this many undrawn edges")
    p.add_argument("--test", action="store_true", help="only win or not at the end (null-window searches)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.auc:
        auc(args.auc)
        return
    if args.first:
        first(args.first)
        return
    if not args.files:
        p.error("give judge.py label files, or --auc / --first with saved outputs")
    solver = Solver(max_undrawn=60, node_limit=0, tt_mb=512)
    for path in args.files:
        rows = [json.loads(line) for line in open(path) if line.strip()]
        picks: dict[str, list[bool]] = {"margin": [], "wins": []}
        random_mean, best, spent = [], [], []
        for r in rows:
            cands = [int(a) for a, k in r["kept"].items() if k is not None]
            if not cands or len(cands) < len(r["kept"]):
                continue
            keeps = {a: r["kept"][str(a)] for a in cands}
            s = GameState.from_actions(BOARD, actions=r["history"])
            start = time.perf_counter()
            scores = {}
            for a in cands:
                rng = np.random.default_rng([args.seed, r["index"]])  # the same continuations for every move
                child = s.apply(a)
                scores[a] = [rollout_margin(child, s.current_player, args.undrawn, rng, solver, args.test)
                             for _ in range(args.rollouts)]
            spent.append(time.perf_counter() - start)
            by_margin = max(cands, key=lambda a: np.mean(scores[a]))
            by_wins = max(cands, key=lambda a: (np.mean(np.asarray(scores[a]) > 0), np.mean(scores[a])))
            picks["margin"].append(keeps[by_margin])
            picks["wins"].append(keeps[by_wins])
            random_mean.append(np.mean([keeps[a] for a in cands]))
            best.append(any(keeps.values()))
            print(json.dumps({"index": r["index"], "moves": len(cands), "kept": [keeps[a] for a in cands],
                              "mean": [round(float(np.mean(scores[a])), 2) for a in cands],
                              "s": round(spent[-1], 2)}), flush=True)
        n = len(best)
        print(f"\n{path}: {n} positions, {args.rollouts} rollouts to {args.undrawn} undrawn, "
              f"{np.median(spent):.2f} s a position (median), {max(spent):.2f} s at most")
        print(f"random one {np.mean(random_mean):.3f}, best {np.mean(best):.3f}")
        rng = np.random.default_rng(0)
        for k, v in picks.items():
            lo, hi = wilson_interval(sum(v), n)
            gain = np.asarray(v, dtype=float) - np.asarray(random_mean)  # paired with a random one, position by position
            boot = np.percentile([rng.choice(gain, n).mean() for _ in range(5000)], [2.5, 97.5])
            print(f"by {k}: {np.mean(v):.3f} [{lo:.3f}, {hi:.3f}], minus a random one {gain.mean():+.3f} "
                  f"[{boot[0]:+.3f}, {boot[1]:+.3f}] (95% bootstrap)")


if __name__ == "__main__":
    main()
