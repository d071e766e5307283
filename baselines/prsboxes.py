"""A PRsBoxes-style chain-theory player: the strongest non-learned agent here.

Decision rules, in order:

1. **Exact play near the end.** With at most ``solver_edges`` undrawn edges the exact solver
   (:mod:`dnb_env.solver`) picks a move of best margin: default 38 with the native alpha-beta solver
   (within ``solver_nodes`` nodes; past them the rules below decide), 20 with the retrograde table. The
   searches of rule 4 take exact values from the solver for every position inside that zone too. On a board
   the native solver does not take (over 12x12 boxes) the retrograde table plays within 20 undrawn edges (within
   ``solver_edges`` but at most 24 when it is given) and the searches solve no positions.
2. **Boxes on offer.** When a box can be completed, the agent decides between taking everything and
   keeping control. It takes every capturable box that does not end an opened chain or loop of its own
   (free boxes). For the last opened component, when the rest of the board is a simple endgame with
   value ``e`` for the player then to move, it compares taking all (``+e`` after the capture) against
   declining the last two boxes of a chain or four of a loop with a double-dealing move (``-e - 4`` or
   ``-e - 8`` relative): the controller's choice of Berlekamp's theory. When the rest is not a simple
   endgame, the search of rule 4 decides.
3. **Safe moves left.** While moves remain that give nothing away, the fight is over who must open the
   first long chain. With more than ``search_safe`` safe moves it plays a safe move that wins Nimstring
   (the same game played for the last move, whose winner gets control; :class:`dnb_env._native.Nimstring`)
   when the position has at most ``nimstring_edges`` undrawn edges and the search finds one within
   ``nimstring_positions`` positions (on a clock, within 85% of the move time instead), trying first the
   moves the long chain rule likes and stopping at the first that wins, its table kept from move to move
   within a game. The exact solver checks that move (within ``nimstring_verify`` nodes, or on a clock the
   time left) and passes over one that wins Nimstring but loses on boxes for the next that wins it
   (:class:`baselines.nimstring.NimstringMove`, which the network agents' search plays by too). Where no
   Nimstring-winning move keeps the win (none wins Nimstring, or the check refused every one found), the
   solver's win test of the position itself gets most of the time left and, when it shows the game won, gives
   a move that keeps it, safe or not; otherwise it plays none of the refused moves but a move of the rules
   below. With
   ``nimstring_widen`` the search gives every safe move a small budget, then each one still open four times
   as much, and so on; when it does not finish, it plays a move it has not shown to lose Nimstring. With
   ``nimstring_threads=2`` on a clock, two threads search every other move each and check what they find
   while the other searches on, within the whole move time.
   Otherwise, with at most ``safe_phase`` safe moves left, it plays the best move of the safe-phase search
   (both players draw only safe moves and take boxes until none is left, then play exactly;
   :class:`baselines.safe_phase.SafePhaseMove`, which the network agents' search plays by too; on a clock
   within 85% of the time left), the long chain rule's first among ties. Otherwise, or when no safe move wins
   Nimstring, it plays a safe move that leaves the long-chain parity in its favour (Berlekamp's long chain
   rule: the first player wants dots + long chains even). With
   ``search_safe`` or fewer it searches (rule 4) with only safe moves allowed while any are left (no early
   sacrifices), so the search reaches the end of the safe-move phase; with ``search_full`` or fewer, every
   move is searched.
4. **Search.** In a simple endgame without a box on offer it plays :func:`dnb_env.analysis.endgame_move`
   (optimal). Otherwise a negamax alpha-beta with a transposition table and iterative deepening to
   ``search_depth`` (within ``search_nodes`` nodes, so a game replays the same on any machine): capture
   runs do not use up depth, a position with a box on offer searches only captures and all-but-two
   declines (the tests check this against the solver), and simple endgames at the leaves are scored
   exactly. Once safe moves are gone, most positions are searched to the end.
"""

from __future__ import annotations

import time

import numpy as np

