"""The exact solver engine: native alpha-beta over the box margin, and retrograde analysis as the readable
reference. Part of the game layer, beside the rules it searches (no agent here: the player that uses it is
:class:`baselines.solver.SolverAgent`).

A position's value is the margin (boxes) the player to move gets over the opponent from the boxes still
unclaimed, under optimal play by both; it depends only on the set of drawn edges:

    v(S) = max over undrawn e of  g(S, e) + v(S + e)   if e completes g(S, e) > 0 boxes (same player again)
                                  -v(S + e)              otherwise

Two engines compute it (``Solver(engine=...)``):

==============  =========================================================================================
``alphabeta``   ``dnb_env._native.ExactSolver`` (``dnb_env/csrc/solver.hpp``): MTD(f) null-window alpha-beta,
                a transposition table keyed by the drawn-edge set up to the board's symmetries, and only
                reductions proven to keep the exact value (free captures, Berlekamp's all-but-two /
                all-but-four rule, equivalent sacrifices, the simple-endgame recursion at the leaves). Reaches
                the 5x5 midgame: about 36-38 undrawn edges in well under a second (benchmarks/solver.py).
                Bounded by ``node_limit`` nodes per call: past it :class:`SolverBudgetExceeded` is raised.
``retrograde``  pure numpy: the table of all 2^k subsets of the k undrawn edges, filled layer by layer from
                the full board down. k = 24 (a whole 3x3 game) is 16.8M int8 entries and takes seconds; the
                table is reused while a game stays inside it. Limited to k <= 30.
``auto``        (default) ``alphabeta`` when the C++ extension is built and the board is at most 12x12,
                ``retrograde`` otherwise.
==============  =========================================================================================

    solver = Solver()                     # max_undrawn: 40 (alphabeta) / 24 (retrograde) by default
    solver.value(state)        -> int   exact margin for the player to move (remaining boxes)
    solver.move_values(state)  -> dict action -> exact margin after playing it (same sign convention)
    solver.game_value(state)   -> int   exact final margin for the player to move (boxes owned included)
    solver.can_win(state)      -> bool  whether the player to move wins the game with best play (one
                                        null-window search with alphabeta: cheaper than the value)
    solver.outcome(state)      -> int   +1 win, 0 draw, -1 loss of the whole game for the player to move

Version history: 0.1 retrograde solver; 0.2 (issue: native exact solver) the alpha-beta engine, the
``engine``, ``node_limit`` and ``tt_mb`` options, ``can_win``/``outcome``/``bounds`` and
:class:`SolverBudgetExceeded`; 0.3 the engine moves from ``baselines.solver`` to ``dnb_env.solver`` (the
agent stays there).
"""

from __future__ import annotations

import time

import numpy as np

from dnb_env import native as _engine
from dnb_env.clock import MeasuredRate
from dnb_env.core import GameState

__all__ = ["Solver", "SolverTooLarge", "SolverBudgetExceeded", "ENGINES", "native_available", "beyond_native",
           "VALUE_REACH",
           "MOVES_REACH", "RETROGRADE_REACH", "DEFAULT_NODE_LIMIT", "MOVE_NODE_LIMIT", "LEAF_NODE_LIMIT", "TABLE_RATE"]

#: Engine names accepted by :class:`Solver`.
ENGINES = ("auto", "alphabeta", "retrograde")

