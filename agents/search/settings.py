"""Search settings: one frozen dataclass, the single home of every search default.

======================  ==================================================================================
what                    where
======================  ==================================================================================
the settings            :class:`SearchSettings` (Dotsformer Table A1 defaults), taken unchanged by both
                        search backends (:mod:`agents.search`), agents, training and the web app
a use's own defaults    :data:`PLAY` (agents over a network: ``make_agent("alphazero")``, the web app) and
                        :data:`SELF_PLAY` (training's ``search.*``): only the settings whose defaults
                        differ there; :func:`default` reads a setting's default for a use
auto solver zones       ``AUTO`` (-1) in ``solve_leaf`` / ``solve_root`` of a use, resolved for a board by
                        :func:`solver_zone` in :func:`settings_for` and :meth:`SearchSettings.for_board`
options by keyword      :func:`option_parameters`: keyword-only parameters built from the fields (type,
                        a use's default), e.g. for the registry's ``alphazero`` / ``dotsformer`` factories
======================  ==================================================================================

How a setting travels, e.g. ``solve_nodes``: ``dnb train --set search.solve_nodes=N`` -> the
:class:`SearchSettings` of the training config's ``search`` section (the run's ``config.json``) -> the same
settings with the model's value unit and the board's solver zones (``TrainConfig.mcts()``) -> the search:
:class:`agents.search.python.MCTS` reads them, :class:`agents.search.native.NativeMCTS` passes them to the C++
``SearchTree`` (whose ``Settings`` have no defaults of their own: every value is passed).

    SearchSettings(simulations=200)                       # the defaults of everything else
    settings_for(60, PLAY, value="margin")                # how agents play on 5x5, zones resolved
"""

from __future__ import annotations

import math

import dataclasses
import inspect
import typing
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping, Sequence

from dnb_env.core import Geometry
from dnb_env.solver import LEAF_NODE_LIMIT, MOVE_NODE_LIMIT, MOVES_REACH, VALUE_REACH, beyond_native, native_available

__all__ = ["SearchSettings", "AUTO", "PLAY", "SELF_PLAY", "SOLVE_ROOT_CAP", "SOLVE_LEAF_CAP", "default", "solver_zone",
           "settings_for", "option_parameters"]


