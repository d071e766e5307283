"""AlphaZero move accuracy against the exact solver on 3x3 (the #5 targets), raw policy beside search.

Positions: realistic play (:func:`dnb_env.analysis.realistic_move`) stopped in the middle or late game,
after ``--first`` .. 21 moves (default: from move 9, where BoxesZero's 22-of-60 middle-game start falls on
the 24 edges of 3x3), labelled by the solver; a seed apart from the training run's evaluation set. A move
is *optimal* when it reaches the solver's best final margin; *winning* keeps the best result (BoxesZero's
criterion, which ignores the margin); *greedy-hard* positions are those where the greedy rule allows a
move that is not optimal. ``--opening N`` adds the positions after N .. first-1 moves as a separate row.
Wilson 95% intervals.

    python benchmarks/alphazero.py [--checkpoint PATH] [--positions 500] [--simulations 200] [--opening 4]
"""

from __future__ import annotations

import argparse
import time

from agents.arena import wilson_interval
from agents.checkpoint import load_network
from agents.network_agent import shipped_checkpoint
from agents.training.evaluation import labelled_positions, policy_moves, search_moves
from dnb_env.core import geometry


def _rate(hits: list[bool]) -> str:
    if not hits:
        return "-"
    lo, hi = wilson_interval(sum(hits), len(hits))
    return f"{sum(hits) / len(hits):.3f} [{lo:.3f}, {hi:.3f}] (n={len(hits)})"


def score(moves, positions) -> dict:
    """Per criterion, the list of hits."""
    return {
        "optimal": [m in p.optimal for m, p in zip(moves, positions)],
        "greedy-hard": [m in p.optimal for m, p in zip(moves, positions) if p.hard],
        "winning": [m in p.winning for m, p in zip(moves, positions)],
    }


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--board", default="3x3")
    p.add_argument("--checkpoint", default=None, help="default: the shipped weights for --board")
    p.add_argument("--positions", type=int, default=500)
    p.add_argument("--simulations", type=int, default=200)
    p.add_argument("--first", type=int, default=None, help="moves before the middle game (default 9 on 3x3)")
    p.add_argument("--opening", type=int, default=None, help="also report positions after OPENING..first-1 moves")
    p.add_argument("--seed", type=int, default=2024)
    args = p.parse_args(argv)
    net, _ = load_network(args.checkpoint or shipped_checkpoint(args.board), board=args.board)
    first = geometry(args.board).midgame_start if args.first is None else args.first
    sets = {"middle+late": labelled_positions(args.board, args.positions, args.seed, first)}
    if not sets["middle+late"]:
        raise SystemExit(f"the exact solver does not cover {args.board}")
    if args.opening is not None:
        if not 0 <= args.opening < first:
            raise SystemExit(f"--opening must be in [0, {first - 1}]")
        opening = [q for q in labelled_positions(args.board, args.positions, args.seed + 1, args.opening)
                   if len(q.state.history) < first]
        sets[f"opening ({args.opening}-{first - 1} moves)"] = opening
    results = {}
    t0 = time.perf_counter()
    for name, positions in sets.items():
        states = [q.state for q in positions]
        for kind, moves in (("raw policy", policy_moves(net, states)),
                            (f"search {args.simulations}", search_moves(net, states, args.simulations))):
            results[(name, kind)] = score(moves, positions)
    print(f"{args.board}, {args.checkpoint or 'shipped weights'}; {time.perf_counter() - t0:.0f} s")
    print(f"{'positions':<24}{'player':<14}{'optimal':<34}{'greedy-hard':<34}{'winning (BoxesZero)':<34}")
    for (name, kind), hits in results.items():
        print(f"{name:<24}{kind:<14}" + "".join(f"{_rate(hits[c]):<34}" for c in ("optimal", "greedy-hard", "winning")))
    return {f"{name}/{kind}/{c}": (sum(h) / len(h) if h else None)
            for (name, kind), hits in results.items() for c, h in hits.items()}


if __name__ == "__main__":
    main()
