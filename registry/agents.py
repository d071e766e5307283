"""Agent factories by name.

    make_agent("random", board="5x5", seed=0)
    make_agent("alphabeta", board="5x5", seed=0, depth=4)

Every factory takes ``board`` and ``seed`` plus its own keyword options; an unknown name or option raises
``ValueError`` listing what exists. Options are type-checked against the factory's annotations (else the
type of its default): ``bool`` takes True/False or the strings "true"/"false", ``int`` an integer or an
integer string, ``float`` any real number or a numeric string, ``Literal[...]`` one of its values, and
``X | None`` also None; anything else raises ``ValueError`` naming the agent, option and value (so
``chain_eval="no"`` or ``depth=2.9`` is refused, and ``"alphabeta:depth=3,chain_eval=true"`` from the
command line works). Third-party code can add names with :func:`register_agent`. Every model family that
names the agent it plays under (:func:`agents.models.family_agents`: ``alphazero``, ``dotsformer``, and any
family registered later) is an agent here too, with no registration of its own. Spec strings
(``"alphabeta:depth=3"``) are parsed, checked and built by :mod:`registry.specs`.

Each factory's docstring documents its agent: the first paragraph is the description (its first sentence
the one-line summary ``dnb agents`` prints), and an ``Options:`` section holds one ``name: meaning`` entry
per option (continuation lines indented deeper). Types and defaults come from the signature, and an option
that the agent's class takes has the default and type of the class's constructor there (:func:`options_of`,
:func:`takes_options`): a factory declares only the registry's own options. The search
settings that the network agents take are described once, in the ``help`` of the fields of
:class:`agents.search.settings.SearchSettings` (:func:`field_help`). :func:`describe_agent` reads all of this,
:func:`agent_doc_problems` lists what is missing or documents no option, and :mod:`registry.docs` renders
``dnb agents NAME`` and the reference page from it. A factory's ``needs`` attribute is the import name of
the library it needs from an extra (:func:`registry.extras.extra_hint` names the extra).
"""

from __future__ import annotations

import functools
import importlib.util
import inspect
import numbers
import os
import re
import types
import typing
import dataclasses
from dataclasses import dataclass
from typing import Callable, Literal

from agents.engine.agent import EngineAgent
from agents.models import family_agents
from agents.search.settings import PLAY, SearchSettings, option_parameters
from baselines.alphabeta import AlphaBetaAgent
from baselines.prsboxes import PRsBoxesAgent
from baselines.solver import SolverAgent
from dnb_env.core import DEFAULT_BOARD, parse_board
from registry.extras import extra_hint


class _Factories(dict):
    """Agent name -> factory: those of :func:`register_agent`, and (looked up when asked for, never stored)
    the network agent of each model family that plays under a name of its own
    (:func:`agents.models.family_agents`), so that a family registered later is an agent too."""

    def __missing__(self, name):
        return _family_factory(name)


def _family_agents() -> dict[str, str]:
    """:func:`agents.models.family_agents`, or ``{}`` where PyTorch is not installed (the families' modules
    import it): without the torch extra the registry has the agents that need no network."""
    try:
        return family_agents()
    except ModuleNotFoundError as exc:
        if exc.name != "torch":
            raise
        return {}


def network_agents_note() -> str | None:
    """Where PyTorch is missing, the line that says the model families' network agents are left out (and
    which extra brings them); None where they are listed."""
    try:
        family_agents()
    except ModuleNotFoundError as exc:
        if exc.name != "torch":
            raise
        return f"the network agents of the model families are not listed: they need {extra_hint('torch')}"
    return None


def _family_factory(name):
    """The network agent factory of the model family that plays as ``name``; KeyError when none does."""
    if isinstance(name, str) and name in _family_agents():
        return _network_factory(name)
    raise KeyError(name)


_FACTORIES: dict[str, Callable] = _Factories()


def register_agent(name: str, factory: Callable, *, override: bool = False) -> None:
    """Register ``factory(board=(rows, cols), seed=..., **options) -> Agent`` under ``name`` (a name a
    model family plays under is taken by the family's network agent unless a factory is registered for it)."""
    if name in _FACTORIES and not override:
        raise ValueError(f"agent name {name!r} is already registered")
    _FACTORIES[name] = factory


