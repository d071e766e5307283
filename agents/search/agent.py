"""An Agent over either search backend: its moves from the root visits, the exact root policy in the
solver zone.

    agent = MCTSAgent(UniformEvaluator(), SearchSettings(simulations=200), seed=0)
    agent = MCTSAgent(evaluator, settings, seed=0, backend="native")   # the C++ search instead
    rng = random.Random(0)                                        # plain UCT: one stream, reseeded by seed()
    uct = MCTSAgent(RolloutEvaluator(rng=rng), SearchSettings(selection="uct", reuse_tree=False), shared_rng=rng)
"""

from __future__ import annotations

import dataclasses
import functools
import gc
import random
import time

import numpy as np

from agents.base import check_state, value_unit
from agents.search.api import Evaluator, visits_to_policy
from agents.search.evaluators import move_scope
from agents.search.exact import final_value
from agents.search.settings import SearchSettings
from baselines.safe_phase import SafePhaseMove
from dnb_env.agent import Analysable, Probabilistic, Seedable
from dnb_env.clock import MeasuredRate, MoveTimed, move_budget
from dnb_env.core import GameState
from dnb_env.features import nimstring_deadline

__all__ = ["MCTSAgent", "NIMSTRING_ORDERS", "check_nimstring_order"]

#: The orders in which the Nimstring move's search tries the safe moves: ``rule``, the moves the long chain rule
#: likes first, each group in random order; ``prior``, by the evaluator's prior at the root, highest first.
NIMSTRING_ORDERS = ("rule", "prior")


def check_nimstring_order(order) -> str:
    """``order`` when it is one of :data:`NIMSTRING_ORDERS`, else a ValueError naming them."""
    if order not in NIMSTRING_ORDERS:
        raise ValueError(f"nimstring_order must be one of {', '.join(NIMSTRING_ORDERS)}, got {order!r}")
    return order


