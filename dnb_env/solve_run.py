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
is written to ``table.bin`` and the bounds, nodes and time to ``state.json`` (both atomically: a kill loses
at most the work since the last save). A new run in the same folder loads both and continues. The folder
records the board, the start position and the solver's rules, and refuses to continue a different problem.
One run writes a folder at a time (:class:`dnb_env.io.RunLock`; a second is refused at once), and it first
removes the ``table.bin.tmp*`` files of a run killed while saving its table.
"""

from __future__ import annotations

import json
import os
import time

from dnb_env.core import GameState
from dnb_env.io import RunLock, atomic_write

__all__ = ["solve_board"]

FORMAT = 1


def _problem(state: GameState, moves: list[int], rules: int) -> dict:
    return {"board": f"{state.rows}x{state.cols}", "moves": list(moves), "rules": int(rules)}


def solve_board(board: str, out: str, *, moves: list[int] | None = None, tt_mb: float = 1024.0,
                slice_nodes: int = 50_000_000, save_every: float = 300.0, max_slices: int | None = None,
                threads: int = 1, progress: bool = True) -> dict:
    """The exact value of ``board`` after ``moves`` (OpenSpiel action numbers; none: the empty board) for
    the player to move: the margin of the boxes still open under best play. Returns the state dict
    (``value`` once ``done``); with ``max_slices`` it may stop earlier, not done, to be continued by
    another call; ``threads`` search together over the one table. ValueError when ``out`` holds another
    problem or a damaged table."""
    from dnb_env import _native  # the C++ extension: ImportError without it
    from dnb_env.native import available

    if not available():
        raise ImportError("dnb solve needs the C++ extension dnb_env._native (the alpha-beta solver)")
    if slice_nodes < 1 or save_every < 0:
        raise ValueError("slice_nodes must be >= 1 and save_every >= 0")
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
    from dnb_env import _native

    solver = _native.ExactSolver(state.rows, state.cols, tt_mb=tt_mb, threads=threads)
    problem = _problem(state, moves, solver.rules)
    state_path, table_path = os.path.join(out, "state.json"), os.path.join(out, "table.bin")
    remaining = state.rows * state.cols - sum(state.scores)
    st = {"format": FORMAT, **problem, "lo": -remaining, "hi": remaining, "nodes": 0, "seconds": 0.0,
          "slices": 0, "tests": 0, "guess": 0, "done": False}
    if os.path.exists(state_path):
        with open(state_path) as f:
            saved = json.load(f)
        if saved.get("format") != FORMAT:
            raise ValueError(f"{state_path} is not a solve state of format {FORMAT}")
        mine = {k: saved.get(k) for k in problem}
        if mine != problem:
            raise ValueError(f"{out} holds another problem ({mine}); this one is {problem}: use another folder")
        st = saved
        if os.path.exists(table_path):
            solver.load_table(table_path)  # ValueError for a damaged or foreign table, nothing changed
    if st["done"]:
        return st

    def save():
        tmp = f"{table_path}.tmp{os.getpid()}"
        try:
            solver.save_table(tmp)
            os.replace(tmp, table_path)
        finally:
            if os.path.exists(tmp):
                os.remove(tmp)
        atomic_write(state_path, json.dumps(st, indent=1))

    bar = None
    if progress:
        try:
            from tqdm import tqdm

            bar = tqdm(unit=" Mnodes", desc=f"solve {problem['board']}", initial=st["nodes"] // 1_000_000)
        except ImportError:
            pass
    last_save = time.monotonic()
    slices = 0
    try:
        while st["lo"] < st["hi"]:
            if max_slices is not None and slices >= max_slices:
                break
            # MTD(f): test at the guess clipped to the bounds
            g = max(st["lo"], min(st["hi"], st["guess"]))
            beta = g + 1 if g == st["lo"] else g
            solver.reset_stats()
            t0 = time.perf_counter()
            r = solver.at_least(state.edges, beta, node_limit=slice_nodes)
            nodes = solver.stats()["nodes"]
            st["nodes"] += nodes
            st["seconds"] += time.perf_counter() - t0
            st["slices"] += 1
            slices += 1
            if r is not None:
                st["tests"] += 1
                if r:
                    st["lo"] = st["guess"] = beta
                else:
                    st["hi"] = st["guess"] = beta - 1
            if bar is not None:
                bar.update(nodes // 1_000_000)
                bar.set_postfix_str(f"value in [{st['lo']}, {st['hi']}]")
            if st["lo"] == st["hi"] or time.monotonic() - last_save >= save_every:
                st["done"] = st["lo"] == st["hi"]
                if st["done"]:
                    st["value"] = st["lo"]
                save()
                last_save = time.monotonic()
    finally:
        if bar is not None:
            bar.close()
    if not st["done"]:
        save()
    return st