def list_agents() -> list[str]:
    """The registered names and those the model families play under (the latter where PyTorch is installed:
    :func:`network_agents_note`)."""
    return sorted(set(_FACTORIES) | set(_family_agents()))


def _options(factory: Callable) -> list[str]:
    params = inspect.signature(factory).parameters
    return [n for n, p in params.items() if n not in ("board", "seed") and p.kind == p.KEYWORD_ONLY]


def options_of(target: Callable, names: tuple[str, ...], **kinds) -> list[inspect.Parameter]:
    """Keyword-only parameters for the options ``names`` of ``target`` (an agent class or a function that
    builds one): each with its default and type there, the one home of both, or the narrower type given
    in ``kinds`` (e.g. a ``Literal`` of the values the registry accepts)."""
    params = inspect.signature(target).parameters
    hints = typing.get_type_hints(target.__init__ if isinstance(target, type) else target)
    return [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, default=params[n].default,
                              annotation=kinds.get(n, hints.get(n, params[n].annotation))) for n in names]


def takes_options(factory: Callable, *groups) -> Callable:
    """``factory(*, board, seed, ..., **options)`` with the signature and annotations of its options:
    ``groups`` are its own keyword-only parameters by name (strings, the registry's own options) and lists
    of :func:`options_of`, in the order the options are listed."""
    own = inspect.signature(factory).parameters
    params = [own["board"], own["seed"]]
    for group in groups:
        params += [own[group]] if isinstance(group, str) else group
    factory.__signature__ = inspect.Signature(params)
    factory.__annotations__ = {**factory.__annotations__,
                               **{p.name: p.annotation for p in params if p.annotation is not p.empty}}
    return factory


_KIND_NAMES = {bool: "true or false", int: "an integer", float: "a number", type(None): "None"}


def _kind_name(kind, short: bool = False) -> str:
    """An option's type in words, as an error says it (``an integer``, ``one of 'auto', 'python'``), or
    ``short``, as the reference's option table shows it (``int``, ``float or None``, ``auto/python/native``)."""
    if typing.get_origin(kind) is Literal:
        args = typing.get_args(kind)
        return "/".join(map(str, args)) if short else "one of " + ", ".join(map(repr, args))
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        return " or ".join(_kind_name(k, short) for k in typing.get_args(kind))
    if not short:
        return _KIND_NAMES.get(kind, f"a {getattr(kind, '__name__', kind)}")
    if kind is inspect.Parameter.empty or kind is None:
        return "any"
    return {type(None): "None", os.PathLike: "path"}.get(kind) or getattr(kind, "__name__", str(kind))


def _typed(kind, value):
    """``value`` as ``kind`` (bool, int, float, a class, ``Literal[...]`` or a union of them); TypeError if
    it is not one. Other annotations (``Any``, generics) are not checked."""
    origin, args = typing.get_origin(kind), typing.get_args(kind)
    if origin is Literal:
        if value in args:
            return value
    elif origin in (typing.Union, types.UnionType):  # e.g. float | None: the first member that takes it
        for k in args:
            try:
                return _typed(k, value)
            except TypeError:
                pass
    elif kind is bool:
        if isinstance(value, bool):
            return value
        if isinstance(value, str) and value.lower() in ("true", "false"):
            return value.lower() == "true"
    elif kind in (int, float):
        ok = numbers.Integral if kind is int else numbers.Real
        if isinstance(value, ok) and not isinstance(value, bool):
            return kind(value)
        if isinstance(value, str):
            try:
                return kind(value)
            except ValueError:
                pass
    elif not isinstance(kind, type) or isinstance(value, kind):
        return value
    raise TypeError


def _typed_options(name: str, factory: Callable, kwargs: dict) -> dict:
    """``kwargs`` converted to the factory's option types (annotation, else the default's type)."""
    try:
        hints = typing.get_type_hints(factory)
    except NameError:
        hints = {}
    params = inspect.signature(factory).parameters
    out = {}
    for option, value in kwargs.items():
        default = params[option].default
        kind = hints.get(option, type(default) if default not in (None, inspect.Parameter.empty) else None)
        try:
            out[option] = value if kind is None else _typed(kind, value)
        except TypeError:
            raise ValueError(f"agent {name!r}: option {option} must be {_kind_name(kind)}, got {value!r}") from None
    return out


