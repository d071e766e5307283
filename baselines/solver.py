"""Exact solver: retrograde analysis over the subsets of a position's undrawn edges.

For a position with k undrawn edges every later position is one subset of those k edges, and its value
(the margin the player to move gets over the opponent from the boxes still unclaimed) depends only on
that subset. The table of all 2^k values is filled layer by layer, from the full board down, with numpy:

    v(S) = max over undrawn e of  g(S, e) + v(S + e)   if e completes g(S, e) > 0 boxes (same player again)
                                  -v(S + e)              otherwise

k = 24 (a whole 3x3 game) is 16.8M entries (int8) and takes seconds; k <= 20 is well under a second. The
agent keeps its last table and reuses it while the game stays inside it, so a whole game costs one solve.

    solver = Solver(max_undrawn=24)
    solver.value(state)        -> int   exact margin for the player to move (remaining boxes)
    solver.move_values(state)  -> dict action -> exact margin after playing it (same sign convention)
    SolverAgent(seed=0).select_action(state)   optimal move, ties broken at random
"""

from __future__ import annotations

import numpy as np

from agents.base import check_state
from dnb_env.core import GameState

__all__ = ["Solver", "SolverAgent", "SolverTooLarge"]


class SolverTooLarge(ValueError):
    """The position has more undrawn edges than the solver was allowed to enumerate."""


class _Table:
    """Values of every subset of ``undrawn`` (edges of ``root_edges``'s complement) drawn in addition."""

    __slots__ = ("root_edges", "undrawn", "index", "values", "gain_req", "geometry")

    def __init__(self, state: GameState):
        g = state.geometry
        self.geometry = g
        self.root_edges = state.edges
        self.undrawn = state.legal_actions()
        self.index = {a: j for j, a in enumerate(self.undrawn)}
        k = len(self.undrawn)
        # per undrawn edge j: for each box beside it, the subset mask of its other undrawn sides
        self.gain_req = []
        for a in self.undrawn:
            reqs = []
            for b in g.action_boxes[a]:
                req = 0
                for e in g.box_sides[b]:
                    if e != a and not state.edges >> e & 1:
                        req |= 1 << self.index[e]
                reqs.append(req)
            self.gain_req.append(reqs)
        self.values = self._solve(k)

    def _solve(self, k: int) -> np.ndarray:
        n = 1 << k
        dtype = np.uint32 if k <= 32 else np.uint64
        vals = np.zeros(n, dtype=np.int8)
        if k == 0:
            return vals
        idx = np.arange(n, dtype=dtype)
        counts = np.bitwise_count(idx)
        order = np.argsort(counts, kind="stable").astype(dtype)
        bounds = np.concatenate([[0], np.cumsum(np.bincount(counts, minlength=k + 1))])
        del idx, counts
        for layer in range(k - 1, -1, -1):
            S = order[bounds[layer]: bounds[layer + 1]]
            best = np.full(S.shape, -128, dtype=np.int16)
            for j in range(k):
                bit = dtype(1 << j)
                free = (S & bit) == 0
                T = S[free]
                child = vals[T | bit].astype(np.int16)
                gain = np.zeros(T.shape, dtype=np.int16)
                for req in self.gain_req[j]:
                    r = dtype(req)
                    gain += (T & r) == r
                cand = np.where(gain > 0, gain + child, -child)
                sub = best[free]
                np.maximum(sub, cand, out=sub)
                best[free] = sub
            vals[S] = best.astype(np.int8)
        return vals

    def covers(self, state: GameState) -> bool:
        return state.geometry is self.geometry and state.edges & self.root_edges == self.root_edges

    def key(self, state: GameState) -> int:
        extra = state.edges & ~self.root_edges
        key = 0
        while extra:
            low = extra & -extra
            key |= 1 << self.index[low.bit_length() - 1]
            extra ^= low
        return key


class Solver:
    """Exact values by retrograde analysis; positions with more than ``max_undrawn`` undrawn edges are
    refused with :class:`SolverTooLarge` (2^k int8 entries are enumerated)."""

    def __init__(self, max_undrawn: int = 24):
        if not 0 <= max_undrawn <= 30:
            raise ValueError(f"max_undrawn must be in 0..30, got {max_undrawn}")
        self.max_undrawn = max_undrawn
        self._table: _Table | None = None

    def _table_for(self, state: GameState) -> _Table:
        t = self._table
        if t is not None and t.covers(state):
            return t
        k = state.num_actions - state.edges.bit_count()
        if k > self.max_undrawn:
            raise SolverTooLarge(
                f"position has {k} undrawn edges; this solver enumerates at most {self.max_undrawn} (2^k states)"
            )
        self._table = _Table(state)
        return self._table

    def value(self, state: GameState) -> int:
        """Exact margin (boxes) the player to move gets over the opponent from the unclaimed boxes."""
        t = self._table_for(state)
        return int(t.values[t.key(state)])

    def move_values(self, state: GameState) -> dict[int, int]:
        """For each legal move, the exact margin for the player to move if it is played."""
        t = self._table_for(state)
        base = t.key(state)
        out = {}
        for a in state.legal_actions():
            j = t.index[a]
            child = base | (1 << j)
            gain = sum(1 for req in t.gain_req[j] if base & req == req)
            v = int(t.values[child])
            out[a] = gain + v if gain else -v
        return out

    def game_value(self, state: GameState) -> int:
        """Exact final margin for the player to move: boxes already won included."""
        s0, s1 = state.scores
        have = s0 - s1 if state.current_player == 0 else s1 - s0
        return have + self.value(state)


class SolverAgent:
    """Plays an exactly optimal move (by margin); ties broken by its seeded generator."""

    name = "solver"

    def __init__(self, seed: int | None = None, max_undrawn: int = 24, board: tuple[int, int] | None = None):
        self.solver = Solver(max_undrawn)
        self.rng = np.random.default_rng(seed)
        self.board = board

    def seed(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def value(self, state: GameState) -> int:
        return self.solver.value(state)

    def move_values(self, state: GameState) -> dict[int, int]:
        return self.solver.move_values(state)

    def select_action(self, state: GameState) -> int:
        check_state(self, state)
        mv = self.solver.move_values(state)
        best = max(mv.values())
        choices = [a for a, v in mv.items() if v == best]
        return choices[int(self.rng.integers(len(choices)))]

    def reset(self) -> None:
        pass