# The solver's reach in undrawn edges and its node budgets (5x5 positions on one core, benchmarks/solver.py):
# the one home of the numbers by which the agents, the teacher and the web app size their use of it.
#: Undrawn edges within which the alpha-beta engine finds exact values (margins) in a fraction of a second
#: (0.1 s median at 36 on 5x5): the searches' leaf zone, the teacher's margin labels.
VALUE_REACH = 36
#: Undrawn edges within which the win/loss query and the best moves take well under a second (0.24 s median
#: for the value at 38 on 5x5): the searches' root zone, prsboxes' solver zone, the teacher's positions.
MOVES_REACH = 38
#: Undrawn edges the retrograde engine enumerates by default (2^24 int8 entries, seconds).
RETROGRADE_REACH = 24
#: Default ``max_undrawn`` per engine.
DEFAULT_MAX_UNDRAWN = {"alphabeta": 40, "retrograde": RETROGRADE_REACH}
#: Default node budget of one alpha-beta call (about 10-30 s on one core).
DEFAULT_NODE_LIMIT = 20_000_000
#: Node budget of a call made to choose a move (a few seconds on one core): prsboxes' solver, the searches'
#: exact root, the web app's cap on such budgets.
MOVE_NODE_LIMIT = 6_000_000
#: Node budget of a solve at a leaf of a tree search (a fraction of a second).
LEAF_NODE_LIMIT = 1_000_000
#: The retrograde table's work a second (``k x 2^k`` for k undrawn edges) before this solver has timed a table
#: of its own: about half what one core does (8-11 ns each, 0.17 s for 20 edges and 4.3 s for 24 undrawn).
TABLE_RATE = 5e7
_NATIVE_MAX_SIZE = _engine.MAX_SIZE  # 12 with the wide build (dnb_env._native_wide), else 9


def native_available() -> bool:
    """Whether the alpha-beta engine (the C++ extension ``dnb_env._native``) can be used."""
    return _engine.available()


def beyond_native(board) -> bool:
    """Whether ``board`` (a :class:`GameState` or a Geometry) has more boxes a side than the alpha-beta engine
    takes (12, or 9 where the wide build is missing): there only the retrograde engine solves, within its reach of undrawn edges (``engine="auto"``),
    and the agents skip the exact solves it cannot make."""
    return board.rows > _NATIVE_MAX_SIZE or board.cols > _NATIVE_MAX_SIZE


class SolverTooLarge(ValueError):
    """The position is beyond what the solver was allowed to solve (too many undrawn edges)."""