def _resolve(name: str, kwargs: dict) -> tuple[Callable, dict]:
    try:
        factory = _FACTORIES[name] if name in _FACTORIES else _family_factory(name)
    except (KeyError, TypeError):
        note = network_agents_note()
        raise ValueError(f"unknown agent {name!r}; known agents: {', '.join(list_agents())}"
                         + (f" ({note})" if note else "")) from None
    allowed = _options(factory)
    unknown = sorted(set(kwargs) - set(allowed))
    if unknown:
        raise ValueError(
            f"agent {name!r} has no option(s) {', '.join(unknown)}; its options: {', '.join(allowed) or 'none'}"
        )
    options = _typed_options(name, factory, kwargs)
    check = getattr(factory, "check_options", None)  # a factory's own check of its options together
    if check is not None:
        check(options)
    return factory, options


def make_agent(name: str, /, board=DEFAULT_BOARD, seed: int | None = None, **kwargs):
    """Build the agent registered as ``name`` for ``board`` ("RxC" or (rows, cols))."""
    factory, options = _resolve(name, kwargs)
    return factory(board=parse_board(board), seed=seed, **options)


def _random(*, board, seed):
    """Uniformly random legal moves. Each move is drawn from the agent's own generator, seeded by ``seed``
    (baselines.random_agent): the floor of any rating."""
    from baselines.random_agent import RandomAgent

    return RandomAgent(seed=seed, board=board)


register_agent("random", _random)


def _greedy(*, board, seed):
    """The handcrafted greedy policy of BoxesZero (section 4.2.1). It takes a box when it can, else plays a
    safe move (one that gives no box away), else the move that gives the opponent the fewest boxes; ties go
    to its seeded generator (baselines.greedy)."""
    from baselines.greedy import GreedyAgent

    return GreedyAgent(seed=seed, board=board)


def _alphabeta(*, board, seed, **options):
    """Depth-limited negamax with alpha-beta pruning. Iterative deepening over a transposition table keyed
    on the drawn edges, the table's move, captures and safe moves searched first (baselines.alphabeta). On
    a clock (a tournament's time control) it deepens until its budget, 0.8 of the move time, past ``depth``.

    Options:
        depth: plies of the deepest iteration (with ``extend_captures`` a capture uses up none)
        time_limit: seconds a move, after which the move of the deepest finished iteration is played (None:
            no limit)
        chain_eval: at the depth limit, the exact value of a simple endgame when the leaf is one (else no more
            boxes)
        extend_captures: a move that completes a box uses up no depth, so capture sequences are searched to
            their end
        solve_leaf: positions with at most this many undrawn edges get their exact value from the C++ solver
            (0: off; off on boards over 12x12, which it does not take)
    """
    return AlphaBetaAgent(seed=seed, board=board, **options)


takes_options(_alphabeta, options_of(AlphaBetaAgent, ("depth", "time_limit", "chain_eval", "extend_captures",
                                                      "solve_leaf")))


def _solver(*, board, seed, fallback: Literal["prsboxes", "none"] = "prsboxes", **options):
    """Exact play from the solver. A move of best margin (ties at random) from the native alpha-beta solver
    when the C++ extension is built and the board has at most 12x12 boxes, else from the retrograde table
    (within 24 undrawn edges by default); beyond its reach or node budget the
    ``fallback`` plays (baselines.solver over dnb_env.solver). On a clock the solver searches for half its
    budget (0.8 of the move time) in place of its node budget.

    Options:
        max_undrawn: most undrawn edges the solver takes on (None: 40 with the native solver, 24 with the
            retrograde table)
        engine: ``auto`` (the native solver when it is built, else the table), ``alphabeta`` (native) or
            ``retrograde``
        node_limit: the native solver's node budget a move; past it the fallback plays
        fallback: who plays beyond the solver: ``prsboxes`` (a PRsBoxes agent, built on first use with this
            agent's seed) or ``none`` (an error)
    """
    backup = functools.partial(PRsBoxesAgent, board=board) if fallback == "prsboxes" else None
    return SolverAgent(seed=seed, board=board, fallback=backup, **options)


