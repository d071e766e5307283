"""Train sb3-contrib's MaskablePPO on DotsAndBoxes-3x3 against the random agent, then evaluate it.

    python examples/sb3_maskable_ppo.py --timesteps 200000 --eval-games 400 --out runs/ppo-3x3

Prints the training time and the win rate against random over ``--eval-games`` games (learner seat
alternating) with a Wilson 95% interval; saves the model and a JSON summary (with the config) under --out.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time

import gymnasium as gym
import numpy as np
from sb3_contrib import MaskablePPO

import dnb_env  # noqa: F401  (registers the ids)
from agents.base import SB3Agent
from baselines.random_agent import RandomAgent
from dnb_env.core import GameState


def wilson(wins: float, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def evaluate(agent, board: str, games: int, seed: int) -> tuple[float, int, int, int]:
    """(score, wins, draws, losses) of ``agent`` against a seeded random player, seats alternating."""
    opponent = RandomAgent(seed=seed)
    wins = draws = losses = 0
    for i in range(games):
        seat = i % 2
        s = GameState.new(board)
        while not s.is_terminal():
            s = s.apply(agent.select_action(s) if s.current_player == seat else opponent.select_action(s))
        r = s.returns()[seat]
        wins += r > 0
        draws += r == 0
        losses += r < 0
    return (wins + 0.5 * draws) / games, wins, draws, losses


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--board", default="3x3")
    p.add_argument("--timesteps", type=int, default=200_000)
    p.add_argument("--eval-games", type=int, default=400)
    p.add_argument("--obs-type", default="chainloop6")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="runs/ppo-3x3")
    args = p.parse_args(argv)

    env = gym.make(f"DotsAndBoxes-{args.board}", obs_type=args.obs_type, learner_player="random")
    model = MaskablePPO("MultiInputPolicy", env, seed=args.seed, device="cpu", verbose=0,
                        n_steps=1024, batch_size=256, gamma=1.0)
    t = time.perf_counter()
    model.learn(args.timesteps, progress_bar=args.timesteps >= 50_000)
    train_s = time.perf_counter() - t

    agent = SB3Agent(model, obs_type=args.obs_type, name="maskable_ppo")
    score, wins, draws, losses = evaluate(agent, args.board, args.eval_games, seed=args.seed + 1)
    lo, hi = wilson(wins + 0.5 * draws, args.eval_games)
    print(f"MaskablePPO on {args.board}: {args.timesteps} steps in {train_s:.0f} s")
    print(f"vs random over {args.eval_games} games: {wins} W {draws} D {losses} L, "
          f"score {score:.3f} (95% CI {lo:.3f}-{hi:.3f})")
    os.makedirs(args.out, exist_ok=True)
    model.save(os.path.join(args.out, "model.zip"))
    summary = {"config": vars(args), "train_seconds": train_s, "wins": int(wins), "draws": int(draws),
               "losses": int(losses), "score": score, "ci95": [lo, hi]}
    tmp = os.path.join(args.out, "summary.json.tmp")
    with open(tmp, "w") as f:
        json.dump(summary, f, indent=2)
    os.replace(tmp, os.path.join(args.out, "summary.json"))
    return summary


if __name__ == "__main__":
    main()
