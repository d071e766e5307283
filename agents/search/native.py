"""The tree search of :mod:`agents.search.python` in C++ (``dnb_env._native.SearchTree``), same API, same results.

==========================  ==================================================================================
what                        call
==========================  ==================================================================================
one search                  ``NativeMCTS(evaluator, settings, rng)``: ``run(state)`` -> visit counts ``[A]``,
                            ``output()`` -> :class:`agents.search.api.SearchOutput`, and ``begin/collect/
                            complete/counts/root_value/advance/internal_nodes`` as
                            :class:`agents.search.python.MCTS`
many games in lockstep      ``run_many_native(searches, states, evaluator)``: one evaluator call per round
                            holds the leaves of every search; the tree work runs in C++ without the GIL
leaves in bulk              ``NativeBatch``: ``planes [L, C, H, W]`` float32 (native encoders), ``masks [L, A]``
                            int8, ``edges [L, 3]`` uint64, ``owners [L, 2, 2]`` uint64, ``mover [L]`` int8,
                            ``states`` (GameState objects, built on first use)
cheap evaluators in C++     ``UniformEvaluator`` (agents.search.evaluators) and :class:`NativeRolloutEvaluator` run inside
                            the native search with no Python call per round
==========================  ==================================================================================

Parity. For the same evaluator outputs the native search gives the same visit counts, root values and
moves as the Python reference bit for bit: it renormalises priors with numpy's summation order, applies
updates in the reference's order, and takes its Dirichlet noise from the same numpy ``Generator`` calls
(drawn here in Python, in the same order, and passed down). ``tests/test_search_native.py`` checks this on
many positions and settings. With ``selection="uct"`` the rule is the same but the move orders come from a
generator of the tree's own (seeded from ``rng`` at every ``begin``), so the two backends agree in
distribution, not draw for draw.

Evaluator. ``run_many_native`` gives a network evaluator the planes encoded in C++ when it has
``evaluate_planes(planes [L, C, H, W], masks [L, A]) -> (priors [L, A], values [L])`` and an ``encoder`` the
native engine implements (:func:`planes_encoder`; ``agents.models.evaluator.NetworkEvaluator`` has both);
otherwise it builds the leaves' ``GameState`` objects and calls ``evaluate(states)``. Leaf states carry the
synthetic history of :func:`dnb_env.native.states_from_native` (their drawn edges in increasing order): the
position, not the move order.

Memory. The tree is a node pool with each node's child edges in contiguous arrays; when the root moves
(tree reuse) the pools are compacted to the kept subtree, so a game's searches reuse one tree's memory.

Errors: ``begin`` on a finished game, ``complete`` without its ``collect``, priors or values of the wrong
shape (``ValueError``) or dtype (``TypeError``), or not finite: each raises before anything changes.
"""

from __future__ import annotations

import time
from typing import Sequence

import numpy as np

from agents.search.api import RootOutput, SearchOutput
from agents.search.evaluators import UniformEvaluator
from agents.search.exact import ExactRoot
from agents.search.lockstep import begin_all, gc_paused
from agents.search.settings import SearchSettings
from dnb_env import native
from dnb_env.core import GameState
from dnb_env.observations import ENCODERS

__all__ = ["NativeMCTS", "NativeBatch", "NativeRolloutEvaluator", "run_many_native", "available"]


def available() -> bool:
    """Whether the C++ search is built (``dnb_env.native.available()``)."""
    return native.available()


def _module(rows: int = 1, cols: int = 1):
    return native._require(rows, cols)


def _states(rows: int, cols: int, edges, owners, mover) -> list[GameState]:
    if len(mover) == 0:
        return []
    boards = native.NativeBoards.from_arrays(rows, cols, edges, owners, mover)
    return native.states_from_native(boards)


def _float64(x, what: str) -> np.ndarray:
    a = np.asarray(x)
    if a.dtype.kind not in "fiu" or a.dtype == np.bool_:
        raise TypeError(f"{what} must be an array of real numbers, got dtype {a.dtype}")
    return np.ascontiguousarray(a, dtype=np.float64)


