"""Train RLlib's PPO with action masking on the PettingZoo AEC env, by self-play or against a fixed opponent.

    python examples/rllib_ppo.py --board 3x3 --iterations 50 --eval-games 400      # needs pip install 'dnb-env[ray]'
    python examples/rllib_ppo.py --board 3x3 --opponent greedy --out runs/rllib-ppo-3x3-greedy

* The env is :mod:`dnb_env.pettingzoo_env` behind RLlib's own PettingZoo wrapper
  (``ray.rllib.env.wrappers.pettingzoo_env.PettingZooEnv``, RLlib's multi-agent API): it returns an
  observation for the agent to move only, so the extra turn after a completed box is simply the same agent
  observed again, and the final +1/-1/0 reaches both agents when the game ends.
* Self-play (default): both seats map to one policy (``shared``), so every game trains it from both sides.
* Fixed opponent (``--opponent SPEC``, any agent of the registry, e.g. ``greedy`` or ``alphabeta:depth=2``):
  the opponent's moves are played inside the env (:func:`make_env` with ``opponent``), so RLlib sees one
  agent, the learner, whose seat alternates from game to game (``player_0`` in even games); it is observed
  only when it is to move, and gets the final reward when the game ends on either side's move. The
  opponent is seeded from ``--seed`` and the env runner's index.
* Masking: :func:`masked_module_class` is PPO's default torch RLModule over the ``observations`` part of
  the observation dict, with the logits of the moves that ``action_mask`` forbids set to the float minimum
  (in sampling, evaluation and the loss). The env wrapper renames our ``observation`` key, flattens the
  planes (an MLP: RLlib's CNN wants image-like sizes) and gives the mask as float32.
* The trained module is then played, greedily on its masked logits, by the arena's gauntlet against random
  and greedy (seats alternate) and the scores are printed with Wilson 95% intervals; a JSON summary (config
  included) is written atomically under ``--out``.

Ray is started here with ``--num-cpus`` CPUs (0 env runners: sampling and learning in this process) unless
this process has joined a cluster already.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import time

import numpy as np

from agents.arena import format_results
from agents.ray_cluster import require_ray
from dnb_env import pettingzoo_env
from dnb_env.core import GameState
from dnb_env.io import atomic_write
from dnb_env.observations import encode
from registry.tournaments import gauntlet

POLICY = "shared"


def _masked_space(space):
    from gymnasium import spaces

    obs = space["observation"]
    n = space["action_mask"].shape[0]
    return spaces.Dict({"observations": spaces.Box(obs.low.min(), obs.high.max(), (int(np.prod(obs.shape)),),
                                                   np.float32),
                        "action_mask": spaces.Box(0.0, 1.0, (n,), np.float32)})


def _masked_obs(obs: dict) -> dict:
    return {"observations": np.asarray(obs["observation"], np.float32).ravel(),
            "action_mask": np.asarray(obs["action_mask"], np.float32)}


def make_env(env_config: dict):
    """RLlib's env creator: the wrapped AEC env of ``env_config`` (board, obs_type) as a MultiAgentEnv; with
    ``opponent`` (an agent spec) that agent plays one seat inside the env (see the module docstring)."""
    from ray.rllib.env.wrappers.pettingzoo_env import PettingZooEnv

    class MaskedPettingZooEnv(PettingZooEnv):
        """RLlib's PettingZoo wrapper with the observation dict that the masking module reads."""

        def __init__(self, env):
            super().__init__(env)
            self.observation_spaces = {a: _masked_space(s) for a, s in self.observation_spaces.items()}
            from gymnasium import spaces

            self.observation_space = spaces.Dict(self.observation_spaces)

        def reset(self, *, seed=None, options=None):
            obs, info = super().reset(seed=seed, options=options)
            return {a: _masked_obs(o) for a, o in obs.items()}, info

        def step(self, action):
            obs, rew, term, trunc, info = super().step(action)
            return {a: _masked_obs(o) for a, o in obs.items()}, rew, term, trunc, info

    class FixedOpponentEnv(MaskedPettingZooEnv):
        """The learner against ``opponent``: only the learner's observations, rewards and ends are returned."""

        def __init__(self, env, opponent):
            super().__init__(env)
            self.opponent, self.games, self.learner = opponent, 0, None

        def _play_opponent(self):
            aec = self.env.unwrapped
            while aec.agents and aec.agent_selection != self.learner and not aec.state_.is_terminal():
                aec.step(self.opponent.select_action(aec.state_))

        def _learner_view(self):
            aec = self.env.unwrapped
            done = aec.state_.is_terminal()
            obs = {self.learner: _masked_obs(aec.observe(self.learner))}
            return (obs, {self.learner: float(aec._cumulative_rewards[self.learner])},
                    {self.learner: done, "__all__": done}, {self.learner: False, "__all__": False},
                    {self.learner: {}})

        def reset(self, *, seed=None, options=None):
            self.env.reset(seed=seed, options=options)
            self.learner = self.env.unwrapped.possible_agents[self.games % 2]
            self.games += 1
            self.opponent.reset()
            self._play_opponent()
            return self._learner_view()[0], {}

        def step(self, action):
            aec = self.env.unwrapped
            if aec.state_.is_terminal() or aec.agent_selection != self.learner:
                raise ValueError(f"step({action!r}): the game is over or it is not {self.learner}'s turn")
            aec.step(action[self.learner])
            self._play_opponent()
            return self._learner_view()

    board = env_config.get("board", "3x3")
    aec = pettingzoo_env.env(board=board, obs_type=env_config.get("obs_type", "chainloop6"))
    if not env_config.get("opponent"):
        return MaskedPettingZooEnv(aec)
    from registry.specs import agent_from_spec

    seed = int(env_config.get("seed", 0)) * 1000 + int(getattr(env_config, "worker_index", 0))
    return FixedOpponentEnv(aec, agent_from_spec(env_config["opponent"], board=board, seed=seed))