class MCTSAgent(Seedable, MoveTimed, Probabilistic, Analysable):
    """An Agent over a search (:func:`agents.search.make_search` for ``backend``: by default
    :class:`agents.search.python.MCTS`); moves drawn from the visit distribution at ``config.temperature``
    (``greedy=True`` always takes the most visited move: ties drawn at random, or with ``selection="uct"``
    the one the search tried first, as plain UCT). ``board`` is the ``(rows, cols)`` the evaluator was built
    for (None: any), checked with every state (:func:`agents.base.check_state`).

    The search draws from the agent's numpy generator, or from ``shared_rng`` when given: a
    ``random.Random`` the evaluator draws from too (plain UCT's one stream for move orders and playouts),
    which :meth:`seed` reseeds in place. Each move's search runs inside the evaluator's ``move_scope()``
    when it has one (:func:`agents.search.evaluators.move_scope`).

    ``nimstring_edges`` (0: off): at most that many undrawn edges, outside the exact root zone, with no box
    on offer, the agent first looks for a safe move that wins Nimstring and checks it with the exact solver
    (:class:`baselines.nimstring.NimstringMove`, as ``prsboxes`` plays; moves the long chain rule likes tried
    first, the search's table kept within a game). It plays that move without a tree search unless the check
    shows it to lose on boxes; moves the check showed to lose are not played by the tree search either while
    another move has visits. On a clock the Nimstring search takes :data:`NIMSTRING_SHARE` of what is left of
    the move's budget and the checks end at :data:`NIMSTRING_CHECK_SHARE` of it; the tree search gets the
    rest when no move is played. Its ``search_info()`` is then ``{"nimstring": True}`` (with the value 1.0 of
    a checked win in units of ``"win"``). ``nimstring_order="prior"`` tries the safe moves by the evaluator's
    prior at the root instead (one evaluation), so that the move found is the likeliest one by the network
    that wins Nimstring (:data:`NIMSTRING_ORDERS`). ``nimstring_threads=2`` searches and checks in two threads
    on a clock (``NimstringMove(threads=2)``), within the checks' share of the move.

    ``safe_phase`` (0: off): with no box on offer and 1 to that many safe moves left, the agent asks the
    safe-phase search (:class:`baselines.safe_phase.SafePhaseMove`: both players draw only safe moves and
    take boxes until no safe move is left, then play exactly) for its best moves, within
    :data:`SAFE_PHASE_SHARE` of what is left of a timed move (else its budget of positions). One
    best move is played without a tree search (``search_info()``: ``{"safe_phase": True, ...}`` with its
    value); among several the tree search picks in the time left. A search that runs out is not asked again
    in that game until fewer safe moves are left. The exact root zone (``config.solve_root``) holds every
    position without a safe move left, whatever its undrawn edges (:class:`agents.search.exact.ExactRoot`)."""

    def __init__(self, evaluator: Evaluator, config: SearchSettings = SearchSettings(), seed: int | None = None,
                 greedy: bool = True, name: str = "puct", board: tuple[int, int] | None = None,
                 shared_rng: random.Random | None = None, backend: str = "python", nimstring_edges: int = 0,
                 safe_phase: int = 0, nimstring_order: str = "rule", nimstring_threads: int = 1):
        from agents.search import make_search  # the package imports this module first
        from baselines.nimstring import check_threads

        if isinstance(nimstring_edges, bool) or not isinstance(nimstring_edges, int) or nimstring_edges < 0:
            raise ValueError(f"nimstring_edges must be 0 (off) or a number of undrawn edges, got {nimstring_edges!r}")
        self.nimstring_edges, self.nimstring_order = nimstring_edges, check_nimstring_order(nimstring_order)
        self.nimstring_threads = check_threads(nimstring_threads)
        self.safe_phase_move = SafePhaseMove(safe_phase)  # the end of the safe phase (baselines.safe_phase)
        self.nimstring = None  # the frontier move (baselines.nimstring.NimstringMove), made on first use
        self.rng = np.random.default_rng(seed)
        self.shared_rng = shared_rng
        rng = self.rng if shared_rng is None else shared_rng
        self.search = make_search(evaluator, config, rng, backend=backend, board=board)
        self.greedy, self.name, self.board = greedy, name, board
        self.move_time: float | None = None  # set_move_time: search until a clock instead of the simulations
        self.clock = time.perf_counter
        # a timed Python-tree search collects here, once a move: the young generations, where the move's objects are
        self.collect_garbage = functools.partial(gc.collect, 1)
        self._collect_seconds: float | None = None  # how long the last of those collections took
        self.round_rate = MeasuredRate()  # simulations a second of the timed rounds (round sizes on a clock)
        self._info: dict = {}  # the last move's search, for search_info

    @property
    def safe_phase(self) -> int:
        """The most safe moves left at which the safe-phase search plays (0: off)."""
        return self.safe_phase_move.max_safe

    def prepare(self, state: GameState) -> None:
        """Before a game's clock starts (the arena asks every agent that has this): the evaluator's one-off
        work for the board, a network's first forward pass on it (``warm_up``), so that no timed move pays for
        it. An evaluator without ``warm_up`` (playouts) is not asked: its random stream stays as it is."""
        warm = getattr(self.search.evaluator, "warm_up", None)
        if warm is not None:
            warm(state)

    #: The part of a timed move's budget the exact root solve may take (the solver zone); the search gets the rest.
    ROOT_SOLVE_SHARE = 0.5
    #: In the Nimstring zone, the part of what is left of a timed move's budget the Nimstring search may take...
    NIMSTRING_SHARE = 0.5
    #: ... and the part by which the solver's checks of its move end; the tree search gets the rest.
    NIMSTRING_CHECK_SHARE = 0.85
    #: With at most ``safe_phase`` safe moves, the part of what is left of a timed move's budget the safe-phase
    #: search may take; the tree search among its best moves gets the rest when there are several.
    SAFE_PHASE_SHARE = 0.6

    def set_move_time(self, seconds: float) -> None:
        """Search ``seconds`` a move (a tournament's time control) instead of ``simulations``: the search
        grows one tree in rounds of :meth:`round_size` simulations (fewer where a round would take more than
        :data:`ROUND_SHARE` of the budget) while another round still ends within the move's budget (:func:`~dnb_env.clock.move_budget` of ``seconds``, from
        the moment the move is asked), and the move comes from its visits as before (anytime: the best move
        so far when time is up; one round at least). In the solver zone the exact root solve stops after
        :data:`ROOT_SOLVE_SHARE` of the budget (the search then takes the rest), and leaf solves stop at
        the move's deadline.

        The Python search's tree is made of Python objects, and a collection of the cyclic garbage
        collector during a round would take a pause (a tenth of a second and more in a process with
        torch loaded) that no projection from the last round foresees. So on that backend the rounds run
        with the collector paused, the agent collects the young generations (the move's objects; the old
        one holds every object of the process, 0.14 s with torch loaded) once at the end of the move, inside
        its own time, and the rounds stop :data:`COLLECT_RESERVE` times that collection's last duration
        early (the first timed move collects before its rounds to measure it). The native search does not
        need this."""
        super().set_move_time(seconds)

    #: Timed rounds on the Python search end this many times the last move's garbage collection early.
    COLLECT_RESERVE = 1.5
    #: The most of a move's budget one timed round may take, at the simulations a second of the earlier rounds.
    ROUND_SHARE = 0.25

    def round_size(self) -> int:
        """Simulations of one timed round: one evaluator batch, at least 8 (the clock is read between
        rounds, and leaf solves stop at the deadline, so a move overruns by one batch at most)."""
        return max(8, self.search.config.batch_size)

    def _timed_round(self, budget: float) -> int:
        """Simulations of the next timed round of a move of ``budget`` seconds: :meth:`round_size`, fewer
        where that many would take more than :data:`ROUND_SHARE` of the budget at the rate of the earlier
        rounds (a big network on a big board); one before any round was timed."""
        fits = self.round_rate.work_in(self.ROUND_SHARE * budget)
        return 1 if fits is None else max(1, min(self.round_size(), int(fits)))

    def _timed_counts(self, state: GameState, deadline: float, budget: float) -> np.ndarray:
        search, config = self.search, self.search.config
        if not config.reuse_tree:
            search.root = None  # a fresh tree for this move, grown by every round below
        python_tree = getattr(search, "backend", "python") == "python"
        collecting = gc.isenabled()
        if python_tree:
            if self._collect_seconds is None:
                self._collect()
            gc.disable()  # no collector pause inside a round (see set_move_time)
        reserve = self.COLLECT_RESERVE * self._collect_seconds if python_tree else 0.0
        size = self._timed_round(budget)
        search.set_solve_deadline(max(0.0, deadline - self.clock()))
        try:
            while True:
                search.config = dataclasses.replace(config, simulations=size, reuse_tree=True)
                start = self.clock()
                counts = search.run(state)
                now = self.clock()
                self.round_rate.add(size, now - start)
                after = self._timed_round(budget)
                if now + (now - start) * after / size + reserve > deadline:  # the next round would end too late
                    break
                size = after
        finally:
            search.config = config
            search.set_solve_deadline(None)
            if python_tree:
                self._collect()
                if collecting:
                    gc.enable()
        return counts

    def _nimstring_choice(self, state: GameState, deadline: float | None):
        """The frontier move of ``state`` (:class:`baselines.nimstring.NimstringChoice`): a safe move that wins
        Nimstring, checked by the exact solver, within ``nimstring_edges`` undrawn edges when no box is on offer;
        None outside that zone. On a clock the Nimstring search stops after :data:`NIMSTRING_SHARE` of what is
        left of the move's budget and the checks after :data:`NIMSTRING_CHECK_SHARE`."""
        from baselines.nimstring import NimstringMove, safe_groups, safe_moves

        if self.nimstring is None:
            self.nimstring = NimstringMove(self.nimstring_edges, threads=self.nimstring_threads)
        if not self.nimstring.applies(state):
            return None
        safe = safe_moves(state)
        if not safe:
            return None
        search_until = check_until = None
        if deadline is not None:  # the helper reads time.perf_counter()
            left, now = max(0.0, deadline - self.clock()), time.perf_counter()
            search_until, check_until = now + self.NIMSTRING_SHARE * left, now + self.NIMSTRING_CHECK_SHARE * left
        scores = self.search.evaluator.evaluate([state])[0][0] if self.nimstring_order == "prior" else None
        return self.nimstring.choose(state, safe_groups(state, safe), self.rng, search_until=search_until,
                                     check_until=check_until, scores=scores)

    def _collect(self) -> None:
        start = self.clock()
        self.collect_garbage()
        self._collect_seconds = self.clock() - start

    def seed(self, seed: int) -> None:
        self.rng = np.random.default_rng(seed)
        if self.shared_rng is None:
            self.search.rng = self.rng
        else:
            self.shared_rng.seed(seed)

    def reset(self) -> None:
        self.search.root = None
        # a game's last rounds, whose leaves the solver settles without the network, run far faster than the
        # next game's first: measured again, so that the first round of a new game is not sized by them
        self.round_rate = MeasuredRate()
        self.safe_phase_move.clear()
        if self.nimstring is not None:
            self.nimstring.clear()

    def action_probabilities(self, state: GameState) -> np.ndarray:
        check_state(self, state)  # select_action starts here too
        timed = self.move_time is not None
        budget = move_budget(self.move_time) if timed else None
        deadline = self.clock() + budget if timed else None
        exact = self.search.exact_root.policy(state, budget * self.ROOT_SOLVE_SHARE if timed else None)
        if exact is not None:  # in the solver zone: every move of best margin, uniform
            self._info = self._value_info(state, exact[1])
            return exact[0]
        losing = ()
        if self.nimstring_edges:
            choice = self._nimstring_choice(state, deadline)
            if choice is not None and choice.move is not None and choice.kept is not False:
                won = choice.kept and self.search.config.value == "win"  # a margin it does not know
                self._info = {"nimstring": True, **({"value": 1.0, "unit": "win"} if won else {})}
                p = np.zeros(state.num_actions)
                p[choice.move] = 1.0
                return p
            losing = () if choice is None else choice.losing
        best = None
        share = None if deadline is None else self.SAFE_PHASE_SHARE * max(0.0, deadline - self.clock())
        found = self.safe_phase_move.choose(state, share)
        if found is not None:
            best = found[0]
            if len(best) == 1:
                value = final_value(state, self.search.config.value, found[1])
                self._info = {"safe_phase": True, **self._value_info(state, value)}
                p = np.zeros(state.num_actions)
                p[best[0]] = 1.0
                return p
        if timed:
            budget = max(0.0, deadline - self.clock())
        # on a clock, encoding a leaf (its Nimstring planes) stops at the deadline too
        with move_scope(getattr(self.search, "evaluator", None)), nimstring_deadline(deadline if timed else None):
            counts = self._timed_counts(state, deadline, budget) if timed else self.search.run(state)
        self._info = {"nodes": int(np.asarray(counts).sum()), **self._value_info(state, self.search.root_value())}
        if losing:  # moves that win Nimstring but lose on boxes: not played while another move has visits
            counts = np.array(counts, dtype=float)
            others = counts.copy()
            others[list(losing)] = 0.0
            if others.sum() > 0:
                counts = others
        if best is not None:  # the safe-phase search's best moves: the one of them the tree search likes most
            counts = np.array(counts, dtype=float)
            among = np.zeros_like(counts)
            among[best] = counts[best] + 1e-9  # none visited: any of them
            counts = among
        config = self.search.config
        if self.greedy and config.selection == "uct":  # the most visited move, ties to the one tried first
            p = np.zeros_like(counts)
            p[max(self.search.visit_order(), key=counts.__getitem__)] = 1.0
            return p
        return visits_to_policy(counts, 0.0 if self.greedy else config.temperature)

    def analyse(self, state: GameState, deadline: float | None = None) -> dict:
        """What the agent makes of ``state``, for the player to move (values in the units of
        ``config.value``): in the exact root zone, where it plays the solver's moves, those moves as
        ``"probabilities"`` (uniform over the moves of best margin) and the exact value; elsewhere the root
        visit counts ``[A]`` of a fresh search and its root value (the tree is not kept). ``deadline`` (a
        ``time.perf_counter()`` time) bounds the exact solve as a timed move's share does."""
        unit = value_unit(getattr(getattr(self.search, "config", None), "value", "win"))
        exact_root = getattr(self.search, "exact_root", None)
        if exact_root is not None:
            seconds = None if deadline is None else max(0.0, deadline - time.perf_counter())
            exact = exact_root.policy(state, seconds)
            if exact is not None:
                return {"kind": "probabilities", "values": exact[0], "value": exact[1], "unit": unit}
        with move_scope(getattr(self.search, "evaluator", None)):
            counts = np.asarray(self.search.run(state), dtype=float)
        view = {"kind": "visits", "values": counts, "value": self.search.root_value(), "unit": unit}
        self.reset()
        return view

    def _value_info(self, state: GameState, value: float) -> dict:
        """``value`` (the search's units: in [-1, 1], the result or the final margin over the boxes) as the
        engine protocol's ``value`` and ``unit``."""
        if getattr(self.search.config, "value", "win") == "margin":
            return {"value": float(value) * state.rows * state.cols, "unit": "margin"}
        return {"value": float(value), "unit": "win"}

    def search_info(self) -> dict:
        """The last move's search (``dnb engine``'s ``info`` line): ``nodes`` (the root's visits) and the
        root ``value`` for the player who moved, with its ``unit``; in the exact root zone the exact value;
        ``{}`` before any move."""
        return dict(self._info)

    def select_action(self, state: GameState) -> int:
        p = self.action_probabilities(state)
        ties = np.flatnonzero(p == p.max()) if self.greedy else None
        action = int(self.rng.choice(ties)) if ties is not None else int(self.rng.choice(len(p), p=p))
        self.search.advance(action)
        return action