class NativeRolloutEvaluator:
    """Uniform priors; value = mean result of ``n_rollouts`` uniformly random playouts for the mover (win/loss,
    or the margin over the number of boxes with ``value="margin"``), played in C++. Inside a native search
    the playouts run in the tree's own thread with no Python call; ``evaluate(states)`` serves the Python
    search (same values in distribution, not the same random numbers)."""

    def __init__(self, n_rollouts: int = 1, seed: int | None = None, value: str = "win"):
        if n_rollouts < 1:
            raise ValueError(f"n_rollouts must be >= 1, got {n_rollouts}")
        if value not in ("win", "margin"):
            raise ValueError(f"value must be 'win' or 'margin', not {value!r}")
        self.n_rollouts, self.value = n_rollouts, value
        self._seeds = np.random.default_rng(seed)

    def next_seed(self) -> int:
        return int(self._seeds.integers(2**63))

    def evaluate(self, states):
        A = states[0].num_actions
        boards = native.to_native(states)
        d = boards.random_playouts(self.next_seed(), self.n_rollouts).astype(np.float64)
        r = d / (states[0].rows * states[0].cols) if self.value == "margin" else np.sign(d)
        sign = np.where(boards.current_player() == 0, 1.0, -1.0)
        return np.full((len(states), A), 1.0 / A), (r * sign[:, None]).mean(axis=1)


def _builtin(evaluator, config: SearchSettings) -> tuple[str, int] | None:
    """The built-in evaluator that computes exactly what ``evaluator`` would, if there is one."""
    if type(evaluator) is UniformEvaluator:
        return "uniform", 0
    if type(evaluator) is NativeRolloutEvaluator and evaluator.value == config.value:
        return "rollout", evaluator.n_rollouts
    return None


class _Leaf:
    __slots__ = ("state",)

    def __init__(self, state):
        self.state = state


class NativeBatch:
    """The leaves of one ``collect``: arrays from C++ (module docstring) and, on first use, ``states``.
    Iterating yields ``(None, leaf)`` pairs with ``leaf.state``, as the Python search's batches do."""

    def __init__(self, owner, rows: int, cols: int, counts, planes, masks, edges, owners, mover):
        self._owner, self.rows, self.cols = owner, rows, cols
        self.counts, self.planes, self.masks, self.edges, self.owners, self.mover = (
            counts, planes, masks, edges, owners, mover)
        self._states: list[GameState] | None = None

    def __len__(self) -> int:
        return len(self.mover)

    @property
    def states(self) -> list[GameState]:
        if self._states is None:
            self._states = _states(self.rows, self.cols, self.edges, self.owners, self.mover)
        return self._states

    def __iter__(self):
        return iter([(None, _Leaf(s)) for s in self.states])


class _RootView:
    """Read-only view of a native root: ``state``, ``actions``, ``N``, ``W``, ``P``, ``total``, ``value()``."""

    def __init__(self, search: "NativeMCTS"):
        self.state = search._root_state
        t = search._tree
        self.expanded = t.root_expanded
        if self.expanded:
            actions, N, W, P = t.root_edges()
            self.actions, self.N, self.W, self.P = actions.tolist(), N.tolist(), W.tolist(), P
        else:
            self.actions = None
            self.N = self.W = self.P = None
        self.total = t.root_total

    @property
    def visits(self) -> float:
        return self.total if self.expanded else 0.0

    def value(self) -> float:
        return float(sum(self.W) / self.total) if self.total else 0.0


