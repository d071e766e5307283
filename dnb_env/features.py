"""Computed features of the chain structure still to come, for the encoders that give them to a network.

In the 5x5 midgame the winner is decided by who runs out of safe moves first and what the board looks
like then: how many long chains and loops, and who must open the first. These features compute that
from the position instead of asking a network to infer it from the drawn edges.

* :func:`safe_phase_values`: for each move, the margin the mover gets if both players draw only safe
  moves (no box gets its third side) and free captures while any safe move is left, and play exactly
  once none is (the exact solver scores the end of the safe phase). A search over safe moves only, with
  a transposition table; sacrifices before the safe phase ends are the one thing it leaves out. With
  ``sacrifices=k`` the players may also make k short sacrifices between them (each handing over at most
  two boxes) while safe moves are left, and those sacrifices get values too: an alpha-beta search in C++.
* :func:`nimstring_value` and :func:`nimstring_move_wins`: the position's value in Nimstring (the game
  played for the last move: a player who completes a box moves again, a player who cannot move loses),
  whose winner is the player who gets control, and which moves win it. A search of Grundy values over the
  independent parts of the board, cut by the game's loony and capture rules; it reaches positions with far
  more safe moves than the safe-phase searches (C++ ``Nimstring`` in ``dnb_env/csrc/nimstring.hpp``, boards
  of at most 64 edges; the Python search here is its reference).
* :func:`long_chain_rule_moves`: the safe moves after which Berlekamp's long chain rule favours the
  mover (dots + long chains even for the first player), the PRsBoxes heuristic.

Both are pure functions of the position; :func:`safe_phase_values` is cached per board and drawn-edge
set (the values do not depend on who owns the claimed boxes, only on the edges). With the native
backend (:mod:`dnb_env.native`) the safe-phase search runs in C++ (``ExactSolver.safe_phase_values`` in
``dnb_env/csrc/solver.hpp``, about 15 times faster); the Python search here is its reference.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import time

import numpy as np

from dnb_env import native
from dnb_env.analysis import MoveClass, components, move_classes
from dnb_env.core import GameState, geometry
from dnb_env.solver import Solver, SolverBudgetExceeded, SolverTooLarge
from dnb_env.symmetry import action_permutation, symmetries

__all__ = ["safe_phase_values", "safe_phase_value", "long_chain_rule_moves", "handout", "SAFE_PHASE_NODES",
           "SAFE_PHASE_MAX_SAFE", "SAFE_PHASE_LEAF_UNDRAWN", "SACRIFICE_BOXES", "SACRIFICE_MAX_SAFE", "SACRIFICE_DEEP_NODES",
           "SACRIFICE_WIDE_NODES", "endgame_values", "nimstring_value", "nimstring_move_wins",
           "NIMSTRING_POSITIONS", "NIMSTRING_MAX_UNDRAWN", "LOONY", "nimstring_table",
           "NimstringTable", "nimstring_deadline", "clear_caches"]

#: Positions a safe-phase search may visit before it gives up (the feature is then unavailable).
SAFE_PHASE_NODES = 20_000
#: Positions with more safe moves than this get no safe-phase values, without a search: there the search
#: runs out of its :data:`SAFE_PHASE_NODES` positions (none of about 12,000 positions of 5x5 games and
#: teacher sets with more than 20 safe moves finished in it), and giving up took some 25 ms a position,
#: the bulk of a network evaluation's time in the opening.
SAFE_PHASE_MAX_SAFE = 24
#: With sacrifices allowed, positions with more safe moves than this get no values, without a search: on
#: 1,000 held-out 5x5 positions of 26-40 undrawn edges the search with two sacrifices finished within its
#: :data:`SAFE_PHASE_NODES` positions on 8 of the 119 with 13-15 safe moves and on none of the 152 with more.
SACRIFICE_MAX_SAFE = 14
#: Positions the deep search of ``chainloop6_sac2_deep`` may visit: ten times :data:`SAFE_PHASE_NODES`, with
#: which the two-sacrifice search finishes on nearly every position within :data:`SACRIFICE_MAX_SAFE` safe
#: moves at 35-40 undrawn edges (56 of the 58 among the first 100 of ``teach5-gfar-held``, against 23).
SACRIFICE_DEEP_NODES = 200_000
#: Positions the four-sacrifice search of ``chainloop6_sac4`` may visit: a hundred times
#: :data:`SAFE_PHASE_NODES`. On 300 midgame positions of 5x5 games at 36 undrawn edges it gives values on 289,
#: as many as the two-sacrifice search within :data:`SACRIFICE_DEEP_NODES` (``benchmarks/sacrifice_rules.py``).
SACRIFICE_WIDE_NODES = 2_000_000
#: Exact-solver nodes allowed for one end-of-safe-phase position.
_LEAF_NODES = 500_000
#: An end of the safe phase with more undrawn edges than this is beyond the searches' exact solver (its
#: ``max_undrawn``; past 12x12, where it enumerates, 24): the search gives no values then, without solving it,
#: in C++ as in the Python reference. No such end exists on boards of at most 5x5 boxes (at most 37 undrawn
#: edges there); on larger boards they fill the middle game (some 90 undrawn edges on 9x9), whose ends took
#: seconds a position to solve before the limit, so there the safe-phase values come only late in a game.
SAFE_PHASE_LEAF_UNDRAWN = 40


class _OutOfBudget(Exception):
    pass


@functools.lru_cache(maxsize=1)
def _solver() -> Solver:
    # its default max_undrawn is SAFE_PHASE_LEAF_UNDRAWN (tested); passing it would raise the enumerating
    # engine's reach past 12x12 from 24 to 30 undrawn edges (tables of 2^30 entries)
    return Solver(node_limit=_LEAF_NODES)


def _claimed(state: GameState) -> int:
    return (state.owner0 | state.owner1).bit_count()


#: The most boxes a sacrifice of the safe-phase search with sacrifices may hand over.
SACRIFICE_BOXES = 2


def handout(state: GameState, action: int) -> int:
    """Boxes the opponent can take in a row after the conceding move ``action`` (counted up to
    ``SACRIFICE_BOXES + 1``)."""
    geo = state.geometry
    edges = state.edges | 1 << action

    def undrawn(box: int) -> list[int]:
        return [e for e in geo.box_sides[box] if not edges >> e & 1]

    taken = 0
    for start in geo.action_boxes[action]:
        if len(undrawn(start)) != 1:
            continue
        box, came = start, action
        while True:  # walk the run the opponent can take: each box's last side leads to the next box
            taken += 1
            if taken > SACRIFICE_BOXES:
                return taken
            sides = [e for e in undrawn(box) if e != came]
            if not sides:
                break
            nxt = [b for b in geo.action_boxes[sides[0]] if b != box]
            if not nxt or nxt[0] == start or len(undrawn(nxt[0])) != 2:
                break
            box, came = nxt[0], sides[0]
    return taken


class _SafePhase:
    """One safe-phase search: values of positions (by drawn edges, and sacrifices left) for their mover,
    remaining boxes. A plain minimax, the reference of the C++ searches."""

    def __init__(self, nodes: int):
        self.table: dict[tuple[int, int], int] = {}
        self.budget = nodes

    def moves(self, state: GameState, left: int) -> list[tuple[int, int]]:
        """(action, sacrifices left after it) for the moves of the phase."""
        classes = move_classes(state)
        out = [(int(a), left) for a in np.flatnonzero((classes == MoveClass.SAFE) | (classes == MoveClass.SCORING))]
        if left:
            out += [(int(a), left - 1) for a in np.flatnonzero(classes == MoveClass.CONCEDING)
                    if handout(state, int(a)) <= SACRIFICE_BOXES]
        return out

    def value(self, state: GameState, left: int = 0) -> int:
        key = (state.edges, left)
        hit = self.table.get(key)
        if hit is not None:
            return hit
        self.budget -= 1
        if self.budget < 0:
            raise _OutOfBudget
        if state.is_terminal():
            v = 0
        else:
            classes = move_classes(state)
            if not (classes == MoveClass.SAFE).any():
                try:
                    v = _solver().value(state)
                except (SolverBudgetExceeded, SolverTooLarge):
                    raise _OutOfBudget from None
            else:
                v = max(self.after(state, a, after) for a, after in self.moves(state, left))
        self.table[key] = v
        return v

    def after(self, state: GameState, action: int, left: int = 0) -> int:
        """The mover's margin (remaining boxes) if ``action`` is played and the safe phase follows, with
        ``left`` sacrifices left after it."""
        child = state.apply(action)
        if child.current_player == state.current_player:
            return _claimed(child) - _claimed(state) + self.value(child, left)
        return -self.value(child, left)


def safe_phase_values(state: GameState, nodes: int = SAFE_PHASE_NODES,
                      max_safe: int | None = SAFE_PHASE_MAX_SAFE, sacrifices: int = 0) -> np.ndarray | None:
    """float32 ``[num_actions]``: for each safe or capturing move, the margin (boxes still unclaimed) the
    mover gets when it is played and both players then draw only safe moves and captures until no safe
    move is left, the rest played exactly; NaN for the other moves (sacrifices, drawn edges). None when
    the position has no safe move or more than ``max_safe`` of them (None: no such limit; with sacrifices
    at most :data:`SACRIFICE_MAX_SAFE`), or the search
    needs more than ``nodes`` positions or an end position is beyond the exact solver's budget.

    ``sacrifices`` > 0: the players may also make that many sacrifices between them while safe moves are
    left, each handing over at most :data:`SACRIFICE_BOXES` boxes; such a sacrifice at the root uses one
    and gets a value too (the native backend only; the Python reference is for tests)."""
    if isinstance(sacrifices, bool) or not isinstance(sacrifices, int) or sacrifices < 0:
        raise ValueError(f"sacrifices must be an int >= 0, got {sacrifices!r}")
    if max_safe is not None and sacrifices:
        max_safe = min(max_safe, SACRIFICE_MAX_SAFE)
    if max_safe is not None and np.count_nonzero(move_classes(state) == MoveClass.SAFE) > max_safe:
        return None
    # searched in the board's canonical orientation, so that a search cut by its budget is cut in every
    # orientation of the position alike (the order it visits positions in depends on the orientation)
    perm, edges = _canonical_edges(state.rows, state.cols, state.edges)
    out = _values(state.rows, state.cols, edges, nodes, native.handles(None, state.geometry), sacrifices)
    return None if out is None else np.array(out, dtype=np.float32)[perm]


@functools.lru_cache(maxsize=1 << 18)
def _canonical_edges(rows: int, cols: int, edges: int) -> tuple[np.ndarray, int]:
    """``(perm, image)``: the smallest image of the edge set ``edges`` under the board's symmetries and the
    action permutation that maps onto it (move ``a`` of the position is move ``perm[a]`` of the image)."""
    best = None
    for sym in symmetries(rows, cols):
        perm = action_permutation(sym, rows, cols)
        image = sum(1 << int(perm[a]) for a in range(len(perm)) if edges >> a & 1)
        if best is None or image < best[1]:
            best = (perm, image)
    return best


@functools.lru_cache(maxsize=1 << 18)
def _values(rows: int, cols: int, edges: int, nodes: int, in_cpp: bool, sacrifices: int = 0) -> tuple | None:
    state = _drawn(rows, cols, edges)
    if in_cpp:
        found = _solver().safe_phase_values(state, nodes, sacrifices)
        # None (over budget) or {} (no safe move)
        return _per_move(state, found) if found else None
    return _reference_values(state, nodes, [float("nan")] * state.num_actions, sacrifices)


def _drawn(rows: int, cols: int, edges: int) -> GameState:
    # the searches' values depend on the drawn edges only: any order of drawing them gives the same answer
    return GameState.from_actions(rows, cols, [a for a in range(edges.bit_length()) if edges >> a & 1])


def _per_move(state: GameState, found: dict) -> tuple:
    # {move: value} as a tuple over every action, NaN for the others
    out = [float("nan")] * state.num_actions
    for a, v in found.items():
        out[a] = float(v)
    return tuple(out)


def _reference_values(state: GameState, nodes: int, out: list, sacrifices: int = 0) -> tuple | None:
    """The Python reference of the search (the C++ ones in ``solver.hpp`` are tested against it)."""
    if not (move_classes(state) == MoveClass.SAFE).any():
        return None
    search = _SafePhase(nodes)
    try:
        for a, left in search.moves(state, sacrifices):
            out[a] = float(search.after(state, a, left))
    except _OutOfBudget:
        return None
    return tuple(out)


def safe_phase_value(state: GameState, nodes: int = SAFE_PHASE_NODES, sacrifices: int = 0) -> float | None:
    """The best of :func:`safe_phase_values` (the mover's margin over the unclaimed boxes), or None."""
    values = safe_phase_values(state, nodes, sacrifices=sacrifices)
    return None if values is None else float(np.nanmax(values))


def endgame_values(state: GameState) -> np.ndarray | None:
    """float32 ``[num_actions]``: where the safe phase is over (no safe move left, the game not), each legal
    move's exact margin over the boxes still unclaimed, boxes it completes included (the solver's
    :meth:`~dnb_env.solver.Solver.move_values`, as the safe-phase searches score the positions where they
    stop); NaN on drawn edges. None while a safe move is left, or when the solver needs more than its
    budget of 500,000 nodes or cannot take the position."""
    if state.is_terminal() or (move_classes(state) == MoveClass.SAFE).any():
        return None
    out = _endgame(state.rows, state.cols, state.edges, native.handles(None, state.geometry))
    return None if out is None else np.array(out, dtype=np.float32)


@functools.lru_cache(maxsize=1 << 16)
def _endgame(rows: int, cols: int, edges: int, in_cpp: bool) -> tuple | None:
    # like _values; in_cpp keys the backend the solver runs on
    state = _drawn(rows, cols, edges)
    try:
        return _per_move(state, _solver().move_values(state))
    except SolverTooLarge:  # past the budget (SolverBudgetExceeded) or the engine's reach
        return None


def long_chain_rule_moves(state: GameState) -> np.ndarray:
    """bool ``[num_actions]``: safe moves after which the long chain rule favours the mover (the first
    player wants dots + long chains even, the second odd). The chains are found once and each safe move's
    count follows from the boxes it touches (:func:`_long_chains_after`), so that the cost grows linearly
    with the edges, not with the safe moves times the edges."""
    classes = move_classes(state)
    dots = (state.rows + 1) * (state.cols + 1)
    out = np.zeros(state.num_actions, dtype=bool)
    safe = [int(a) for a in np.flatnonzero(classes == MoveClass.SAFE)]
    for a, count in zip(safe, _long_chains_after(state, safe)):
        even = (dots + count) % 2 == 0
        out[a] = even if state.current_player == 0 else not even
    return out


def _long_chains_after(state: GameState, moves: list[int]) -> list[int]:
    """:func:`~dnb_env.analysis.long_chain_count` of ``state.apply(a)`` for each safe move ``a`` of ``moves``.

    A safe move leaves its boxes with two or more undrawn sides: one that had three joins the chains and
    loops (boxes of valence 1 or 2) and links the components at the ends of its two other undrawn sides
    (each a chain's end: a loop's boxes lead nowhere else); nothing else changes. So each count is the
    position's, less the long unopened chains so linked, plus the linked groups that are long unopened
    chains (a group closes into a loop when it has as many links as members)."""
    g = state.geometry
    edges = state.edges
    val = [4 - (edges & m).bit_count() for m in g.box_mask]
    comp_of = [-1] * g.num_boxes
    length, opened, counted = [], [], []
    for k, c in enumerate(components(state)):
        for b in c.boxes:
            comp_of[b] = k
        length.append(c.length)
        opened.append(c.opened)
        counted.append(c.kind == "chain" and not c.opened and c.length >= 3)
    base = sum(counted)
    out = []
    for a in moves:
        joined = [b for b in g.action_boxes[a] if val[b] == 3]  # valence 2 after the move
        if not joined:
            out.append(base)
            continue
        # members of the linked groups: ("box", b) for a joined box, ("comp", k) for a component
        parent: dict = {}

        def find(x):
            while parent.setdefault(x, x) != x:
                x = parent[x]
            return x

        links = []
        for b in joined:
            find(("box", b))
            for e, o in g.box_neighbours[b]:
                if e != a and not edges >> e & 1 and o >= 0 and comp_of[o] >= 0:
                    links.append((("box", b), ("comp", comp_of[o])))
        for x, y in links:
            parent[find(x)] = find(y)
        groups: dict = {}
        for x in parent:
            size, n_links, boxes, any_opened = groups.get(find(x), (0, 0, 0, False))
            if x[0] == "box":
                groups[find(x)] = (size + 1, n_links, boxes + 1, any_opened)
            else:
                groups[find(x)] = (size + 1, n_links, boxes + length[x[1]], any_opened or opened[x[1]])
        for x, _ in links:
            size, n_links, boxes, any_opened = groups[find(x)]
            groups[find(x)] = (size, n_links + 1, boxes, any_opened)
        count = base - sum(counted[x[1]] for x in parent if x[0] == "comp")
        count += sum(1 for size, n_links, boxes, any_opened in groups.values()
                     if n_links < size and not any_opened and boxes >= 3)
        out.append(count)
    return out


#: Positions a Nimstring search may evaluate before it gives up (the value is then unavailable).
NIMSTRING_POSITIONS = 200_000
#: Positions with more undrawn edges than this get no Nimstring values, without a search: there the search
#: runs out of its :data:`NIMSTRING_POSITIONS` positions (on 5x5 positions of random plausible play it
#: finished on 11 of 30 at 40 undrawn edges, 2 of 30 at 42 and none of 120 at 43-48), and giving up took
#: some 0.2 s a position.
NIMSTRING_MAX_UNDRAWN = 42
#: :func:`nimstring_value` of a loony position: one where the mover can take boxes and decline the last two
#: of them (or two pairs), so the mover wins (take them all and move, or decline and leave the move).
LOONY = -1


def nimstring_value(state: GameState, positions: int = NIMSTRING_POSITIONS,
                    max_undrawn: int | None = NIMSTRING_MAX_UNDRAWN) -> int | None:
    """The Nimstring value of the position for its mover: a Grundy number (0: the mover loses, that is
    the other player gets control), or :data:`LOONY` (the mover wins). None when the search needs more
    than ``positions`` positions, or the position has more than ``max_undrawn`` undrawn edges (None: no such
    limit). Owned boxes play no part: only the drawn edges count. Searched in the board's canonical
    orientation with a fresh table, so that the answer, and whether the budget suffices, is the same in
    every orientation and whatever was searched before."""
    if not _nim_searched(state, positions, max_undrawn):
        return None
    _, edges = _canonical_edges(state.rows, state.cols, state.edges)
    route = _nim_route(state)
    if route == "board":
        table = _TABLE.get()
        search = table.search(state.rows, state.cols) if table is not None else _nimstring(state.rows, state.cols)
        return search.value(edges, positions, keep=table is not None)
    if route == "graph":
        return _graph_search(state.rows, state.cols, edges)[1].value(0, positions)
    return _NimstringReference(state.rows, state.cols, positions).position(edges)


def nimstring_move_wins(state: GameState, positions: int = NIMSTRING_POSITIONS,
                        max_undrawn: int | None = NIMSTRING_MAX_UNDRAWN) -> np.ndarray | None:
    """float32 ``[num_actions]``: 1 where drawing the edge wins Nimstring for the player who draws it (a
    move completing a box leaves that player to move again), 0 where it loses, NaN on drawn edges; None when
    the search needs more than ``positions`` positions, the position has more than ``max_undrawn`` undrawn
    edges, or the game is over; also past the deadline of a :func:`nimstring_deadline` block, and where the
    block's table gives up (:class:`NimstringTable`). Searched as :func:`nimstring_value` is (the same answer
    in every orientation and history)."""
    if not _nim_searched(state, positions, max_undrawn) or state.is_terminal():
        return None
    deadline = _DEADLINE.get()
    if deadline is not None and time.perf_counter() >= deadline:
        return None
    perm, edges = _canonical_edges(state.rows, state.cols, state.edges)
    route = _nim_route(state)
    table = _TABLE.get()
    if route == "board" and table is not None:  # inside nimstring_table(): its table, and its own answers
        found = table.move_wins(state.rows, state.cols, edges, positions, deadline)
    elif route == "board" and deadline is not None:  # not kept: an answer cut short by the clock is no answer
        found = _nim_found(_nimstring(state.rows, state.cols).move_wins(
            edges, positions, seconds=max(0.0, deadline - time.perf_counter())))
    else:
        found = _nim_moves(state.rows, state.cols, edges, positions, route)
    if found is None:
        return None
    wins, undrawn = found
    image = np.full(state.num_actions, np.nan, dtype=np.float32)
    for a in range(state.num_actions):
        if undrawn >> a & 1:
            image[a] = float(wins >> a & 1)
    return image[perm]  # move a of the position is move perm[a] of the image


@functools.lru_cache(maxsize=1 << 16)
def _nim_moves(rows: int, cols: int, edges: int, positions: int, route: str) -> tuple[int, int] | None:
    # (winning moves, undrawn edges) as bitmasks of the canonical image ``edges``: an answer depends on these
    # arguments only, so a position met again (a transposition, another network) is not searched again
    if route == "board":
        return _nim_found(_nimstring(rows, cols).move_wins(edges, positions))
    if route == "graph":
        undrawn, search = _graph_search(rows, cols, edges)
        found = search.move_wins(0, positions)
        return _nim_found(None if found is None else {undrawn[i]: w for i, w in found.items()})
    return _nim_found(_NimstringReference(rows, cols, positions).move_wins(edges))


def _nim_found(found: dict | None) -> tuple[int, int] | None:
    if found is None:
        return None
    return sum(1 << a for a, w in found.items() if w), sum(1 << a for a in found)


class NimstringTable:
    """The table that the Nimstring searches in C++ of a :func:`nimstring_table` block share: one search of
    the native engine per board size, and the answers of :func:`nimstring_move_wins` found in the block. A
    network evaluator owns one for the searches of its encoder (``chainloop6_nim``) and opens it for each
    move (:meth:`agents.models.evaluator.NetworkEvaluator.move_scope`).

    ``give_up=True`` (the evaluators' tables): once a search of the block has run out of its positions, a
    position with as many undrawn edges or more is not searched again in the block; it gets None at once. The
    leaves of one move's search are alike, and where one of them exhausts the budget its siblings mostly do
    too, each after a second or more at 38 undrawn edges of 5x5 (a minute for one untimed move of 200
    simulations)."""

    def __init__(self, give_up: bool = False):
        self.give_up = bool(give_up)
        self._searches: dict[tuple[int, int], object] = {}  # (rows, cols) -> dnb_env._native.Nimstring
        self._answers: dict = {}  # (rows, cols, edges, positions) -> _nim_found of move_wins
        self._gave_up: dict = {}  # (rows, cols, positions) -> fewest undrawn edges of a search out of positions

    def clear(self) -> None:
        """Empty the table: no answer and no searched position kept."""
        self._answers = {}
        self._gave_up = {}
        for nim in self._searches.values():
            nim.clear()

    def search(self, rows: int, cols: int):
        """This table's native Nimstring search of the rows x cols board (made on first use)."""
        nim = self._searches.get((rows, cols))
        if nim is None:
            nim = self._searches[(rows, cols)] = _nimstring(rows, cols)
        return nim

    def move_wins(self, rows: int, cols: int, edges: int, positions: int,
                  deadline: float | None = None) -> tuple[int, int] | None:
        """:func:`_nim_found` of the search of ``edges`` (canonical) in this table, asked once a block;
        ``deadline`` (a ``time.perf_counter()`` time): the search also stops then, and an answer cut short by
        it is not kept (asked again, the search goes on from the positions it found)."""
        key = (rows, cols, edges, positions)
        if key not in self._answers:
            undrawn, budget = geometry(rows, cols).num_actions - edges.bit_count(), (rows, cols, positions)
            if self.give_up and undrawn >= self._gave_up.get(budget, undrawn + 1):
                return None
            seconds = None if deadline is None else max(0.0, deadline - time.perf_counter())
            found = _nim_found(self.search(rows, cols).move_wins(edges, positions, keep=True, seconds=seconds))
            if found is None and deadline is not None and time.perf_counter() >= deadline:
                return None
            if found is None and self.give_up:
                self._gave_up[budget] = min(undrawn, self._gave_up.get(budget, undrawn))
            self._answers[key] = found
        return self._answers[key]


#: The table of the :func:`nimstring_table` block open in this context (None: none is).
_TABLE: contextvars.ContextVar[NimstringTable | None] = contextvars.ContextVar("dnb_env_nimstring_table",
                                                                               default=None)


@contextlib.contextmanager
def nimstring_table(table: NimstringTable | None = None):
    """Within the block, this thread's Nimstring searches in C++ (:func:`nimstring_value`,
    :func:`nimstring_move_wins` and the encoders built on them) share one table (``table``, or a new
    :class:`NimstringTable`), emptied when the outermost block starts: each search goes
    on from what the searches before it in the block found, so that many related positions (the leaves of a
    game-tree search) cost far less. The answers are the same. What can change is whether a search finishes
    within its ``positions``, which then counts only the positions not already in the table: that depends on
    the searches made before it in the block, and is the same from one run to the next when they are made in
    the same order. The network agents' searches open one block a move (their evaluator's ``move_scope``).
    Blocks nest (the outermost one counts: an inner block goes on with its table); outside every block each
    search starts from an empty table."""
    if _TABLE.get() is not None:
        yield
        return
    table = NimstringTable() if table is None else table
    table.clear()
    token = _TABLE.set(table)
    try:
        yield
    finally:
        _TABLE.reset(token)


#: The deadline of the :func:`nimstring_deadline` block open in this context (None: none is).
_DEADLINE: contextvars.ContextVar[float | None] = contextvars.ContextVar("dnb_env_nimstring_deadline", default=None)


@contextlib.contextmanager
def nimstring_deadline(deadline: float | None):
    """Within the block, this thread's :func:`nimstring_move_wins` searches on boards of at most 64 edges
    (and the encoders built on them, ``chainloop6_nim``) stop at ``deadline``, a ``time.perf_counter()``
    time, and answer None as if out of positions; None: no deadline. A network agent's timed move opens one,
    so that encoding a leaf cannot run past the move's clock (a search at 38 undrawn edges of 5x5 can take a
    second and more before it gives up). An answer cut short by the deadline is not kept by any table."""
    if isinstance(deadline, bool) or (deadline is not None and not isinstance(deadline, (int, float))):
        raise ValueError(f"deadline must be a time.perf_counter() time or None, got {deadline!r}")
    token = _DEADLINE.set(None if deadline is None else float(deadline))
    try:
        yield
    finally:
        _DEADLINE.reset(token)


def _nim_searched(state: GameState, positions, max_undrawn: int | None) -> bool:
    """Whether the Nimstring search runs on ``state`` (``positions`` checked: ValueError)."""
    if isinstance(positions, bool) or not isinstance(positions, int) or positions < 1:
        raise ValueError(f"positions must be an int >= 1, got {positions!r}")
    return max_undrawn is None or state.num_actions - state.edges.bit_count() <= max_undrawn


def _nim_route(state: GameState) -> str:
    """Where the Nimstring search of ``state`` runs: ``"board"`` (the native search of its board, at most 64
    edges), ``"graph"`` (the native search of the graph of its undrawn edges: a larger board with at most 64
    undrawn) or ``"python"`` (the reference: the Python backend, or more than 64 undrawn edges). The answers
    are the same; the native searches are some hundred times faster."""
    if native.backend() != "native":
        return "python"
    if state.num_actions <= 64 and native.handles(None, state.geometry):
        return "board"
    return "graph" if state.num_actions - state.edges.bit_count() <= 64 else "python"


def _graph_search(rows: int, cols: int, edges: int):
    """``(undrawn, search)``: the native Nimstring search of the graph of :func:`_undrawn_graph` (its string i
    is edge ``undrawn[i]``; the position itself is its empty drawn set, 0)."""
    undrawn, coins = _undrawn_graph(rows, cols, edges)
    return undrawn, native._require().Nimstring.of_graph(coins, len(undrawn))


def _undrawn_graph(rows: int, cols: int, edges: int) -> tuple[list[int], list[list[int]]]:
    """The strings-and-coins graph of the undrawn edges of the position ``edges``: the undrawn edges in
    order (string i is edge ``undrawn[i]``), and each box with an undrawn side as the list of its undrawn
    sides (a box's drawn sides and its full neighbours play no part in Nimstring)."""
    g = geometry(rows, cols)
    undrawn = [a for a in range(g.num_actions) if not edges >> a & 1]
    index = {a: i for i, a in enumerate(undrawn)}
    coins = [[index[a] for a in sides if a in index] for sides in g.box_sides]
    return undrawn, [c for c in coins if c]


def _nimstring(rows: int, cols: int):
    """A new native Nimstring search of the rows x cols board (its table empty)."""
    return native._require().Nimstring(rows, cols)


class _NimstringReference:
    """The Python reference of ``nimstring.hpp``: the same rules on undrawn-edge sets, one table a call."""

    def __init__(self, rows: int, cols: int, positions: int):
        g = geometry(rows, cols)
        self.sides = [frozenset(s) for s in g.box_sides]
        self.boxes = g.action_boxes
        self.full = frozenset(range(g.num_actions))
        self.table: dict[frozenset, int] = {}
        self.budget = positions

    def position(self, edges: int) -> int | None:
        try:
            v = self.value(self.full - {a for a in self.full if edges >> a & 1})
        except _OutOfBudget:
            return None
        return LOONY if v is None else v

    def move_wins(self, edges: int) -> dict[int, bool] | None:
        undrawn = self.full - {a for a in self.full if edges >> a & 1}
        out = {}
        try:
            for a in sorted(undrawn):
                child = undrawn - {a}
                again = any(not (self.sides[b] & child) for b in self.boxes[a])
                v = self.value(child)
                child_mover_wins = v is None or v != 0
                out[a] = child_mover_wins if again else not child_mover_wins
        except _OutOfBudget:
            return None
        return out

    def _valence(self, m: frozenset, b: int) -> int:
        return len(self.sides[b] & m)

    def normalise(self, m: frozenset) -> frozenset | None:
        """Take every box the rules take; None for a loony position."""
        for b in range(len(self.sides)):
            if self._valence(m, b) == 1:
                m = self.take(m, b)
                if m is None:
                    return None
        return m

    def take(self, m: frozenset, b: int) -> frozenset | None:
        """Box ``b`` has one undrawn side: ``m`` without the sides the mover takes, None when the mover can
        decline the last two boxes (or two pairs) of what it takes: loony."""
        (e,) = self.sides[b] & m
        run, cur, boxes = {e}, b, 1
        while True:
            ahead = [n for n in self.boxes[e] if n != cur]
            boxes += 1 if ahead else 0
            if not ahead:  # outside
                return m - run if boxes == 1 else None
            n = ahead[0]
            valence = self._valence(m, n)
            if valence >= 3:
                return m - run if boxes == 2 else None
            if valence == 1:  # the run ends in a box the mover can take too
                return m - run if boxes <= 3 else None
            (e,) = self.sides[n] & m - run
            run.add(e)
            cur = n

    def parts(self, m: frozenset) -> list[frozenset]:
        left, out = set(m), []
        while left:
            part, front = set(), [left.pop()]
            while front:
                e = front.pop()
                part.add(e)
                for b in self.boxes[e]:
                    near = self.sides[b] & left
                    left -= near
                    front.extend(near)
            out.append(frozenset(part))
        return out

    def value(self, m: frozenset) -> int | None:
        """The Grundy value of undrawn-edge set ``m`` for its mover; None when loony."""
        m = self.normalise(m)
        if m is None:
            return None
        x = 0
        for part in self.parts(m):
            x ^= self.part_value(part)
        return x

    def part_value(self, m: frozenset) -> int:
        hit = self.table.get(m)
        if hit is not None:
            return hit
        self.budget -= 1
        if self.budget < 0:
            raise _OutOfBudget
        options = {self.value(m - {e}) for e in m} - {None}
        g = 0
        while g in options:
            g += 1
        self.table[m] = g
        return g


def clear_caches() -> None:
    """Forget every answer the features keep per position (safe-phase, endgame and Nimstring values, canonical
    images), so that the next call searches again (benchmarks time the searches, not the caches)."""
    for cached in (_values, _endgame, _nim_moves, _canonical_edges):
        cached.cache_clear()
