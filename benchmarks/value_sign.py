"""Networks' value heads against exact values where backward training searches its first move.

Backward training plays the first S moves by the greedy opening policy (a random legal move with
probability ``--random``, as self-play does) and searches from move S on; its rollback rule asks the
search at move S to call the game's result. This plays such openings to move ``--move``, solves each
position exactly, and gives for each network the share of positions where its raw value has the sign of
the exact margin (Wilson 95%), beside the share the mover wins, the mean |value| and the correlation.

    python benchmarks/value_sign.py --move 21 --positions 40 df=research/weights/df-100k-sac2.pt rs=research/weights/rs-100k-sac2.pt
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from agents.arena.ratings import wilson_interval
from agents.checkpoint import load_network
from agents.models.evaluator import NetworkEvaluator
from agents.training.selfplay import opening_move
from dnb_env.core import GameState
from dnb_env.solver import Solver


def openings(board: str, move: int, count: int, seed: int, random_share: float) -> list[GameState]:
    rng = np.random.default_rng(seed)
    out = []
    while len(out) < count:
        s = GameState.new(board)
        while len(s.history) < move and not s.is_terminal():
            s = s.apply(opening_move(s, rng, random_share))
        if len(s.history) == move and not s.is_terminal():
            out.append(s)
    return out


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checkpoints", nargs="+", help="NAME=PATH of playing weights or run checkpoints")
    p.add_argument("--board", default="5x5")
    p.add_argument("--move", type=int, default=21, help="moves played before the position (S)")
    p.add_argument("--positions", type=int, default=40)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--random", type=float, default=0.05, help="share of random opening moves")
    p.add_argument("--node-limit", type=int, default=200_000_000, help="solver nodes per position")
    args = p.parse_args(argv)
    states = openings(args.board, args.move, args.positions, args.seed, args.random)
    solver = Solver(node_limit=args.node_limit)
    t = time.perf_counter()
    exact = np.array([solver.value(s) for s in states], dtype=float)
    undrawn = states[0].num_actions - args.move
    print(f"{args.board}: {len(states)} positions after {args.move} opening moves ({undrawn} undrawn edges), solved "
          f"in {time.perf_counter() - t:.1f} s; the mover wins {np.mean(exact > 0):.2f}")
    print(f"{'network':<24}{'value sign right':>26}{'mean |value|':>14}{'correlation':>13}")
    out = {"mover_wins": float(np.mean(exact > 0))}
    for spec in args.checkpoints:
        name, _, path = spec.rpartition("=")
        name = name or path
        net, _ = load_network(path, args.board)
        values = np.asarray(NetworkEvaluator(net, "cpu").evaluate(states)[1], dtype=float)
        right = int(np.sum(np.sign(values) == np.sign(exact)))
        lo, hi = wilson_interval(right, len(states))
        corr = float(np.corrcoef(values, exact)[0, 1]) if values.std() > 0 and exact.std() > 0 else float("nan")
        out[name] = {"sign": right / len(states), "mean_abs": float(np.abs(values).mean()), "corr": corr}
        print(f"{name:<24}{right / len(states):>12.3f} [{lo:.3f}, {hi:.3f}]{np.abs(values).mean():>14.3f}{corr:>13.2f}")
    return out


if __name__ == "__main__":
    main()