class SolverBudgetExceeded(SolverTooLarge):
    """The alpha-beta search spent its node budget before proving the value.

    ``bounds`` is ``(lo, hi)`` with ``lo <= value <= hi`` as far as the search got (margin of the remaining
    boxes for the player to move), ``nodes`` the budget that was spent."""

    def __init__(self, message: str, bounds: tuple[int, int] | None = None, nodes: int = 0):
        super().__init__(message)
        self.bounds = bounds
        self.nodes = nodes


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
    """Exact values of positions; positions with more than ``max_undrawn`` undrawn edges are refused with
    :class:`SolverTooLarge`.

    Args:
        max_undrawn: largest number of undrawn edges accepted; ``None``: 40 for ``alphabeta``, 24 for
            ``retrograde`` (which enumerates 2^k int8 entries and takes at most 30).
        engine: ``"auto"`` (alpha-beta when the C++ extension is built and the board is at most 12x12),
            ``"alphabeta"`` or ``"retrograde"`` (see the module docstring).
        node_limit: alpha-beta nodes per call (``0``: unlimited); past it :class:`SolverBudgetExceeded`.
        tt_mb: largest size of the alpha-beta transposition table in megabytes (grown on demand); one
            table per board size, kept across calls.
        threads: alpha-beta threads per search, sharing the table (searches of 24 or more undrawn edges;
            node budgets count each thread's nodes).
    """

    def __init__(self, max_undrawn: int | None = None, *, engine: str = "auto",
                 node_limit: int = DEFAULT_NODE_LIMIT, tt_mb: float = 64.0, threads: int = 1):
        if engine not in ENGINES:
            raise ValueError(f"engine must be one of {ENGINES}, got {engine!r}")
        if engine == "alphabeta" and not native_available():
            raise ImportError("engine='alphabeta' needs the C++ extension dnb_env._native, which is not built "
                              "(reinstall with a C++17 compiler, e.g. `pip install -e .`)")
        if node_limit < 0:
            raise ValueError(f"node_limit must be >= 0 (0 = unlimited), got {node_limit}")
        self.engine = engine
        self.node_limit = int(node_limit)
        self.tt_mb = float(tt_mb)
        if isinstance(threads, bool) or not isinstance(threads, int) or not 1 <= threads <= 64:
            raise ValueError(f"threads must be an int in 1..64, got {threads!r}")
        self.threads = threads
        default_engine = "alphabeta" if engine != "retrograde" and native_available() else "retrograde"
        # a board too large for alpha-beta falls back to the retrograde table, which holds 2^k values: the
        # alpha-beta default of max_undrawn would ask for tens of gigabytes there
        self._fallback_undrawn = DEFAULT_MAX_UNDRAWN["retrograde"] if max_undrawn is None else min(max_undrawn, 30)
        if max_undrawn is None:
            max_undrawn = DEFAULT_MAX_UNDRAWN[default_engine]
        top = 30 if default_engine == "retrograde" else 2 * _NATIVE_MAX_SIZE * (_NATIVE_MAX_SIZE + 1)
        if not 0 <= max_undrawn <= top:
            raise ValueError(f"max_undrawn must be in 0..{top} for the {default_engine} engine, got {max_undrawn}")
        self.max_undrawn = max_undrawn
        self._table: _Table | None = None
        self._table_rate = MeasuredRate(TABLE_RATE)  # retrograde work a second, measured on this solver's tables
        self._native: dict[tuple[int, int], object] = {}
        self._deadline: float | None = None  # set_deadline: a time.perf_counter() time

    def set_deadline(self, seconds: float | None) -> None:
        """Stop every alpha-beta query still searching ``seconds`` from now (a move's clock), as if its node
        budget were spent (:class:`SolverBudgetExceeded`); ``None`` lifts the deadline. The search reads
        the clock every 1,024 nodes; a query started past the deadline stops at once. The retrograde engine
        cannot stop a table half built: it does not start one (:class:`SolverBudgetExceeded`) that it does
        not expect to finish before the deadline, at the rate it measured on its earlier tables (at first
        :data:`TABLE_RATE`)."""
        if seconds is not None and not seconds >= 0:
            raise ValueError(f"seconds must be >= 0 or None, got {seconds!r}")
        self._deadline = None if seconds is None else time.perf_counter() + seconds
        for native in self._native.values():
            native.set_deadline(-1.0 if seconds is None else seconds)

    # ------------------------------------------------------------------ engine plumbing
    def _uses_alphabeta(self, state: GameState) -> bool:
        if self.engine == "retrograde" or not native_available():
            return False
        if self.engine == "alphabeta" and beyond_native(state):
            raise SolverTooLarge(f"the alpha-beta engine takes boards of at most {_NATIVE_MAX_SIZE}x"
                                 f"{_NATIVE_MAX_SIZE} boxes, got {state.geometry.name}")
        return not beyond_native(state)

    def _check_size(self, state: GameState, engine: str) -> None:
        k = state.num_actions - state.edges.bit_count()
        limit = self.max_undrawn
        if engine == "retrograde" and self.engine == "auto" and native_available():
            limit = min(limit, self._fallback_undrawn)
        if k > limit:
            what = "enumerates at most" if engine == "retrograde" else "is allowed at most"
            raise SolverTooLarge(f"position has {k} undrawn edges; this solver ({engine}) {what} "
                                 f"{limit} (max_undrawn)")

    def past_deadline(self) -> bool:
        """Whether the deadline of :meth:`set_deadline` has passed (False without one)."""
        return self._deadline is not None and time.perf_counter() >= self._deadline

    def _exact(self, state: GameState):
        key = (state.rows, state.cols)
        solver = self._native.get(key)
        if solver is None:
            solver = self._native[key] = _engine.module(state.rows, state.cols).ExactSolver(
                state.rows, state.cols, tt_mb=self.tt_mb, threads=self.threads)
            if self._deadline is not None:
                solver.set_deadline(max(0.0, self._deadline - time.perf_counter()))
        return solver

    def _table_for(self, state: GameState) -> _Table:
        t = self._table
        if t is not None and t.covers(state):
            return t
        self._check_size(state, "retrograde")
        k = state.num_actions - state.edges.bit_count()
        work = k * 2.0 ** k
        if self._deadline is not None and work > self._table_rate.work_in(self._deadline - time.perf_counter()):
            raise SolverBudgetExceeded(f"the retrograde table of a position with {k} undrawn edges would not be "
                                       "built before the deadline (set_deadline)")
        start = time.perf_counter()
        self._table = _Table(state)
        spent = time.perf_counter() - start
        if spent >= 0.02:  # a small table's fixed costs would understate the rate
            self._table_rate.add(work, spent)
        return self._table

    def _budget_error(self, state: GameState, what: str, bounds=None) -> SolverBudgetExceeded:
        k = state.num_actions - state.edges.bit_count()
        extra = f"; the value lies in [{bounds[0]}, {bounds[1]}]" if bounds else ""
        if self.past_deadline():
            return SolverBudgetExceeded(f"{what} of a position with {k} undrawn edges was not found before the "
                                        f"deadline (set_deadline){extra}", bounds=bounds, nodes=self.node_limit)
        return SolverBudgetExceeded(
            f"{what} of a position with {k} undrawn edges needs more than node_limit={self.node_limit} "
            f"alpha-beta nodes{extra}", bounds=bounds, nodes=self.node_limit)

    # ------------------------------------------------------------------ queries
    def value(self, state: GameState) -> int:
        """Exact margin (boxes) the player to move gets over the opponent from the unclaimed boxes."""
        if self._uses_alphabeta(state):
            lo, hi = self.bounds(state)
            if lo != hi:
                raise self._budget_error(state, "the value", (lo, hi))
            return lo
        t = self._table_for(state)
        return int(t.values[t.key(state)])

    def bounds(self, state: GameState) -> tuple[int, int]:
        """``(lo, hi)`` with ``lo <= value(state) <= hi``: equal when solved within the node budget (the
        alpha-beta engine's best found so far otherwise; the retrograde engine is always exact)."""
        if self._uses_alphabeta(state):
            self._check_size(state, "alphabeta")
            return self._exact(state).value(state.edges, node_limit=self.node_limit)
        v = self.value(state)
        return v, v

    def move_values(self, state: GameState) -> dict[int, int]:
        """For each legal move, the exact margin for the player to move if it is played (boxes it completes
        included)."""
        if self._uses_alphabeta(state):
            self._check_size(state, "alphabeta")
            out = self._exact(state).move_values(state.edges, node_limit=self.node_limit)
            if out is None:
                raise self._budget_error(state, "the move values")
            return out
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

    def best_moves(self, state: GameState) -> tuple[int, frozenset[int]]:
        """``(value, moves)``: the exact value of ``state`` (as :meth:`value`) and every legal move that keeps
        it. With alphabeta one null-window test per move after the value, much cheaper than
        :meth:`move_values`, which finds each move's own margin."""
        if self._uses_alphabeta(state):
            self._check_size(state, "alphabeta")
            out = self._exact(state).best_moves(state.edges, node_limit=self.node_limit)
            if out is None:
                raise self._budget_error(state, "the best moves")
            return out[0], frozenset(out[1])
        mv = self.move_values(state)
        best = max(mv.values())
        return best, frozenset(a for a, v in mv.items() if v == best)

    def game_value(self, state: GameState) -> int:
        """Exact final margin for the player to move: boxes already won included."""
        return self._owned_margin(state) + self.value(state)

    def at_least(self, state: GameState, threshold: int) -> bool:
        """Whether ``value(state) >= threshold`` (remaining boxes): one null-window search with alphabeta."""
        if self._uses_alphabeta(state):
            self._check_size(state, "alphabeta")
            r = self._exact(state).at_least(state.edges, int(threshold), node_limit=self.node_limit)
            if r is None:
                raise self._budget_error(state, f"the test value >= {threshold}")
            return r
        return self.value(state) >= threshold

    def can_win(self, state: GameState) -> bool:
        """Whether the player to move wins the game (final margin > 0, boxes already owned included) with
        best play by both."""
        return self.at_least(state, 1 - self._owned_margin(state))

    def winning_moves(self, state: GameState) -> frozenset[int]:
        """The moves that keep a won game won (final margin > 0 with best play after them); empty when the
        player to move cannot win. One null-window search per move (plus one for the position)."""
        if not self.can_win(state):
            return frozenset()
        return frozenset(a for a in state.legal_actions() if self.keeps_win(state, a))

    def winning_move(self, state: GameState) -> int | None:
        """A move that keeps a won game won, or None when the player to move cannot win: the move that proved
        the win in the one null-window search of :meth:`can_win` (the search's table gives it), so it costs
        what that test costs. With the retrograde engine: the smallest of :meth:`winning_moves`."""
        if not self._uses_alphabeta(state):
            won = self.winning_moves(state)
            return min(won) if won else None
        self._check_size(state, "alphabeta")
        move = self._exact(state).proving_move(state.edges, 1 - self._owned_margin(state),
                                               node_limit=self.node_limit)
        if move is None:
            raise self._budget_error(state, "the winning move")
        return None if move < 0 else move

    def keeps_win(self, state: GameState, action: int) -> bool:
        """Whether the player to move still wins after ``action`` (final margin > 0 with best play after
        it): one null-window search. False for every move of a position that is not won."""
        child = state.apply(action)
        if child.current_player == state.current_player:
            return self.can_win(child)
        # the opponent moves next: the win is kept when the opponent cannot reach a draw
        return not self.at_least(child, -self._owned_margin(child))

    def safe_phase_values(self, state: GameState, positions: int, sacrifices: int = 0) -> dict[int, int] | None:
        """The safe-phase search of :func:`dnb_env.features.safe_phase_values` in C++ (alpha-beta engine
        only): ``{action: margin}`` for the safe and capturing moves, ``{}`` without a safe move, None past
        ``positions`` positions or when an end of the safe phase needs more than ``node_limit`` nodes or has
        more than ``max_undrawn`` undrawn edges (not searched, as :meth:`value` refuses such a position).
        ``sacrifices`` > 0: the players may also make that many sacrifices between them while safe moves
        are left, each handing over at most two boxes, and such sacrifices get values too."""
        if not self._uses_alphabeta(state):
            raise SolverTooLarge("the safe-phase search runs in the native alpha-beta engine only")
        if positions < 1:
            raise ValueError(f"positions must be >= 1, got {positions}")
        if isinstance(sacrifices, bool) or not isinstance(sacrifices, int) or sacrifices < 0:
            raise ValueError(f"sacrifices must be an int >= 0, got {sacrifices!r}")
        limit = self.node_limit or 2 ** 63
        if sacrifices == 0:
            return self._exact(state).safe_phase_values(state.edges, positions, limit, max_undrawn=self.max_undrawn)
        return self._exact(state).sacrifice_phase_values(state.edges, sacrifices, positions, limit,
                                                         max_undrawn=self.max_undrawn)

    def outcome(self, state: GameState) -> int:
        """+1, 0 or -1: the game's result for the player to move under optimal play (one or two
        null-window searches with alphabeta)."""
        have = self._owned_margin(state)
        if self.at_least(state, 1 - have):
            return 1
        return 0 if self.at_least(state, -have) else -1

    def stats(self) -> dict:
        """Alpha-beta search counters summed over this solver's boards: ``nodes``, ``tt_hits``, ``tt_cuts``
        and ``rules`` (how often each reduction fired); zeros with the retrograde engine."""
        total = {"nodes": 0, "tt_hits": 0, "tt_cuts": 0, "rules": {}}
        for native in self._native.values():
            st = native.stats()
            for k in ("nodes", "tt_hits", "tt_cuts"):
                total[k] += st[k]
            for k, v in st["rules"].items():
                total["rules"][k] = total["rules"].get(k, 0) + v
        return total

    @staticmethod
    def _owned_margin(state: GameState) -> int:
        s0, s1 = state.scores
        return s0 - s1 if state.current_player == 0 else s1 - s0