from baselines.alphabeta import AlphaBetaAgent
from baselines.nimstring import (NIMSTRING_EDGES, NIMSTRING_POSITIONS, NIMSTRING_VERIFY, NimstringMove,
                                 safe_groups)
from baselines.safe_phase import SafePhaseMove, check_safe_phase, safe_phase_zone
from baselines.solver import best_solver_moves
from dnb_env.agent import Seedable, check_state
from dnb_env.analysis import (
    double_deal_moves,
    MoveClass,
    components,
    endgame_move,
    endgame_value,
    move_classes,
)
from dnb_env.clock import MoveTimed, move_budget
from dnb_env.core import GameState
from dnb_env.solver import (MOVE_NODE_LIMIT, MOVES_REACH, RETROGRADE_REACH, Solver, SolverBudgetExceeded, beyond_native,
                            native_available)

__all__ = ["PRsBoxesAgent"]

#: The auto solver zone where the retrograde table solves (without the C++ extension, or on a board over 12x12).
_RETROGRADE_EDGES = 20
#: On a clock, the Nimstring search's share of the move time (instead of the positions); the solver's check of
#: the move it finds gets the rest. At 42 undrawn edges the search rarely finishes within half a second and the
#: check rarely within any part of one, so the search gets most of it.
NIMSTRING_CLOCK = 0.85
#: On a clock, the safe-phase search's share of what is left of the move (rule 3, beyond the Nimstring zone).
SAFE_PHASE_CLOCK = 0.85
#: Edges up to which the searches get all of ``search_nodes`` (5x5's 60); larger boards get less in proportion.
NODES_EDGES = 60


def _without(moves: list[int], refused: tuple[int, ...]) -> list[int]:
    """``moves`` less the ``refused`` ones, in order."""
    return [a for a in moves if a not in refused]


