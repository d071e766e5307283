"""Does ordering the safe moves by a network's prior make the Nimstring search settle sooner?

For every won position of a frontier set, ``first_win`` over the safe moves from an empty table (the agents'
64 MB), in two orders: the long chain rule's (``search_order``: the liked moves first, each group in random
order, seed = the position's index) and a network's prior at the root, highest first (as the network agents'
``nimstring_order=prior``). Counted in positions, not seconds, so that the answer does not depend on the
machine's load: how many positions settle (a winning move found, or every move shown to lose) within each
budget, and how often the move found keeps the win (the labels of ``judge.py label``, where it has them).

    PYTHONPATH=. python research/frontier/order.py research/frontier/sets/5x5-s18.json research/frontier/judge-s18.jsonl
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from baselines.nimstring import safe_groups, safe_moves, search_order
from dnb_env import native
from dnb_env.core import GameState

BUDGETS = (50_000, 200_000, 1_000_000, 5_000_000)
NETWORKS = {"alphavit": "agents/checkpoints/alphavit.pt", "alphazero": "agents/checkpoints/alphazero-5x5.pt"}


def main(argv=None) -> None:
    from agents.checkpoint import load_network
    from agents.models.evaluator import NetworkEvaluator

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("set")
    p.add_argument("labels", help="judge.py label's file of the same set (the moves' keep labels)")
    args = p.parse_args(argv)
    data = json.load(open(args.set))
    labels = {r["index"]: r["kept"] for r in map(json.loads, open(args.labels))}
    evaluators = {n: NetworkEvaluator(load_network(path, board="5x5")[0]) for n, path in NETWORKS.items()}
    settled = {o: {b: 0 for b in BUDGETS} for o in ["rule", *NETWORKS]}
    kept = {o: [] for o in settled}
    n = 0
    for index, pos in enumerate(data["positions"]):
        if pos["label"] != "won":
            continue
        n += 1
        s = GameState.from_actions(data["params"]["board"], actions=pos["history"])
        safe = safe_moves(s)
        orders = {"rule": search_order(safe_groups(s, safe), np.random.default_rng(index))}
        for name, ev in evaluators.items():
            prior = ev.evaluate([s])[0][0]
            orders[name] = sorted(safe, key=lambda a: -float(prior[a]))
        line = [str(index)]
        for name, moves in orders.items():
            found = None
            for b in BUDGETS:
                found = native._require().Nimstring(s.rows, s.cols, table_mb=64.0).first_win(s.edges, moves, b)
                if found is not None:
                    for later in BUDGETS[BUDGETS.index(b):]:
                        settled[name][later] += 1
                    break
            if found is not None and found >= 0 and labels.get(index, {}).get(str(found)) is not None:
                kept[name].append(labels[index][str(found)])
            line.append(f"{name}: {found} (budget {b if found is not None else '>' + str(BUDGETS[-1])})")
        print("  ".join(line), flush=True)
    print(f"\n{args.set}: {n} won positions; settled within a budget of positions (first_win from an empty table)")
    print("| order | " + " | ".join(f"{b:,}" for b in BUDGETS) + " | the move found keeps the win |")
    print("|---" * (len(BUDGETS) + 2) + "|")
    for name in settled:
        k = kept[name]
        print(f"| {name} | " + " | ".join(str(settled[name][b]) for b in BUDGETS)
              + f" | {np.mean(k):.3f} ({sum(k)} of {len(k)}) |")


if __name__ == "__main__":
    main()