@dataclass(frozen=True)
class SearchSettings:
    """Settings of one search (either backend); defaults are Dotsformer Table A1 (c_puct 1.0,
    temperature 0.4, 800 simulations). What each setting means is its field's ``help`` (metadata), which
    ``dnb agents`` and ``dnb train --help`` print.

    Selection rules, for a child edge ``a`` of a position ``s``: ``"puct"`` (AlphaZero) takes
    ``argmax Q(s, a) + c_puct * P(s, a) * sqrt(sum N) / (1 + N(s, a))``. ``"uct"`` (plain UCT, Kocsis &
    Szepesvari 2006; OpenSpiel's ``MCTSBot``) does not use the priors (nor asks for them at the root):
    every move is tried once, in an order drawn at random for each position when the search first meets
    it, then ``argmax Q(s, a) + c_puct * sqrt(ln N(s) / N(s, a))`` (UCB1; ``N(s)``: the simulations
    through ``s``, i.e. the root's sum N or the visits of the edge into ``s``), ties to the move tried
    first. Agents playing by visits take the most visited move, ties to the one tried first
    (:class:`agents.search.agent.MCTSAgent`).

    The exact solver (:mod:`dnb_env.solver`, alpha-beta; needs the C++ extension): a leaf solve that runs
    out of ``solve_nodes`` lowers the leaf zone to one edge below that leaf for the rest of the search; the
    root's policy comes from :class:`agents.search.exact.ExactRoot` when ``solve_root_nodes`` suffice. A
    zone of :data:`AUTO` (-1) is a use's, resolved for a board by :meth:`for_board` before a search takes
    the settings. On a board the alpha-beta solver does not take (over 12x12 boxes) no leaf is solved and
    the root only within the retrograde table's reach (:data:`~dnb_env.solver.RETROGRADE_REACH` undrawn
    edges; the auto zones are 0 there).
    """

    simulations: int = field(default=800, metadata={"help": "leaf evaluations (or exact leaves) per search"})
    selection: str = field(default="puct", metadata={
        "help": 'the rule that picks a child edge on the way down: ``"puct"`` (AlphaZero) or ``"uct"`` (plain '
                'UCT), below'})
    c_puct: float = field(default=1.0, metadata={
        "help": 'exploration weight of the selection rule (``c`` of UCB1 with ``"uct"``)'})
    temperature: float = field(default=0.4, metadata={
        "help": "moves that are drawn are drawn from ``N^(1/T)`` over the root visits N (0: the most visited)"})
    dirichlet_alpha: float = field(default=0.3, metadata={"help": "alpha of the Dirichlet noise on the root priors"})
    dirichlet_epsilon: float = field(default=0.25, metadata={
        "help": "weight of the Dirichlet noise in the root priors"})
    add_noise: bool = field(default=False, metadata={
        "help": 'Dirichlet ``(dirichlet_alpha, dirichlet_epsilon)`` noise on the root priors (refused with '
                '``selection="uct"``)'})
    batch_size: int = field(default=8, metadata={"help": "leaves per evaluator call, kept apart by ``virtual_loss``"})
    virtual_loss: float = field(default=1.0, metadata={
        "help": "visits, each a loss, counted on the path of a leaf awaiting its evaluation, so that the leaves "
                "of one batch spread out"})
    prune: bool = field(default=True, metadata={
        "help": "BoxesZero's pruning: exact simple-endgame leaves, forced captures in opened chains"})
    reuse_tree: bool = field(default=True, metadata={"help": "keep the subtree of the move played for the next search"})
    value: str = field(default="win", metadata={
        "help": '``"win"`` (results +1/-1/0, AlphaZero) or ``"margin"`` (final box margin / boxes)'})
    solve_leaf: int = field(default=0, metadata={
        "help": "leaves with at most this many undrawn edges get the exact solver's value (0: off; -1: auto, "
                "resolved for the board by ``solver_zone``; off on boards over 12x12)"})
    solve_root: int = field(default=0, metadata={
        "help": "a root with at most this many undrawn edges is not searched: its policy is uniform over the "
                "moves of best margin (0: off; -1: auto, resolved for the board by ``solver_zone``; over 12x12 "
                "boxes at most 24, by the retrograde table, and auto is off)"})
    solve_nodes: int = field(default=LEAF_NODE_LIMIT, metadata={
        "help": "the exact solver's node budget for each leaf"})
    solve_root_nodes: int = field(default=MOVE_NODE_LIMIT, metadata={
        "help": "the exact solver's node budget for the root"})
    solve_tt_mb: float = field(default=16.0, metadata={
        "help": "megabytes of the exact solver's tables, kept across searches"})

    def __post_init__(self):
        if self.value not in ("win", "margin"):
            raise ValueError(f"value must be 'win' or 'margin', not {self.value!r}")
        if self.selection not in ("puct", "uct"):
            raise ValueError(f"selection must be 'puct' or 'uct', not {self.selection!r}")
        if self.selection == "uct" and self.add_noise:
            raise ValueError("add_noise perturbs the priors, which selection='uct' does not use")
        if not 1 <= self.simulations <= MAX_SIMULATIONS or self.batch_size < 1:
            raise ValueError(f"simulations must be in 1..{MAX_SIMULATIONS:,} and batch_size >= 1")
        if not 0 < self.c_puct < math.inf or not 0 <= self.temperature < math.inf:
            raise ValueError("c_puct must be a finite number > 0 and temperature a finite number >= 0")
        if self.solve_leaf < AUTO or self.solve_root < AUTO:
            raise ValueError("solve_leaf and solve_root must be >= 0 (0 = no exact solving), or -1 (auto)")
        if self.solve_nodes < 1 or self.solve_root_nodes < 1 or not 1 <= self.solve_tt_mb <= 65536:
            raise ValueError("solve_nodes and solve_root_nodes must be >= 1 and solve_tt_mb in 1..65536")

    def for_board(self, num_actions: int | Geometry) -> "SearchSettings":
        """These settings with the :data:`AUTO` solver zones resolved for a board of ``num_actions`` edges
        (:func:`solver_zone`): what a search takes."""
        zones = {name: solver_zone(getattr(self, name), num_actions, cap, ZONE_FRACTIONS[name])
                 for name, cap in _ZONE_CAPS.items()}
        return dataclasses.replace(self, **zones)

    def check_resolved(self) -> None:
        """ValueError when a solver zone is still :data:`AUTO` (a search needs :meth:`for_board`)."""
        if self.solve_leaf < 0 or self.solve_root < 0:
            raise ValueError("solve_leaf and solve_root must be >= 0 (0 = no exact solving) in a search: resolve "
                             "-1 (auto) for the board with SearchSettings.for_board")


