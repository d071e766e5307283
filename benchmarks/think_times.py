"""Think time by move number, per agent, from a tournament's game records.

Every record of a timed tournament holds the seconds of each move after the opening (``move_s``). This
replays each game to learn who made each move and gives, per agent, the mean think time of its moves at
each move number (the edges drawn before the move), the number of such moves and the longest one; with
``--plot`` a line per agent against move number, the clock as a dashed line.

    python benchmarks/think_times.py runs/equal-time-2 --moves 15-30 --plot /tmp/think.png
"""

from __future__ import annotations

import argparse
import json
import pathlib
from collections import defaultdict

import numpy as np

from agents.arena.results import read_games
from dnb_env.core import GameState


def parse_range(text: str) -> tuple[int, int]:
    lo, _, hi = text.partition("-")
    try:
        a, b = int(lo), int(hi or lo)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected MIN-MAX or N, got {text!r}") from None
    if a < 0 or b < a:
        raise argparse.ArgumentTypeError(f"expected 0 <= MIN <= MAX, got {text!r}")
    return a, b


def think_by_move(records, board: str) -> dict[str, dict[int, list[float]]]:
    """{agent label: {move number: [seconds, ...]}} over ``records`` (dicts as the arena writes them); the
    move number counts the edges drawn before the move."""
    out: dict[str, dict[int, list[float]]] = defaultdict(lambda: defaultdict(list))
    for r in records:
        opening = r.get("opening") or []
        s = GameState.from_actions(board, actions=list(opening))
        played = r["moves"][len(opening):]
        if len(r["move_s"]) > len(played):
            raise ValueError(f"record {r.get('id')!r}: {len(r['move_s'])} timed moves but {len(played)} played")
        for action, sec in zip(played, r["move_s"]):
            name = r["first"] if s.current_player == 0 else r["second"]
            out[name][len(s.history)].append(float(sec))
            s = s.apply(action)
    return out


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", type=pathlib.Path, help="tournament folder (results.jsonl and config.json)")
    p.add_argument("--moves", type=parse_range, default=None, help="move numbers to list, MIN-MAX (default: all)")
    p.add_argument("--plot", type=pathlib.Path, default=None, help="write a PNG of mean think time by move")
    args = p.parse_args(argv)
    results = args.folder / "results.jsonl"
    if not results.is_file():
        p.error(f"{results} not found")
    config = json.loads((args.folder / "config.json").read_text()) if (args.folder / "config.json").is_file() else {}
    board = config.get("board", "5x5")
    records = read_games(str(results))  # a line cut short by a kill is skipped, as the tournament does
    by = think_by_move(records, board)
    agents = sorted(by)
    moves = sorted({m for a in agents for m in by[a]})
    if args.moves is not None:
        moves = [m for m in moves if args.moves[0] <= m <= args.moves[1]]
    clock = config.get("time_per_move")
    print(f"{args.folder}: {len(records)} games on {board}" + (f", {clock:g} s a move" if clock else ""))
    print("mean seconds a move by move number (edges drawn before it); n: moves timed")
    print(f"{'move':>5}" + "".join(f"{a[:16]:>18}" for a in agents))
    table: dict[str, dict[int, tuple[float, int, float]]] = {a: {} for a in agents}
    for m in moves:
        cells = []
        for a in agents:
            xs = by[a].get(m)
            if xs:
                table[a][m] = (float(np.mean(xs)), len(xs), float(np.max(xs)))
                cells.append(f"{np.mean(xs):>10.3f} n={len(xs):<5}")
            else:
                cells.append(f"{'':>18}")
        print(f"{m:>5}" + "".join(cells))
    for a in agents:
        xs = [x for m in by[a].values() for x in m]
        print(f"{a}: {len(xs)} moves, mean {np.mean(xs):.3f} s, longest {np.max(xs):.3f} s")
    if args.plot is not None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(7, 4))
        for a in agents:
            ms = sorted(table[a])
            ax.plot(ms, [table[a][m][0] for m in ms], marker="o", ms=3, label=a)
        if clock:
            ax.axhline(clock, color="grey", ls="--", lw=1, label=f"clock ({clock:g} s)")
        ax.set_xlabel("move (edges drawn before it)")
        ax.set_ylabel("mean think time (s)")
        ax.set_title(f"{args.folder.name}: think time by move")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        plt.close(fig)
        print(f"wrote {args.plot}")
    return {"games": len(records), "table": table}


if __name__ == "__main__":
    main()