takes_options(_solver, options_of(SolverAgent, ("max_undrawn", "engine", "node_limit"),
                                  engine=Literal["auto", "alphabeta", "retrograde"]), "fallback")


def _mcts(*, board, seed, simulations: int = 1000, uct_c: float = 2.0,
          search: Literal["uct", "auto", "python", "native"] = "uct", rollouts: int = 1,
          selection: Literal["uct", "puct"] | None = None):
    """Monte-Carlo tree search with random playouts. By default plain UCT (every move once in random order,
    then UCB1; a fresh tree every move) on the Python search of agents.search; with ``search`` set to a
    backend it is PUCT over uniform priors unless ``selection="uct"``, and the native backend plays the
    playouts in C++. On a clock it grows one tree in rounds until its budget, 0.8 of the move time.

    Options:
        simulations: leaves searched a move, each valued by random playouts
        uct_c: exploration weight (``c`` of UCB1, or ``c_puct`` of PUCT)
        search: ``uct`` (plain UCT on the Python search, its move orders and playouts from one
            ``random.Random(seed)``) or a backend: ``auto`` (native when built), ``python``, ``native``
        rollouts: random playouts averaged at each leaf
        selection: the selection rule of a backend search, ``puct`` or ``uct`` (None: ``puct``); ``puct``
            is refused with ``search="uct"``
    """
    import random

    from agents.search import MCTSAgent, RolloutEvaluator, SearchSettings, choose_backend
    from agents.search.native import NativeRolloutEvaluator

    if search == "uct":
        if selection == "puct":
            raise ValueError("mcts: search='uct' is the uct selection rule; PUCT runs with search=auto, python "
                             "or native")
        search, selection = "python", "uct"
    backend = choose_backend(search, board)
    if selection == "uct":
        config = SearchSettings(simulations=simulations, c_puct=uct_c, selection="uct", prune=False, batch_size=1,
                                reuse_tree=False)
        if backend == "python":
            rng = random.Random(seed)
            return MCTSAgent(RolloutEvaluator(rollouts, rng=rng), config, seed=seed, greedy=True, name="mcts",
                             board=board, shared_rng=rng)
    else:
        config = SearchSettings(simulations=simulations, c_puct=uct_c, prune=False, batch_size=1)
    evaluator = (NativeRolloutEvaluator(rollouts, seed=seed) if backend == "native"
                 else RolloutEvaluator(rollouts, seed=seed))
    return MCTSAgent(evaluator, config, seed=seed, greedy=True, name="mcts", board=board, backend=backend)


register_agent("greedy", _greedy)
register_agent("alphabeta", _alphabeta)
register_agent("solver", _solver)
register_agent("mcts", _mcts)


def _prsboxes(*, board, seed, **options):
    """Chain-theory rules with searches, in the style of PRsBoxes. Nimstring (who gets control, searched
    exactly within ``nimstring_edges`` undrawn edges), Berlekamp's long-chain rule and double-dealing decide
    the safe-move phase and the captures, alpha-beta searches the positions the rules leave open, and the
    exact solver plays every position within ``solver_edges`` undrawn edges (baselines.prsboxes, whose
    docstring lists the rules). On a clock its searches deepen until its budget (0.8 of the move time), the
    exact solver gets half of it and the Nimstring search 85% (its check the rest).

    Options:
        solver_edges: undrawn edges within which the exact solver plays and scores positions (-1 auto: 38
            with the C++ solver, else 20; 0: off); over 12x12 boxes the retrograde table plays within 20 (auto)
            or at most 24, and the searches score no position exactly
        search_safe: with at most this many safe moves left it searches (safe moves only) instead of
            following the long-chain rule
        search_full: with at most this many safe moves left its searches try every move
        search_depth: deepest iteration of its searches
        search_nodes: node budget of each search, so a game replays the same on any machine (on boards of
            more than 60 edges, less in proportion: a node costs more there)
        solver_nodes: the exact solver's node budget a move; past it the rules decide
        nimstring_edges: undrawn edges within which it plays a safe move that wins Nimstring (who gets
            control), where the search finds one (0: off)
        nimstring_positions: the Nimstring search's position budget a move (on a clock: 85% of the move's
            budget instead)
        nimstring_verify: the exact solver's node budget (on a clock: the time left) to check that a move
            winning Nimstring also keeps a won game won; one it shows to lose is passed over, and where no
            such move keeps the win the solver's win test of the position may give one that does (0: no check)
        nimstring_widen: search every safe move a little, then each one still open four times as long, and so
            on, instead of one after the other; when the search does not finish it plays a move not shown to
            lose Nimstring
        nimstring_threads: 1, or 2 to search and check the Nimstring moves in two threads on a clock (each
            thread every other move, a move found checked while the other thread searches on)
        safe_phase: with more than ``search_safe`` and at most this many safe moves left (no Nimstring move
            found), it plays the best move of the safe-phase search (only safe moves and captures until none
            is left, then exact play; 2,000,000 positions, on a clock 85% of the time left) (-1 auto: 20 on
            boards of more than 64 edges, from 6x6 on; 0: off)
    """
    return PRsBoxesAgent(seed=seed, board=board, **options)