def masked_module_class():
    """PPO's default torch RLModule on ``obs["observations"]``, its action logits masked by ``obs["action_mask"]``."""
    import torch
    from ray.rllib.algorithms.ppo.torch.default_ppo_torch_rl_module import DefaultPPOTorchRLModule
    from ray.rllib.core.columns import Columns

    class MaskedPPOTorchRLModule(DefaultPPOTorchRLModule):
        def __init__(self, *, observation_space=None, **kwargs):
            super().__init__(observation_space=observation_space["observations"], **kwargs)

        @staticmethod
        def _split(batch):
            obs = batch[Columns.OBS]
            if not isinstance(obs, dict):  # already split
                return batch, None
            return {**batch, Columns.OBS: obs["observations"]}, obs["action_mask"]

        @staticmethod
        def _masked(out, mask):
            logits = out[Columns.ACTION_DIST_INPUTS]
            out[Columns.ACTION_DIST_INPUTS] = logits.masked_fill(mask == 0, torch.finfo(logits.dtype).min)
            return out

        def _forward(self, batch, **kwargs):
            inner, mask = self._split(batch)
            return self._masked(super()._forward(inner, **kwargs), mask)

        def _forward_train(self, batch, **kwargs):
            inner, mask = self._split(batch)
            return self._masked(super()._forward_train(inner, **kwargs), mask)

        def compute_values(self, batch, embeddings=None):
            return super().compute_values(self._split(batch)[0], embeddings)

    return MaskedPPOTorchRLModule


def build_config(board: str, obs_type: str, seed: int, batch: int, minibatch: int, epochs: int, hidden: int,
                 opponent: str | None = None):
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    register_env("dnb_pettingzoo", make_env)
    module = RLModuleSpec(module_class=masked_module_class(),
                          model_config={"fcnet_hiddens": [hidden, hidden], "head_fcnet_hiddens": [hidden]})
    return (PPOConfig()
            .environment("dnb_pettingzoo", env_config={"board": board, "obs_type": obs_type, "opponent": opponent,
                                                       "seed": seed})
            .multi_agent(policies={POLICY}, policy_mapping_fn=lambda agent_id, episode, **kw: POLICY)
            .rl_module(rl_module_spec=MultiRLModuleSpec(rl_module_specs={POLICY: module}))
            .env_runners(num_env_runners=0, num_envs_per_env_runner=1)
            .learners(num_learners=0)
            .training(train_batch_size_per_learner=batch, minibatch_size=minibatch, num_epochs=epochs, gamma=1.0,
                      lr=3e-4)
            .debugging(seed=seed))


