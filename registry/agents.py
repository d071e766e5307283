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
"""

from __future__ import annotations

import functools
import inspect
import numbers
import os
import types
import typing
from typing import Callable, Literal

from agents.engine.protocol import TIME_MARGIN
from agents.models import family_agents
from agents.search.settings import PLAY, option_parameters
from dnb_env.core import parse_board
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


_KIND_NAMES = {bool: "true or false", int: "an integer", float: "a number", type(None): "None"}


def _kind_name(kind) -> str:
    if typing.get_origin(kind) is Literal:
        return "one of " + ", ".join(map(repr, typing.get_args(kind)))
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        return " or ".join(map(_kind_name, typing.get_args(kind)))
    return _KIND_NAMES.get(kind, f"a {getattr(kind, '__name__', kind)}")


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


def make_agent(name: str, /, board="5x5", seed: int | None = None, **kwargs):
    """Build the agent registered as ``name`` for ``board`` ("RxC" or (rows, cols))."""
    factory, options = _resolve(name, kwargs)
    return factory(board=parse_board(board), seed=seed, **options)


def _random(*, board, seed):
    from baselines.random_agent import RandomAgent

    return RandomAgent(seed=seed, board=board)


register_agent("random", _random)


def _greedy(*, board, seed):
    from baselines.greedy import GreedyAgent

    return GreedyAgent(seed=seed, board=board)


def _alphabeta(*, board, seed, depth: int = 4, time_limit: float | None = None, chain_eval: bool = False,
               extend_captures: bool = True, solve_leaf: int = 0):
    """Depth-limited negamax (baselines.alphabeta); ``solve_leaf`` > 0: exact values from the C++ solver
    for positions within that many undrawn edges."""
    from baselines.alphabeta import AlphaBetaAgent

    return AlphaBetaAgent(depth=depth, time_limit=time_limit, chain_eval=chain_eval,
                          extend_captures=extend_captures, seed=seed, board=board, solve_leaf=solve_leaf)


def _solver(*, board, seed, max_undrawn: int | None = None,
            engine: Literal["auto", "alphabeta", "retrograde"] = "auto", node_limit: int = 20_000_000,
            fallback: Literal["prsboxes", "none"] = "prsboxes"):
    """Exact play (baselines.solver over dnb_env.solver): ``engine="auto"`` is the native alpha-beta solver
    when the C++ extension is built (``max_undrawn`` default 40), else the retrograde table (default 24).
    Beyond its reach or budget the ``fallback`` plays (``prsboxes``: a PRsBoxes agent for the board, built
    on first use with the solver agent's seed; ``none``: an error)."""
    from baselines.prsboxes import PRsBoxesAgent
    from baselines.solver import SolverAgent

    backup = functools.partial(PRsBoxesAgent, board=board) if fallback == "prsboxes" else None
    return SolverAgent(seed=seed, max_undrawn=max_undrawn, board=board, engine=engine, node_limit=node_limit,
                       fallback=backup)


def _mcts(*, board, seed, simulations: int = 1000, uct_c: float = 2.0,
          search: Literal["uct", "auto", "python", "native"] = "uct", rollouts: int = 1,
          selection: Literal["uct", "puct"] | None = None):
    """Monte-Carlo tree search with random playouts (agents.search: the mean of ``rollouts`` playouts at
    each leaf, exploration weight ``uct_c``). ``search="uct"``: plain UCT (selection rule ``"uct"``: every
    move once in random order, then UCB1; a fresh tree every move) on the Python search, its move orders
    and playouts drawn from one ``random.Random(seed)``. ``"auto"``, ``"python"`` or ``"native"``: that
    backend with ``selection`` (default ``"puct"``: uniform priors, c_puct = uct_c; ``"uct"`` as above);
    the native one plays the playouts in C++."""
    import random

    from agents.search import MCTSAgent, RolloutEvaluator, SearchSettings, choose_backend, make_search
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
    agent = MCTSAgent(evaluator, config, seed=seed, greedy=True, name="mcts", board=board)
    agent.search = make_search(evaluator, config, agent.rng, backend=backend, board=board)
    return agent


register_agent("greedy", _greedy)
register_agent("alphabeta", _alphabeta)
register_agent("solver", _solver)
register_agent("mcts", _mcts)


def _prsboxes(*, board, seed, solver_edges: int = -1, search_safe: int = 9, search_full: int = 4,
              search_depth: int = 40, search_nodes: int = 300_000, solver_nodes: int = 6_000_000):
    """Chain-theory rules with searches (baselines.prsboxes); the exact solver plays and scores every
    position within ``solver_edges`` undrawn edges (-1 auto: 38 with the C++ solver, else 20)."""
    from baselines.prsboxes import PRsBoxesAgent

    return PRsBoxesAgent(seed=seed, solver_edges=solver_edges, search_safe=search_safe, search_full=search_full,
                         search_depth=search_depth, search_nodes=search_nodes, board=board,
                         solver_nodes=solver_nodes)


register_agent("prsboxes", _prsboxes)


_SPIEL_GAMES = {"python": "python_dots_and_boxes", "cpp": "dots_and_boxes"}


def _openspiel_mcts(*, board, seed, simulations: int = 1000, uct_c: float = 2.0, rollouts: int = 1,
                    game: Literal["python", "cpp"] = "python"):
    """OpenSpiel's Python MCTSBot with random rollouts, as an Agent. ``game="python"`` searches on the
    registered ``python_dots_and_boxes``; ``game="cpp"`` on OpenSpiel's own C++ ``dots_and_boxes`` (same
    rules and action numbers, faster rollouts: about 1.8x the moves per second on 5x5; the bot itself is
    the same Python code). On a clock (``set_move_time``) its simulations follow the clock at the rate it
    measured on its earlier searches (:class:`agents.base.SpielMCTSAgent`): the bot cannot grow one tree
    in rounds."""
    import numpy as np
    import pyspiel
    from open_spiel.python.algorithms import mcts

    import dnb_env  # noqa: F401  (registers the game)
    from agents.base import SpielMCTSAgent

    rows, cols = board
    game = pyspiel.load_game(_SPIEL_GAMES[game], {"num_rows": rows, "num_cols": cols})
    rs = np.random.RandomState(None if seed is None else seed % 2**32)
    evaluator = mcts.RandomRolloutEvaluator(n_rollouts=rollouts, random_state=rs)
    bot = mcts.MCTSBot(game, uct_c, simulations, evaluator, random_state=rs)
    return SpielMCTSAgent(bot, game, name="openspiel_mcts")


register_agent("openspiel_mcts", _openspiel_mcts)


def _engine(*, board, seed, cmd: str = "", name: str | None = None, movetime: float | None = None,
            timeout: float = 60.0, tolerance: float = TIME_MARGIN, startup: float = 30.0,
            log: str | None = None):
    """A program that speaks the engine protocol (docs/engine-protocol.md), run with the arguments of
    ``cmd`` (split like a shell's words, never run by a shell), its standard error appended to ``log``.
    ``movetime``: seconds per move told to it; it loses a game on time ``tolerance`` seconds after that
    (a tournament's time control: its time margin, and with overruns only warned it is waited for up to
    ``timeout`` seconds past its move time), or after ``timeout`` seconds without a move time;
    ``startup``: seconds for its handshake and isready. A crash, an illegal move or a line outside the
    protocol loses the game; the program restarts for the next one."""
    from agents.engine import EngineAgent

    return EngineAgent(_engine_argv(cmd), name=name, board=board, seed=seed, movetime=movetime,
                       timeout=timeout, tolerance=tolerance, startup=startup, log=log)


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


_engine.check_options = _check_engine
register_agent("engine", _engine)


#: The search settings the network agents take as options, after ``checkpoint``; their types and defaults
#: are those of agents.search.SearchSettings under agents.search.settings.PLAY.
_NETWORK_SEARCH_OPTIONS = (("simulations", "c_puct", "prune"), ("solve_leaf", "solve_root", "solve_nodes"))


@functools.lru_cache(maxsize=None)
def _network_factory(agent: str):
    def factory(*, board, seed, checkpoint: str | os.PathLike | None = None, device: str = "cpu",
                symmetrize: bool = False, search: Literal["auto", "python", "native"] = "auto", **settings):
        from agents.network_agent import make_network_agent

        rows, cols = board
        return make_network_agent(f"{rows}x{cols}", agent, checkpoint=checkpoint, seed=seed, device=device,
                                  symmetrize=symmetrize, search=search, **settings)

    # the options as before: checkpoint, the search's simulations, c_puct, prune, then device, symmetrize,
    # search, then the solver's zones and budget (their defaults from the one settings type)
    own = inspect.signature(factory).parameters
    first, last = (option_parameters(names, PLAY) for names in _NETWORK_SEARCH_OPTIONS)
    params = [own["board"], own["seed"], own["checkpoint"], *first, own["device"], own["symmetrize"], own["search"],
              *last]
    factory.__signature__ = inspect.Signature(params)
    factory.__annotations__ = {**factory.__annotations__, **{p.name: p.annotation for p in first + last}}
    factory.__doc__ = (f"PUCT search over the {agent} network (shipped weights unless checkpoint=PATH); "
                       "search: the backend (auto = C++ when built); solve_leaf / solve_root: exact solver "
                       "zones in undrawn edges (-1 auto: leaves up to 36 and 60% of the board's edges, the root up "
                       "to 38 and two thirds of them; 0 off).")
    return factory

