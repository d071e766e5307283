"""Reports over run folders: the papers' "iterations per rollback step" table (Dotsformer Tables 5, 8,
9 and 11) for several runs side by side.

    dnb report runs/df3-cpu runs/az3-cpu            # markdown table on stdout

A cell is the number of training iterations a run spent with its first searched move at S before S moved
one earlier; ``(n, now)`` marks the step a run is still at after n iterations, ``-`` a step it has not
reached. A multi-size run (``boards``) has a column per board, ``name@RxC``.
"""

from __future__ import annotations

import os

from agents.training.curriculum import BoardCurricula, rollback_table
from agents.training.store import RunStore

__all__ = ["rollback_report", "main"]


def _run_histories(run: str) -> tuple[dict[str, list], int]:
    """``({column: curriculum history}, last iteration)``: the run's name, or per board ``name@RxC`` (a
    multi-size run)."""
    store = RunStore(run)
    config = store.read_config()
    name = os.path.basename(os.path.normpath(run))
    committed = store.load(None if config.boards else config.board)
    if committed is None:
        return {name: []}, 0
    curriculum = committed.curriculum
    if isinstance(curriculum, BoardCurricula):
        return {f"{name}@{b}": c.history for b, c in curriculum.boards.items()}, committed.iteration
    return {name: curriculum.history}, committed.iteration


def rollback_report(runs: list[str]) -> str:
    columns = {}
    for run in runs:
        histories, last = _run_histories(run)
        for column, history in histories.items():
            cells = {}
            for (s, spent), (it, _) in zip(rollback_table(history), history):
                cells[s] = str(spent) if spent is not None else f"({last - it}, now)"
            columns[column] = cells
    steps = sorted({s for cells in columns.values() for s in cells}, reverse=True)
    lines = ["| S | " + " | ".join(columns) + " |", "|---:|" + "---:|" * len(columns)]
    for s in steps:
        lines.append(f"| {s} | " + " | ".join(cells.get(s, "-") for cells in columns.values()) + " |")
    return "\n".join(lines)


def main(runs: list[str]) -> int:
    print(rollback_report(runs))
    return 0
