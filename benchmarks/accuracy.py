"""Share of optimal moves (by the exact solver) on late-middle-game 5x5 positions from realistic play.

Positions: games of the plausible player (:func:`dnb_env.analysis.realistic_move`) stopped when 14..22
(``--min``/``--max``) edges are undrawn, with a box-free turn for the mover (no capturable box) half of
the time and any position otherwise. An agent's move is optimal when the solver's value of it equals the
position's value. The "greedy-hard" subset holds the positions where some move the greedy rule allows is
not optimal. ``prsboxes`` uses the solver itself at <= 20 undrawn edges, so it is also measured with
``solver_edges=0`` (its chain-theory rules alone).

    python benchmarks/accuracy.py [--positions 500] [--min 14] [--max 22]
"""

from __future__ import annotations

import argparse
import random
import time

from baselines.alphabeta import AlphaBetaAgent
from baselines.greedy import GreedyAgent
from baselines.prsboxes import PRsBoxesAgent
from dnb_env.analysis import realistic_move
from dnb_env.core import GameState
from dnb_env.solver import Solver


def sample_positions(n, lo, hi, seed=0, board="5x5"):
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        target = rng.randint(lo, hi)
        s = GameState.new(board)
        while s.num_actions - s.edges.bit_count() > target and not s.is_terminal():
            s = s.apply(realistic_move(s, rng))
        if not s.is_terminal() and s.num_actions - s.edges.bit_count() == target:
            out.append(s)
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--positions", type=int, default=500)
    p.add_argument("--min", type=int, default=14)
    p.add_argument("--max", type=int, default=22)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    agents = {
        "greedy": GreedyAgent(seed=1),
        "alphabeta d2": AlphaBetaAgent(depth=2, seed=1),
        "alphabeta d4": AlphaBetaAgent(depth=4, seed=1),
        "prsboxes": PRsBoxesAgent(seed=1),
        "prsboxes rules only": PRsBoxesAgent(seed=1, solver_edges=0),
    }
    positions = sample_positions(args.positions, args.min, args.max, args.seed)
    hits = {k: 0 for k in agents}
    hard_hits = {k: 0 for k in agents}
    hard = 0
    t0 = time.perf_counter()
    try:
        from tqdm import tqdm

        iterator = tqdm(positions, desc="positions")
    except ImportError:  # pragma: no cover
        iterator = positions
    for s in iterator:
        solver = Solver(max_undrawn=max(args.max, 20))
        mv = solver.move_values(s)
        best = max(mv.values())
        greedy_hard = any(mv[a] != best for a in GreedyAgent.candidates(s))
        hard += greedy_hard
        for name, agent in agents.items():
            ok = mv[agent.select_action(s)] == best
            hits[name] += ok
            hard_hits[name] += ok and greedy_hard
    n = len(positions)
    print(f"{n} positions of 5x5 with {args.min}-{args.max} undrawn edges ({time.perf_counter() - t0:.0f} s); "
          f"greedy-hard subset: {hard}")
    print(f"{'agent':<22}{'all':>8}{'greedy-hard':>14}")
    for name in agents:
        sub = hard_hits[name] / hard if hard else float("nan")
        print(f"{name:<22}{hits[name] / n:>8.3f}{sub:>14.3f}")
    return {"n": n, "hard": hard, "all": {k: v / n for k, v in hits.items()},
            "hard_rate": {k: (v / hard if hard else None) for k, v in hard_hits.items()}}


if __name__ == "__main__":
    main()
