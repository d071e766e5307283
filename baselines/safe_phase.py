"""The end of the safe phase: the safe move that does best when both players draw only safe moves from here on.

Once no safe move is left (a move that gives no box away), the game is a loony endgame of chains and loops
that the exact solver settles in milliseconds on any board it takes, however many edges are undrawn. So with
few safe moves left, a search over the safe moves alone, to the end of the safe phase, scored there by the
exact solver (:meth:`dnb_env.solver.Solver.safe_phase_values`), values each safe move: a move that gives no
box away now, assuming no one sacrifices boxes before the safe moves run out. :class:`SafePhaseMove` asks it
and remembers, within a game, at how many safe moves it last ran out of its budget, so that a position too
hard for the budget is not searched again at every move until fewer safe moves are left. ``prsboxes`` (rule 3)
and the network agents' search (:class:`agents.search.agent.MCTSAgent`, ``safe_phase``) both play by it.

    finder = SafePhaseMove(max_safe=20)
    found = finder.choose(state, seconds=0.5)   # None: not 1-20 safe moves, a box on offer, or out of budget
    moves, margin = found                       # the safe moves of best value, the mover's margin after them
    finder.clear()                              # a new game
"""

from __future__ import annotations

import numpy as np

from baselines.nimstring import MAX_EDGES as NIMSTRING_MAX_EDGES
from dnb_env import native
from dnb_env.analysis import MoveClass, move_classes
from dnb_env.core import GameState
from dnb_env.solver import (MOVE_NODE_LIMIT, Solver, SolverBudgetExceeded, SolverTooLarge, beyond_native,
                            native_available)

__all__ = ["SafePhaseMove", "SAFE_PHASE_MOVES", "SAFE_PHASE_POSITIONS", "check_safe_phase", "safe_phase_zone"]

#: The auto ``safe_phase`` (:func:`safe_phase_zone`): safe moves within which the safe-phase search plays. In
#: positions of real 7x7 games it settles up to 18 safe moves in hundredths of a second, 19-20 in tenths.
SAFE_PHASE_MOVES = 20
#: The search's budget of positions without a clock.
SAFE_PHASE_POSITIONS = 2_000_000


def check_safe_phase(setting: int) -> int:
    """``setting`` when it is a ``safe_phase`` option (-1 auto, 0 off, or a number of safe moves), else
    ValueError."""
    if isinstance(setting, bool) or not isinstance(setting, int) or setting < -1:
        raise ValueError(f"safe_phase must be -1 (auto), 0 (off) or a number of safe moves, got {setting!r}")
    return setting


def safe_phase_zone(setting: int, num_actions: int) -> int:
    """A ``safe_phase`` option resolved for a board of ``num_actions`` edges: ``-1`` (auto) is
    :data:`SAFE_PHASE_MOVES` on a board the Nimstring search does not take (over
    :data:`baselines.nimstring.MAX_EDGES` edges: 6x6 and up, where no Nimstring move plays) when the C++
    extension is built, else 0; other values as given (0 = off). ValueError for anything but an int >= -1."""
    if check_safe_phase(setting) != -1:
        return setting
    return SAFE_PHASE_MOVES if num_actions > NIMSTRING_MAX_EDGES and native_available() else 0


class SafePhaseMove:
    """The safe-phase search's best moves (module docstring) with no box on offer and 1 to ``max_safe`` safe
    moves (0: never).

    Args:
        max_safe: the most safe moves left at which :meth:`choose` searches (0: off)
        positions: the search's position budget (without a clock)
        node_limit: the exact solver's node budget for each end of the safe phase
        tt_mb: megabytes of the solver's table, kept from move to move
    """

    def __init__(self, max_safe: int, positions: int = SAFE_PHASE_POSITIONS, node_limit: int = MOVE_NODE_LIMIT,
                 tt_mb: float = 16.0):
        if isinstance(max_safe, bool) or not isinstance(max_safe, int) or max_safe < 0:
            raise ValueError(f"safe_phase must be 0 (off) or a number of safe moves, got {max_safe!r}")
        if positions < 1 or node_limit < 1:
            raise ValueError(f"positions and node_limit must be >= 1, got {positions} and {node_limit}")
        self.max_safe, self.positions, self.node_limit, self.tt_mb = max_safe, positions, node_limit, tt_mb
        self._below = max_safe + 1  # the safe moves at which a search last ran out, within this game
        self._solver: Solver | None = None

    def clear(self) -> None:
        """A new game: search again at any number of safe moves up to ``max_safe``."""
        self._below = self.max_safe + 1

    def choose(self, state: GameState, seconds: float | None = None) -> tuple[list[int], int] | None:
        """``(moves, margin)``: the safe moves of best safe-phase value, in increasing order, and the margin
        the mover gets from the boxes still open with them; None when ``state`` has a box on offer, no safe
        move or more than ``max_safe`` (or at least as many as at the last search of this game that ran out),
        on a board beyond the alpha-beta solver, or when the search needs more than ``positions`` positions,
        an end of the safe phase more than ``node_limit`` nodes, or more than ``seconds`` (None: no clock)."""
        if not self.max_safe or beyond_native(state) or not native_available():
            return None
        cls = move_classes(state)
        safe = int(np.count_nonzero(cls == MoveClass.SAFE))
        if (cls == MoveClass.SCORING).any() or not 1 <= safe < min(self.max_safe + 1, self._below):
            return None
        if self._solver is None:  # an end of the safe phase may have most of the board's edges undrawn
            self._solver = Solver(max_undrawn=2 * native.MAX_SIZE * (native.MAX_SIZE + 1), node_limit=self.node_limit,
                                  tt_mb=self.tt_mb)
        self._solver.set_deadline(seconds)
        try:
            values = self._solver.safe_phase_values(state, self.positions)
        except (SolverBudgetExceeded, SolverTooLarge):
            values = None
        finally:
            self._solver.set_deadline(None)
        if not values:  # out of budget: not again this game until fewer safe moves are left
            self._below = safe
            return None
        best = max(values.values())
        return sorted(a for a, v in values.items() if v == best), best
