"""Proof-number search over budgeted alpha-beta leaves as the solver's win/loss test of a move.

The check of a Nimstring-winning move ("does it keep the win?") is one null-window alpha-beta search at 41
undrawn edges: 1.8-3 s on one core. Its cut nodes near the root cut on the first move only about half the
time. A proof-number search (Allis 1994) orders by what is cheapest to prove instead: it grows a tree from
the position, evaluates each new leaf with a null-window test of at most LEAF solver nodes (the solver's
table kept across calls, so a leaf searched again later goes on where it stopped), and expands the leaf that
most proves or disproves the root. Compared here with the plain test on the moves the set files label.

    PYTHONPATH=. python research/frontier/pnab.py research/frontier/sets/5x5-s18.json 12 [LEAF]
"""

from __future__ import annotations

import json
import sys
import time

from dnb_env import native as _engine
from dnb_env.core import GameState

INF = 10 ** 9


class Node:
    __slots__ = ("state", "t", "pn", "dn", "children", "same")

    def __init__(self, state: GameState, t: int):
        self.state = state  # the question: is value(state) >= t for its mover?
        self.t = t
        self.pn = 1
        self.dn = 1
        self.children: list[Node] | None = None
        self.same: list[bool] = []  # the child's mover is this node's mover


class PNAB:
    def __init__(self, rows: int, cols: int, leaf: int, tt_mb: float = 1024.0):
        self.ex = _engine.module(rows, cols).ExactSolver(rows, cols, tt_mb=tt_mb)
        self.leaf = leaf
        self.calls = 0

    def evaluate(self, n: Node, budget: int) -> None:
        self.calls += 1
        r = self.ex.at_least(n.state.edges, n.t, node_limit=budget)
        if r is True:
            n.pn, n.dn = 0, INF
        elif r is False:
            n.pn, n.dn = INF, 0

    def expand(self, n: Node) -> None:
        s = n.state
        kids, same = [], []
        before = sum(s.scores)
        for a in s.legal_actions():
            c = s.apply(a)
            g = sum(c.scores) - before
            if c.current_player == s.current_player:
                k = Node(c, n.t - g)
                same.append(True)
            else:
                k = Node(c, 1 - n.t)  # value(s) >= t  <=>  some child with value(c) <= -t, i.e. not >= 1 - t
                same.append(False)
            kids.append(k)
        n.children, n.same = kids, same
        for k, sm in zip(kids, same):
            self.evaluate(k, self.leaf)
            if (k.pn if sm else k.dn) == 0:  # this child proves n
                break
        self.update(n)

    @staticmethod
    def update(n: Node) -> None:
        pn, dn = INF, 0
        for k, sm in zip(n.children, n.same):
            p, d = (k.pn, k.dn) if sm else (k.dn, k.pn)
            pn = min(pn, p)
            dn = min(INF, dn + d)
        n.pn, n.dn = pn, dn

    def step(self, n: Node) -> None:
        if n.children is None:
            self.expand(n)
            return
        best, best_p = None, INF + 1
        for k, sm in zip(n.children, n.same):
            p = k.pn if sm else k.dn
            if p < best_p:
                best, best_p = k, p
        # a child settled during expansion may leave others unevaluated (pn = dn = 1): fine
        self.step(best)
        self.update(n)

    def prove(self, state: GameState, t: int, max_calls: int = 10 ** 7, deadline: float | None = None) -> bool | None:
        root = Node(state, t)
        self.evaluate(root, self.leaf)
        while root.pn and root.dn:
            if self.calls >= max_calls or (deadline and time.perf_counter() > deadline):
                return None
            self.step(root)
        return root.pn == 0


def owned(s: GameState) -> int:
    s0, s1 = s.scores
    return s0 - s1 if s.current_player == 0 else s1 - s0


def main(path: str, count: int, leaf: int) -> None:
    with open(path) as f:
        data = json.load(f)
    board = data["params"]["board"]
    rows, cols = (int(x) for x in board.split("x"))
    done = 0
    tot_plain = tot_pn = 0.0
    for p in data["positions"]:
        if p["label"] != "won":
            continue
        for a, m in p["moves"].items():
            if done >= count:
                break
            s = GameState.from_actions(board, actions=p["history"])
            c = s.apply(int(a))
            if c.current_player == s.current_player:
                continue
            pn = PNAB(rows, cols, leaf)
            t0 = time.perf_counter()
            q = pn.prove(c, -owned(c))
            dt = time.perf_counter() - t0
            nodes = pn.ex.stats()["nodes"]
            ex = _engine.module(rows, cols).ExactSolver(rows, cols, tt_mb=1024.0)
            t1 = time.perf_counter()
            r = ex.at_least(c.edges, -owned(c))
            plain = time.perf_counter() - t1
            m = dict(m, seconds=plain, nodes=ex.stats()["nodes"])
            assert (not r) == m["kept"]
            kept = None if q is None else not q
            ok = "ok" if kept == m["kept"] else "WRONG"
            print(f"move {a} kept={m['kept']}: plain {m['seconds']:.2f} s {m['nodes']/1e6:.1f}M; "
                  f"pn {dt:.2f} s {nodes/1e6:.1f}M, {pn.calls} calls {ok}", flush=True)
            tot_plain += m["seconds"]
            tot_pn += dt
            done += 1
    print(f"in all: plain {tot_plain:.1f} s, pn {tot_pn:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]) if len(sys.argv) > 3 else 20000)
