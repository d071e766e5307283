"""The frontier benchmark: does an agent's move keep a won position won, on fixed position sets at the steps
where 5x5 games are decided (40-46 undrawn edges, steps 14-20 of 60)?

``benchmarks/midgame.py`` draws its positions anew on every run; here the positions are *files* of the
repository (``research/frontier/sets/``), made once, grown later and shared, so that numbers measured before
and after a change are measured on the same positions, and each move's exact label is computed once.

==========  ==============================================================================================
``make``    plays seeded games of each *kind* of play, takes the position at ``--step`` (moves already
            played) and labels it with the exact solver (won / lost / unknown past ``--node-limit``);
            writes the set file after every position and resumes from it
``score``   each agent picks a move in every won position of the sets; the move is labelled by the solver
            (``Solver.keeps_win``) and the label is cached in the set file, so scoring another agent that
            picks the same move costs nothing. Prints keep rates per step and agent (and per kind),
            and each agent against the first, position by position (McNemar)
==========  ==============================================================================================

Kinds of play (``--kinds``; game ``g`` of each kind has its own seed, recorded with the position):

====================  ====================================================================================
``agents``            ``prsboxes`` against ``prsboxes`` with different seeds: the agents' own games
``alphabeta-greedy``  ``alphabeta:depth=2`` against ``greedy``, as in ``benchmarks/midgame.py``
``guided``            guided random moves (a random safe move while there is one) straight to the step
====================  ====================================================================================

The two played kinds open with ``num_actions // 6`` guided random moves (10 on 5x5; at most the step) and
alternate colours from game to game (even games: the first player named moves first). Positions of the
same kind and game are the same whatever ``--per-kind`` says, so a set grows by running ``make`` again with
a larger ``--per-kind``; positions are taken game by game across the kinds, so a set cut short stays balanced.

The set file (JSON, written atomically: a temporary file, then ``os.replace``)::

    {"format": "dnb-frontier-set/1",
     "params": {"board": "5x5", "step": 16, "kinds": [...], "seed": 1, "node_limit": 300000000, "opening": 10},
     "per_kind": 20,                       # the largest --per-kind asked so far
     "commands": ["python benchmarks/frontier.py make ...", ...],   # each make run that added positions
     "positions": [{"kind": "guided", "game": 0, "seed": 120017, "history": [...],   # the moves played
                    "label": "won" | "lost" | "unknown", "nodes": 1234567, "seconds": 0.41,
                    "moves": {"17": {"kept": true, "nodes": 5678, "seconds": 0.02, "budget": 300000000}}}, ...]}

``moves`` is the cache of ``score``: the chosen moves of won positions and whether each keeps the win
(``kept``: null when the label was past its node ``budget``; a later ``score`` with a larger ``--node-limit``
tries it again). ``make`` refuses a file made with other ``params`` (board, step, kinds,
seed, node limit, opening) and leaves it as it is; ``--threads`` and ``--tt-mb`` change only the speed.
A ``score`` may run while a ``make`` grows the same set: each merges what the other wrote before it writes
(under a lock on the folder), so no position and no label is lost.

Positions whose own label (``can_win``) is past the node budget are ``unknown``: counted and reported, never
scored. The keep rate of an agent at a step is the fraction of its labelled moves in won positions that keep
the win, with a Wilson 95% interval; moves whose label is past the budget are counted as ``unknown``. With
``--time-per-move X`` every agent that thinks to a clock (:class:`dnb_env.agent.Timed`) gets X seconds a move.
An agent that draws (:class:`dnb_env.agent.Seedable`) is reseeded for each position from ``--seed`` and the
position's seed, so its move in a position does not depend on which sets are scored with it, or in what order.

    python benchmarks/frontier.py make --out research/frontier/sets/5x5-s20.json --step 20 \\
        --kinds agents,alphabeta-greedy,guided --per-kind 20 --seed 1 --node-limit 300000000
    python benchmarks/frontier.py score --sets research/frontier/sets/5x5-s*.json --agents prsboxes,greedy \\
        --json runs/frontier-score.json

Version history: 1 the ``make`` and ``score`` subcommands and the set format ``dnb-frontier-set/1``.
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import shlex
import sys
import time

try:
    import fcntl
except ImportError:  # not on Windows: set files are written without the folder lock
    fcntl = None

from agents.arena import make_opening, wilson_interval
from agents.arena.ratings import paired_difference
from dnb_env.agent import Seedable, Timed
from dnb_env.core import GameState
from dnb_env.io import atomic_write
from dnb_env.solver import Solver, SolverBudgetExceeded
from registry import make_agent
from registry.specs import parse_agent_spec, split_agents

FORMAT = "dnb-frontier-set/1"
#: The kinds of play a position can come from, in their file order.
KINDS = ("agents", "alphabeta-greedy", "guided")
#: The two players of each played kind (registry specs).
PLAYERS = {"agents": ("prsboxes", "prsboxes"), "alphabeta-greedy": ("alphabeta:depth=2", "greedy")}
_KIND_SALT = {kind: i * 10_007 for i, kind in enumerate(KINDS)}


class SetError(ValueError):
    """A set file that cannot be used as asked (missing, malformed, another board or other parameters)."""


# --------------------------------------------------------------------------------------------- positions
def position_seed(seed: int, kind: str, game: int) -> int:
    """The seed of game ``game`` of ``kind`` in a set made with ``seed`` (its opening and its players)."""
    return seed * 100_003 + _KIND_SALT[kind] + game


def play_to_step(board: str, step: int, kind: str, seed: int, game: int) -> list[int]:
    """The moves of game ``game`` of ``kind`` up to ``step`` moves (the position's ``history``); ``seed`` is
    the game's own seed (:func:`position_seed`)."""
    a = GameState.new(board).num_actions
    if kind == "guided":
        return make_opening(board, step, "guided", seed)
    players = [make_agent(name, board=board, seed=2 * seed + i, **kw)
               for i, (name, kw) in enumerate(map(parse_agent_spec, PLAYERS[kind]))]
    first, second = players if game % 2 == 0 else players[::-1]
    s = GameState.from_actions(board, actions=make_opening(board, min(a // 6, step), "guided", seed))
    while len(s.history) < step and not s.is_terminal():
        s = s.apply((first, second)[s.current_player].select_action(s))
    return list(s.history)


def check_step(board: str, step: int) -> int:
    """``num_actions`` of ``board``; a step with no move left to choose is refused."""
    try:
        a = GameState.new(board).num_actions
    except ValueError as exc:
        raise SetError(f"board {board!r}: {exc}") from None
    if not 0 <= step < a:
        raise SetError(f"step {step} is beyond {board}: a position with a move to choose has 0..{a - 1} moves played")
    return a


# --------------------------------------------------------------------------------------------- the file
def load_set(path: str) -> dict:
    """The set file at ``path``, checked: its format, and every position a legal move list of its board
    with ``step`` moves."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise SetError(f"{path}: no such set file") from None
    except (OSError, json.JSONDecodeError) as exc:
        raise SetError(f"{path}: not a readable set file ({exc})") from None
    if not isinstance(data, dict) or data.get("format") != FORMAT:
        raise SetError(f"{path}: not a frontier set (format {FORMAT!r} expected)")
    try:
        params = data["params"]
        check_step(params["board"], params["step"])
        for i, pos in enumerate(data["positions"]):
            if len(pos["history"]) != params["step"]:
                raise SetError(f"position {i} has {len(pos['history'])} moves, the set's step is {params['step']}")
            try:
                GameState.from_actions(params["board"], actions=pos["history"])
            except (ValueError, IndexError, TypeError) as exc:
                raise SetError(f"position {i} is not a game of {params['board']} ({exc})") from None
            if pos["label"] not in ("won", "lost", "unknown") or not isinstance(pos["moves"], dict):
                raise SetError(f"position {i} has no label won, lost or unknown, or no moves")
    except SetError as exc:
        raise SetError(f"{path}: {exc}") from None
    except (KeyError, TypeError) as exc:
        raise SetError(f"{path}: a malformed set file ({type(exc).__name__}: {exc})") from None
    return data


def write_json(path: str, data: dict) -> None:
    """Write ``data`` to ``path`` atomically (:func:`dnb_env.io.atomic_write`), its folder made if missing."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    atomic_write(path, _dumps(data))


def save_set(path: str, data: dict) -> None:
    """Write the set ``data`` to ``path`` (atomically), first merging into ``data`` what another process wrote
    there meanwhile: positions a ``make`` added, move labels a ``score`` cached. The read and the write hold a
    lock on the folder (where the system has ``fcntl``), so a ``score`` may run beside a ``make`` growing the
    same set and neither loses the other's work."""
    with _folder_lock(path):
        try:
            disk = load_set(path) if os.path.exists(path) else None
        except SetError:
            disk = None  # not ours to merge: overwritten, as before the lock
        if disk is not None and disk["params"] == data["params"]:
            _merge(data, disk)
        write_json(path, data)


def _merge(data: dict, other: dict) -> None:
    """Add to ``data`` the positions, move labels and commands of ``other`` (the same set) that it lacks; a
    known label wins over an unknown one."""
    mine = {(p["kind"], p["game"]): p for p in data["positions"]}
    for pos in other["positions"]:
        have = mine.get((pos["kind"], pos["game"]))
        if have is None:
            data["positions"].append(pos)
            continue
        for move, label in pos["moves"].items():
            if move not in have["moves"] or (have["moves"][move]["kept"] is None and label["kept"] is not None):
                have["moves"][move] = label
    order = {kind: i for i, kind in enumerate(data["params"]["kinds"])}
    data["positions"].sort(key=lambda p: (p["game"], order.get(p["kind"], len(order))))
    data["commands"] = other["commands"] + [c for c in data["commands"] if c not in other["commands"]]
    data["per_kind"] = max(data["per_kind"], other["per_kind"])


class _folder_lock:
    """An exclusive ``flock`` on the folder of ``path`` while in the block (nothing without ``fcntl``)."""

    def __init__(self, path: str):
        self.folder = os.path.dirname(os.path.abspath(path))

    def __enter__(self):
        self.fd = None
        if fcntl is not None:
            os.makedirs(self.folder, exist_ok=True)
            self.fd = os.open(self.folder, os.O_RDONLY)
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            fcntl.flock(self.fd, fcntl.LOCK_UN)
            os.close(self.fd)


def _dumps(data: dict) -> str:
    """JSON with one line per item of a top-level list (a set's positions, a table's rows): a grown set's
    diff is its new lines."""
    parts = []
    for key, value in data.items():
        if isinstance(value, list) and value and isinstance(value[0], dict):
            items = ",\n".join("  " + json.dumps(v, separators=(",", ":")) for v in value)
            parts.append(f"{json.dumps(key)}: [\n{items}\n ]")
        else:
            parts.append(f"{json.dumps(key)}: {json.dumps(value)}")
    return "{" + ",\n ".join(parts) + "}\n"


def _labelled(solver: Solver, run) -> tuple[bool | None, int, float]:
    """``(result, nodes, seconds)`` of one solver query ``run()``; result None past the node budget."""
    before, t = solver.stats()["nodes"], time.perf_counter()
    try:
        result = bool(run())
    except SolverBudgetExceeded:
        result = None
    return result, solver.stats()["nodes"] - before, round(time.perf_counter() - t, 3)


def _larger(limit: int, budget: int) -> bool:
    """Whether node budget ``limit`` is larger than ``budget`` (0: unlimited)."""
    return budget != 0 and (limit == 0 or limit > budget)


# --------------------------------------------------------------------------------------------- make
def make_set(out: str, board: str, step: int, kinds: list[str], per_kind: int, seed: int, node_limit: int,
             threads: int = 1, tt_mb: float = 64.0, command: str = "", log=print) -> dict:
    """Make or grow the set file ``out``: ``per_kind`` positions of each kind at ``step``, each labelled and
    written at once. An existing file made with the same parameters is resumed (its positions are kept and
    skipped); one made with other parameters raises :class:`SetError` and is left as it is."""
    a = check_step(board, step)
    bad = [k for k in kinds if k not in KINDS]
    if bad or not kinds or len(set(kinds)) != len(kinds):
        raise SetError(f"kinds must be distinct names of {', '.join(KINDS)}, got {','.join(kinds)!r}")
    if per_kind < 0 or node_limit < 0:
        raise SetError("--per-kind and --node-limit must be >= 0")
    params = {"board": board, "step": step, "kinds": list(kinds), "seed": seed, "node_limit": node_limit,
              "opening": a // 6}
    if os.path.exists(out):
        data = load_set(out)
        if data["params"] != params:
            diff = ", ".join(f"{k}: file {data['params'].get(k)!r}, asked {v!r}" for k, v in params.items()
                             if data["params"].get(k) != v)
            raise SetError(f"{out} was made with other parameters ({diff}); nothing changed "
                           "(a set grows only with its own parameters: another --per-kind is fine)")
    else:
        data = {"format": FORMAT, "params": params, "per_kind": 0, "commands": [], "positions": []}
    have = {(p["kind"], p["game"]) for p in data["positions"]}
    todo = [(kind, g) for g in range(per_kind) for kind in kinds if (kind, g) not in have]
    log(f"{out}: {len(have)} positions there, {len(todo)} to make ({board}, step {step}, {a - step} undrawn)")
    if per_kind > data["per_kind"] or todo:
        data["per_kind"] = max(per_kind, data["per_kind"])
        data["commands"].append(command)
    solver = Solver(a, node_limit=node_limit, threads=threads, tt_mb=tt_mb)
    order = {kind: i for i, kind in enumerate(kinds)}
    for i, (kind, g) in enumerate(todo, 1):
        s_seed = position_seed(seed, kind, g)
        history = play_to_step(board, step, kind, s_seed, g)
        state = GameState.from_actions(board, actions=history)
        won, nodes, seconds = _labelled(solver, lambda: solver.can_win(state))
        label = "unknown" if won is None else ("won" if won else "lost")
        data["positions"].append({"kind": kind, "game": g, "seed": s_seed, "history": history, "label": label,
                                  "nodes": nodes, "seconds": seconds, "moves": {}})
        data["positions"].sort(key=lambda p: (p["game"], order.get(p["kind"], len(order))))
        save_set(out, data)
        log(f"[{i}/{len(todo)}] {kind} game {g}: {label} ({seconds:.1f} s, {nodes:,} nodes)")
    if not todo:
        save_set(out, data)
    return data


def summary(data: dict) -> dict:
    """Counts of a set's labels (``won``, ``lost``, ``unknown``) and its label times (median and max s)."""
    labels = [p["label"] for p in data["positions"]]
    secs = sorted(p["seconds"] for p in data["positions"] if p["label"] != "unknown")
    out = {k: labels.count(k) for k in ("won", "lost", "unknown")}
    out["median_s"] = secs[len(secs) // 2] if secs else None
    out["max_s"] = secs[-1] if secs else None
    return out


# --------------------------------------------------------------------------------------------- score
def score_sets(paths: list[str], agents: list[str], time_per_move: float | None = None, node_limit: int | None = None,
               seed: int = 0, threads: int = 1, tt_mb: float = 64.0, log=print,
               choices: dict | None = None) -> list[dict]:
    """Score each agent (registry spec) on the won positions of the set files ``paths``; the chosen moves'
    labels are read from the files' caches or computed (``node_limit``: each set's own by default) and
    written back. Returns one row per step, agent and kind (``kind`` "all" for the step's row): ``kept``,
    ``n`` (labelled moves), ``unknown`` (moves past the budget), ``rate``, ``ci``, ``mean_s``, ``max_s``,
    ``positions`` (won positions) and ``unlabelled`` (positions of the sets past their own budget).
    ``choices``, when given, gets each agent's move and its label per position: ``choices[spec][(step, kind,
    game)] = (move, kept)`` (``kept`` None past the budget)."""
    sets = {path: load_set(path) for path in paths}
    boards = {data["params"]["board"] for data in sets.values()}
    if len(boards) != 1:
        raise SetError(f"the sets are of several boards ({', '.join(sorted(boards))}): score one board at a time")
    board = boards.pop()
    a = GameState.new(board).num_actions
    solvers: dict[int, Solver] = {}
    tally: dict[tuple, dict] = {}
    for spec in agents:
        name, kw = parse_agent_spec(spec)
        agent = make_agent(name, board=board, seed=seed, **kw)
        if time_per_move is not None and isinstance(agent, Timed):
            agent.set_move_time(time_per_move)
        for path, data in sets.items():
            step, limit = data["params"]["step"], node_limit if node_limit is not None else data["params"]["node_limit"]
            if limit not in solvers:
                solvers[limit] = Solver(a, node_limit=limit, threads=threads, tt_mb=tt_mb)
            solver = solvers[limit]
            for kind in ("all", *data["params"]["kinds"]):
                row = tally.setdefault((step, spec, kind), {"kept": 0, "n": 0, "unknown": 0, "seconds": [],
                                                            "positions": 0, "unlabelled": 0})
                row["unlabelled"] += sum(p["label"] == "unknown" for p in data["positions"]
                                         if kind in ("all", p["kind"]))
            for pos in list(data["positions"]):  # save_set may add the positions of a make running beside
                if pos["label"] != "won":
                    continue
                state = GameState.from_actions(board, actions=pos["history"])
                agent.reset()
                if isinstance(agent, Seedable):  # the move of a position does not depend on the sets' order
                    agent.seed((seed * 1_000_003 + pos["seed"]) % 2 ** 31)
                t = time.perf_counter()
                move = int(agent.select_action(state))
                spent = time.perf_counter() - t
                cached = pos["moves"].get(str(move))
                if cached is None or (cached["kept"] is None and _larger(limit, cached["budget"])):
                    kept, nodes, seconds = _labelled(solver, lambda: solver.keeps_win(state, move))
                    pos["moves"][str(move)] = {"kept": kept, "nodes": nodes, "seconds": seconds, "budget": limit}
                    save_set(path, data)
                kept = pos["moves"][str(move)]["kept"]
                if choices is not None:
                    choices.setdefault(spec, {})[(step, pos["kind"], pos["game"])] = (move, kept)
                for kind in ("all", pos["kind"]):
                    row = tally[(step, spec, kind)]
                    row["positions"] += 1
                    row["seconds"].append(spent)
                    if kept is None:
                        row["unknown"] += 1
                    else:
                        row["n"] += 1
                        row["kept"] += kept
        log(f"{spec}: scored")
    rows = []
    for (step, spec, kind), row in sorted(tally.items(), key=lambda kv: (kv[0][0], agents.index(kv[0][1]))):
        secs = row.pop("seconds")
        rate = row["kept"] / row["n"] if row["n"] else None
        rows.append({"step": step, "undrawn": a - step, "agent": spec, "kind": kind, **row, "rate": rate,
                     "ci": list(wilson_interval(row["kept"], row["n"])) if row["n"] else None,
                     "mean_s": sum(secs) / len(secs) if secs else None, "max_s": max(secs) if secs else None})
    return rows


def paired_rows(choices: dict, agents: list[str]) -> list[dict]:
    """Each agent after the first against the first, step by step, on the positions where both moves are
    labelled (:func:`agents.arena.paired_difference`: ``only_first`` / ``only_second`` count the positions
    only one of them kept, ``diff`` the first's keep rate minus the second's, ``ci`` its 95% interval, ``p``
    the exact McNemar test)."""
    out = []
    first = choices.get(agents[0], {})
    for spec in agents[1:]:
        other = choices.get(spec, {})
        for step in sorted({k[0] for k in first}):
            both = [k for k in first if k[0] == step and k in other and None not in (first[k][1], other[k][1])]
            d = paired_difference([first[k][1] for k in both], [other[k][1] for k in both])
            out.append({"step": step, "first": agents[0], "second": spec, "n": d.n, "only_first": d.only_first,
                        "only_second": d.only_second, "same_move": sum(first[k][0] == other[k][0] for k in both),
                        "diff": d.diff, "ci": list(d.ci), "p": d.p})
    return out


def markdown_table(rows: list[dict]) -> str:
    """The rows of :func:`score_sets` as a markdown table: the steps' rows, then the rows by kind."""
    head = ("| step (undrawn) | agent | kind | keep rate [95% CI] | n | unknown | s/move mean | s/move max |\n"
            "|---|---|---|---|---|---|---|---|")
    lines = [head]
    for by_kind in (False, True):
        for r in rows:
            if (r["kind"] != "all") != by_kind:
                continue
            rate = "-" if r["rate"] is None else f"{r['rate']:.3f} [{r['ci'][0]:.3f}, {r['ci'][1]:.3f}]"
            mean = "-" if r["mean_s"] is None else f"{r['mean_s']:.3f}"
            top = "-" if r["max_s"] is None else f"{r['max_s']:.3f}"
            lines.append(f"| {r['step']} ({r['undrawn']}) | {r['agent']} | {r['kind']} | {rate} | {r['n']} | "
                         f"{r['unknown']} | {mean} | {top} |")
    return "\n".join(lines)


def markdown_paired(paired: list[dict]) -> str:
    """The rows of :func:`paired_rows` as a markdown table."""
    lines = ["| step | first | second | n | same move | kept by first only | by second only | "
             "difference [95% CI] | McNemar p |", "|---|---|---|---|---|---|---|---|---|"]
    for r in paired:
        lines.append(f"| {r['step']} | {r['first']} | {r['second']} | {r['n']} | {r['same_move']} | "
                     f"{r['only_first']} | {r['only_second']} | {r['diff']:+.3f} "
                     f"[{r['ci'][0]:+.3f}, {r['ci'][1]:+.3f}] | {r['p']:.3f} |")
    return "\n".join(lines)


# --------------------------------------------------------------------------------------------- command
def _expand(patterns: list[str]) -> list[str]:
    paths = []
    for pattern in patterns:
        found = sorted(glob.glob(pattern)) if glob.has_magic(pattern) else [pattern]
        if not found:
            raise SetError(f"{pattern}: no set file matches")
        paths += [p for p in found if p not in paths]
    return paths


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="command", required=True)
    mk = sub.add_parser("make", help="make or grow a set file of labelled positions at one step")
    mk.add_argument("--out", required=True, help="the set file (JSON); an existing one is resumed")
    mk.add_argument("--board", default="5x5")
    mk.add_argument("--step", type=int, required=True, help="moves played before the position")
    mk.add_argument("--kinds", default=",".join(KINDS), help=f"comma-separated kinds of play of {', '.join(KINDS)}")
    mk.add_argument("--per-kind", type=int, required=True, help="positions (games) of each kind")
    mk.add_argument("--seed", type=int, default=1)
    mk.add_argument("--node-limit", type=int, default=300_000_000, help="solver nodes per label (0: unlimited)")
    mk.add_argument("--threads", type=int, default=1, help="solver threads (speed only)")
    mk.add_argument("--tt-mb", type=float, default=64.0, help="solver transposition table, MB (speed only)")
    sc = sub.add_parser("score", help="score agents' moves in the won positions of set files")
    sc.add_argument("--sets", nargs="+", required=True, help="set files (glob patterns are expanded)")
    sc.add_argument("--agents", required=True, help="comma-separated registry specs")
    sc.add_argument("--time-per-move", type=float, default=None, help="seconds a move for agents on a clock (Timed)")
    sc.add_argument("--node-limit", type=int, default=None, help="solver nodes per move label (default: the set's)")
    sc.add_argument("--seed", type=int, default=0, help="the agents' seed")
    sc.add_argument("--threads", type=int, default=1, help="solver threads (speed only)")
    sc.add_argument("--tt-mb", type=float, default=64.0, help="solver transposition table, MB (speed only)")
    sc.add_argument("--json", default=None, help="also write the table (rows and the command) to this file")
    args = p.parse_args(argv)
    command = shlex.join(["python", "benchmarks/frontier.py", *(sys.argv[1:] if argv is None else argv)])
    try:
        if args.command == "make":
            data = make_set(args.out, args.board, args.step, [k.strip() for k in args.kinds.split(",") if k.strip()],
                            args.per_kind, args.seed, args.node_limit, args.threads, args.tt_mb, command)
            counts = summary(data)
            print(f"{args.out}: {len(data['positions'])} positions: {counts['won']} won, {counts['lost']} lost, "
                  f"{counts['unknown']} unknown (past {args.node_limit:,} nodes); label s median "
                  f"{counts['median_s']}, max {counts['max_s']}")
            return data
        agents = list(split_agents(args.agents))
        if not agents or len(set(agents)) != len(agents):
            raise SetError("--agents needs one or more distinct registry specs")
        choices: dict = {}
        rows = score_sets(_expand(args.sets), agents, args.time_per_move, args.node_limit, args.seed, args.threads,
                          args.tt_mb, choices=choices)
    except SetError as exc:
        raise SystemExit(f"frontier: {exc}") from None
    print(markdown_table(rows))
    paired = paired_rows(choices, agents)
    if paired:
        print("\npaired, on the positions where both moves are labelled:")
        print(markdown_paired(paired))
    if args.json:
        moves = [{"agent": spec, "step": k[0], "kind": k[1], "game": k[2], "move": move, "kept": kept}
                 for spec in agents for k, (move, kept) in sorted(choices.get(spec, {}).items())]
        out = {"command": command, "time_per_move": args.time_per_move, "rows": rows, "paired": paired,
               "moves": moves}
        write_json(args.json, out)
    return rows


if __name__ == "__main__":
    main()