takes_options(_prsboxes, options_of(PRsBoxesAgent, ("solver_edges", "search_safe", "search_full", "search_depth",
                                                    "search_nodes", "solver_nodes", "nimstring_edges",
                                                    "nimstring_positions", "nimstring_verify", "nimstring_widen",
                                                    "nimstring_threads", "safe_phase")))
register_agent("prsboxes", _prsboxes)


_SPIEL_GAMES = {"python": "python_dots_and_boxes", "cpp": "dots_and_boxes"}


def _openspiel_mcts(*, board, seed, simulations: int = 1000, uct_c: float = 2.0, rollouts: int = 1,
                    game: Literal["python", "cpp"] = "python"):
    """OpenSpiel's Python MCTSBot with random rollouts, as an Agent. It searches on the registered
    ``python_dots_and_boxes`` or on OpenSpiel's own C++ ``dots_and_boxes`` (same rules and action numbers,
    faster rollouts: about 1.8x the moves per second on 5x5; the bot itself is the same Python code). On a
    clock of S seconds a move it runs 0.9 x rate x 0.8 S simulations, at the simulations a second it measured
    on its earlier searches (a probe of 16 simulations measures the first, before the game's clock starts
    when the arena prepares it; agents.base.SpielMCTSAgent): the bot starts a new tree at each search, so it
    cannot search in rounds until the clock.

    Options:
        simulations: simulations of MCTSBot a move (on a clock: as many as its measured rate fits)
        uct_c: UCT exploration constant of MCTSBot
        rollouts: random rollouts averaged at each leaf
        game: the game it searches on: ``python`` (``python_dots_and_boxes``) or ``cpp`` (``dots_and_boxes``)
    """
    import numpy as np

    import dnb_env  # noqa: F401  (registers the game)
    from registry.extras import requires_extra

    with requires_extra("agent 'openspiel_mcts'"):  # MissingExtra naming the spiel extra
        import pyspiel
        from open_spiel.python.algorithms import mcts
    from agents.base import SpielMCTSAgent

    rows, cols = board
    game = pyspiel.load_game(_SPIEL_GAMES[game], {"num_rows": rows, "num_cols": cols})
    rs = np.random.RandomState(None if seed is None else seed % 2**32)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=rollouts, random_state=rs)
    bot = mcts.MCTSBot(game, uct_c, simulations, evaluator, random_state=rs)
    return SpielMCTSAgent(bot, game, name="openspiel_mcts")


_openspiel_mcts.needs = "pyspiel"
register_agent("openspiel_mcts", _openspiel_mcts)


def _engine(*, board, seed, cmd: str = "", **options):
    """A program that speaks the engine protocol. The protocol is docs/engine-protocol.md; the program is
    run with the arguments of ``cmd`` (split like a shell's words, never run by a shell). A crash, an
    illegal move or a line outside the protocol loses the game, and the program restarts for the next one.
    A tournament's time control is told to it (``go movetime``, or its game clock).

    Options:
        cmd: the program and its arguments, e.g. ``cmd="./my_engine --hash 64"``
        name: its name in results (None: the name it gives in its handshake, else ``engine``)
        movetime: seconds a move told to it; it loses on time ``tolerance`` seconds after that (None: no
            move time)
        timeout: seconds it may take for a move without a move time (with overruns only warned: past its
            move time)
        tolerance: seconds past its move time before it loses on time (a tournament sets its time margin)
        startup: seconds for its handshake and ``isready``
        log: file its standard error is appended to (None: a file in the temporary folder)
    """
    return EngineAgent(_engine_argv(cmd), board=board, seed=seed, **options)


