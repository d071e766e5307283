"""PUCT Monte-Carlo tree search with a pluggable evaluator (AlphaZero; Dotsformer Appendix E).

One search serves AlphaZero, Dotsformer and plain MCTS: only the evaluator changes.

* Selection: ``a* = argmax_a Q(s, a) + c_puct * P(s, a) * sqrt(N(s)) / (1 + N(s, a))`` over legal moves,
  vectorised per node: each node keeps Q and ``U = P / (1 + N)`` per edge up to date, so a selection is
  one multiply-add and an argmax. A leaf keeps its evaluated priors and is expanded (children, pruning)
  only when a later simulation walks through it, which most leaves of a wide tree never see. The cyclic
  garbage collector is paused during a search (:func:`gc_paused`).
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

    agent = MCTSAgent(UniformEvaluator(), MCTSConfig(simulations=200), seed=0)
"""

from __future__ import annotations

import contextlib
import gc
import math
import random
from dataclasses import dataclass
from typing import Protocol, Sequence

import numpy as np

from agents.base import check_state
from dnb_env.analysis import capture_or_decline_moves, endgame_value
from dnb_env.core import GameState
from dnb_env.solver import Solver, SolverBudgetExceeded, native_available

__all__ = ["Evaluator", "UniformEvaluator", "RolloutEvaluator", "MCTSConfig", "MCTS", "MCTSAgent", "Node", "ExactRoot",
           "begin_all", "final_value", "gc_paused", "run_many", "solve_extra", "solver_zone", "visits_to_policy"]


class Evaluator(Protocol):
    def evaluate(self, states: Sequence[GameState]) -> tuple[np.ndarray, np.ndarray]:
        """``(priors [B, num_actions], values [B])``: move probabilities (need not be masked) and the
        expected result in [-1, 1] for the player to move in each state."""


class UniformEvaluator:
    """Uniform priors and value 0: the cheapest evaluator (search guided by terminal results only)."""

    def evaluate(self, states):
        A = states[0].num_actions
        return np.full((len(states), A), 1.0 / A), np.zeros(len(states))


class RolloutEvaluator:
    """Uniform priors; value = mean result of ``n_rollouts`` uniformly random playouts for the mover
    (win/loss, or the margin over the number of boxes with ``value="margin"``)."""

    def __init__(self, n_rollouts: int = 1, seed: int | None = None, value: str = "win"):
        self.n_rollouts = n_rollouts
        self.rng = random.Random(seed)
        self.value = value

    def evaluate(self, states):
        A = states[0].num_actions
        values = np.zeros(len(states))
        for i, s in enumerate(states):
            m = s.to_mutable()
            total = 0.0
            for _ in range(self.n_rollouts):
                d = m.random_playout(self.rng.random)
                r = d / (s.rows * s.cols) if self.value == "margin" else (d > 0) - (d < 0)
                total += r if s.current_player == 0 else -r
            values[i] = total / self.n_rollouts
        return np.full((len(states), A), 1.0 / A), values


@dataclass(frozen=True)
class MCTSConfig:
    """Search settings; defaults are Dotsformer Table A1 (c_puct 1.0, temperature 0.4, 800 simulations)."""

    simulations: int = 800
    c_puct: float = 1.0
    temperature: float = 0.4
    dirichlet_alpha: float = 0.3
    dirichlet_epsilon: float = 0.25
    add_noise: bool = False
    batch_size: int = 8
    virtual_loss: float = 1.0
    prune: bool = True
    reuse_tree: bool = True
    value: str = "win"  # "win": results +1/-1/0 (AlphaZero); "margin": final box margin / number of boxes
    # the exact solver (dnb_env.solver, alpha-beta; needs the C++ extension), 0 = off. Leaves with at most
    # solve_leaf undrawn edges are solved within solve_nodes nodes each (a solve that runs out lowers the
    # zone to one edge below that leaf for the rest of the search); a root with at most solve_root undrawn
    # edges is not searched: its policy is uniform over the moves of best margin (:class:`ExactRoot`),
    # when solve_root_nodes suffice. Tables of at most solve_tt_mb MB, kept across searches.
    solve_leaf: int = 0
    solve_root: int = 0
    solve_nodes: int = 1_000_000
    solve_root_nodes: int = 2_000_000
    solve_tt_mb: float = 16.0

    def __post_init__(self):
        if self.value not in ("win", "margin"):
            raise ValueError(f"value must be 'win' or 'margin', not {self.value!r}")
        if self.simulations < 1 or self.batch_size < 1:
            raise ValueError("simulations and batch_size must be >= 1")
        if self.c_puct <= 0 or self.temperature < 0:
            raise ValueError("c_puct must be > 0 and temperature >= 0")
        if self.solve_leaf < 0 or self.solve_root < 0:
            raise ValueError("solve_leaf and solve_root must be >= 0 (0 = no exact solving)")
        if self.solve_nodes < 1 or self.solve_root_nodes < 1 or not 1 <= self.solve_tt_mb <= 65536:
            raise ValueError("solve_nodes and solve_root_nodes must be >= 1 and solve_tt_mb in 1..65536")


