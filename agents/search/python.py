"""The Python reference of the tree search (AlphaZero; Dotsformer Appendix E): backend ``"python"`` of
:mod:`agents.search`, which :mod:`agents.search.native` reproduces bit for bit in C++.

One search serves AlphaZero, Dotsformer and plain MCTS: only the evaluator and the selection rule change.

* Selection (``selection="puct"``): ``a* = argmax_a Q(s, a) + c_puct * P(s, a) * sqrt(N(s)) / (1 + N(s, a))``
  over legal moves, vectorised per node: each node keeps Q and ``U = P / (1 + N)`` per edge up to date, so
  a selection is one multiply-add and an argmax. A leaf keeps its evaluated priors and is expanded
  (children, pruning) only when a later simulation walks through it, which most leaves of a wide tree never
  see. The cyclic garbage collector is paused during a search (:func:`agents.search.lockstep.gc_paused`).
* Selection ``"uct"`` (plain UCT): each node draws an order of its moves from ``rng`` when it is made
  (``rng.shuffle``, before the node is evaluated), takes its unvisited edges in that order, then
  ``argmax_a Q(s, a) + c_puct * sqrt(ln N(s) / N(s, a))`` (UCB1) with ties to the edge tried first;
  ``N(s)`` is the root's sum N, below it the visits of the edge into ``s``. The priors are not used and the
  root is not evaluated. With a ``random.Random`` as ``rng`` shared with a :class:`RolloutEvaluator
  <agents.search.evaluators.RolloutEvaluator>`, the draws are those of a standalone UCT with one random
  stream (the registry's ``mcts`` agent).
* Values are kept from the side of the player to move at each node. Backing up from a child to its
  parent negates the value only when the player to move changes: after a completed box the same player
  moves again and the value passes up unchanged.
* Leaves are evaluated in batches of ``batch_size`` with virtual loss, so a network sees one call per
  batch. Terminal leaves get the exact result; with ``prune=True`` (BoxesZero 4.5) a leaf in a simple
  endgame gets its exact result from :func:`dnb_env.analysis.endgame_value` instead of the evaluator,
  and a position with a box on offer only gets the captures and all-but-two declines as children
  (:func:`dnb_env.analysis.capture_or_decline_moves`; BoxesZero's forced moves in opened chains).
* Values are game results (``value="win"``: +1/-1/0, as in AlphaZero) or box margins over the number of
  boxes (``value="margin"``), which makes the search prefer the move that wins by the most, as the exact
  solver scores moves; the evaluator must then predict margins too.
* Dirichlet noise ``(alpha, epsilon)`` at the root for self-play; moves drawn from visit counts with a
  temperature (0 = most visited); the subtree of the move played is kept for the next search.

    search = MCTS(UniformEvaluator(), SearchSettings(simulations=200), np.random.default_rng(0))
    counts = search.run(state)                        # [num_actions] root visit counts
    out = search.output()                             # SearchOutput: the root statistics
    rng = random.Random(0)                            # plain UCT: one stream for move orders and playouts
    uct = MCTS(RolloutEvaluator(rng=rng), SearchSettings(selection="uct", c_puct=2.0, batch_size=1), rng)
"""

from __future__ import annotations

import math
import random
from typing import Sequence

import numpy as np

from agents.search.api import Evaluator, RootOutput, SearchOutput
from agents.search.exact import ExactRoot, exact_solver, final_value, solve_extra
from agents.search.lockstep import begin_all, gc_paused
from agents.search.settings import SearchSettings
from dnb_env.analysis import capture_or_decline_moves, endgame_value
from dnb_env.core import GameState

__all__ = ["MCTS", "Node", "run_many"]