def _engine_argv(cmd: str) -> list[str]:
    """The program and arguments of ``cmd``; ValueError when it is empty or the program is not found."""
    import shlex
    import shutil

    try:
        argv = shlex.split(cmd)
    except ValueError as exc:
        raise ValueError(f"agent 'engine': cannot split cmd={cmd!r} into arguments: {exc}") from None
    if not argv:
        raise ValueError('agent \'engine\' needs the program to run: engine:cmd="PROGRAM ARGS...",name=NAME')
    if shutil.which(argv[0]) is None:
        raise ValueError(f"agent 'engine': cannot find the program {argv[0]!r} of cmd={cmd!r} (not an "
                         "executable file, nor a command on PATH)")
    return argv


def _check_engine(options: dict) -> None:
    _engine_argv(options.get("cmd", ""))
    from agents.engine.agent import check_engine_times

    check_engine_times(**{key: options[key] for key in ("movetime", "timeout", "tolerance", "startup")
                          if key in options}, prefix="agent 'engine': option")


takes_options(_engine, "cmd", options_of(EngineAgent, ("name", "movetime", "timeout", "tolerance", "startup", "log")))
_engine.check_options = _check_engine
_engine.label_option = "name"  # its label in a tournament's tables and files (registry.specs.describe_spec)
_engine.neutral_options = ("log",)  # options that do not change play: not part of its identity on resume
register_agent("engine", _engine)


#: The search settings the network agents take as options, after ``checkpoint``; their types and defaults
#: are those of agents.search.SearchSettings under agents.search.settings.PLAY.
_NETWORK_SEARCH_OPTIONS = (("simulations", "c_puct", "prune"), ("solve_leaf", "solve_root", "solve_nodes"))

#: The network agents of the model families this package ships (agents.models), with what sets each apart;
#: their names are known (and listed by ``dnb agents``, with the extra they need) where PyTorch is missing.
#: A family registered later plays as an agent too, described by its family's name alone.
NETWORK_AGENTS: dict[str, str] = {
    "alphazero": "AlphaZero: PUCT search over a residual network. The policy-value network of model family "
                 "``resnet``, the papers' AlphaZero baseline.",
    "dotsformer": "Dotsformer: PUCT search over a convolution-attention hybrid. The MS-Trans network of the "
                  "Dotsformer paper (model family ``dotsformer``).",
    "alphavit": "AlphaViT: PUCT search over a vision transformer for any board. One set of weights plays every "
                "board (model family ``alphavit``); a board it did not train on plays too, after a warning.",
}