# auto zones on big boards (undrawn edges): on 5x5 midgame positions (benchmarks/midgame.py) these zones with
# 1M-node leaf budgets lift the shipped AlphaZero from 0.37-0.52 to 0.88-1.00 winning-move accuracy at steps
# 22-26 and take less time per move than the search without them
SOLVE_ROOT_CAP, SOLVE_LEAF_CAP = 34, 36


def solver_zone(setting: int, num_actions: int, cap: int) -> int:
    """A solver zone option resolved for a board: ``-1`` (auto) is ``min(cap, 3 * num_actions // 5)`` undrawn
    edges (the last 60% of the game at most) when the C++ solver is built, else 0; other values as given
    (0 = off)."""
    if isinstance(setting, bool) or not isinstance(setting, int) or setting < -1:
        raise ValueError(f"a solver zone must be -1 (auto), 0 (off) or a number of undrawn edges, got {setting!r}")
    if setting == -1:
        return min(cap, 3 * num_actions // 5) if native_available() else 0
    return setting


def _exact_solver(config: MCTSConfig, node_limit: int):
    if not native_available():
        raise ImportError("solve_leaf / solve_root need the C++ extension dnb_env._native (the alpha-beta "
                          "solver), which is not built; reinstall with a C++17 compiler or set them to 0")
    return Solver(max_undrawn=180, engine="alphabeta", node_limit=node_limit, tt_mb=config.solve_tt_mb)


def solve_extra(solver, state: GameState, value: str) -> int | None:
    """What the open boxes of ``state`` are worth net to its mover under best play, as far as ``value``
    needs: the exact margin (``"margin"``) or one margin of the right sign (``"win"``: one or two
    null-window tests); None when the solver's node budget runs out. The C++ search's ``Tree::solve``
    asks the same queries in the same order, so both searches agree even where a budget runs out."""
    try:
        if value == "margin":
            lo, hi = solver.bounds(state)
            return lo if lo == hi else None
        s0, s1 = state.scores
        have = s0 - s1 if state.current_player == 0 else s1 - s0
        if solver.at_least(state, 1 - have):
            return 1 - have
        return -have if solver.at_least(state, -have) else -have - 1
    except SolverBudgetExceeded:
        return None


class ExactRoot:
    """The root policy in the solver zone (``config.solve_root``): uniform over the moves that keep the
    best margin (so also the best result), with the exact value of the position in the search's units;
    None outside the zone or when ``solve_root_nodes`` do not suffice. Used by both search backends."""

    def __init__(self, config: MCTSConfig):
        self.config = config
        self._solver = None

    def policy(self, state: GameState) -> tuple[np.ndarray, float] | None:
        cfg = self.config
        if not cfg.solve_root or state.num_actions - state.edges.bit_count() > cfg.solve_root:
            return None
        if self._solver is None:
            self._solver = _exact_solver(cfg, cfg.solve_root_nodes)
        try:
            values = self._solver.move_values(state)
        except SolverBudgetExceeded:
            return None
        best = max(values.values())
        pi = np.zeros(state.num_actions)
        pi[[a for a, v in values.items() if v == best]] = 1.0
        return pi / pi.sum(), final_value(state, cfg.value, best)


def final_value(state: GameState, value: str = "win", extra: int = 0) -> float:
    """Result for ``state.current_player`` when the boxes still open go ``extra`` net to that player
    (0 for a finished game): the sign of the final margin (``"win"``) or the margin over the number of
    boxes (``"margin"``), so both lie in [-1, 1]."""
    s0, s1 = state.scores
    margin = (s0 - s1 if state.current_player == 0 else s1 - s0) + extra
    if value == "margin":
        return margin / (state.rows * state.cols)
    return float((margin > 0) - (margin < 0))


class Node:
    """A position in the tree. Per child edge ``i``: prior ``P[i]``, visits ``N[i]``, summed value ``W[i]``,
    mean ``Q[i]`` (0 while unvisited) and exploration weight ``U[i] = P[i] / (1 + N[i])``, kept up to date by
    :meth:`update` along with ``total = sum(N)``, so selection is one multiply-add and an argmax.
    ``N``, ``W`` and ``Pl`` (the priors again) are Python lists, as scalar updates are the hot path; ``P``,
    ``Q`` and ``U`` are numpy arrays for the vectorised selection."""

    __slots__ = ("state", "actions", "P", "Pl", "N", "W", "Q", "U", "total", "children", "expanded", "terminal",
                 "pending", "solved")

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


@contextlib.contextmanager
def gc_paused():
    """Pause Python's cyclic garbage collector while a search grows its tree (restored after, also on
    error). Tree nodes only point down to their children, so they hold no reference cycles and are freed
    by reference counting as before; the collector would only re-scan the growing tree, which took up to
    half of a search's time."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class MCTS:
    """The search over one root; ``run(state)`` returns the root's visit counts over all actions."""

    def __init__(self, evaluator: Evaluator, config: MCTSConfig = MCTSConfig(), rng: np.random.Generator | None = None):
        self.evaluator, self.config = evaluator, config
        self.rng = rng if rng is not None else np.random.default_rng()
        self.root: Node | None = None
        self.root_net_value: float | None = None  # the evaluator's value of the root, when this search evaluated it
        self.exact_root = ExactRoot(config)
        self._solver = None  # exact leaves (config.solve_leaf), made on first use
        self._zone = config.solve_leaf

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
                if self._solver is None:
                    self._solver = _exact_solver(cfg, cfg.solve_nodes)
                e = solve_extra(self._solver, node.state, cfg.value)
                if e is None:
                    node.solved, self._zone = False, undrawn - 1
                else:
                    node.solved = final_value(node.state, cfg.value, e)
        return node.solved if node.solved is not False else None

    def _moves(self, state: GameState) -> list[int] | None:
        """With pruning, a position with a box on offer searches only captures and all-but-two declines."""
        return capture_or_decline_moves(state) if self.config.prune else None

    def _expand(self, node: Node, priors: np.ndarray) -> None:
        node.expand(priors, self._moves(node.state))
        node.pending = None

    def _descend(self, root: Node) -> tuple[list[tuple[Node, int]], Node]:
        """Walk to a leaf, taking at each node the edge maximising Q + c_puct sqrt(sum N) P / (1 + N) and
        applying virtual loss along the path."""
        path = []
        node = root
        vl, c, sqrt = self.config.virtual_loss, self.config.c_puct, math.sqrt
        while not node.terminal:
            if not node.expanded:
                if node.pending is None:
                    break
                self._expand(node, node.pending)
            t = node.total
            i = int((node.Q + (c * sqrt(t if t > 1.0 else 1.0)) * node.U).argmax())
            path.append((node, i))
            node.update(i, vl, -vl)
            a = node.actions[i]
            child = node.children.get(a)
            if child is None:
                child = node.children[a] = Node(node.state.apply(a))
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

    def _expand_root(self, root: Node, evaluation: tuple[np.ndarray, float] | None = None) -> None:
        if not root.expanded:
            if root.pending is None:
                priors, values = evaluation if evaluation is not None else self.evaluator.evaluate([root.state])
                root.pending, self.root_net_value = priors[0], float(values[0])
            self._expand(root, root.pending)
        if self.config.add_noise and len(root.actions) > 1:
            noise = self.rng.dirichlet([self.config.dirichlet_alpha] * len(root.actions))
            eps = self.config.dirichlet_epsilon
            root.set_priors((1 - eps) * root.P + eps * noise)

    def begin(self, state: GameState, evaluation: tuple[np.ndarray, np.ndarray] | None = None) -> None:
        """Start (or continue, with tree reuse) a search from ``state``; ``evaluation`` = the evaluator's
        ``(priors [1, A], values [1])`` for ``state`` if the caller has them (else it is asked)."""
        if state.is_terminal():
            raise ValueError("cannot search a finished game")
        self.root_net_value = None
        self.root = self._reuse(state)
        self._expand_root(self.root, evaluation)
        self.done = 0
        self._zone = self.config.solve_leaf

    def needs_root_evaluation(self, state: GameState) -> bool:
        """Whether :meth:`begin` on ``state`` would ask the evaluator for the root (no reusable subtree)."""
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
        return Node(state)

    def advance(self, action: int) -> None:
        """Keep the subtree of ``action`` as the next root (tree reuse)."""
        if self.root is not None:
            self.root = self.root.children.get(action)


def begin_all(searches: Sequence, states: Sequence[GameState], evaluator: Evaluator) -> None:
    """``begin`` every search on its state, with every root that needs the evaluator in one call (either
    backend's searches)."""
    fresh = [i for i, (search, state) in enumerate(zip(searches, states)) if search.needs_root_evaluation(state)]
    evaluations: dict[int, tuple] = {}
    if fresh:
        priors, values = evaluator.evaluate([states[i] for i in fresh])
        evaluations = {i: (priors[k: k + 1], values[k: k + 1]) for k, i in enumerate(fresh)}
    for i, (search, state) in enumerate(zip(searches, states)):
        search.begin(state, evaluations.get(i))


def run_many(searches: Sequence["MCTS"], states: Sequence[GameState], evaluator: Evaluator) -> list[np.ndarray]:
    """Run one search per state in lockstep, so every evaluator call holds leaves of all of them (many
    self-play games share each network call). Returns the visit counts of each root."""
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


def visits_to_policy(counts: np.ndarray, temperature: float) -> np.ndarray:
    """Visit counts -> move probabilities: ``N^(1/T)`` normalised; T = 0 puts all mass on the most visited."""
    if temperature == 0:
        p = (counts == counts.max()).astype(np.float64)
    else:
        p = np.power(counts / max(counts.max(), 1e-12), 1.0 / temperature)
    return p / p.sum()


class MCTSAgent:
    """An Agent over :class:`MCTS`; moves drawn from the visit distribution at ``config.temperature``
    (``greedy=True`` always takes the most visited move). ``board`` is the ``(rows, cols)`` the evaluator
    was built for (None: any), checked with every state (:func:`agents.base.check_state`)."""

    def __init__(self, evaluator: Evaluator, config: MCTSConfig = MCTSConfig(), seed: int | None = None,
                 greedy: bool = True, name: str = "puct", board: tuple[int, int] | None = None):
        self.rng = np.random.default_rng(seed)
        self.search = MCTS(evaluator, config, self.rng)
        self.greedy, self.name, self.board = greedy, name, board

    def seed(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        self.search.rng = self.rng

    def reset(self) -> None:
        self.search.root = None

    def action_probabilities(self, state: GameState) -> np.ndarray:
        check_state(self, state)  # select_action starts here too
        exact = self.search.exact_root.policy(state)
        if exact is not None:  # in the solver zone: every move of best margin, uniform
            return exact[0]
        return visits_to_policy(self.search.run(state), 0.0 if self.greedy else self.search.config.temperature)

    def select_action(self, state: GameState) -> int:
        p = self.action_probabilities(state)
        ties = np.flatnonzero(p == p.max()) if self.greedy else None
        action = int(self.rng.choice(ties)) if ties is not None else int(self.rng.choice(len(p), p=p))
        self.search.advance(action)
        return action
