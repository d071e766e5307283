"""Raw-policy accuracy of network checkpoints on the labelled positions a training run scores itself on.

A run of seed ``s`` measures its network every iteration on ``labelled_positions(board, eval_positions,
seed=s + EVAL_SEED_OFFSET)`` (:mod:`agents.training.evaluation`: realistic play stopped in the middle game on boards of
up to 24 edges, in the last 34 undrawn edges on larger ones, every move labelled by the exact solver). This
scores any checkpoints (exports, run checkpoints, the shipped files) on the same positions, so networks of
runs that kept no metrics for them, or of different runs, compare on one set. A move counts when it is
optimal (reaches the solver's best margin); greedy (ties broken at random, seeded) is the first row. With
``--simulations N`` each network is also scored by the most visited move of an N-simulation search (the
network's own search, no exact solver: :func:`agents.training.evaluation.search_moves`), in a row named
``PATH @N``. Wilson 95% intervals.

    python benchmarks/checkpoint_accuracy.py runs/exports/avit-5x5-16.pt agents/checkpoints/alphazero-5x5.pt \
        [--board 5x5] [--positions 200] [--run-seed 0] [--simulations 0]
"""

from __future__ import annotations

import argparse

from agents.arena import wilson_interval
from agents.checkpoint import load_network
from agents.training.evaluation import EVAL_SEED_OFFSET, labelled_positions, policy_moves, search_moves
from baselines.greedy import GreedyAgent


def _row(results: dict, name: str, right: list[bool], hard: list[bool]) -> None:
    n = sum(right)
    lo, hi = wilson_interval(n, len(right))
    hard_right = [r for r, h in zip(right, hard) if h]
    share_hard = sum(hard_right) / len(hard_right) if hard_right else None
    results[name] = (n / len(right), share_hard)
    shown = "-" if share_hard is None else f"{share_hard:.3f}"
    print(f"{n / len(right):.3f} [{lo:.3f}, {hi:.3f}]  greedy-hard {shown:>5}  {name}")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("checkpoints", nargs="+", help="network checkpoints (any family)")
    p.add_argument("--board", default="5x5")
    p.add_argument("--positions", type=int, default=200, help="labelled positions (a run's eval_positions)")
    p.add_argument("--run-seed", type=int, default=0, help="the seed of the run whose evaluation set to use")
    p.add_argument("--simulations", type=int, default=0,
                   help="also score each network's searched move at this many simulations (0: raw only)")
    args = p.parse_args(argv)
    if args.positions < 1:
        p.error("--positions must be >= 1")
    if args.simulations < 0:
        p.error("--simulations must be >= 0")
    positions = labelled_positions(args.board, args.positions, seed=args.run_seed + EVAL_SEED_OFFSET)
    if not positions:
        p.error(f"no exact labels for {args.board}: the native solver is not built or the board is too large")
    hard = [q.hard for q in positions]
    print(f"{args.board}: {len(positions)} labelled positions, {sum(hard)} greedy-hard")
    results: dict[str, tuple[float, float | None]] = {}
    greedy = GreedyAgent(seed=args.run_seed)
    _row(results, "greedy", [greedy.select_action(q.state) in q.optimal for q in positions], hard)
    for path in args.checkpoints:
        net, _ = load_network(path)
        moves = policy_moves(net, [q.state for q in positions])
        _row(results, path, [m in q.optimal for m, q in zip(moves, positions)], hard)
        if args.simulations:
            moves = search_moves(net, [q.state for q in positions], args.simulations)
            _row(results, f"{path} @{args.simulations}", [m in q.optimal for m, q in zip(moves, positions)], hard)
    return results


if __name__ == "__main__":
    main()
