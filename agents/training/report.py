"""Reports over run folders: the papers' "iterations per rollback step" table (Dotsformer Tables 5, 8,
9 and 11) for several runs side by side.

    dnb report runs/df3-cpu runs/az3-cpu            # markdown table on stdout

A cell is the number of training iterations a run spent with its first searched move at S before S moved
one earlier; ``(n, now)`` marks the step a run is still at after n iterations, ``-`` a step it has not
reached.
"""

from __future__ import annotations

import os

from agents.training.curriculum import rollback_table
from agents.training.store import RunStore

__all__ = ["rollback_report", "main"]


def _run_history(run: str) -> tuple[list, int]:
    store = RunStore(run)
    committed = store.load(store.read_config().board)
    if committed is None:
        return [], 0
    return committed.curriculum.history, committed.iteration


def rollback_report(runs: list[str]) -> str:
    columns = {}
    for run in runs:
        history, last = _run_history(run)
        cells = {}
        for (s, spent), (it, _) in zip(rollback_table(history), history):
            cells[s] = str(spent) if spent is not None else f"({last - it}, now)"
        columns[os.path.basename(os.path.normpath(run))] = cells
    steps = sorted({s for cells in columns.values() for s in cells}, reverse=True)
    lines = ["| S | " + " | ".join(columns) + " |", "|---:|" + "---:|" * len(columns)]
    for s in steps:
        lines.append(f"| {s} | " + " | ".join(cells.get(s, "-") for cells in columns.values()) + " |")
    return "\n".join(lines)


def main(runs: list[str]) -> int:
    print(rollback_report(runs))
    return 0
