"""A long exact solve that stops and continues: the value of a whole board (4x4 from the empty board, say)
by the native alpha-beta solver, in slices of a node budget, with its state saved in a folder.

```python
from dnb_env.solve_run import solve_board
result = solve_board("4x4", "runs/solve-4x4", tt_mb=4096)   # killed and run again: it goes on
print(result["value"], result["nodes"], result["seconds"])
```

How it resumes. The value is found by MTD(f) driven from here: a sequence of null-window tests "is the
value >= t?" (:meth:`ExactSolver.at_least`), each narrowing the bounds ``lo <= value <= hi``. A test that
runs past ``slice_nodes`` is simply asked again; the solver's transposition table keeps every bound proved
so far, so the repeated test goes straight back to where it stopped. Every ``save_every`` seconds the table
is written to ``table.bin`` and the bounds, nodes, time and the table's sha256 to ``state.json`` (both
atomically: a kill loses at most the work since the last save). A new run in the same folder loads both and
continues; a state or table that is damaged (a table that does not match its checksum included) is refused
with an error naming the file, and nothing is changed. The folder
records the board, the start position and the solver's rules, and refuses to continue a different problem.
One run writes a folder at a time (:class:`dnb_env.io.RunLock`; a second is refused at once), and it first
removes the ``table.bin.tmp*`` files of a run killed while saving its table.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import time

from dnb_env.core import GameState
from dnb_env.io import RunLock, atomic_write, read_json
from dnb_env.limits import INT_LIMIT, check_int, check_number, is_int, is_number

__all__ = ["solve_board"]

FORMAT = 1


#: The fewest nodes a search slice may take: a slice that stops before its test is decided keeps only its
#: table, and slices much smaller than a test may never decide one.
MIN_SLICE_NODES = 1_000
#: The largest transposition table, in MB (1 TB).
MAX_TT_MB = 1 << 20


def _problem(state: GameState, moves: list[int], rules: int) -> dict:
    return {"board": state.geometry.name, "moves": list(moves), "rules": int(rules)}


def _shown(value, limit: int = 120) -> str:
    """``value`` for an error message: its repr, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def _state_problem(st) -> str | None:
    """What is wrong with the types of a parsed ``state.json`` (None when nothing is), checked before any
    field is used: the format, the problem (board, moves, rules), the bounds and counters, ``done`` and, once
    done, a ``value`` equal to both bounds, and the table's checksums (where the folder has them)."""
    if not isinstance(st, dict):
        return f"a JSON {type(st).__name__}, not an object"
    if not is_int(st.get("format")) or st["format"] != FORMAT:
        return f"format {_shown(st.get('format'))}, not {FORMAT}"
    if not isinstance(st.get("board"), str):
        return f"board {_shown(st.get('board'))}, not a string"
    if not isinstance(st.get("moves"), list) or not all(is_int(a) for a in st["moves"]):
        return f"moves {_shown(st.get('moves'))}, not a list of integers"
    for key in ("rules", "nodes", "slices", "tests"):
        if not is_int(st.get(key)) or st[key] < 0:
            return f"{key} {_shown(st.get(key))}, not an integer >= 0"
    seconds = st.get("seconds")
    if not is_number(seconds) or not 0 <= seconds < INT_LIMIT:
        return f"seconds {_shown(seconds)}, not a finite number >= 0"
    for key in ("lo", "hi", "guess"):
        if not is_int(st.get(key)) or abs(st[key]) >= 2 ** 31:
            return f"{key} {_shown(st.get(key))}, not an integer"
    if st["lo"] > st["hi"]:
        return f"bounds lo {st['lo']} > hi {st['hi']}"
    if not isinstance(st.get("done"), bool) or st["done"] != (st["lo"] == st["hi"]):
        return f"done {_shown(st.get('done'))}, with bounds {st['lo']}..{st['hi']}"
    if st["done"] and (not is_int(st.get("value")) or st["value"] != st["lo"]):
        return f"value {_shown(st.get('value'))}, with bounds {st['lo']}..{st['hi']}"
    sums = st.get("table_sha256", [""])  # a folder saved before tables had checksums has none
    if "table_sha256" in st and not (isinstance(sums, list) and 1 <= len(sums) <= 2 and all(
            isinstance(h, str) and re.fullmatch(r"[0-9a-f]{64}", h) for h in sums)):
        return f"table_sha256 {_shown(sums)}, not one or two sha256 checksums"
    return None