class RLlibAgent:
    """An RLlib RLModule as an :class:`agents.base.Agent`: the legal move of highest logit."""

    def __init__(self, module, obs_type: str, name: str = "rllib_ppo"):
        self.module, self.obs_type, self.name = module, obs_type, name

    def reset(self) -> None:
        pass

    def select_action(self, state: GameState) -> int:
        import torch

        mask = state.legal_mask().astype(np.float32)
        obs = {"observations": torch.from_numpy(encode(self.obs_type, state).astype(np.float32).ravel()[None]),
               "action_mask": torch.from_numpy(mask[None])}
        with torch.no_grad():
            out = self.module.forward_inference({"obs": obs})
        logits = out["action_dist_inputs"][0].numpy().copy()
        logits[mask == 0] = -np.inf
        return int(np.argmax(logits))


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--board", default="3x3")
    p.add_argument("--obs-type", default="chainloop6")
    p.add_argument("--opponent", default=None,
                   help="train against this fixed agent (a spec, e.g. greedy) instead of by self-play")
    p.add_argument("--iterations", type=int, default=50, help="PPO iterations (each --batch env steps)")
    p.add_argument("--batch", type=int, default=4000, help="env steps per iteration (both seats)")
    p.add_argument("--minibatch", type=int, default=256)
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--hidden", type=int, default=128, help="width of the two hidden layers")
    p.add_argument("--eval-games", type=int, default=400, help="games against each of random and greedy")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--num-cpus", type=int, default=2, help="CPUs of the local Ray instance started here")
    p.add_argument("--threads", type=int, default=1, help="torch threads (default 1; more is slower on small nets)")
    p.add_argument("--out", default="runs/rllib-ppo-3x3")
    args = p.parse_args(argv)
    if args.opponent:  # a bad spec fails here, before Ray starts
        from registry.specs import check_agent_spec

        check_agent_spec(args.opponent)
    ray = require_ray()
    import torch

    torch.set_num_threads(args.threads)
    started = not ray.is_initialized()
    if started:
        ray.init(num_cpus=args.num_cpus, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        algo = build_config(args.board, args.obs_type, args.seed, args.batch, args.minibatch, args.epochs,
                            args.hidden, args.opponent).build_algo()
        t = time.perf_counter()
        history = []
        for it in range(args.iterations):
            result = algo.train()
            runners = result.get("env_runners", {})
            history.append({key: float(runners[key]) for key in ("num_episodes", "episode_len_mean",
                                                                 "num_env_steps_sampled") if key in runners})
            if args.iterations >= 10:
                print(f"iteration {it + 1}: {time.perf_counter() - t:.0f} s", flush=True)
        train_s = time.perf_counter() - t
        module = algo.get_module(POLICY)
        report = gauntlet(args.board, ("rllib_ppo", lambda: RLlibAgent(module, args.obs_type)),
                          games=args.eval_games, seed=args.seed, progress=args.eval_games >= 100)
        algo.stop()
        with contextlib.suppress(OSError):  # the empty log folder RLlib makes under ~/ray_results
            os.rmdir(algo.logdir)
    finally:
        if started:
            ray.shutdown()
    mode = f"against {args.opponent}" if args.opponent else "self-play"
    print(f"RLlib PPO ({mode}, masked) through the PettingZoo env on {args.board}: {args.iterations} iterations "
          f"of {args.batch} steps in {train_s:.0f} s")
    results = report.results_of(0)
    print(format_results(results))
    summary = {"config": vars(args), "train_seconds": train_s, "history": history, **results}
    os.makedirs(args.out, exist_ok=True)
    atomic_write(os.path.join(args.out, "summary.json"), json.dumps(summary, indent=2))
    return summary


if __name__ == "__main__":
    main()