class NativeMCTS:
    """:class:`agents.search.python.MCTS` in C++ (module docstring): same constructor, methods and results.

    ``root`` is a read-only view of the root (None without a tree); setting it to None forgets the tree."""

    backend = "native"

    def __init__(self, evaluator, config: SearchSettings = SearchSettings(), rng: np.random.Generator | None = None):
        self.evaluator, self.config = evaluator, config
        self.rng = rng if rng is not None else np.random.default_rng()
        self.root_net_value: float | None = None
        self._mod = _module()
        self._tree = self._new_tree()
        self.exact_root = ExactRoot(config)
        self._forest = None  # a SearchForest of this tree alone, for collect/complete
        self._root_state: GameState | None = None
        self._batch: NativeBatch | None = None
        self._solve_deadline: float | None = None  # set_solve_deadline's time.perf_counter() time

    def _new_tree(self):
        c = self.config
        return self._mod.SearchTree(c.c_puct, c.virtual_loss, c.prune, c.value, c.selection, c.solve_leaf,
                                    c.solve_nodes, c.solve_tt_mb)

    def _tree_for(self, state: GameState) -> None:
        """A tree of the C++ build that takes ``state``'s board (boards past 9x9 run in the wide build); the
        kept tree when it is of that build already."""
        mod = _module(state.rows, state.cols)
        if mod is self._mod:
            return
        self._mod = mod
        self._tree, self._forest = self._new_tree(), None
        self._root_state = None
        if self._solve_deadline is not None:
            self._tree.set_solve_deadline(max(0.0, self._solve_deadline - time.perf_counter()))

    def set_solve_deadline(self, seconds: float | None) -> None:
        """Leaf solves stop ``seconds`` from now as if out of nodes (a timed move), without lowering the
        zone for the rest of the search; None lifts the deadline."""
        self._solve_deadline = None if seconds is None else time.perf_counter() + float(seconds)
        self._tree.set_solve_deadline(-1.0 if seconds is None else float(seconds))

    # ------------------------------------------------------------------ tree and root
    @property
    def root(self):
        return _RootView(self) if self._root_state is not None and self._tree.has_root else None

    @root.setter
    def root(self, value) -> None:
        if value is not None:
            raise TypeError("a native search's root can only be set to None (forget the tree)")
        self._tree.clear()
        self._root_state = None
        self._batch = None

    @property
    def done(self) -> int:
        return self._tree.done

    def _reuse_path(self, state: GameState):
        """The moves from the kept root to ``state`` when the tree may be reused (else None)."""
        old = self._root_state
        if self.config.reuse_tree and old is not None and old.geometry is state.geometry and self._tree.has_root:
            h0, h = old.history, state.history
            if len(h) >= len(h0) and h[: len(h0)] == h0:
                return h[len(h0):]
        return None

    def needs_root_evaluation(self, state: GameState) -> bool:
        """Whether :meth:`begin` on ``state`` would ask the evaluator for the root (no reusable subtree;
        never with ``selection="uct"``)."""
        self._tree_for(state)
        return self.config.selection != "uct" and self._tree.peek(state, self._reuse_path(state))

    def begin(self, state: GameState, evaluation: RootOutput | None = None) -> None:
        """Start (or continue, with tree reuse) a search from ``state``; ``evaluation`` = the evaluator's
        view of ``state`` if the caller has it (else it is asked)."""
        if state.is_terminal():
            raise ValueError("cannot search a finished game")
        cfg = self.config
        self.root_net_value = None
        self._batch = None
        self._tree_for(state)
        needs = self._tree.begin(state, self._reuse_path(state), cfg.simulations)
        self._root_state = state
        if cfg.selection == "uct":  # no priors needed: the root is not evaluated; the move orders' seed
            self._tree.seed_orders(int(self.rng.integers(2**63)))
            if needs:
                self._tree.set_root_priors(np.full(state.num_actions, 1.0 / state.num_actions))
        elif needs:
            if evaluation is None:
                priors, values = self.evaluator.evaluate([state])
                evaluation = RootOutput(priors[0], values[0])
            self._tree.set_root_priors(_float64(evaluation.priors, "priors"))
            self.root_net_value = float(evaluation.value)
        k = self._tree.expand_root()
        if cfg.add_noise and k > 1:
            noise = self.rng.dirichlet([cfg.dirichlet_alpha] * k)
            self._tree.add_root_noise(np.ascontiguousarray(noise, dtype=np.float64), cfg.dirichlet_epsilon)

    def remaining(self) -> int:
        return self._tree.remaining

    def advance(self, action: int) -> None:
        """Keep the subtree of ``action`` as the next root (tree reuse)."""
        if self._root_state is not None and self._tree.advance(int(action)):
            self._root_state = self._root_state.apply(int(action))
        else:
            self._root_state = None
        self._batch = None

    # ------------------------------------------------------------------ leaves
    def collect(self, limit: int) -> NativeBatch:
        """Up to ``limit`` leaves needing the evaluator (virtual loss applied); leaves with an exact value
        are backed up on the way and count as simulations."""
        if self._root_state is None:
            raise ValueError("collect() before begin(state)")
        if self._forest is None:
            self._forest = self._mod.SearchForest([self._tree], planes_encoder(self.evaluator), 1)
        counts, planes, masks, edges, owners, mover = self._forest.collect(np.array([limit], np.int64))
        g = self._root_state.geometry
        self._batch = NativeBatch(self, g.rows, g.cols, counts, planes, masks, edges, owners, mover)
        return self._batch

    def complete(self, batch: NativeBatch, priors: np.ndarray, values: np.ndarray) -> None:
        """Back up the leaves of ``batch`` (from the last :meth:`collect`) with the evaluator's
        ``priors [L, A]`` and ``values [L]``."""
        if batch is None or batch is not self._batch:
            raise ValueError("complete() without a pending collect(): pass the batch of the last collect()")
        if len(batch):
            self._forest.complete(_float64(priors, "priors"), _float64(values, "values"))
        self._batch = None

    # ------------------------------------------------------------------ results
    def counts(self) -> np.ndarray:
        """Root visit counts over all ``num_actions`` actions."""
        actions, N, _, _ = self._tree.root_edges()
        out = np.zeros(self._root_state.num_actions)
        out[actions] = N
        return out

    def root_value(self) -> float:
        """Mean backed-up value at the root for its mover (the search's Q of the position)."""
        total = self._tree.root_total
        return float(sum(self._tree.root_edges()[2].tolist()) / total) if total else 0.0

    def visit_order(self) -> list[int]:
        """The root's moves in the order the search first took them (those it took)."""
        return self._tree.root_visit_order().tolist()

    def output(self) -> SearchOutput:
        """The root statistics of the last search (:class:`agents.search.api.SearchOutput`), equal to the
        Python search's."""
        actions, N, W, P = self._tree.root_edges()
        A = self._root_state.num_actions
        counts, q, priors = np.zeros(A), np.zeros(A), np.zeros(A)
        counts[actions], priors[actions] = N, P
        q[actions] = [w / n if n > 0 else 0.0 for w, n in zip(W.tolist(), N.tolist())]
        return SearchOutput(counts, q, priors, self.root_value(), self.root_net_value)

    def run(self, state: GameState) -> np.ndarray:
        """A whole search from ``state``; returns the root's visit counts ``[num_actions]``."""
        return run_many_native([self], [state], self.evaluator)[0]

    def internal_nodes(self, played: int, min_visits: float, min_abs_q: float):
        """Expanded nodes below the root outside the subtree of ``played`` with at least ``min_visits``
        visits and |Q| >= ``min_abs_q`` (the walk of :meth:`agents.search.python.Node.internal_nodes`):
        a list of ``(state, counts [A], q)``."""
        if self._root_state is None:
            return []
        edges, owners, mover, counts, W, total = self._tree.internal_nodes(int(played), float(min_visits))
        out = []
        keep = []
        for i in range(len(total)):
            q = float(sum(W[i].tolist()) / total[i])
            if abs(q) >= min_abs_q:
                keep.append(i)
                out.append(q)
        g = self._root_state.geometry
        states = _states(g.rows, g.cols, edges[keep], owners[keep], mover[keep])
        return [(s, counts[i], q) for s, i, q in zip(states, keep, out)]


