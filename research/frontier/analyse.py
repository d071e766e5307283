"""Every move of the won positions of a frontier set, labelled: which keep the win (the exact solver), which
win Nimstring, which are safe; one JSON line a position, and a summary at the end. It answers why a safe move
that wins Nimstring is not always a good move: how many of them keep the win, and where the win lies
elsewhere (docs/research/frontier.md, "Why the check matters").

    python research/frontier/analyse.py research/frontier/sets/5x5-s20.json > research/frontier/analyse-s20.jsonl
    python research/frontier/analyse.py research/frontier/sets/5x5-s18.json --positions 16 > research/frontier/analyse-s18.jsonl
"""

from __future__ import annotations

import argparse
import json

from dnb_env import native
from dnb_env.analysis import MoveClass, move_classes
from dnb_env.core import GameState
from dnb_env.solver import Solver


def position_row(s: GameState, solver: Solver, nim) -> dict:
    """The counts of one won position's moves: safe, keeping the win, winning Nimstring, and their overlaps."""
    cls = move_classes(s)
    legal = s.legal_actions()
    safe = {a for a in legal if cls[a] == MoveClass.SAFE}
    keeps = {a for a in legal if solver.keeps_win(s, a)}
    found = nim.move_wins(s.edges, 20_000_000)
    wins = None if found is None else {a for a, w in found.items() if w}
    row = {"legal": len(legal), "safe": len(safe), "keep": len(keeps), "keep_safe": len(keeps & safe),
           "nimstring_settled": wins is not None}
    if wins is not None:
        row |= {"nim_win": len(wins), "nim_win_safe": len(wins & safe), "nim_win_safe_keep": len(wins & safe & keeps),
                "nim_win_keep": len(wins & keeps), "nim_win_unsafe": len(wins - safe)}
    return row


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("set", help="a frontier set file (benchmarks/frontier.py make)")
    p.add_argument("--positions", type=int, default=0, help="only the first N won positions (default: all)")
    p.add_argument("--node-limit", type=int, default=300_000_000, help="solver nodes per label (default 300M)")
    args = p.parse_args(argv)
    with open(args.set) as f:
        data = json.load(f)
    solver = Solver(max_undrawn=60, node_limit=args.node_limit, tt_mb=1024)
    rows = []
    for position in data["positions"]:
        if position["label"] != "won":
            continue
        if args.positions and len(rows) == args.positions:
            break
        s = GameState.from_actions(data["params"]["board"], actions=position["history"])
        rows.append(position_row(s, solver, native._require().Nimstring(s.rows, s.cols)) | {"kind": position["kind"]})
        print(json.dumps(rows[-1]), flush=True)
    settled = [r for r in rows if r["nimstring_settled"]]
    with_safe = [r for r in settled if r["nim_win_safe"]]
    print(json.dumps({"summary": {
        "won positions": len(rows), "Nimstring settled": len(settled),
        "with a safe move winning Nimstring": len(with_safe),
        "a random one of them keeps": sum(r["nim_win_safe_keep"] / r["nim_win_safe"] for r in with_safe)
        / max(1, len(with_safe)),
        "one of them keeps": sum(r["nim_win_safe_keep"] > 0 for r in with_safe),
        "Nimstring lost, boxes won": sum(r["nim_win"] == 0 for r in settled),
        "Nimstring won by an unsafe move only": sum(r["nim_win"] > 0 and r["nim_win_safe"] == 0 for r in settled),
        "share of winning moves that win Nimstring": sum(r["nim_win_keep"] for r in settled)
        / max(1, sum(r["keep"] for r in settled)),
        "a random safe move keeps": sum(r["keep_safe"] / r["safe"] for r in rows if r["safe"]) / max(1, len(rows)),
    }}))


if __name__ == "__main__":
    main()