#: The most simulations a search takes per move (its tree grows with them: about 100 bytes each).
MAX_SIMULATIONS = 10_000_000

#: A solver zone resolved per board by :func:`solver_zone` (``solve_leaf`` / ``solve_root`` of a use).
AUTO = -1

#: How agents over a network play (``agents.network_agent.make_network_agent``, the registry's
#: ``alphazero`` / ``dotsformer``, the web app): 200 simulations and the auto solver zones.
PLAY: Mapping = MappingProxyType({"simulations": 200, "solve_leaf": AUTO, "solve_root": AUTO})

#: Self-play training (``agents.training.config.TrainConfig.search``, ``--set search.*``): AlphaZero's search
#: without pruning, with root noise and no tree reuse, and the auto solver zones.
SELF_PLAY: Mapping = MappingProxyType({"prune": False, "add_noise": True, "reuse_tree": False,
                                       "solve_leaf": AUTO, "solve_root": AUTO})

# auto zones on big boards (undrawn edges): on 5x5 midgame positions (benchmarks/midgame.py) the leaf zone with
# 1M-node budgets lifts the shipped AlphaZero from 0.37-0.52 to 0.88-1.00 winning-move accuracy at steps
# 22-26; the root zone is where the solver's best moves (Solver.best_moves) cost well under a second: 38
# undrawn edges (step 22 of 5x5, 0.24 s median for the value), the last two thirds of smaller boards
SOLVE_ROOT_CAP, SOLVE_LEAF_CAP = MOVES_REACH, VALUE_REACH
#: Fraction of a board's edges an auto zone covers at most, per zone option.
ZONE_FRACTIONS = {"solve_leaf": (3, 5), "solve_root": (2, 3)}
_ZONE_CAPS = {"solve_leaf": SOLVE_LEAF_CAP, "solve_root": SOLVE_ROOT_CAP}

_FIELDS = {f.name: f for f in dataclasses.fields(SearchSettings)}
_NO_CHANGES: Mapping = MappingProxyType({})


def default(name: str, use: Mapping = _NO_CHANGES):
    """The default of setting ``name`` under ``use`` (:data:`PLAY`, :data:`SELF_PLAY`; none: the
    :class:`SearchSettings` default). KeyError for a name that is no setting."""
    return use[name] if name in use else _FIELDS[name].default


def solver_zone(setting: int, num_actions: int | Geometry, cap: int, fraction: tuple[int, int] = (3, 5)) -> int:
    """A solver zone option resolved for a board (its number of edges or its :class:`Geometry`): ``-1``
    (auto) is ``min(cap, num_actions * p // q)`` undrawn edges for ``fraction = (p, q)`` (the last 60% of the
    game at most by default, :meth:`Geometry.solver_zone`) when the C++ solver is built and takes the board
    (a Geometry over 12x12 boxes: 0), else 0; other values as given (0 = off)."""
    if isinstance(setting, bool) or not isinstance(setting, int) or setting < -1:
        raise ValueError(f"a solver zone must be -1 (auto), 0 (off) or a number of undrawn edges, got {setting!r}")
    if setting == -1:
        if not native_available():
            return 0
        if isinstance(num_actions, Geometry):
            return 0 if beyond_native(num_actions) else num_actions.solver_zone(cap, fraction)
        return Geometry.auto_solver_zone(num_actions, cap, fraction)
    return setting


def settings_for(num_actions: int | Geometry, use: Mapping = _NO_CHANGES, **changes) -> SearchSettings:
    """:class:`SearchSettings` with ``use``'s defaults and ``changes``, the solver zones (:data:`AUTO` or a
    number, checked by :func:`solver_zone`) resolved for a board of ``num_actions`` edges."""
    values = {**use, **changes}
    for name, cap in _ZONE_CAPS.items():
        if name in values:
            values[name] = solver_zone(values[name], num_actions, cap, ZONE_FRACTIONS[name])
    return SearchSettings(**values)


def option_parameters(names: Sequence[str], use: Mapping = _NO_CHANGES) -> list[inspect.Parameter]:
    """Keyword-only parameters for the settings ``names``: each with its field's type and its default
    under ``use`` (for a factory's ``__signature__``; see ``registry.agents``)."""
    hints = typing.get_type_hints(SearchSettings)
    return [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=default(n, use), annotation=hints[n])
            for n in names]
