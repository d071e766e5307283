"""The handcrafted greedy policy of BoxesZero 4.2.1.

Take a box when one can be completed; otherwise play a move that gives no box away (a safe move);
otherwise play the move that gives the opponent the fewest boxes, counted by letting the opponent take
every box it then can. Ties are broken at random by the agent's seeded generator.
"""

from __future__ import annotations

import numpy as np

from dnb_env.agent import Seedable, check_state
from dnb_env.analysis import MoveClass, move_classes
from dnb_env.core import GameState, MutableState

__all__ = ["GreedyAgent", "boxes_given_away"]


def boxes_given_away(state: GameState, action: int) -> int:
    """Boxes the opponent collects after ``action`` if it keeps taking completable boxes."""
    m = MutableState(state)
    m.play(action)
    taken = 0
    while not m.is_terminal():
        cls = move_classes(m.snapshot())
        scoring = np.flatnonzero(cls == MoveClass.SCORING)
        if not len(scoring):
            break
        taken += m.play(int(scoring[0])).bit_count()
    return taken


class GreedyAgent(Seedable):
    name = "greedy"

    def __init__(self, seed: int | None = None, board: tuple[int, int] | None = None):
        self.rng = np.random.default_rng(seed)
        self.board = board

    def seed(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)

    def _pick(self, options: list[int]) -> int:
        return options[int(self.rng.integers(len(options)))]

    @staticmethod
    def candidates(state: GameState) -> list[int]:
        """Every move the rule allows (the agent picks one of them at random)."""
        cls = move_classes(state)
        for wanted in (MoveClass.SCORING, MoveClass.SAFE):
            options = [int(a) for a in np.flatnonzero(cls == wanted)]
            if options:
                return options
        legal = state.legal_actions()
        cost = {a: boxes_given_away(state, a) for a in legal}
        least = min(cost.values())
        return [a for a in legal if cost[a] == least]

    def select_action(self, state: GameState) -> int:
        check_state(self, state)
        return self._pick(self.candidates(state))

    def reset(self) -> None:
        pass
