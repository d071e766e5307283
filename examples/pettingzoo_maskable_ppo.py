"""Train sb3-contrib's MaskablePPO through the PettingZoo AEC env, rewarding the learner's own seat.

    python examples/pettingzoo_maskable_ppo.py --board 3x3 --opponent mix --timesteps 150000 --eval-games 400

PettingZoo's SB3 action-masking tutorial wraps an AEC env so that ``step`` returns the reward of the agent
that has just moved. In Dots-and-Boxes the player who draws the last edge has usually just won the last
chain, so that reward teaches the network nothing useful (a model trained that way scored 0.405 against
random after 100k steps, below random-vs-random). Here one seat is the learner (drawn at random each
episode), the other seat is played inside the wrapper by an opponent, and the reward of a learner step is
the sum of what the learner's own seat received over every AEC step until it is to move again (its own
move, any extra turns, and the opponent's replies), so a game's rewards add up to the learner's result.

``--opponent``: ``random`` or ``greedy`` (fixed agents of this package), ``self`` (the model being trained
plays the other seat, sampling from its masked policy), or ``mix`` (each episode draws one of the three).
The model is then evaluated with the arena's gauntlet against random and greedy (seats alternate) and the
scores are printed with Wilson 95% intervals; the model and a JSON summary (config included) are saved under --out.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import gymnasium as gym
import numpy as np
import torch
from sb3_contrib import MaskablePPO

from agents.arena import format_results
from agents.base import SB3Agent
from baselines.greedy import GreedyAgent
from baselines.random_agent import RandomAgent
from dnb_env import pettingzoo_env
from dnb_env.io import atomic_write
from registry.tournaments import gauntlet

OPPONENTS = ("random", "greedy", "self", "mix")


class LearnerSeatEnv(gym.Env):
    """One seat of the PettingZoo AEC env as a single-agent Gymnasium env for MaskablePPO.

    ``reset`` draws the learner's seat and lets the opponent move until the learner is to move; ``step``
    plays the learner's action, then the opponent's moves (through the AEC API, so the AEC env applies every
    rule and its wrappers check order and bounds) until the learner is to move again or the game is over.
    The reward is what ``rewards[learner]`` held after each of those AEC steps, summed. ``action_masks``
    is the learner's mask, as sb3-contrib expects.
    """

    def __init__(self, board: str = "3x3", obs_type: str = "chainloop6", opponent: str = "mix"):
        super().__init__()
        if opponent not in OPPONENTS:
            raise ValueError(f"opponent must be one of {OPPONENTS}, got {opponent!r}")
        self.aec = pettingzoo_env.env(board=board, obs_type=obs_type)
        self.aec.reset()
        self.learner = self.aec.possible_agents[0]
        space = self.aec.observation_space(self.learner)
        self.observation_space = space
        self.action_space = self.aec.action_space(self.learner)
        self.opponent_mode = opponent
        self.policy = None  # the model, for opponent="self" (set by ``use_policy``)
        self.fixed = {"random": RandomAgent(), "greedy": GreedyAgent()}
        self.current = "random"

    def use_policy(self, model) -> None:
        self.policy = model

    def _obs(self):
        return self.aec.observe(self.learner)

    def action_masks(self) -> np.ndarray:
        return self._obs()["action_mask"].astype(bool)

    def _done(self) -> bool:
        return self.aec.terminations[self.learner] or self.aec.truncations[self.learner]

    def _opponent_action(self) -> int:
        agent = self.aec.agent_selection
        if self.current == "self":
            obs = self.aec.observe(agent)
            action, _ = self.policy.predict(obs, action_masks=obs["action_mask"].astype(bool), deterministic=False)
            return int(np.asarray(action).reshape(-1)[0])
        return self.fixed[self.current].select_action(self.aec.unwrapped.state_)

    def _opponent_turns(self) -> float:
        reward = 0.0
        while not self._done() and self.aec.agent_selection != self.learner:
            self.aec.step(self._opponent_action())
            reward += self.aec.rewards[self.learner]
        return reward

    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        for agent in self.fixed.values():  # reproducible from the env's seed
            agent.seed(int(self.np_random.integers(2**31)))
        self.aec.reset(seed=seed)
        self.learner = self.aec.possible_agents[int(self.np_random.integers(2))]
        mode = self.opponent_mode
        if mode == "mix":
            mode = ("random", "greedy", "self")[int(self.np_random.integers(3))]
        if mode == "self" and self.policy is None:
            raise RuntimeError("opponent 'self' needs the model: call use_policy(model) first")
        self.current = mode
        self._opponent_turns()  # the learner may be second; a game never ends before its first move
        return self._obs(), {"learner": self.learner, "opponent": self.current}

    def step(self, action):
        if self._done():
            raise RuntimeError("step() after the game ended: call reset()")
        self.aec.step(int(action))
        reward = self.aec.rewards[self.learner] + self._opponent_turns()
        return self._obs(), float(reward), self._done(), False, {"opponent": self.current}


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--board", default="3x3")
    p.add_argument("--opponent", default="mix", choices=OPPONENTS)
    p.add_argument("--timesteps", type=int, default=150_000)
    p.add_argument("--eval-games", type=int, default=400, help="games against each of random and greedy")
    p.add_argument("--obs-type", default="chainloop6")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--threads", type=int, default=1, help="torch threads (default 1; more is slower on small nets)")
    p.add_argument("--out", default="runs/pz-ppo-3x3")
    args = p.parse_args(argv)
    torch.set_num_threads(args.threads)

    env = LearnerSeatEnv(args.board, args.obs_type, args.opponent)
    model = MaskablePPO("MultiInputPolicy", env, seed=args.seed, device="cpu", verbose=0,
                        n_steps=1024, batch_size=256, gamma=1.0)
    env.use_policy(model)
    t = time.perf_counter()
    model.learn(args.timesteps, progress_bar=args.timesteps >= 50_000)
    train_s = time.perf_counter() - t

    report = gauntlet(args.board, ("maskable_ppo", lambda: SB3Agent(model, obs_type=args.obs_type)),
                      games=args.eval_games, seed=args.seed, progress=args.eval_games >= 100)
    print(f"MaskablePPO through the PettingZoo AEC env on {args.board}, opponent {args.opponent}: "
          f"{args.timesteps} steps in {train_s:.0f} s")
    summary = {"config": vars(args), "train_seconds": train_s, **report.results_of(0)}
    print(format_results(report.results_of(0)))
    os.makedirs(args.out, exist_ok=True)
    model.save(os.path.join(args.out, "model.zip"))
    atomic_write(os.path.join(args.out, "summary.json"), json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    main()
