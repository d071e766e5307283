"""Train sb3-contrib's MaskablePPO on DotsAndBoxes-3x3-v0 against the random agent, then evaluate it.

    python examples/sb3_maskable_ppo.py --timesteps 200000 --eval-games 400 --out runs/ppo-3x3

Prints the training time and the scores against random and greedy over ``--eval-games`` games each (the
arena's gauntlet, learner seat alternating) with Wilson 95% intervals; saves the model and a JSON summary
(with the config) under --out.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import gymnasium as gym
import torch
from sb3_contrib import MaskablePPO

import dnb_env  # noqa: F401  (registers the ids)
from agents.arena import format_results
from agents.base import SB3Agent
from dnb_env.io import atomic_write
from registry.tournaments import gauntlet


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--board", default="3x3")
    p.add_argument("--timesteps", type=int, default=200_000)
    p.add_argument("--eval-games", type=int, default=400)
    p.add_argument("--obs-type", default="chainloop6")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="torch threads (default 1; more is slower on small nets)")
    p.add_argument("--out", default="runs/ppo-3x3")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)

    env = gym.make(f"DotsAndBoxes-{args.board}-v0", obs_type=args.obs_type, learner_player="random")
    model = MaskablePPO("MultiInputPolicy", env, seed=args.seed, device="cpu", verbose=0,
                        n_steps=1024, batch_size=256, gamma=1.0)
    t = time.perf_counter()
    model.learn(args.timesteps, progress_bar=args.timesteps >= 50_000)
    train_s = time.perf_counter() - t

    report = gauntlet(args.board, ("maskable_ppo", lambda: SB3Agent(model, obs_type=args.obs_type)),
                      games=args.eval_games, seed=args.seed, progress=args.eval_games >= 100)
    print(f"MaskablePPO on {args.board}: {args.timesteps} steps in {train_s:.0f} s")
    summary = {"config": vars(args), "train_seconds": train_s, **report.results_of(0)}
    print(format_results(report.results_of(0)))
    os.makedirs(args.out, exist_ok=True)
    model.save(os.path.join(args.out, "model.zip"))
    atomic_write(os.path.join(args.out, "summary.json"), json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    main()
