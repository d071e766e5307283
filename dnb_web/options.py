"""What the web app offers and allows of the agents: the specs a request may name (checked against the registry,
engines only from the server's allow-list, checkpoints only from the allowed folders), the caps on the options
that size a search, the time limit forced on agents that take one, and the agent specs offered for a board (the
registered names with a few presets, and the checkpoints found under the allowed folders).
"""

from __future__ import annotations

import inspect
import math
import os

from dnb_env.core import geometry
from dnb_env.solver import MOVE_NODE_LIMIT, MOVES_REACH, RETROGRADE_REACH, VALUE_REACH, beyond_native, native_available
from dnb_web.checks import WebError
from dnb_web.paths import allowed_path, inside, walk_within

__all__ = ["REFUSED", "ENGINE_REFUSED_OPTIONS", "check_engine", "parse_spec", "option_caps", "NODE_BUDGETS",
           "limit_options", "move_clock", "LIMIT_SHARE", "CANDIDATES", "candidates", "find_checkpoints"]


#: Agents the web app does not offer: an ``engine`` runs a program of the request's choosing on the server,
#: so it is built only where the program is on the server's allow-list (``dnb serve --allow-engine CMD``).
REFUSED = ("engine",)
#: Options of an ``engine`` spec the web app refuses: ``log`` would write a file of the request's choosing.
ENGINE_REFUSED_OPTIONS = ("log",)


def check_engine(kwargs: dict, allowed_engines) -> None:
    """WebError 403 unless the program of the engine spec's ``cmd`` (its first word after ``shlex.split``)
    is exactly one of ``allowed_engines``, and the spec has none of :data:`ENGINE_REFUSED_OPTIONS`."""
    import shlex

    if not allowed_engines:
        raise WebError(403, "agent_refused", "the web app does not run 'engine' agents: they start programs on "
                                             "the server (its operator may allow some with dnb serve "
                                             "--allow-engine CMD)")
    try:
        argv = shlex.split(str(kwargs.get("cmd", "")))
    except ValueError as exc:
        raise WebError(400, "bad_agent", f"agent 'engine': cannot split cmd into arguments: {exc}") from None
    if not argv or argv[0] not in allowed_engines:
        program = argv[0] if argv else ""
        raise WebError(403, "agent_refused", f"the engine program {program!r} is not on this server's allow-list "
                                             f"({', '.join(allowed_engines)})")
    refused = sorted(set(kwargs) & set(ENGINE_REFUSED_OPTIONS))
    if refused:
        raise WebError(403, "agent_refused", f"the web app does not take the engine option(s) {', '.join(refused)}")


def parse_spec(spec, checkpoint_roots: list[str], allowed_engines=()) -> tuple[str, dict]:
    """An agent spec ``name[:key=value,...]`` checked against the registry (name, option names and types)
    and, for a ``checkpoint=`` option, against the allowed folders; an ``engine`` spec against
    ``allowed_engines`` (:func:`check_engine`, before the registry looks for its program). WebError 400 / 403
    otherwise."""
    from registry.specs import check_agent_spec, parse_agent_spec

    if not isinstance(spec, str) or not spec.strip() or len(spec) > 500:
        raise WebError(400, "bad_agent", f"opponent must be an agent spec like 'alphabeta:depth=4', got {spec!r}")
    try:
        name, kwargs = parse_agent_spec(spec)
    except ValueError as exc:
        raise WebError(400, "bad_agent", str(exc)) from None
    if name in REFUSED:
        check_engine(kwargs, allowed_engines)
    try:
        name, kwargs = check_agent_spec(spec)
    except ValueError as exc:
        raise WebError(400, "bad_agent", str(exc)) from None
    if "checkpoint" in kwargs and kwargs["checkpoint"] is not None:
        kwargs["checkpoint"] = allowed_path(str(kwargs["checkpoint"]), checkpoint_roots, "checkpoint", want="file")
    return name, kwargs


