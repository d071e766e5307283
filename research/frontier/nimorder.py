"""Does the solver's Nimstring move order (rule 6, ``nimstring_order``, from ``nimorder-rule.patch``; not in the
solver) make its win/loss test faster?

``SET N``: the first N labelled positions of a frontier set, ``ExactSolver.at_least`` (can the mover win) with
every rule and with every rule but ``nimstring_order``, each answer checked against the set's label.
``realistic UNDRAWN COUNT SEED``: COUNT positions of ``dnb_env.analysis.realistic_position`` on 5x5 with UNDRAWN
undrawn edges (``random.Random(SEED)``), ``at_least(edges, 1)`` both ways, the answers compared. A fresh solver
of ``TT_MB`` each, one thread, the order of the two settings alternating from position to position. Prints the
seconds and nodes of each setting, in all and per position.

    git apply research/frontier/nimorder-rule.patch && make setup
    PYTHONPATH=. python research/frontier/nimorder.py research/frontier/sets/5x5-s18.json 8
    PYTHONPATH=. python research/frontier/nimorder.py realistic 41 8 21
"""

from __future__ import annotations

import json
import random
import sys
import time

from dnb_env import native
from dnb_env.analysis import realistic_position
from dnb_env.core import GameState

TT_MB = 512.0


def positions_of(args: list[str]) -> list[tuple[GameState, int, bool | None]]:
    """(state, threshold, the answer expected or None) for each position asked for."""
    if args[0] == "realistic":
        undrawn, count, seed = (int(a) for a in args[1:4])
        rng = random.Random(seed)
        return [(realistic_position("5x5", undrawn, rng), 1, None) for _ in range(count)]
    data = json.load(open(args[0]))
    out = []
    for p in [p for p in data["positions"] if p["label"] in ("won", "lost")][:int(args[1])]:
        s = GameState.from_actions(data["params"]["board"], actions=p["history"])
        mine, theirs = s.scores[s.current_player], s.scores[1 - s.current_player]
        out.append((s, 1 - (mine - theirs), p["label"] == "won"))
    return out


def main(args: list[str]) -> None:
    mod = native.module(5, 5)
    rules = dict(mod.SOLVER_RULES)
    if "nimstring_order" not in rules:
        raise SystemExit("this build has no nimstring_order rule: apply research/frontier/nimorder-rule.patch first")
    every = sum(rules.values())
    settings = {"with the order": every, "without": every & ~rules["nimstring_order"]}
    out = {name: [] for name in settings}
    for k, (s, threshold, want) in enumerate(positions_of(args)):
        answers = set()
        for name in (list(settings) if k % 2 == 0 else list(settings)[::-1]):
            solver = mod.ExactSolver(s.rows, s.cols, tt_mb=TT_MB, rules=settings[name])
            start = time.perf_counter()
            answers.add(solver.at_least(s.edges, threshold, node_limit=2_000_000_000))
            seconds = time.perf_counter() - start
            st = solver.stats()
            out[name].append((round(seconds, 2), st["nodes"], st["rules"]["nimstring_first"]))
            del solver
        if len(answers) != 1 or (want is not None and answers != {want}):
            raise SystemExit(f"position {k}: the answers differ ({answers}, expected {want})")
    for name, rows in out.items():
        print(f"{name}: {sum(r[0] for r in rows):.1f} s, {sum(r[1] for r in rows) / 1e6:.1f}M nodes; per position "
              f"{json.dumps(rows)}")


if __name__ == "__main__":
    main(sys.argv[1:])