_NETWORK_DOC = """{what} Playing weights are the shipped ones for the board unless ``checkpoint`` names others;
    ``simulations=0`` plays the raw policy (the network's most probable legal move, no search). Within the
    solver zones the exact solver values the leaves and plays the root; beyond the root's zone, within
    ``nimstring_edges`` undrawn edges, the search plays a safe move that wins Nimstring (who gets control), as
    ``prsboxes`` does, where the exact solver does not show it to lose on boxes; a root without a safe move left
    is solved exactly however many edges are undrawn, and with at most ``safe_phase`` safe moves left (no box
    on offer) it plays the move that does best when both players draw only safe moves to the end of the safe
    phase and play exactly from there (the tree search picks among several). On a clock the search grows one
    tree in rounds of one network batch (fewer leaves where a batch would take over a quarter of the
    budget) while another round fits in its budget, 0.8 of the move time; the root's exact solve stops after
    half the budget and the leaf solves at the move's deadline. Its forward passes run on the threads the
    process was given (a tournament's ``threads``, else 1; agents.network_agent).

    Options:
        checkpoint: weights to play (None: the shipped weights for the board, in agents/checkpoints)
        device: torch device of the network, e.g. ``cpu`` or ``cuda``
        symmetrize: average the network's outputs over the board's symmetries
        search: the search backend: ``auto`` (native when built and the board is at most 12x12), ``python``
            or ``native``
        nimstring_edges: undrawn edges within which, when no box is on offer, it plays a safe move that wins
            Nimstring (found within half the time left on a clock, else 200,000 positions), checked by the
            exact solver (within 0.85 of the time left, else 500,000 nodes); a move the check shows to lose on
            boxes is passed over, and is not played by the tree search either; where no such move keeps the
            win, the solver's win test of the position may give a move that does (-1 auto: 44 on 5x5, 11/15 of
            the board's edges at most, on boards of at most 64 edges; 0: off)
        nimstring_order: the order in which that search tries the safe moves: ``rule`` (the moves the long
            chain rule likes first, each group in random order) or ``prior`` (the network's prior, highest
            first: the move found is the network's likeliest one that wins Nimstring)
        nimstring_threads: 1, or 2 to search and check the Nimstring moves in two threads on a clock (each
            thread every other move, a move found checked while the other thread searches on)
        safe_phase: safe moves left (no box on offer) within which it plays the best move of the safe-phase
            search (the players draw only safe moves and take boxes until no safe move is left, then play
            exactly; within 0.6 of the time left on a clock, else 2,000,000 positions; one that runs out is
            not tried again in that game until fewer safe moves are left) (-1 auto: 20 on boards of more than
            64 edges, where the Nimstring move does not play, from 6x6 on; 0: off)
    """


@functools.lru_cache(maxsize=None)
def _network_factory(agent: str):
    def factory(*, board, seed, checkpoint: str | os.PathLike | None = None, device: str = "cpu",
                symmetrize: bool = False, search: Literal["auto", "python", "native"] = "auto",
                nimstring_edges: int = -1, safe_phase: int = -1, nimstring_order: Literal["rule", "prior"] = "rule",
                nimstring_threads: int = 1, **settings):
        from agents.network_agent import make_network_agent

        return make_network_agent(board, agent, checkpoint=checkpoint, seed=seed, device=device,
                                  symmetrize=symmetrize, search=search, nimstring_edges=nimstring_edges,
                                  safe_phase=safe_phase, nimstring_order=nimstring_order,
                                  nimstring_threads=nimstring_threads, **settings)

    # the options as before: checkpoint, the search's simulations, c_puct, prune, then device, symmetrize,
    # search, then the solver's zones and budget (their defaults from the one settings type), then the
    # Nimstring zone and the safe phase
    first, last = (option_parameters(names, PLAY) for names in _NETWORK_SEARCH_OPTIONS)
    takes_options(factory, "checkpoint", first, "device", "symmetrize", "search", last, "nimstring_edges",
                  "nimstring_order", "nimstring_threads", "safe_phase")
    what = NETWORK_AGENTS.get(agent) or f"PUCT search over a network of the model family that plays as {agent}."
    factory.__doc__ = _NETWORK_DOC.format(what=what, agent=agent)
    factory.needs = "torch"
    factory.settings_doc = SearchSettings  # the search options are described by its fields' help
    return factory


# ---------------------------------------------------------------- documentation of the agents

@dataclass(frozen=True)
class AgentOption:
    """One option of an agent: its name, its type as text, its default and what it means."""

    name: str
    kind: str
    default: object
    meaning: str


@dataclass(frozen=True)
class AgentDoc:
    """What :func:`describe_agent` reads from a factory: ``description`` (one paragraph), ``summary`` (its
    first sentence), ``options`` (in the signature's order; an option without a documented meaning has
    ``meaning=""``), ``needs`` (the import name of an extra's library, or None), and ``documented``: the
    names of the factory's ``Options:`` section, options or not."""

    name: str
    description: str
    summary: str
    options: tuple[AgentOption, ...]
    needs: str | None
    documented: tuple[str, ...]