def _sha256(path: str) -> str:
    """The sha256 of the file ``path`` (hex), read a MiB at a time."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _read_state(path: str, out: str, problem: dict, remaining: int) -> dict:
    """The saved state at ``path`` of the folder ``out``, checked (:func:`_state_problem`), of ``problem``
    and with bounds in ``-remaining..remaining`` (the boxes still open); ValueError naming the file when it
    cannot be read, is not JSON, is damaged or is of another problem."""
    try:
        saved = read_json(path, "a solve state")
    except FileNotFoundError as exc:
        raise ValueError(f"{path} cannot be read ({exc.strerror or exc})") from None
    why = _state_problem(saved)
    if why:
        raise ValueError(f"{path} is not a solve state of format {FORMAT}: {why}")
    mine = {k: saved[k] for k in problem}
    if mine != problem:
        raise ValueError(f"{out} holds another problem ({path}: {_shown(mine)}); this one is {problem}: "
                         "use another folder")
    if not -remaining <= saved["lo"] <= saved["hi"] <= remaining or abs(saved["guess"]) > remaining:
        raise ValueError(f"{path} is damaged: bounds {saved['lo']}..{saved['hi']} and guess {saved['guess']} "
                         f"are not within -{remaining}..{remaining}, the boxes still open")
    return saved


def solve_board(board: str, out: str, *, moves: list[int] | None = None, tt_mb: float = 1024.0,
                slice_nodes: int = 50_000_000, save_every: float = 300.0, max_slices: int | None = None,
                threads: int = 1, progress: bool = True) -> dict:
    """The exact value of ``board`` after ``moves`` (OpenSpiel action numbers; none: the empty board) for
    the player to move: the margin of the boxes still open under best play. Returns the state dict
    (``value`` once ``done``); with ``max_slices`` it may stop earlier, not done, to be continued by
    another call; ``threads`` search together over the one table. ValueError when ``out`` holds another
    problem or a damaged table."""
    from dnb_env.native import available

    if not available():
        raise ImportError("dnb solve needs the C++ extension dnb_env._native (the alpha-beta solver)")
    check_int(slice_nodes, "slice_nodes", MIN_SLICE_NODES)  # smaller slices may never finish a test
    check_number(save_every, "save_every", low=0)
    check_number(tt_mb, "tt_mb", low=0, open_low=True, high=MAX_TT_MB)
    check_int(threads, "threads", 1, 1024)
    state = GameState.new(board)
    for a in moves or []:
        if a not in state.legal_actions():
            raise ValueError(f"move {a} is not legal on {board} after {moves}")
        state = state.apply(a)
    if os.path.exists(out) and not os.path.isdir(out):
        raise ValueError(f"{out} exists and is not a folder")
    # a second run of the folder is refused here, before it reads or writes; taking the lock removes the
    # table.bin.tmpPID of a run killed while saving (up to tt_mb each)
    with RunLock(out, what="solve"):
        return _solve(state, moves or [], out, tt_mb, slice_nodes, save_every, max_slices, threads, progress)


def _solve(state: GameState, moves: list[int], out: str, tt_mb: float, slice_nodes: int, save_every: float,
           max_slices: int | None, threads: int, progress: bool) -> dict:
    """Solve ``state`` in the locked folder ``out``, resumed from its state and table where they are, in
    slices of ``slice_nodes`` nodes, saved every ``save_every`` seconds, once decided and at the end."""
    from dnb_env.native import module

    solver = module(state.rows, state.cols).ExactSolver(state.rows, state.cols, tt_mb=tt_mb, threads=threads)
    problem = _problem(state, moves, solver.rules)
    state_path, table_path = os.path.join(out, "state.json"), os.path.join(out, "table.bin")
    st = _resume(solver, state, problem, out, state_path, table_path)
    if st["done"]:
        return st

    bar = _progress_bar(progress, problem, st)
    last_save = time.monotonic()
    slices = 0
    try:
        while st["lo"] < st["hi"]:
            if max_slices is not None and slices >= max_slices:
                break
            nodes = _search_slice(solver, state, st, slice_nodes)
            slices += 1
            if bar is not None:
                bar.update(nodes // 1_000_000)
                bar.set_postfix_str(f"value in [{st['lo']}, {st['hi']}]")
            if st["lo"] == st["hi"] or time.monotonic() - last_save >= save_every:
                st["done"] = st["lo"] == st["hi"]
                if st["done"]:
                    st["value"] = st["lo"]
                _save(solver, st, state_path, table_path)
                last_save = time.monotonic()
    finally:
        if bar is not None:
            bar.close()
    if not st["done"]:
        if st["lo"] == st["hi"]:  # decided before any slice (no box left after the moves)
            st["done"], st["value"] = True, st["lo"]
        _save(solver, st, state_path, table_path)
    return st


def _resume(solver, state: GameState, problem: dict, out: str, state_path: str, table_path: str) -> dict:
    """The solve state of ``problem``: the one saved in ``out``, its table loaded into ``solver`` where there
    is one (checked against its checksum), else a new one with the widest bounds; ValueError for a
    damaged or foreign state or table."""
    remaining = state.rows * state.cols - sum(state.scores)
    st = {"format": FORMAT, **problem, "lo": -remaining, "hi": remaining, "nodes": 0, "seconds": 0.0,
          "slices": 0, "tests": 0, "guess": 0, "done": False}
    if os.path.exists(state_path):
        st = _read_state(state_path, out, problem, remaining)
        if os.path.exists(table_path):
            if "table_sha256" in st and _sha256(table_path) not in st["table_sha256"]:
                raise ValueError(f"{table_path} does not match its checksum in {state_path} (damaged or replaced)")
            try:
                solver.load_table(table_path)  # ValueError for a damaged or foreign table, nothing changed
            except ValueError as exc:
                raise ValueError(str(exc) if table_path in str(exc) else f"{table_path}: {exc}") from None
    return st


def _save(solver, st: dict, state_path: str, table_path: str) -> None:
    """Save the solver's table and the state ``st`` listing its checksum."""
    # the state lists the new table's checksum and the old one's before the new table replaces the old:
    # a run killed in between leaves a table the state accepts
    tmp = f"{table_path}.tmp{os.getpid()}"
    try:
        solver.save_table(tmp)
        st["table_sha256"] = [_sha256(tmp), *st.get("table_sha256", [])[:1]]
        atomic_write(state_path, json.dumps(st, indent=1))
        os.replace(tmp, table_path)
    finally:
        if os.path.exists(tmp):
            os.remove(tmp)


def _progress_bar(progress: bool, problem: dict, st: dict):
    """A tqdm bar of the nodes searched (in millions), from those of ``st``; None without ``progress`` or
    tqdm."""
    if not progress:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(unit=" Mnodes", desc=f"solve {problem['board']}", initial=st["nodes"] // 1_000_000)


def _search_slice(solver, state: GameState, st: dict, slice_nodes: int) -> int:
    """One slice of MTD(f): a test at the guess clipped to the bounds, of at most ``slice_nodes`` nodes,
    which narrows the bounds of ``st`` where it finishes; counted in ``st``. Returns the nodes searched."""
    g = max(st["lo"], min(st["hi"], st["guess"]))
    beta = g + 1 if g == st["lo"] else g
    solver.reset_stats()
    t0 = time.perf_counter()
    r = solver.at_least(state.edges, beta, node_limit=slice_nodes)
    nodes = solver.stats()["nodes"]
    st["nodes"] += nodes
    st["seconds"] += time.perf_counter() - t0
    st["slices"] += 1
    if r is not None:
        st["tests"] += 1
        if r:
            st["lo"] = st["guess"] = beta
        else:
            st["hi"] = st["guess"] = beta - 1
    return nodes