class Node:
    """A position in the tree. Per child edge ``i``: prior ``P[i]``, visits ``N[i]``, summed value ``W[i]``,
    mean ``Q[i]`` (0 while unvisited) and exploration weight ``U[i] = P[i] / (1 + N[i])``, kept up to date by
    :meth:`update` along with ``total = sum(N)``, so selection is one multiply-add and an argmax.
    ``N``, ``W`` and ``Pl`` (the priors again) are Python lists, as scalar updates are the hot path; ``P``,
    ``Q`` and ``U`` are numpy arrays for the vectorised selection. With ``selection="uct"``, ``order`` holds
    the node's moves in the order they are tried (indices into ``state.legal_actions()``, drawn when the
    node is made; edge indices once expanded) and ``tried`` how many of them have been visited."""

    __slots__ = ("state", "actions", "P", "Pl", "N", "W", "Q", "U", "total", "children", "expanded", "terminal",
                 "pending", "solved", "order", "tried")

    def __init__(self, state: GameState):
        self.state = state
        self.actions: list[int] | None = None
        self.P = self.N = self.W = self.Q = self.U = None
        self.total = 0.0
        self.children: dict[int, Node] = {}
        self.expanded = False
        self.terminal = state.is_terminal()
        self.pending: np.ndarray | None = None  # evaluated priors, expanded when the node is first walked through
        self.solved: float | bool | None = None  # exact leaf value from the solver; False: tried, out of budget
        self.order: list[int] | None = None  # selection="uct": the order its moves are tried in
        self.tried = 0

    def expand(self, priors: np.ndarray, actions: list[int] | None = None) -> None:
        """Children for ``actions`` (default: every legal move) with their priors renormalised."""
        self.actions = acts = self.state.legal_actions() if actions is None else list(actions)
        k = len(acts)
        p = np.asarray(priors, dtype=np.float64)[acts]
        total = p.sum()
        self.set_priors(p / total if total > 0 else np.full(k, 1.0 / k))
        self.N = [0.0] * k
        self.W = [0.0] * k
        self.Q = np.zeros(k)
        self.expanded = True

    def set_priors(self, P: np.ndarray) -> None:
        """Replace the priors (e.g. root noise), keeping ``U`` consistent with the visits."""
        self.P = P
        self.Pl = P.tolist()  # for scalar reads in update
        self.U = P.copy() if self.N is None else P / (1.0 + np.asarray(self.N))

    def update(self, i: int, visits: float, value: float) -> None:
        """Add ``visits`` and ``value`` to edge ``i`` (negative for virtual loss and its removal)."""
        N, W = self.N, self.W
        n = N[i] = N[i] + visits
        w = W[i] = W[i] + value
        self.Q[i] = w / n if n > 0 else 0.0
        self.U[i] = self.Pl[i] / (1.0 + n)
        self.total += visits

    @property
    def visits(self) -> float:
        return self.total if self.expanded else 0.0

    def value(self) -> float:
        """Mean backed-up value of the position for its mover (0 before any visit)."""
        return float(sum(self.W) / self.total) if self.total else 0.0

    def internal_nodes(self, played: int, min_visits: float, min_abs_q: float):
        """Expanded non-terminal nodes below this one, outside the subtree of the move ``played``, with at
        least ``min_visits`` visits and |Q| >= ``min_abs_q``: a list of ``(state, counts [A], q)`` (Q for
        the node's own mover), in the order of a depth-first walk that the C++ search repeats."""
        out = []
        stack = [child for a, child in self.children.items() if a != played]
        while stack:
            node = stack.pop()
            if not node.expanded or node.terminal or node.total < min_visits:
                continue
            q = node.value()
            if abs(q) >= min_abs_q:
                counts = np.zeros(node.state.num_actions)
                counts[node.actions] = node.N
                out.append((node.state, counts, q))
            stack.extend(node.children.values())
        return out