def run_many_native(searches: Sequence[NativeMCTS], states: Sequence[GameState], evaluator,
                    threads: int = 1) -> list[np.ndarray]:
    """Run one native search per state in lockstep (:func:`agents.search.python.run_many`'s rounds: every search
    collects ``config.batch_size`` leaves, one evaluator call serves them all). Returns the visit counts of
    each root. ``threads`` > 1 spreads the tree work of a round over that many threads."""
    searches = list(searches)
    if not searches:
        return []
    with gc_paused():
        begin_all(searches, states, evaluator)
        mod = searches[0]._mod
        if any(s._mod is not mod for s in searches):
            raise ValueError("run_many_native needs states of one board size")
        limits = np.array([s.config.batch_size for s in searches], np.int64)
        builtin = _builtin(evaluator, searches[0].config)
        if builtin is not None and all(_builtin(evaluator, s.config) == builtin for s in searches):
            kind, rollouts = builtin
            seed = evaluator.next_seed() if kind == "rollout" else 0
            mod.SearchForest([s._tree for s in searches], "", threads).run_builtin(kind, rollouts, seed, limits)
        else:
            _lockstep(mod, searches, evaluator, limits, threads)
    return [s.counts() for s in searches]


def planes_encoder(evaluator) -> str:
    """The encoder whose planes the C++ search makes for ``evaluator``: its ``encoder`` when the record of
    that encoder (:data:`dnb_env.observations.ENCODERS`) is marked ``native`` and the evaluator takes planes
    (it has ``evaluate_planes``); ``""`` when the search hands it the leaves' states instead."""
    enc = getattr(evaluator, "encoder", None)
    record = ENCODERS.get(enc) if isinstance(enc, str) else None
    return enc if record is not None and record.native and hasattr(evaluator, "evaluate_planes") else ""


def _lockstep(mod, searches, evaluator, limits, threads) -> None:
    encoder = planes_encoder(evaluator)
    forest = mod.SearchForest([s._tree for s in searches], encoder, threads)
    g = searches[0]._root_state.geometry
    if any(s._root_state.geometry is not g for s in searches):
        raise ValueError("run_many_native needs states of one board size")
    while True:
        rem = forest.remaining()
        if not (rem > 0).any():
            break
        counts, planes, masks, edges, owners, mover = forest.collect(np.where(rem > 0, limits, 0))
        if len(mover) == 0:
            continue
        if encoder:
            priors, values = evaluator.evaluate_planes(planes, masks)
        else:
            priors, values = evaluator.evaluate(_states(g.rows, g.cols, edges, owners, mover))
        forest.complete(_float64(priors, "priors"), _float64(values, "values"))
