"""The frontier move: a safe move that wins Nimstring, checked by the exact solver.

5x5 games are decided at 40-46 undrawn edges, beyond the exact solver's move reach (38). There the fight is
over who must open the first long chain, and the player who wins **Nimstring** (the same game played for the
last move, :class:`dnb_env._native.Nimstring`) gets control. :class:`NimstringMove` finds a safe move that
wins Nimstring (``first_win`` over the moves in the order given, stopping at the first that wins) and the
exact solver checks that the move keeps a won game won (:meth:`dnb_env.solver.Solver.keeps_win`): one that
wins Nimstring but loses on boxes is passed over for the next that wins Nimstring, up to ``checks`` moves,
and is reported in :attr:`NimstringChoice.losing`. Where no move that wins Nimstring keeps the win, the
solver's win test of the position itself (:meth:`dnb_env.solver.Solver.winning_move`) may supply a move that
does (:attr:`NimstringChoice.solved`). ``prsboxes`` (rule 3) and the network agents' search
(:class:`agents.search.agent.MCTSAgent`, ``nimstring_edges``) both play by it.

    finder = NimstringMove(edges=44)
    if finder.applies(state):
        safe = safe_moves(state)                        # [] when a box is on offer
        choice = finder.choose(state, safe_groups(state, safe), rng)
        choice.move, choice.kept, choice.losing         # the move, the solver's verdict, the moves it refused

With ``widen=True`` the moves are searched side by side with a growing budget instead of one after the other,
so that a search that does not finish still tells the moves it showed to lose Nimstring from the others
(:attr:`NimstringChoice.open`). On a clock, ``choose(..., search_until=t1, check_until=t2)`` (``time.perf_counter()`` times) bounds the
Nimstring search and the solver's checks instead of the position and node budgets.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

import numpy as np

from baselines.solver import on_clock
from dnb_env import native
from dnb_env.analysis import MoveClass, move_classes
from dnb_env.core import GameState
from dnb_env.features import long_chain_rule_moves
from dnb_env.solver import Solver, SolverBudgetExceeded, native_available

__all__ = ["NimstringMove", "NimstringChoice", "NIMSTRING_EDGES", "NIMSTRING_POSITIONS", "NIMSTRING_VERIFY",
           "NIMSTRING_CHECKS", "MAX_EDGES", "nimstring_zone", "check_threads", "safe_moves", "safe_groups",
           "search_order"]

#: Safe moves are chosen by their Nimstring result within this many undrawn edges (5x5 steps 16 on).
NIMSTRING_EDGES = 44
#: The Nimstring search's positions a move (about half a second on 5x5 when it does not finish).
NIMSTRING_POSITIONS = 200_000
#: The exact solver's nodes for each check of a move that wins Nimstring.
NIMSTRING_VERIFY = 500_000
#: The most moves that win Nimstring the exact solver checks in a move.
NIMSTRING_CHECKS = 4
#: With ``widen``, the positions each move gets in the first round (four times as many each round after).
WIDEN_FIRST = 2_000
#: With two threads, the seconds each native call runs before the thread looks whether the other has finished
#: (the tables are kept, so a call goes on where the last one stopped).
SLICE = 0.05
#: The Nimstring search takes boards of at most this many edges.
MAX_EDGES = 64
#: The auto zone (-1) of :func:`nimstring_zone` covers at most this fraction of a board's edges (44 of 5x5's 60).
ZONE_FRACTION = (11, 15)
#: When no move that wins Nimstring keeps the win, the share of the time left that the exact solver's win test
#: of the position gets to find a move that does (the rest is the caller's fallback's).
SOLVE_SHARE = 0.85
_UNBOUNDED = 1 << 62


def nimstring_zone(setting: int, num_actions: int) -> int:
    """A ``nimstring_edges`` option resolved for a board of ``num_actions`` edges: ``-1`` (auto) is
    ``min(NIMSTRING_EDGES, num_actions * 11 // 15)`` undrawn edges (44 on 5x5, 29 on 4x4) on a board of at
    most :data:`MAX_EDGES` edges when the C++ extension is built, else 0; other values as given (0 = off).
    ValueError for anything but an int >= -1."""
    if isinstance(setting, bool) or not isinstance(setting, int) or setting < -1:
        raise ValueError(f"nimstring_edges must be -1 (auto), 0 (off) or a number of undrawn edges, got {setting!r}")
    if setting != -1:
        return setting
    if num_actions > MAX_EDGES or not native_available():
        return 0
    p, q = ZONE_FRACTION
    return min(NIMSTRING_EDGES, num_actions * p // q)


def check_threads(threads) -> int:
    """``threads`` when it is 1 or 2 (the ``nimstring_threads`` option), else a ValueError."""
    if isinstance(threads, bool) or threads not in (1, 2):
        raise ValueError(f"nimstring_threads must be 1 or 2, got {threads!r}")
    return threads


def safe_moves(state: GameState) -> list[int]:
    """The safe moves of ``state`` (giving no box away), or ``[]`` when a box is on offer (then who takes
    what decides, not Nimstring)."""
    cls = move_classes(state)
    if (cls == MoveClass.SCORING).any():
        return []
    return [int(a) for a in np.flatnonzero(cls == MoveClass.SAFE)]


def safe_groups(state: GameState, safe: list[int]) -> list[list[int]]:
    """``safe`` in two groups, the moves the long chain rule likes for the mover first
    (:func:`dnb_env.features.long_chain_rule_moves`: dots + long chains even for the first player), then the
    others."""
    liked = long_chain_rule_moves(state)
    return [[a for a in safe if liked[a]], [a for a in safe if not liked[a]]]


def search_order(groups: list[list[int]], rng: np.random.Generator) -> list[int]:
    """The order in which :meth:`NimstringMove.choose` tries the moves of ``groups``: group by group, each in
    random order by ``rng``."""
    return [g[i] for g in groups for i in rng.permutation(len(g))]


@dataclass(frozen=True)
class NimstringChoice:
    """What :meth:`NimstringMove.choose` found.

    Attributes:
        move: the first move found that wins Nimstring and was not shown to lose on boxes; where every move
            found was shown to lose (the position may be lost), the first of them; None when no move of the
            groups wins Nimstring or the search did not finish
        kept: the solver's verdict on ``move``: True keeps a won game won, False does not (nor did any move
            found), None unchecked (no check asked, or past its budget)
        losing: the moves found that win Nimstring but were shown to lose on boxes, in the order found
        open: with ``widen``, when no move was found: the moves the search neither showed to win nor to lose
            Nimstring within its budget, in the order tried (the others were shown to lose it)
        solved: ``move`` came from the exact solver's win test of the position itself, made when no move
            that wins Nimstring keeps the win (none wins it, or the check refused every one found): a move
            that keeps the win (``kept`` True), safe or not, which need not win Nimstring
    """

    move: int | None
    kept: bool | None = None
    losing: tuple[int, ...] = ()
    open: tuple[int, ...] = ()
    solved: bool = False


class NimstringMove:
    """The safe move that wins Nimstring, solver-checked (module docstring), within ``edges`` undrawn edges
    on a board of at most :data:`MAX_EDGES` edges (0: never).

    Args:
        edges: undrawn edges within which :meth:`applies` (0: off)
        positions: the Nimstring search's position budget a move (without a clock)
        verify: the exact solver's node budget for each check (without a clock); 0: no check
        checks: the most moves checked in a move
        table_mb: megabytes of the Nimstring search's table, kept from move to move until :meth:`clear`
        widen: search the moves with a widening budget (each move alone with :data:`WIDEN_FIRST` positions,
            then four times as many for every move still open, ...) instead of one after the other, so that
            a search that does not finish still tells which moves lose Nimstring (:attr:`NimstringChoice.open`)
        threads: 1, or 2 to search on a clock in two threads (two tables and two solvers): each takes every
            other move of the order, searches them in turn and checks a move it finds while the other thread
            searches on, within the whole move's time, with no limit of ``checks``; the first move shown to keep
            the win stops both (without a clock, and with ``widen``, one thread)
    """

    def __init__(self, edges: int = NIMSTRING_EDGES, positions: int = NIMSTRING_POSITIONS,
                 verify: int = NIMSTRING_VERIFY, checks: int = NIMSTRING_CHECKS, table_mb: float = 64.0,
                 widen: bool = False, threads: int = 1):
        check_threads(threads)
        if edges < 0 or positions < 1 or verify < 0 or checks < 1:
            raise ValueError(f"nimstring_edges and nimstring_verify must be >= 0 (0: off), nimstring_positions and"
                             f" checks >= 1, got {edges}, {verify}, {positions} and {checks}")
        self.edges, self.positions, self.verify, self.checks = edges, positions, verify, checks
        self.table_mb = table_mb
        self.widen = widen
        self.threads = threads
        self._tables: dict[tuple[int, int, int], object] = {}  # (rows, cols, thread) -> its search, kept within a game
        self._verifiers: dict[int, Solver] = {}  # thread -> its solver

    def applies(self, state: GameState) -> bool:
        """At most ``edges`` undrawn edges, a board of at most :data:`MAX_EDGES` edges and the C++ extension
        built."""
        undrawn = state.num_actions - state.edges.bit_count()
        return undrawn <= self.edges and state.num_actions <= MAX_EDGES and native_available()

    def clear(self) -> None:
        """Forget the Nimstring tables (a new game)."""
        for table in self._tables.values():
            table.clear()

    def _table(self, state: GameState, thread: int = 0):
        key = (state.rows, state.cols, thread)
        nim = self._tables.get(key)
        if nim is None:
            nim = self._tables[key] = native._require().Nimstring(state.rows, state.cols, table_mb=self.table_mb)
        return nim

    def _verifier(self, thread: int = 0) -> Solver:
        solver = self._verifiers.get(thread)
        if solver is None:  # the Nimstring zone's positions: at most 64 edges
            solver = self._verifiers[thread] = Solver(max_undrawn=min(self.edges, MAX_EDGES), node_limit=self.verify)
        return solver

    def choose(self, state: GameState, groups: list[list[int]], rng: np.random.Generator, *,
               search_until: float | None = None, check_until: float | None = None,
               scores=None) -> NimstringChoice:
        """A move that wins Nimstring for the mover, of the first group that has one (each group in random
        order by ``rng``), checked by the solver (:class:`NimstringChoice`). The Nimstring search stops at
        ``search_until`` (a ``time.perf_counter()`` time) when given, else after ``positions`` positions; each
        check at ``check_until`` when given, else after ``verify`` nodes. ``scores`` (one number per action, such
        as a network's prior): when given, the moves of all the groups are tried by descending score instead
        (ties in the random order), so that the move found is the highest-scoring one that wins Nimstring."""
        moves = search_order(groups, rng)
        if scores is not None:
            moves = sorted(moves, key=lambda a: -float(scores[a]))  # stable: ties keep the random order
        if self.threads == 2 and check_until is not None and not self.widen:
            return self._parallel(state, moves, check_until)
        nim = self._table(state)
        live = list(moves)  # with widen: the moves not settled yet (the open ones when the search stops)
        settled: list[bool] = []  # _in_order: [True] once no move left wins Nimstring
        found = self._widening(state, nim, live, search_until) if self.widen else \
            self._in_order(state, nim, moves, search_until, settled=settled)
        first, losing = None, []
        for _, move in zip(range(self.checks if self.verify else 1), found):
            first = move if first is None else first
            kept = self._verified(state, move, check_until)
            if kept is not False:  # kept, or past the check's budget: play it
                return NimstringChoice(move, kept, tuple(losing))
            losing.append(move)  # it wins Nimstring but loses on boxes
        if losing or settled:  # no Nimstring-winning move keeps the win: the solver may find one that does
            solved = self._solved(state, check_until)
            if solved is not None:
                return NimstringChoice(solved, True, tuple(losing), solved=True)
        return NimstringChoice(first, False if first is not None else None, tuple(losing),
                               tuple(live) if self.widen and first is None else ())

    def _solved(self, state: GameState, until: float | None) -> int | None:
        """A move that keeps a won game won by the exact solver's win test of ``state`` itself
        (:meth:`dnb_env.solver.Solver.winning_move`), within :data:`SOLVE_SHARE` of the time left before
        ``until``, or ``verify`` nodes; None when the position is not won, the test does not finish, or no check
        is asked."""
        if not self.verify:
            return None
        solver = self._verifier()
        seconds = None if until is None else SOLVE_SHARE * max(0.0, until - time.perf_counter())
        try:
            with on_clock(solver, seconds):
                return solver.winning_move(state)
        except SolverBudgetExceeded:
            return None

    def _in_order(self, state: GameState, nim, moves: list[int], search_until: float | None,
                  stop: threading.Event | None = None, settled: list[bool] | None = None):
        """The moves that win Nimstring, in the order of ``moves``: ``first_win`` over the moves after the last
        one found, within ``positions`` positions a call or until ``search_until``. With ``stop`` (on a clock
        only) each native call runs at most :data:`SLICE` seconds and the search ends once ``stop`` is set.
        ``settled`` gets True appended when the search ends because no move left wins Nimstring."""
        budget = self.positions if search_until is None else _UNBOUNDED
        while True:
            if stop is not None and stop.is_set():
                return
            left = None if search_until is None else max(0.0, search_until - time.perf_counter())
            seconds = left if stop is None else min(left, SLICE)
            found = nim.first_win(state.edges, moves, budget, keep=True, seconds=seconds)
            if found is None and stop is not None and seconds < left:
                continue  # a slice ended before the search did: it goes on where it stopped
            if found is None or found < 0:
                if found is not None and settled is not None:
                    settled.append(True)
                return
            yield found
            moves = moves[moves.index(found) + 1:]

    def _widening(self, state: GameState, nim, live: list[int], search_until: float | None):
        """The moves that win Nimstring, found with a widening budget: every move of ``live`` alone with ``b``
        positions (the table kept, so a move's search goes on where the last round stopped), ``b`` from
        :data:`WIDEN_FIRST` times four a round, until the position budget (the sum of the rounds' budgets) or
        ``search_until``. A move settled either way leaves ``live``."""
        b, spent = WIDEN_FIRST, 0
        while live:
            for m in list(live):
                if search_until is None:
                    if spent >= self.positions:
                        return
                    budget, left = min(b, self.positions - spent), None
                    spent += budget
                else:
                    left = search_until - time.perf_counter()
                    if left <= 0:
                        return
                    budget = b
                found = nim.first_win(state.edges, [m], budget, keep=True, seconds=left)
                if found is None:
                    continue  # not settled within b: open
                live.remove(m)
                if found == m:  # else shown to lose Nimstring
                    yield m
            b *= 4

    def _verified(self, state: GameState, move: int, until: float | None, thread: int = 0) -> bool | None:
        """Whether ``move`` keeps the game won by the exact solver of ``thread`` (None: past its budget, or
        unchecked)."""
        if not self.verify:
            return None
        solver = self._verifier(thread)
        seconds = None if until is None else max(0.0, until - time.perf_counter())
        try:
            with on_clock(solver, seconds):
                return solver.keeps_win(state, move)
        except SolverBudgetExceeded:
            return None

    def _parallel(self, state: GameState, moves: list[int], until: float) -> NimstringChoice:
        """``choose`` in two threads until ``until``: thread k searches ``moves[k::2]`` in turn and checks each move
        it finds (so that one thread checks while the other searches); a move shown to keep the win stops both.
        The move played: the first in ``moves``' order shown to keep the win, else the first not shown to lose
        (unchecked), else, when both searches ended, the exact solver's winning move (:meth:`_solved`), else the
        first found (every one shown to lose)."""
        stop = threading.Event()
        rank = {m: i for i, m in enumerate(moves)}
        found: dict[int, bool | None] = {}  # move -> the check's verdict
        failed: list[BaseException] = []
        settled: list[list[bool]] = [[], []]  # thread k's search ended with no move left that wins Nimstring

        def check(move: int, k: int) -> bool | None:
            """The check of ``move`` by thread ``k``'s solver in slices of :data:`SLICE` (its table kept), until it
            answers, ``until`` or ``stop``."""
            while not stop.is_set():
                left = until - time.perf_counter()
                if left <= 0:
                    return None
                verdict = self._verified(state, move, time.perf_counter() + min(left, SLICE), k)
                if verdict is not None:
                    return verdict
            return None

        def work(k: int) -> None:
            try:
                for move in self._in_order(state, self._table(state, k), moves[k::2], until, stop, settled[k]):
                    verdict = check(move, k) if self.verify else None
                    found[move] = verdict
                    if verdict is not False:  # kept (the other thread stops), or unchecked (no check, or time up)
                        if verdict:
                            stop.set()
                        return
            except BaseException as e:  # raised in the caller's thread below
                failed.append(e)
                stop.set()

        workers = [threading.Thread(target=work, args=(k,), daemon=True) for k in (0, 1)]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        if failed:
            raise failed[0]
        order = sorted(found, key=rank.__getitem__)
        losing = tuple(m for m in order if found[m] is False)
        for wanted in (True, None):
            for m in order:
                if found[m] is wanted:
                    return NimstringChoice(m, wanted, losing)
        if all(settled):  # no Nimstring-winning move keeps the win: the solver may find one that does
            solved = self._solved(state, until)
            if solved is not None:
                return NimstringChoice(solved, True, losing, solved=True)
        return NimstringChoice(order[0] if order else None, False if order else None, losing)