def option_caps(rows: int, cols: int) -> dict[str, int]:
    """The largest value of each option that sizes an agent's search on a ``rows`` x ``cols`` board:
    simulations (of playouts up to ``edges`` moves long) shrink as the board grows; node budgets; depths;
    the exact solver's zones in undrawn edges (``solve_leaf``, ``solve_root``, ``solver_edges``,
    ``max_undrawn``: the retrograde engine enumerates 2^k positions, so at most 24; prsboxes' ``solver_edges``
    at most 38 where the alpha-beta solver takes the board)."""
    g = geometry(rows, cols)
    edges = g.num_actions
    alphabeta = native_available() and not beyond_native(g)
    return {"simulations": max(1000, 200_000 // edges), "rollouts": 16, "depth": edges,
            "node_limit": 5_000_000, "search_nodes": 300_000, "solver_nodes": MOVE_NODE_LIMIT, "solve_nodes": 200_000,
            "search_depth": edges, "search_safe": edges, "search_full": edges, "solve_leaf": min(edges, VALUE_REACH),
            "solve_root": min(edges, MOVES_REACH),
            "solver_edges": min(edges, MOVES_REACH if alphabeta else RETROGRADE_REACH),
            "max_undrawn": min(edges, RETROGRADE_REACH)}


#: Node budgets whose 0 means "no budget" in the agent (the exact solver's ``node_limit=0`` is unlimited):
#: the web app wants each at least 1.
NODE_BUDGETS = ("node_limit", "solver_nodes", "search_nodes", "solve_nodes")


#: Options that size an agent's thinking by its own measure (simulations) or bound it by a time already.
_SIZED = ("simulations", "time_limit", "movetime")
#: The share of a game's time limit an agent's move may plan for (the rest: the move's process, its build).
LIMIT_SHARE = 0.8


def move_clock(factory, limit: float) -> float | None:
    """The move time the web app tells an agent of ``factory`` (where the agent thinks to a clock) in a game
    whose moves have ``limit`` seconds: 0.8 x ``limit`` for an agent sized by node budgets (an option of
    :data:`NODE_BUDGETS`, none of simulations, ``time_limit`` or ``movetime``: prsboxes, solver), whose
    moves the budgets alone do not keep within the limit; None for the others, which keep their own
    budgets (capped by :func:`option_caps`) or get a ``time_limit`` (:func:`limit_options`)."""
    params = inspect.signature(factory).parameters
    if any(p in params for p in _SIZED) or not any(p in params for p in NODE_BUDGETS):
        return None
    return round(LIMIT_SHARE * limit, 3)


def limit_options(factory, kwargs: dict, rows: int, cols: int, limit: float) -> dict:
    """``kwargs`` with the game's time limit and the board's caps applied. An agent that takes a
    ``time_limit`` (an engine: ``movetime``) gets at most 0.8 x ``limit`` (a smaller one of its spec is
    kept; none is refused); a
    capped option above its cap (or a node budget below 1: 0 is unlimited) is refused, a default above it
    lowered to it; a number that is not finite (nan, inf) is refused in any option. WebError 400 otherwise."""
    for option, value in kwargs.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise WebError(400, "bad_agent", f"{option}={value} is not a finite number")
    params = inspect.signature(factory).parameters
    out = dict(kwargs)
    for key in ("time_limit", "movetime"):  # movetime: an engine's seconds a move
        if key not in params:
            continue
        given = out.get(key, params[key].default)
        own = round(LIMIT_SHARE * limit, 3)
        if key in out and (given is None or given <= 0):
            raise WebError(400, "bad_agent", f"{key} must be a positive number of seconds, got {given!r} "
                                             f"(the game's time limit bounds every move)")
        out[key] = own if given in (None, inspect.Parameter.empty) else min(float(given), own)
    for option, cap in option_caps(rows, cols).items():
        if option not in params:
            continue
        if option in out:
            value = out[option]
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value > cap:
                raise WebError(400, "bad_agent", f"{option}={value} is more than the web app allows on "
                                                 f"{geometry(rows, cols).name} (at most {cap})")
            if option in NODE_BUDGETS and (value is None or isinstance(value, (int, float)) and value < 1):
                raise WebError(400, "bad_agent", f"{option}={value}: a node budget must be at least 1 (the exact "
                                                 f"solver reads 0 as unlimited); the web app takes 1..{cap} on "
                                                 f"{geometry(rows, cols).name}")
        else:
            default = params[option].default
            if isinstance(default, (int, float)) and not isinstance(default, bool) and default > cap:
                out[option] = cap
    return out


CANDIDATES = ("random", "greedy", "alphabeta:depth=2", "alphabeta:depth=4", "prsboxes", "solver",
               "mcts:simulations=1000", "openspiel_mcts:simulations=300", "alphazero", "alphazero:simulations=0",
               "dotsformer", "dotsformer:simulations=0", "alphavit", "alphavit:simulations=0")


def candidates(names: list[str], rows: int, cols: int) -> list[str]:
    """Specs worth offering on a board: the presets above of the registered names, and every other
    registered name with its defaults (none of :data:`REFUSED`). The exact solver only where it solves the
    whole game fast."""
    names = [n for n in names if n not in REFUSED]
    out = [c for c in CANDIDATES if c.partition(":")[0] in names]
    out += [n for n in names if not any(c.partition(":")[0] == n for c in CANDIDATES)]
    edges = geometry(rows, cols).num_actions
    if edges > 24:
        out = [c for c in out if c != "solver"]
    return out


def find_checkpoints(roots, limit: int = 20) -> list[tuple[str, int]]:
    """(path, modification time in ns) of the first ``limit`` ``.pt`` files within three folder levels of
    ``roots`` whose real path lies inside their root."""
    found = []
    for root in roots:
        if not os.path.isdir(root):
            continue
        for dirpath, _, files in walk_within(root):
            for f in sorted(files):
                path = os.path.join(dirpath, f)
                if f.endswith(".pt") and len(found) < limit and inside(path, root, want="file"):
                    try:
                        found.append((path, os.stat(path).st_mtime_ns))
                    except OSError:
                        continue
    return found
