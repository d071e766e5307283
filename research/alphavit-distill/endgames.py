"""Where were an agent's games decided: in the fight for control, or in the endgame after it?

For every game of a tournament folder (``results.jsonl``), the position where the loony endgame starts (the
first with no safe move left, nothing or only boxes to take) is solved exactly: the final margin the agent
would get from there with best play on both sides, against the margin it got. A game whose exact margin
there is a win and whose result is a loss was thrown away in the endgame; one lost there was lost in the
fight for control (or earlier, by boxes given away).

    PYTHONPATH=. python research/alphavit-distill/endgames.py runs/avit-distill/eval-distill3-searched-7x7-1s-alphabeta-depth-2

AGENT (``--agent``, default ``alphavit``) is the prefix of the agent's name in the folder's games. Prints one
line a game and the counts. ``--safe-phase N`` instead times the safe-phase search
(``Solver.safe_phase_values``, 3 s and 2,000,000 positions at most) in every position of the folder's first N
games with 1-24 safe moves and no box on offer, by the number of safe moves.
"""

from __future__ import annotations

import argparse
import json
import pathlib
import time

from dnb_env.analysis import MoveClass, move_classes
from dnb_env.core import GameState, parse_board
from dnb_env.solver import Solver, SolverBudgetExceeded


def endgame_start(rows: int, cols: int, moves: list[int]) -> tuple[GameState, int] | None:
    """The first position of the game with no safe move left, and its move number; None if it never comes."""
    s = GameState.new(rows, cols)
    for i, a in enumerate(moves):
        if not (move_classes(s) == MoveClass.SAFE).any():
            return s, i
        s = s.apply(a)
    return None


def time_safe_phase(folder: pathlib.Path, rows: int, cols: int, games: int) -> None:
    solver = Solver(max_undrawn=2 * rows * cols + rows + cols, node_limit=2_000_000)
    times: dict[int, list[tuple[float, bool]]] = {}
    for line in (folder / "results.jsonl").read_text().splitlines()[:games]:
        s = GameState.new(rows, cols)
        for a in json.loads(line)["moves"]:
            cls = move_classes(s)
            safe = int((cls == MoveClass.SAFE).sum())
            if 1 <= safe <= 24 and not (cls == MoveClass.SCORING).any():
                solver.set_deadline(3.0)
                start = time.perf_counter()
                settled = solver.safe_phase_values(s, 2_000_000) is not None
                times.setdefault(safe, []).append((time.perf_counter() - start, settled))
            s = s.apply(a)
    print("safe moves  positions  settled  median s  max s")
    for safe in sorted(times):
        seconds = sorted(t for t, _ in times[safe])
        print(f"{safe:10d}  {len(seconds):9d}  {sum(ok for _, ok in times[safe]):7d}  "
              f"{seconds[len(seconds) // 2]:8.3f}  {seconds[-1]:5.3f}")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("folder", type=pathlib.Path, help="a tournament folder (config.json, results.jsonl)")
    p.add_argument("--agent", default="alphavit", help="the prefix of the agent's name")
    p.add_argument("--nodes", type=int, default=50_000_000, help="the solver's node budget a position")
    p.add_argument("--safe-phase", type=int, default=0, metavar="N",
                   help="time the safe-phase search in the positions of the first N games instead")
    args = p.parse_args()
    rows, cols = parse_board(json.loads((args.folder / "config.json").read_text())["board"])
    if args.safe_phase:
        time_safe_phase(args.folder, rows, cols, args.safe_phase)
        return
    solver = Solver(max_undrawn=2 * rows * cols + rows + cols, node_limit=args.nodes)
    counts = {"won, kept": 0, "won, thrown away": 0, "lost, saved": 0, "lost": 0, "unsolved": 0}
    for line in (args.folder / "results.jsonl").read_text().splitlines():
        game = json.loads(line)
        first = game["first"].startswith(args.agent)
        mine, theirs = game["scores"] if first else game["scores"][::-1]
        found = endgame_start(rows, cols, game["moves"])
        if found is None:
            continue
        s, at = found
        owned = s.scores[0] - s.scores[1] if first else s.scores[1] - s.scores[0]
        start = time.perf_counter()
        try:
            value = solver.value(s)  # for the player to move, from the boxes still open
        except SolverBudgetExceeded:
            counts["unsolved"] += 1
            continue
        exact = owned + (value if (s.current_player == 0) == first else -value)
        kind = ("won, kept" if mine > theirs else "won, thrown away") if exact > 0 else \
            ("lost, saved" if mine > theirs else "lost")
        counts[kind] += 1
        print(f"game {game['game']:3d}  {'first' if first else 'second'}  endgame at move {at:3d} with "
              f"{s.num_actions - s.edges.bit_count():3d} undrawn  exact margin {exact:+4d}  played {mine - theirs:+4d}"
              f"  ({kind}; solved in {time.perf_counter() - start:.2f} s)")
    print(", ".join(f"{k}: {v}" for k, v in counts.items()))


if __name__ == "__main__":
    main()