def doc_entries(doc: str | None, section: str) -> tuple[str, dict[str, str]]:
    """The first paragraph of the docstring ``doc`` (joined into one line) and the ``name: meaning`` entries
    of its section ``section`` (``"Options"``, ``"Attributes"``): an entry starts at the section's first
    indentation, deeper lines continue it; the section ends at a line indented no deeper than its
    heading."""
    lines = inspect.cleandoc(doc or "").splitlines()
    para = []
    for line in lines:
        if not line.strip():
            break
        para.append(line.strip())
    heading = f"{section}:"
    entries: dict[str, str] = {}
    start = next((k for k, line in enumerate(lines) if line.strip() == heading), None)
    if start is not None:
        base = len(lines[start]) - len(lines[start].lstrip())
        indent, name = None, None
        for line in lines[start + 1:]:
            if not line.strip():
                continue
            depth = len(line) - len(line.lstrip())
            if depth <= base:
                break
            if indent is None:
                indent = depth
            if depth == indent:
                name, _, text = line.strip().partition(":")
                entries[name.strip()] = text.strip()
            elif name is not None:
                entries[name] += " " + line.strip()
    return " ".join(para), entries


def field_help(cls) -> dict[str, str]:
    """The ``help`` of each field of the dataclass ``cls`` that has one (its metadata), by name."""
    return {f.name: f.metadata["help"] for f in dataclasses.fields(cls) if "help" in f.metadata}


def _first_sentence(text: str) -> str:
    """``text`` up to the end of its first sentence (a full stop before a space, or the end)."""
    match = re.search(r"\.(\s|$)", text)
    return text[:match.start() + 1] if match else text


def _factory_of(name: str) -> Callable:
    """The factory of ``name``, the network agents of :data:`NETWORK_AGENTS` included where PyTorch is
    missing; ValueError naming the known agents for any other name."""
    if name in NETWORK_AGENTS and name not in _FACTORIES:
        return _network_factory(name)
    try:
        return _FACTORIES[name]
    except (KeyError, TypeError):
        known = ", ".join(sorted(set(list_agents()) | set(NETWORK_AGENTS)))
        raise ValueError(f"unknown agent {name!r}; known agents: {known}") from None


def describe_agent(name: str) -> AgentDoc:
    """The documentation of agent ``name`` read from its factory (module docstring); ValueError for an
    unknown name."""
    factory = _factory_of(name)
    description, meanings = doc_entries(factory.__doc__, "Options")
    settings = getattr(factory, "settings_doc", None)
    if settings is not None:
        meanings = {**field_help(settings), **meanings}
    params = inspect.signature(factory).parameters
    try:
        hints = typing.get_type_hints(factory)
    except NameError:
        hints = {}
    options = []
    for option in _options(factory):
        p = params[option]
        kind = hints.get(option, p.annotation if p.annotation is not p.empty else
                         (type(p.default) if p.default not in (None, p.empty) else p.empty))
        options.append(AgentOption(option, _kind_name(kind, short=True), p.default, meanings.get(option, "")))
    own = doc_entries(factory.__doc__, "Options")[1]
    return AgentDoc(name, description, _first_sentence(description), tuple(options),
                    getattr(factory, "needs", None), tuple(own))


def agent_doc_problems(name: str) -> list[str]:
    """What the documentation of agent ``name`` lacks: no description, an option without a meaning, an
    ``Options:`` entry that is no option of the agent; empty when it is complete."""
    doc = describe_agent(name)
    problems = [] if doc.description else [f"agent {name!r} has no description (its factory's docstring)"]
    problems += [f"agent {name!r}: option {o.name} has no meaning (an Options: entry)" for o in doc.options
                 if not o.meaning]
    names = {o.name for o in doc.options}
    problems += [f"agent {name!r}: documented option {n} does not exist" for n in doc.documented if n not in names]
    return problems


def shipped_agents() -> list[str]:
    """The agents this package defines (the factories registered by this module and
    :data:`NETWORK_AGENTS`), whatever is installed and whatever was registered since: the agents of the
    reference page."""
    return sorted(set(_SHIPPED) | set(NETWORK_AGENTS))


def agent_needs(name: str) -> str | None:
    """The import name of the extra's library agent ``name`` needs when it is not installed, else None (a
    network agent needs PyTorch where :func:`list_agents` leaves it out)."""
    needs = describe_agent(name).needs
    if needs is None:
        return None
    if name in NETWORK_AGENTS and name not in list_agents():
        return needs
    return needs if importlib.util.find_spec(needs) is None else None


_SHIPPED = tuple(_FACTORIES)
