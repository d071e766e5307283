"""Negamax alpha-beta with iterative deepening and a transposition table.

The searched value is the margin the player to move gets from the boxes still unclaimed (it depends on
the drawn edges only, so the table is keyed on the edge bitmask). A move that completes boxes adds them
and keeps the turn: its child is searched without a sign change; any other move negates. At the depth
limit the evaluation is 0 more boxes (so the total is the plain box margin, the AlphaZero report's
AlphaBetaPlayer for depth 1..3 when ``extend_captures=False``), or with ``chain_eval=True`` the exact value of a simple endgame when the
leaf is one. Moves are ordered: the table's best move, captures, safe moves, then the rest, each group
shuffled by the agent's generator so equal moves are chosen at random. With ``extend_captures=True``
(the default) a move that completes a box does not use up depth, so capture sequences are searched to
their end; without it a depth-4 search misjudges every chain longer than its horizon. With
``decline_only_double_deal=True`` a position with a box on offer searches only captures and the
double-dealing declines (:func:`dnb_env.analysis.double_deal_moves`), Berlekamp's rule that any other way of leaving
boxes is never better; the tests check the pruned search against the exact solver. With
``safe_only=True`` a position that still has safe moves searches only those (a heuristic: it never
sacrifices while a safe move is left), which lets the search reach the end of the safe-move phase.

    AlphaBetaAgent(depth=4, time_limit=None, chain_eval=False, extend_captures=True, seed=0)

The deepening stops at ``depth``, at ``time_limit`` seconds or after ``node_limit`` nodes (reproducible
on any machine), whichever comes first; the move of the deepest finished iteration is played. Under a
tournament's time control (:meth:`AlphaBetaAgent.set_move_time`) it deepens until the clock alone, within
:func:`dnb_env.clock.move_budget` of the move time. With ``solve_leaf`` > 0 the nodes within that many
undrawn edges take their exact value from the native alpha-beta solver (:mod:`dnb_env.solver`), which stops
at the move's deadline too; on a board it does not take (over 12x12 boxes) no leaf is solved.
"""

from __future__ import annotations

import time

import numpy as np

from dnb_env.agent import Analysable, Seedable, check_state
from dnb_env.analysis import double_deal_moves, endgame_value
from dnb_env.clock import MoveTimed, move_budget
from dnb_env.core import GameState, MutableState
from dnb_env.solver import Solver, beyond_native

__all__ = ["AlphaBetaAgent"]

EXACT, LOWER, UPPER = 0, 1, 2


class _Timeout(Exception):
    pass