class MCTS:
    """The search over one root; ``run(state)`` returns the root's visit counts over all actions,
    ``output()`` its root statistics (:class:`agents.search.api.SearchOutput`). ``rng`` draws the root
    noise and, with ``selection="uct"``, the move orders: a numpy ``Generator``, or for ``"uct"`` anything
    with ``shuffle(list)`` such as a ``random.Random`` shared with the evaluator."""

    backend = "python"

    def __init__(self, evaluator: Evaluator, config: SearchSettings = SearchSettings(),
                 rng: np.random.Generator | random.Random | None = None):
        self.evaluator, self.config = evaluator, config
        self.rng = rng if rng is not None else np.random.default_rng()
        self._uct = config.selection == "uct"
        self.root: Node | None = None
        self.root_net_value: float | None = None  # the evaluator's value of the root, when this search evaluated it
        self.exact_root = ExactRoot(config)
        self._solver = None  # exact leaves (config.solve_leaf), made on first use
        self._zone = config.solve_leaf

    def set_solve_deadline(self, seconds: float | None) -> None:
        """Leaf solves stop ``seconds`` from now as if out of nodes (a timed move), without lowering the
        zone for the rest of the search; None lifts the deadline."""
        if self.config.solve_leaf:
            self._leaf_solver().set_deadline(seconds)

    def _leaf_solver(self):
        if self._solver is None:
            self._solver = exact_solver(self.config, self.config.solve_nodes)
        return self._solver

    def _leaf_value(self, node: Node) -> float | None:
        """Exact value of a leaf for its mover, where one is known without the evaluator."""
        cfg = self.config
        if node.terminal:
            return final_value(node.state, cfg.value)
        if cfg.prune:
            e = endgame_value(node.state)
            if e is not None:
                return final_value(node.state, cfg.value, e)
        if node.solved is None:
            undrawn = node.state.num_actions - node.state.edges.bit_count()
            if undrawn <= self._zone:
                e = solve_extra(self._leaf_solver(), node.state, cfg.value)
                if e is None:
                    node.solved = False
                    if not self._solver.past_deadline():  # out of nodes, not out of time
                        self._zone = undrawn - 1
                else:
                    node.solved = final_value(node.state, cfg.value, e)
        return node.solved if node.solved is not False else None

    def _moves(self, state: GameState) -> list[int] | None:
        """With pruning, a position with a box on offer searches only captures and all-but-two declines."""
        return capture_or_decline_moves(state) if self.config.prune else None

    def _node(self, state: GameState) -> Node:
        """A new node; with ``selection="uct"`` it draws the order its moves will be tried in (the first
        is the last of the shuffled list, as a standalone UCT pops its untried moves)."""
        node = Node(state)
        if self._uct:
            order = list(range(len(state.legal_actions())))
            self.rng.shuffle(order)
            order.reverse()
            node.order = order
        return node

    def _expand(self, node: Node, priors: np.ndarray) -> None:
        node.expand(priors, self._moves(node.state))
        node.pending = None
        if node.order is not None:  # uct: the order as edge indices (only the searched moves, with pruning)
            legal = node.state.legal_actions()
            if len(node.actions) < len(legal):
                edge = {a: i for i, a in enumerate(node.actions)}
                node.order = [edge[legal[j]] for j in node.order if legal[j] in edge]

    def _uct_edge(self, node: Node, visits: float) -> int:
        """The next unvisited edge in the node's order, else argmax Q + c sqrt(ln visits / N) over the
        edges in that order (ties to the one tried first); ``visits`` = N(s) of the node."""
        order, N, W = node.order, node.N, node.W
        k, j = len(order), node.tried
        while j < k and N[order[j]] > 0:
            j += 1
        node.tried = j
        if j < k:
            return order[j]
        c, log_n, sqrt = self.config.c_puct, math.log(visits), math.sqrt
        best, best_score = order[0], -math.inf
        for i in order:
            n = N[i]
            score = W[i] / n + c * sqrt(log_n / n)
            if score > best_score:
                best, best_score = i, score
        return best

    def _descend(self, root: Node) -> tuple[list[tuple[Node, int]], Node]:
        """Walk to a leaf, taking at each node the edge of the selection rule (puct: the one maximising
        Q + c_puct sqrt(sum N) P / (1 + N)) and applying virtual loss along the path."""
        path = []
        node = root
        vl, c, sqrt, uct = self.config.virtual_loss, self.config.c_puct, math.sqrt, self._uct
        visits = root.total  # uct: N(s) of the node, the root's sum N, then the visits of the edge taken
        while not node.terminal:
            if not node.expanded:
                if node.pending is None:
                    break
                self._expand(node, node.pending)
            if uct:
                i = self._uct_edge(node, visits)
                visits = node.N[i]
            else:
                t = node.total
                i = int((node.Q + (c * sqrt(t if t > 1.0 else 1.0)) * node.U).argmax())
            path.append((node, i))
            node.update(i, vl, -vl)
            a = node.actions[i]
            child = node.children.get(a)
            if child is None:
                child = node.children[a] = self._node(node.state.apply(a))
            node = child
        return path, node

    def _backup(self, path: list[tuple[Node, int]], leaf: Node, value: float) -> None:
        """``value`` is for the leaf's mover; each edge stores it from its parent's mover's side."""
        vl = self.config.virtual_loss
        v, mover = value, leaf.state.current_player
        for node, i in reversed(path):
            if node.state.current_player != mover:
                v, mover = -v, node.state.current_player
            node.update(i, 1 - vl, v + vl)

    def _revert(self, path: list[tuple[Node, int]]) -> None:
        vl = self.config.virtual_loss
        for node, i in path:
            node.update(i, -vl, vl)

    def _expand_root(self, root: Node, evaluation: RootOutput | None = None) -> None:
        if not root.expanded:
            if root.pending is None and self._uct:  # uct uses no priors: the root is not evaluated
                root.pending = np.full(root.state.num_actions, 1.0 / root.state.num_actions)
            if root.pending is None:
                if evaluation is None:
                    priors, values = self.evaluator.evaluate([root.state])
                    evaluation = RootOutput(priors[0], values[0])
                root.pending, self.root_net_value = evaluation.priors, float(evaluation.value)
            self._expand(root, root.pending)
        if self.config.add_noise and len(root.actions) > 1:
            noise = self.rng.dirichlet([self.config.dirichlet_alpha] * len(root.actions))
            eps = self.config.dirichlet_epsilon
            root.set_priors((1 - eps) * root.P + eps * noise)

    def begin(self, state: GameState, evaluation: RootOutput | None = None) -> None:
        """Start (or continue, with tree reuse) a search from ``state``; ``evaluation`` = the evaluator's
        view of ``state`` if the caller has it (else it is asked)."""
        if state.is_terminal():
            raise ValueError("cannot search a finished game")
        self.root_net_value = None
        self.root = self._reuse(state)
        self._expand_root(self.root, evaluation)
        self.done = 0
        self._zone = self.config.solve_leaf

    def needs_root_evaluation(self, state: GameState) -> bool:
        """Whether :meth:`begin` on ``state`` would ask the evaluator for the root (no reusable subtree;
        never with ``selection="uct"``)."""
        if self._uct:
            return False
        root = self._reuse(state)
        return not root.expanded and root.pending is None

    def remaining(self) -> int:
        return self.config.simulations - self.done

    def collect(self, limit: int) -> list[tuple[list, Node]]:
        """Up to ``limit`` leaves needing the evaluator (virtual loss applied); leaves with an exact value
        are backed up on the way and count as simulations."""
        batch: list[tuple[list, Node]] = []
        queued: set[int] = set()
        for _ in range(min(limit, self.remaining())):
            path, leaf = self._descend(self.root)
            exact = self._leaf_value(leaf)
            if exact is not None:
                self._backup(path, leaf, exact)
                self.done += 1
            elif id(leaf) in queued:
                self._revert(path)  # the same leaf twice in one batch: evaluate it once
            else:
                queued.add(id(leaf))
                batch.append((path, leaf))
        return batch

    def complete(self, batch: list[tuple[list, Node]], priors: np.ndarray, values: np.ndarray) -> None:
        """Back up the leaves of ``batch`` with the evaluator's values and keep their priors; a leaf is
        expanded (children, pruning) only when a later simulation walks through it, which most leaves of
        a wide tree never see."""
        for (path, leaf), p, v in zip(batch, priors, values):
            leaf.pending = p
            self._backup(path, leaf, float(v))
        self.done += len(batch)

    def counts(self) -> np.ndarray:
        """Root visit counts over all ``num_actions`` actions."""
        root = self.root
        out = np.zeros(root.state.num_actions)
        out[root.actions] = root.N
        return out

    def root_value(self) -> float:
        """Mean backed-up value at the root for its mover (the search's Q of the position)."""
        return self.root.value()

    def visit_order(self) -> list[int]:
        """The root's moves in the order the search first took them (those it took)."""
        return list(self.root.children)

    def output(self) -> SearchOutput:
        """The root statistics of the last search (:class:`agents.search.api.SearchOutput`)."""
        root = self.root
        A = root.state.num_actions
        q, priors = np.zeros(A), np.zeros(A)
        q[root.actions] = root.Q
        priors[root.actions] = root.P
        return SearchOutput(self.counts(), q, priors, self.root_value(), self.root_net_value)

    def internal_nodes(self, played: int, min_visits: float, min_abs_q: float):
        """Expanded nodes below the root outside the subtree of ``played`` with at least ``min_visits``
        visits and |Q| >= ``min_abs_q`` (:meth:`Node.internal_nodes`): a list of ``(state, counts [A], q)``."""
        return [] if self.root is None else self.root.internal_nodes(played, min_visits, min_abs_q)

    def run(self, state: GameState) -> np.ndarray:
        """A whole search from ``state``; returns the root's visit counts ``[num_actions]``."""
        return run_many([self], [state], self.evaluator)[0]

    def _reuse(self, state: GameState) -> Node:
        old = self.root
        if self.config.reuse_tree and old is not None and old.state.geometry is state.geometry:
            h0, h = old.state.history, state.history
            if len(h) >= len(h0) and h[: len(h0)] == h0:
                node = old
                for a in h[len(h0):]:
                    node = node.children.get(a)
                    if node is None:
                        break
                else:
                    if node.state == state:
                        return node
        return self._node(state)

    def advance(self, action: int) -> None:
        """Keep the subtree of ``action`` as the next root (tree reuse)."""
        if self.root is not None:
            self.root = self.root.children.get(action)


def run_many(searches: Sequence[MCTS], states: Sequence[GameState], evaluator: Evaluator) -> list[np.ndarray]:
    """Run one Python search per state in lockstep, so every evaluator call holds leaves of all of them
    (many self-play games share each network call). Returns the visit counts of each root."""
    with gc_paused():
        begin_all(searches, states, evaluator)
        while any(s.remaining() > 0 for s in searches):
            batches = [s.collect(s.config.batch_size) if s.remaining() > 0 else [] for s in searches]
            leaves = [leaf.state for b in batches for _, leaf in b]
            if not leaves:
                continue
            priors, values = evaluator.evaluate(leaves)
            k = 0
            for search, batch in zip(searches, batches):
                search.complete(batch, priors[k: k + len(batch)], values[k: k + len(batch)])
                k += len(batch)
    return [s.counts() for s in searches]
