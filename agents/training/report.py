"""Reports over run folders: the papers' "iterations per rollback step" table (Dotsformer Tables 5, 8,
9 and 11) for several runs side by side, and a plot of their progress against the self-play they cost.

    dnb report runs/df3-cpu runs/az3-cpu            # markdown table on stdout
    dnb report runs/avit-5x5 runs/avit-cur --board 5x5 --plot curves.png   # S and accuracy against games

A cell is the number of training iterations a run spent with its first searched move at S before S moved
one earlier; ``(n, now)`` marks the step a run is still at after n iterations, ``-`` a step it has not
reached. A multi-size run (``boards``) has a column per board, ``name@RxC``.
"""

from __future__ import annotations

import os

from agents.training.curriculum import BoardCurricula, rollback_table
from agents.training.store import RunStore

__all__ = ["rollback_report", "run_curves", "pretraining", "main"]


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


def pretraining(run: str) -> tuple[int, int]:
    """``(games, positions)`` of self-play behind the weights the run started from (``config.init``): the
    totals of the run folder that checkpoint lies in, else those recorded in the checkpoint (an export);
    ``(0, 0)`` for a run from random weights."""
    from agents.training.store import read_metrics

    init = RunStore(run).read_config().init
    if not init:
        return 0, 0
    folder = os.path.dirname(os.path.abspath(init))
    if os.path.exists(os.path.join(folder, "metrics.jsonl")) and os.path.exists(os.path.join(folder, "manifest.json")):
        rows = read_metrics(os.path.join(folder, "metrics.jsonl"))
        return sum(r.get("games", 0) for r in rows), sum(r.get("positions", 0) for r in rows)
    from agents.checkpoint import load_checkpoint

    extra = load_checkpoint(init)["extra"]
    games, positions = extra.get("self_play_games", 0), extra.get("self_play_positions", 0)
    if not all(isinstance(n, int) and not isinstance(n, bool) and n >= 0 for n in (games, positions)):
        raise ValueError(f"{init} is corrupt: it records {games!r} self-play games and {positions!r} positions, "
                         f"not counts")
    return games, positions


def run_curves(run: str, board: str | None = None) -> dict:
    """One run's progress on ``board`` (default: the run's ``--board``) per iteration: ``games`` and
    ``positions`` of self-play so far (all boards of a multi-size run, and the pretraining of ``init``
    counted in), ``start_step`` on that board, and ``raw_accuracy`` where it was measured (else None)."""
    from agents.training.store import read_metrics

    store = RunStore(run)
    config = store.read_config()
    board = board or config.board
    rows = read_metrics(os.path.join(run, "metrics.jsonl"))
    key = (lambda k: f"{k}@{board}") if config.boards else (lambda k: k)
    if config.boards and not any(key("start_step") in r for r in rows):
        raise ValueError(f"{run} did not train on {board} (its boards: {config.boards})")
    if not config.boards and board != config.board:
        raise ValueError(f"{run} trained on {config.board}, not {board}")
    games, positions = pretraining(run)
    out = {"name": os.path.basename(os.path.normpath(run)), "board": board, "pretraining": games,
           "iteration": [], "games": [], "positions": [], "start_step": [], "raw_accuracy": []}
    for r in rows:
        games += r.get("games", 0)
        positions += r.get("positions", 0)
        out["iteration"].append(r["iteration"])
        out["games"].append(games)
        out["positions"].append(positions)
        out["start_step"].append(r.get(key("start_step")))
        out["raw_accuracy"].append(r.get(key("raw_accuracy")))
    return out


def main(runs: list[str], board: str | None = None, plot: str | None = None) -> int:
    if plot:
        from agents.training.plots import plot_runs

        curves = [run_curves(run, board) for run in runs]
        if plot_runs(curves, plot):
            print(f"wrote {plot}")
    print(rollback_report(runs))
    return 0