class PRsBoxesAgent(Seedable, MoveTimed):
    name = "prsboxes"

    def __init__(self, seed: int | None = None, solver_edges: int = -1, search_safe: int = 9, search_depth: int = 40,
                 search_nodes: int = 300_000, search_time: float | None = None, search_full: int = 4,
                 board: tuple[int, int] | None = None, solver_nodes: int = MOVE_NODE_LIMIT,
                 nimstring_edges: int = NIMSTRING_EDGES, nimstring_positions: int = NIMSTRING_POSITIONS,
                 nimstring_verify: int = NIMSTRING_VERIFY, safe_phase: int = -1, nimstring_widen: bool = False,
                 nimstring_threads: int = 1):
        self.rng = np.random.default_rng(seed)
        # the Nimstring move of rule 3 (baselines.nimstring: shared with the network agents' search)
        self.nimstring = NimstringMove(nimstring_edges, nimstring_positions, nimstring_verify,
                                       widen=bool(nimstring_widen), threads=nimstring_threads)
        # the end of the safe phase (baselines.safe_phase: shared with the network agents' search); -1 is
        # resolved per board on first use
        self.safe_phase = check_safe_phase(safe_phase)
        self._safe_phase_moves: dict[int, SafePhaseMove] = {}  # by the board's edges (auto differs by board)
        self.board = board
        if solver_edges < -1:
            raise ValueError(f"solver_edges must be -1 (auto), 0 (off) or a number of undrawn edges, got {solver_edges}")
        native = native_available()
        auto = solver_edges == -1
        if auto:
            solver_edges = MOVES_REACH if native else _RETROGRADE_EDGES
        self.solver = Solver(max_undrawn=max(solver_edges, 0), node_limit=solver_nodes)
        self.solver_edges = solver_edges
        # the zone on a board beyond the native solver, where the retrograde table solves
        self.retrograde_edges = _RETROGRADE_EDGES if auto else min(solver_edges, RETROGRADE_REACH)
        self.search_safe = search_safe
        self.search_full = search_full
        self.search_nodes = search_nodes
        options = dict(depth=search_depth, time_limit=search_time, node_limit=search_nodes, chain_eval=True,
                       extend_captures=True, decline_only_double_deal=True, seed=seed,
                       solve_leaf=solver_edges if native else 0)
        self.move_time: float | None = None  # set_move_time: a clock instead of the budgets
        self._deadline: float | None = None  # on a clock: the time.perf_counter() by which this move ends
        self.searcher = AlphaBetaAgent(**options)  # every move, except needless declines
        self.safe_searcher = AlphaBetaAgent(safe_only=True, **options)  # no sacrifice while safe moves last

    def seed(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.searcher.seed(seed)
        self.safe_searcher.seed(seed)

    def reset(self) -> None:
        self.nimstring.clear()
        for finder in self._safe_phase_moves.values():
            finder.clear()

    def set_move_time(self, seconds: float) -> None:
        """Play within ``seconds`` a move (a tournament's time control): each move plans to take
        :func:`~dnb_env.clock.move_budget` of them, read as elapsed time from the moment it is asked. The
        exact solver searches for half of that budget instead of its node budget
        (:meth:`~dnb_env.solver.Solver.set_deadline`), and both alpha-beta searches deepen until what is left
        of it instead of ``search_depth`` / ``search_nodes``."""
        super().set_move_time(seconds)
        self.searcher.set_move_time(seconds)
        self.safe_searcher.set_move_time(seconds)

    def _size_searches(self, state: GameState) -> None:
        """The searches' node budget on ``state``'s board: ``search_nodes`` up to :data:`NODES_EDGES` edges, less in
        proportion beyond (a node's cost grows with the edges, so a search costs about as long on 10x10 as on
        5x5: before, single moves of 25-40 s on 10x10). On a clock the budget is the clock's."""
        if self.move_time is None and self.search_nodes is not None:
            nodes = self.search_nodes * min(1.0, NODES_EDGES / state.num_actions)
            self.searcher.node_limit = self.safe_searcher.node_limit = max(1, int(nodes))

    def _left(self) -> float | None:
        """Seconds left of this move's budget (None without a clock)."""
        return None if self._deadline is None else max(0.0, self._deadline - time.perf_counter())

    def _pick(self, options):
        options = list(options)
        return options[int(self.rng.integers(len(options)))]

    # -------------------------------------------------------------- rule 1
    def _solver_move(self, state: GameState) -> int | None:
        try:
            return self._pick(best_solver_moves(self.solver, state, self._left()))
        except SolverBudgetExceeded:
            return None

    # -------------------------------------------------------------- rule 2
    def _capture_move(self, state: GameState, cls: np.ndarray) -> int:
        g = state.geometry
        scoring = [int(a) for a in np.flatnonzero(cls == MoveClass.SCORING)]
        opened = [c for c in components(state) if c.opened]

        def touches(a, comp):
            return any(b in comp.boxes for b in g.action_boxes[a])

        if len(opened) != 1:  # take from the other components first, the largest one last
            last = max(opened, key=lambda c: c.length) if opened else None
            return next((a for a in scoring if last is None or not touches(a, last)), scoring[0])
        comp = opened[0]
        decline = self._double_deal_move(state, comp)
        if decline is None:  # not yet at the decision point: keep taking
            return next((a for a in scoring if touches(a, comp)), scoring[0])
        after_all = state
        while True:
            sc = np.flatnonzero(move_classes(after_all) == MoveClass.SCORING)
            if not len(sc):
                break
            after_all = after_all.apply(int(sc[0]))
        if after_all.is_terminal():
            return scoring[0]
        n = comp.length
        e = endgame_value(after_all)
        if e is None:  # not a simple endgame yet: search whether to keep control
            return self.searcher.select_action(state)
        # take all: n + e (we then move in the rest); decline: the opponent gets n and moves: -n - e
        return decline if -n - e > n + e else scoring[0]

    @staticmethod
    def _double_deal_move(state: GameState, comp) -> int | None:
        """The move that hands over the component's boxes without taking any, once the component is down
        to a 2-box remainder with one box capturable (leaving a domino) or a 4-box opened loop (its
        middle edge); None before that point."""
        g = state.geometry
        two, three = g.drawn_count_masks(state.edges)
        capturable = sum(three >> b & 1 for b in comp.boxes)
        if (len(comp.boxes), capturable) not in ((2, 1), (4, 2)):
            return None
        sides = {e for b in comp.boxes for e in g.box_sides[b]}
        deals = double_deal_moves(g, state.edges, two, three) & sides
        return min(deals) if deals else None

    # -------------------------------------------------------------- rule 3
    def _safe_move(self, state: GameState, safe: list[int]) -> int:
        if len(safe) <= self.search_full:
            return self.searcher.select_action(state)
        if len(safe) <= self.search_safe:
            return self.safe_searcher.select_action(state)
        groups = safe_groups(state, safe)
        refused: tuple[int, ...] = ()
        if self.nimstring.applies(state):
            choice = self._nimstring_choice(state, groups)
            if choice.move is not None and choice.kept is not False:
                return choice.move
            if choice.open:  # the search did not finish: not a move it showed to lose Nimstring
                liked = [a for a in choice.open if a in groups[0]]
                return (liked or list(choice.open))[0]
            # every move found was shown to lose on boxes: another safe move may keep a won game won
            refused = choice.losing
        left = self._left()
        found = self._safe_phase_move(state).choose(state, None if left is None else SAFE_PHASE_CLOCK * left)
        if found is not None:  # the best of the safe-phase search, the long chain rule's first among ties
            best = _without(found[0], refused) or found[0]
            liked = [a for a in best if a in groups[0]]
            return self._pick(liked or best)
        return self._pick(_without(groups[0], refused) or _without(safe, refused) or safe)

    def _safe_phase_move(self, state: GameState) -> SafePhaseMove:
        """The safe-phase search of ``state``'s board (``safe_phase`` resolved for it)."""
        finder = self._safe_phase_moves.get(state.num_actions)
        if finder is None:
            limit = safe_phase_zone(self.safe_phase, state.num_actions)
            finder = self._safe_phase_moves[state.num_actions] = SafePhaseMove(limit, node_limit=self.solver.node_limit
                                                                               or MOVE_NODE_LIMIT)
        return finder

    def _nimstring_choice(self, state: GameState, groups: list[list[int]]):
        """A move that wins Nimstring for the mover, of the first group that has one, checked by the exact
        solver (:meth:`baselines.nimstring.NimstringMove.choose`: within ``nimstring_positions`` positions and
        ``nimstring_verify`` nodes; on a clock, the search within :data:`NIMSTRING_CLOCK` of the time left and
        the checks within the rest); None when none of them wins or the search does not finish."""
        search_until = check_until = None
        if self._deadline is not None:
            search_until = time.perf_counter() + NIMSTRING_CLOCK * self._left()
            check_until = self._deadline
        return self.nimstring.choose(state, groups, self.rng, search_until=search_until, check_until=check_until)

    # -------------------------------------------------------------- main
    def select_action(self, state: GameState) -> int:
        check_state(self, state)
        self._deadline = None if self.move_time is None else time.perf_counter() + move_budget(self.move_time)
        try:
            return self._select(state)
        finally:
            self._deadline = None

    def _select(self, state: GameState) -> int:
        legal = state.legal_actions()
        self._size_searches(state)
        if len(legal) <= (self.retrograde_edges if beyond_native(state) else self.solver_edges):
            move = self._solver_move(state)
            if move is not None:
                return move
        if self._deadline is not None:  # the searches get what the solver left of the budget
            self.searcher.time_limit = self.safe_searcher.time_limit = max(0.005, self._left())
        cls = move_classes(state)
        if (cls == MoveClass.SCORING).any():
            return self._capture_move(state, cls)
        safe = [int(a) for a in np.flatnonzero(cls == MoveClass.SAFE)]
        if safe:
            return self._safe_move(state, safe)
        move = endgame_move(state)
        if move is not None:
            return move
        # joints remain: search the opening/capturing lines, scoring simple endgames exactly at the leaves
        return self.searcher.select_action(state)
