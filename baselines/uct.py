"""Plain UCT Monte-Carlo tree search with uniformly random rollouts (a reference point like OpenSpiel's
MCTSBot with a random-rollout evaluator).

Each node stores visit counts and total value from the point of view of the player who made the move
into it; because a completed box keeps the turn, the backed-up value is negated only across moves after
which the other player is to move. Rollout results are +1/-1/0 by the final margin.

    UCTAgent(simulations=1000, uct_c=2.0, seed=0)
"""

from __future__ import annotations

import math
import random

from agents.base import check_state
from dnb_env.core import GameState, MutableState

__all__ = ["UCTAgent"]


class _Node:
    __slots__ = ("mover", "children", "untried", "visits", "value")

    def __init__(self, mover: int, untried: list[int]):
        self.mover = mover  # player to move at this node
        self.children: dict[int, _Node] = {}
        self.untried = untried
        self.visits = 0
        self.value = 0.0  # sum of results for the player who moved INTO this node


class UCTAgent:
    name = "mcts"

    def __init__(self, simulations: int = 1000, uct_c: float = 2.0, seed: int | None = None,
                 board: tuple[int, int] | None = None):
        if simulations < 1:
            raise ValueError(f"simulations must be >= 1, got {simulations}")
        self.simulations, self.uct_c, self.board = simulations, uct_c, board
        self.rng = random.Random(seed)
        self.root_visits: dict[int, int] = {}  # visit count of each root move of the last search

    def seed(self, seed: int) -> None:
        self.rng = random.Random(seed)

    def reset(self) -> None:
        pass

    def _rollout(self, m: MutableState) -> tuple[float, float]:
        d = m.random_playout(self.rng.random)
        r = (d > 0) - (d < 0)
        return float(r), float(-r)

    def select_action(self, state: GameState) -> int:
        check_state(self, state)
        legal = state.legal_actions()
        if len(legal) == 1:
            self.root_visits = {legal[0]: 0}
            return legal[0]
        root = _Node(state.current_player, legal[:])
        self.rng.shuffle(root.untried)
        m = MutableState(state)
        c = self.uct_c
        for _ in range(self.simulations):
            node, path, depth = root, [root], 0
            # selection
            while not node.untried and node.children:
                log_n = math.log(node.visits)
                mover = node.mover
                best, best_score = None, -1e18
                for a, ch in node.children.items():
                    score = ch.value / ch.visits + c * math.sqrt(log_n / ch.visits)
                    if score > best_score:
                        best, best_score = a, score
                m.play(best)
                depth += 1
                node = node.children[best]
                path.append(node)
                del mover
            # expansion
            if node.untried:
                a = node.untried.pop()
                m.play(a)
                depth += 1
                child_untried = m.legal_actions()
                self.rng.shuffle(child_untried)
                child = _Node(m.current_player, child_untried)
                node.children[a] = child
                node = child
                path.append(node)
            results = self._rollout(m)
            # backup: each node's value is for the player who moved into it (its parent's mover)
            for parent, child in zip(path, path[1:]):
                child.visits += 1
                child.value += results[parent.mover]
            root.visits += 1
            for _ in range(depth):
                m.undo()
        self.root_visits = {a: ch.visits for a, ch in root.children.items()}
        return max(root.children.items(), key=lambda kv: kv[1].visits)[0]

    def analyse(self, state: GameState, deadline: float | None = None) -> dict:
        """The root visit counts of a search of ``state`` (as :meth:`select_action` runs it)."""
        self.select_action(state)
        values = [None] * state.num_actions
        for a, n in self.root_visits.items():
            values[a] = float(n)
        return {"kind": "visits", "values": values}
