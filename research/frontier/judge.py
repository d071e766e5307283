"""Can a network tell the safe moves that win Nimstring *and* keep the win from those that win Nimstring only?

At steps 18-20 a random safe move that wins Nimstring keeps the win about 0.7 of the time (``analyse.py``);
the solver's check that would pick a keeping one takes 2-3 s at 41 undrawn edges. This study asks whether a
cheap judgement ranks them instead: for every won position of a frontier set,

``label``: the safe moves, which of them win Nimstring (``move_wins``, 20M positions), and for each of those
    whether it keeps the win (``Solver.keeps_win``, 300M nodes; the set file's cached labels are used where
    they exist); one JSON line a position, resumable (positions already in OUT are skipped).
``judge``: for each labelled position with at least one such move, the move each judge ranks first among
    them, and how often it keeps the win, against a random one of them (the mean) and the best possible
    (one of them keeps). Judges: each shipped 5x5 network's value of the position after the move (for the
    mover: a safe move completes no box, so the opponent moves next) and its prior of the move at the root;
    beside them a random one that the long chain rule likes (prsboxes tries those first).

    PYTHONPATH=. python research/frontier/judge.py label research/frontier/sets/5x5-s20.json research/frontier/judge-s20.jsonl
    PYTHONPATH=. python research/frontier/judge.py judge research/frontier/judge-s20.jsonl research/frontier/judge-s18.jsonl
"""

from __future__ import annotations

import argparse
import json
import os

import numpy as np

from dnb_env import native
from dnb_env.analysis import MoveClass, move_classes
from dnb_env.core import GameState
from dnb_env.features import long_chain_rule_moves
from dnb_env.solver import Solver, SolverBudgetExceeded

BOARD = "5x5"
NETWORKS = {"alphazero": "agents/checkpoints/alphazero-5x5.pt", "dotsformer": "agents/checkpoints/dotsformer-5x5.pt",
            "alphavit": "agents/checkpoints/alphavit.pt"}


def label(set_path: str, out: str, nim_positions: int, node_limit: int) -> None:
    with open(set_path) as f:
        data = json.load(f)
    done = set()
    if os.path.exists(out):
        with open(out) as f:
            done = {json.loads(line)["index"] for line in f if line.strip()}
    solver = Solver(max_undrawn=60, node_limit=node_limit, tt_mb=1024)
    for index, p in enumerate(data["positions"]):
        if p["label"] != "won" or index in done:
            continue
        s = GameState.from_actions(data["params"]["board"], actions=p["history"])
        cls = move_classes(s)
        safe = [a for a in s.legal_actions() if cls[a] == MoveClass.SAFE]
        found = native._require().Nimstring(s.rows, s.cols).move_wins(s.edges, nim_positions)
        row = {"index": index, "kind": p["kind"], "history": p["history"], "safe": safe,
               "nim": None if found is None else [a for a in safe if found[a]], "kept": {}}
        for a in row["nim"] or []:
            cached = p.get("moves", {}).get(str(a))
            if cached is not None and cached["kept"] is not None:
                row["kept"][str(a)] = cached["kept"]
                continue
            try:
                row["kept"][str(a)] = solver.keeps_win(s, a)
            except SolverBudgetExceeded:
                row["kept"][str(a)] = None
        with open(out, "a") as f:
            f.write(json.dumps(row) + "\n")
        print(index, len(safe), None if row["nim"] is None else len(row["nim"]), row["kept"], flush=True)


def judge(paths: list[str]) -> None:
    from agents.arena.ratings import wilson_interval
    from agents.checkpoint import load_network
    from agents.models.evaluator import NetworkEvaluator

    evaluators = {name: NetworkEvaluator(load_network(path, board=BOARD)[0]) for name, path in NETWORKS.items()}
    for path in paths:
        rows = [json.loads(line) for line in open(path) if line.strip()]
        results: dict[str, list[bool]] = {}
        gains: dict[str, list[float]] = {}  # a judge's keep minus the random one's, position by position
        random_mean, liked_mean, best = [], [], []
        for r in rows:
            cands = [int(a) for a, k in r["kept"].items() if k is not None]
            if not cands or len(cands) < len(r["kept"]):
                continue  # no move winning Nimstring, or one not labelled
            keeps = {a: r["kept"][str(a)] for a in cands}
            random_mean.append(np.mean([keeps[a] for a in cands]))
            base = random_mean[-1]
            s = GameState.from_actions(BOARD, actions=r["history"])
            liked = long_chain_rule_moves(s)
            pool = [a for a in cands if liked[a]] or cands  # prsboxes tries the liked ones first
            liked_mean.append(np.mean([keeps[a] for a in pool]))
            best.append(any(keeps.values()))
            children = [s.apply(a) for a in cands]
            for name, ev in evaluators.items():
                priors, _ = ev.evaluate([s])
                _, values = ev.evaluate(children)
                by_value = cands[int(np.argmax(-np.asarray(values)))]  # the opponent moves next
                by_prior = cands[int(np.argmax([priors[0][a] for a in cands]))]
                for judge, move in ((f"{name} value", by_value), (f"{name} prior", by_prior)):
                    results.setdefault(judge, []).append(keeps[move])
                    gains.setdefault(judge, []).append(keeps[move] - base)
                in_pool = pool[int(np.argmax([priors[0][a] for a in pool]))]
                results.setdefault(f"{name} prior, liked ones first", []).append(keeps[in_pool])
                gains.setdefault(f"{name} prior, liked ones first", []).append(keeps[in_pool] - base)
        n = len(best)
        print(f"\n{path}: {n} won positions with a safe move winning Nimstring, all labelled")
        print("| judge | keeps | 95% interval | minus a random one (paired) | 95% bootstrap |\n|---|---|---|---|---|")
        print(f"| a random one (mean) | {np.mean(random_mean):.3f} | | | |")
        print(f"| a random one the long chain rule likes (mean; prsboxes' order) | {np.mean(liked_mean):.3f} | | | |")
        print(f"| the best one (one keeps) | {np.mean(best):.3f} | | | |")
        rng = np.random.default_rng(0)
        for name, ks in results.items():
            lo, hi = wilson_interval(sum(ks), len(ks))
            g = np.asarray(gains[name])
            boot = np.percentile([rng.choice(g, len(g)).mean() for _ in range(5000)], [2.5, 97.5])
            print(f"| {name} | {np.mean(ks):.3f} | [{lo:.3f}, {hi:.3f}] | {g.mean():+.3f} | [{boot[0]:+.3f}, {boot[1]:+.3f}] |")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("label")
    a.add_argument("set")
    a.add_argument("out")
    a.add_argument("--nim-positions", type=int, default=20_000_000)
    a.add_argument("--node-limit", type=int, default=300_000_000)
    b = sub.add_parser("judge")
    b.add_argument("files", nargs="+")
    args = p.parse_args(argv)
    if args.cmd == "label":
        label(args.set, args.out, args.nim_positions, args.node_limit)
    else:
        judge(args.files)


if __name__ == "__main__":
    main()
