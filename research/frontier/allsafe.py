"""Can rollouts to the solver's zone judge every safe move, without the Nimstring search to find candidates?

``rollout.py`` judges only the safe moves that win Nimstring, and those must be found first: at step 18 the
search finds one within a 1 s move in about a third to a half of the positions. This study gives every safe
move of a won position the same ``--rollouts`` random continuations (random safe moves down to ``--undrawn``
undrawn edges, then the exact solver's win/loss test for the player who chose the move), saves each
rollout's outcome, and then scores judges on the saved outcomes:

- ``best``: the move with the most rollout wins (ties at random), R rollouts each;
- ``halving``: successive halving, as an agent with a budget of tests would judge: every move gets r
  rollouts, the better half r more each, and so on until one is left (``--halving r``);
- each restricted to the Nimstring-winning moves where the position has one (``nim``).

A pick's label comes from the judge file where it is there (the Nimstring-winning moves), else from the
exact solver (``keeps_win``, 2-3 s a move at 42 undrawn edges), cached in ``--labels``.

    PYTHONPATH=. python research/frontier/allsafe.py collect research/frontier/judge-s18.jsonl \\
        --rollouts 16 --part 0/2 > /tmp/allsafe-s18-0.jsonl        # and --part 1/2 beside it
    PYTHONPATH=. python research/frontier/allsafe.py score research/frontier/judge-s18.jsonl \\
        research/frontier/scores/allsafe-s18-r16.jsonl --labels research/frontier/scores/allsafe-s18-labels.json
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np

from agents.arena.ratings import wilson_interval
from dnb_env.core import GameState
from dnb_env.solver import Solver
from research.frontier.rollout import BOARD, rollout_margin


def collect(path: str, rollouts: int, undrawn: int, seed: int, part: tuple[int, int]) -> None:
    """One JSON line a won position of the judge file (every ``part[1]``-th from ``part[0]``): each safe move's
    rollout outcomes (+1 win, -1 not), the same random streams for every move."""
    solver = Solver(max_undrawn=60, node_limit=0, tt_mb=512)
    rows = [json.loads(line) for line in open(path) if line.strip()]
    for i, r in enumerate(rows):
        if i % part[1] != part[0]:
            continue
        s = GameState.from_actions(BOARD, actions=r["history"])
        start = time.perf_counter()
        outcomes = {}
        for a in r["safe"]:
            child = s.apply(a)
            outcomes[a] = []
            for k in range(rollouts):
                rng = np.random.default_rng([seed, r["index"], k])  # rollout k: the same stream for every move
                outcomes[a].append(rollout_margin(child, s.current_player, undrawn, rng, solver, test=True))
        print(json.dumps({"index": r["index"], "outcomes": outcomes, "s": round(time.perf_counter() - start, 2)}),
              flush=True)


def halving(outcomes: dict[int, np.ndarray], first: int, rng: np.random.Generator) -> tuple[int, int]:
    """Successive halving on saved outcomes: every move's first ``first`` rollouts, then each round the better
    half (by wins, ties at random) twice as many in all (``first``, 2 ``first``, 4 ``first`` ...), until one move
    is left or the rollouts run out. Returns the move and the rollouts spent."""
    live = list(outcomes)
    r, spent = first, 0
    total = len(next(iter(outcomes.values())))
    seen = {a: 0 for a in live}
    while True:
        r = min(r, total)
        for a in live:
            spent += r - seen[a]
            seen[a] = r
        if len(live) == 1 or r == total:
            break
        score = {a: outcomes[a][:r].mean() + 1e-6 * rng.random() for a in live}
        live = sorted(live, key=lambda a: -score[a])[:max(1, (len(live) + 1) // 2)]
        r *= 2
    score = {a: outcomes[a][:r].mean() + 1e-6 * rng.random() for a in live}
    return max(live, key=lambda a: score[a]), spent


def score(judge_path: str, out_paths: list[str], labels_path: str, firsts: list[int], draws: int) -> None:
    """The keep rate of each judge on the saved outcomes; labels of picks not in the judge file by the solver."""
    rows = {r["index"]: r for r in (json.loads(line) for line in open(judge_path) if line.strip())}
    saved = {}
    for p in out_paths:
        for line in open(p):
            if line.strip():
                d = json.loads(line)
                saved[d["index"]] = {int(a): np.asarray(v) for a, v in d["outcomes"].items()}
    labels = json.load(open(labels_path)) if os.path.exists(labels_path) else {}
    solver = Solver(max_undrawn=60, node_limit=0, tt_mb=1024)

    def label(index: int, a: int) -> bool:
        kept = rows[index]["kept"]
        if str(a) in kept and kept[str(a)] is not None:
            return bool(kept[str(a)])
        key = f"{index}:{a}"
        if key not in labels:
            s = GameState.from_actions(BOARD, actions=rows[index]["history"])
            labels[key] = bool(solver.keeps_win(s, a))
            tmp = labels_path + ".tmp"
            with open(tmp, "w") as f:
                json.dump(labels, f)
            os.replace(tmp, labels_path)
        return labels[key]

    total = len(next(iter(next(iter(saved.values())).values())))
    judges = [("best", None, False), ("best", None, True)] + [("halving", f, nim) for f in firsts for nim in (False, True)]
    for name, first, nim in judges:
        rng = np.random.default_rng(0)
        keeps, spent = [], []
        for index, outcomes in sorted(saved.items()):
            moves = outcomes
            if nim and rows[index]["nim"]:
                moves = {a: outcomes[a] for a in rows[index]["nim"]}
            rate, cost = 0.0, 0.0
            for _ in range(draws):
                if first is None:
                    score_ = {a: v.mean() + 1e-6 * rng.random() for a, v in moves.items()}
                    pick, used = max(moves, key=lambda a: score_[a]), total * len(moves)
                else:
                    pick, used = halving(moves, first, rng)
                rate += label(index, pick)
                cost += used
            keeps.append(rate / draws)
            spent.append(cost / draws)
        n = len(keeps)
        lo, hi = wilson_interval(round(sum(keeps)), n)
        tag = f"{name}{'' if first is None else f' from {first}'}{' among Nimstring-winning' if nim else ''}"
        print(f"{tag}: keeps {np.mean(keeps):.3f} [{lo:.3f}, {hi:.3f}] of {n} positions, "
              f"{np.mean(spent):.0f} rollouts a position (mean), {max(spent):.0f} at most", flush=True)


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    c = sub.add_parser("collect", help="every safe move's rollout outcomes, one JSON line a position")
    c.add_argument("judge", help="a judge.py label file")
    c.add_argument("--rollouts", type=int, default=16)
    c.add_argument("--undrawn", type=int, default=38)
    c.add_argument("--seed", type=int, default=0)
    c.add_argument("--part", default="0/1", help="k/n: every n-th position from the k-th (to split across cores)")
    s = sub.add_parser("score", help="the judges' keep rates on saved outcomes")
    s.add_argument("judge", help="the judge.py label file the outcomes were collected on")
    s.add_argument("outcomes", nargs="+", help="outputs of collect")
    s.add_argument("--labels", required=True, help="JSON cache of the solver's labels of picks")
    s.add_argument("--halving", default="1,2,4", help="first rollouts a move of the halving judges")
    s.add_argument("--draws", type=int, default=20, help="random tie-breaks averaged a position")
    args = p.parse_args(argv)
    if args.command == "collect":
        k, n = (int(x) for x in args.part.split("/"))
        collect(args.judge, args.rollouts, args.undrawn, args.seed, (k, n))
    else:
        score(args.judge, args.outcomes, args.labels, [int(x) for x in args.halving.split(",")], args.draws)


if __name__ == "__main__":
    main()