class AlphaBetaAgent(Seedable, MoveTimed, Analysable):
    name = "alphabeta"

    def __init__(self, depth: int = 4, time_limit: float | None = None, chain_eval: bool = False,
                 extend_captures: bool = True, seed: int | None = None, tt_size: int = 1_000_000,
                 decline_only_double_deal: bool = False, safe_only: bool = False, node_limit: int | None = None,
                 board: tuple[int, int] | None = None, solve_leaf: int = 0, solve_nodes: int = 20_000):
        if depth < 1:
            raise ValueError(f"depth must be >= 1, got {depth}")
        if solve_leaf < 0 or solve_nodes < 1:
            raise ValueError(f"solve_leaf must be >= 0 and solve_nodes >= 1, got {solve_leaf}, {solve_nodes}")
        # exact values from the alpha-beta solver for nodes within solve_leaf undrawn edges (0 = never); a
        # solve that runs out of solve_nodes lowers the zone below that node for the rest of the move
        self.solve_leaf, self.solve_nodes = solve_leaf, solve_nodes
        self._zone = solve_leaf
        self._solver = None
        self.depth, self.time_limit, self.chain_eval = depth, time_limit, chain_eval
        self.extend_captures = extend_captures
        self.decline_only_double_deal = decline_only_double_deal
        self.safe_only = safe_only
        self.node_limit = node_limit
        self.board = board
        self.rng = np.random.default_rng(seed)
        self.tt_size = tt_size
        self.tt: dict[int, tuple[int, int, int, int]] = {}
        self.nodes = 0
        self.deadline: float | None = None
        self.move_time: float | None = None  # set by set_move_time: a clock instead of the depth
        self.root_move: int | None = None
        self._last: tuple | None = None  # (state, depth, value) of the last move's deepest search: search_info

    def seed(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        self.tt.clear()

    # ------------------------------------------------------------------ search
    def _ordered(self, m: MutableState, tt_move: int | None) -> list[int]:
        """Captures, then safe moves, then the rest (each group shuffled), the table's move first; with
        the pruning options, only the moves they leave."""
        g = m.geometry
        two, three = g.drawn_count_masks(m.edges)  # boxes with 2 and 3 drawn sides (dnb_env.core)
        moves = m.legal_actions()
        self.rng.shuffle(moves)
        ranked = []
        for a in moves:
            near = 0
            for b in g.action_boxes[a]:
                near |= 1 << b
            ranked.append((0 if near & three else (2 if near & two else 1), a))
        if self.decline_only_double_deal and three:
            deals = double_deal_moves(g, m.edges, two, three)
            ranked = [(r, a) for r, a in ranked if r == 0 or a in deals]
        elif self.safe_only and not three and any(r == 1 for r, _ in ranked):
            ranked = [(r, a) for r, a in ranked if r == 1]
        ranked.sort(key=lambda t: -1 if t[1] == tt_move else t[0])
        return [a for _, a in ranked]

    def _leaf(self, m: MutableState) -> int:
        if self.chain_eval:
            v = endgame_value(m.snapshot())
            if v is not None:
                return v
        return 0

    def _solved(self, m: MutableState) -> int | None:
        """The exact value of the open boxes for the mover when ``m`` is in the solver zone (else None). None
        on a board beyond the native solver: the retrograde one would build a table for each leaf."""
        undrawn = m.geometry.num_actions - m.edges.bit_count()
        if undrawn > self._zone or beyond_native(m.geometry):
            return None
        if self._solver is None:
            self._solver = Solver(max_undrawn=180, engine="alphabeta", node_limit=self.solve_nodes)
            self._solver_deadline()
        lo, hi = self._solver.bounds(m.snapshot())
        if lo != hi:
            if self._solver.past_deadline():  # stopped by the clock, not by its node budget
                raise _Timeout
            self._zone = undrawn - 1
            return None
        return lo

    def _solver_deadline(self) -> None:
        """The leaf solver stops at the search's deadline too (none without one)."""
        if self._solver is not None:
            self._solver.set_deadline(None if self.deadline is None else max(0.0, self.deadline - time.perf_counter()))

    def _search(self, m: MutableState, depth: int, alpha: int, beta: int, root: bool = False) -> int:
        self.nodes += 1
        # the clock every 64 nodes: a node costs tens of microseconds on large boards, so that 1,024 of them
        # overran a 0.2 s move on 6x6 beside busy processes
        if self.nodes & 63 == 0 and (
                (self.deadline is not None and time.perf_counter() > self.deadline)
                or (self.node_limit is not None and self.nodes > self.node_limit)):
            raise _Timeout
        if m.is_terminal():
            return 0
        if self._zone and not root:
            v = self._solved(m)
            if v is not None:
                return v
        if depth == 0:
            return self._leaf(m)
        key = m.edges
        entry = self.tt.get(key)
        tt_move = None
        if entry is not None:
            e_depth, e_value, e_flag, tt_move = entry
            if e_depth >= depth and not root:
                if e_flag == EXACT:
                    return e_value
                if e_flag == LOWER and e_value >= beta:
                    return e_value
                if e_flag == UPPER and e_value <= alpha:
                    return e_value
        a0 = alpha
        best, best_move = -10_000, None
        for a in self._ordered(m, tt_move):
            gained = m.play(a).bit_count()
            if gained:
                child_depth = depth if self.extend_captures else depth - 1
                v = gained + self._search(m, child_depth, alpha - gained, beta - gained)
            else:
                v = -self._search(m, depth - 1, -beta, -alpha)
            m.undo()
            if v > best:
                best, best_move = v, a
            if v > alpha:
                alpha = v
            if alpha >= beta:
                break
        flag = UPPER if best <= a0 else (LOWER if best >= beta else EXACT)
        if root or len(self.tt) < self.tt_size or key in self.tt:
            self.tt[key] = (depth, best, flag, best_move)
        if root:
            self.root_move = best_move
        return best

    def search_root(self, state: GameState, depth: int) -> tuple[int, int]:
        """(best action, value) of a full-width search to ``depth`` plies."""
        value = self._search(MutableState(state), depth, -10_000, 10_000, root=True)
        return self.root_move, value

    def select_action(self, state: GameState) -> int:
        check_state(self, state)
        legal = state.legal_actions()
        self.deadline = None if self.time_limit is None else time.perf_counter() + self.time_limit
        self._solver_deadline()
        self.tt.clear()  # values are exact only for the depth they were searched to
        self.nodes = 0
        self._zone = self.solve_leaf
        move, value, reached = legal[0], None, 0
        for d in range(1, self.depth + 1):
            try:
                move, value = self.search_root(state, d)
            except _Timeout:
                break
            reached = d
            if self.move_time is not None and d >= len(legal):  # on a clock: searched to the end of the game
                break
        self._last = (state, reached, value)
        self.deadline = None
        self._solver_deadline()
        return move

    def search_info(self) -> dict:
        """The last move's search (``dnb engine``'s ``info`` line): the deepest depth finished, its nodes,
        its value as the final margin in boxes for the player who moved (the score so far plus the search's
        value of the boxes left) and the line the table holds from there; ``{}`` before any move."""
        if self._last is None:
            return {}
        state, depth, value = self._last
        info = {"depth": depth, "nodes": self.nodes}
        if value is None:
            return info
        me = state.current_player
        m, pv = MutableState(state), []
        while not m.is_terminal() and len(pv) < state.num_actions:
            entry = self.tt.get(m.edges)
            if entry is None or entry[3] is None:
                break
            pv.append(entry[3])
            m.play(entry[3])
        return {**info, "value": value + state.scores[me] - state.scores[1 - me], "unit": "margin", "pv": pv}

    def set_move_time(self, seconds: float) -> None:
        """Think ``seconds`` a move (a tournament's time control): the deepening goes on, past ``depth`` and
        any node budget, until :func:`~dnb_env.clock.move_budget` of that time (``time_limit``) or the end
        of the game."""
        super().set_move_time(seconds)
        self.time_limit = move_budget(seconds)
        self.depth, self.node_limit = 10**6, None

    def analyse(self, state: GameState, deadline: float | None = None) -> dict:
        """The move and value (boxes for the player to move) of the deepest search of the iterative deepening
        to ``depth`` finished before ``deadline`` (``time.perf_counter()`` seconds; None: every depth);
        ``"none"`` when not even depth 1 finished. The agent's own deadline and table are as before after."""
        move = value = None
        reached = 0
        saved = self.deadline
        self.deadline, self.nodes = deadline, 0
        self._solver_deadline()
        self.tt.clear()
        try:
            for d in range(1, int(self.depth) + 1):
                try:
                    move, value = self.search_root(state, d)
                except _Timeout:
                    break
                reached = d
        finally:
            self.deadline = saved
            self._solver_deadline()
            self.tt.clear()
        if move is None:
            return {"kind": "none"}
        return {"kind": "search", "value": value, "unit": f"boxes ({reached}-ply search)", "move": int(move)}
