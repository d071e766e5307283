"""The AlphaZero agent: PUCT search (agents.mcts) guided by a residual policy-value network.

    make_agent("alphazero", board="3x3", simulations=200)            # shipped weights for that board
    make_agent("alphazero", board="3x3", checkpoint="runs/az-3x3/checkpoint.pt")

Playing uses BoxesZero's pruning (exact simple-endgame leaves) unless ``prune=False``, and picks the
most visited move. ``simulations=0`` plays the raw policy (the network's most probable legal move, no
search).
"""

from __future__ import annotations

import os

import numpy as np

from agents.checkpoint import CheckpointError, load_network
from agents.mcts import MCTSAgent, MCTSConfig
from agents.networks.evaluator import NetworkEvaluator
from dnb_env.core import GameState

SHIPPED_DIR = os.path.join(os.path.dirname(__file__), "checkpoints")


def shipped_checkpoint(board: str) -> str:
    path = os.path.join(SHIPPED_DIR, f"alphazero-{board}.pt")
    if not os.path.exists(path):
        have = sorted(f for f in os.listdir(SHIPPED_DIR) if f.endswith(".pt")) if os.path.isdir(SHIPPED_DIR) else []
        raise CheckpointError(
            f"no shipped AlphaZero weights for {board} (shipped: {', '.join(have) or 'none'}); "
            f"train some with `dnb train alphazero --board {board}` and pass checkpoint=PATH"
        )
    return path


class PolicyAgent:
    """The raw policy of a network: its most probable legal move (ties broken by the seeded rng)."""

    def __init__(self, evaluator: NetworkEvaluator, seed=None, name: str = "alphazero-policy"):
        self.evaluator, self.name = evaluator, name
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        pass

    def select_action(self, state: GameState) -> int:
        priors, _ = self.evaluator.evaluate([state])
        p = priors[0]
        return int(self.rng.choice(np.flatnonzero(p == p.max())))


def make_alphazero_agent(board: str, checkpoint: str | None = None, simulations: int = 200,
                         c_puct: float = 1.0, prune: bool = True, batch_size: int = 8, seed=None,
                         device: str = "cpu") -> MCTSAgent | PolicyAgent:
    path = checkpoint or shipped_checkpoint(board)
    if simulations < 0:
        raise ValueError(f"simulations must be >= 0 (0 = raw policy), got {simulations}")
    net, payload = load_network(path, board=board, device=device)
    if simulations == 0:
        return PolicyAgent(NetworkEvaluator(net, device), seed=seed)
    # the search's values are in the units the value head was trained on (win/loss or margin)
    value = payload.get("extra", {}).get("value_target", "win")
    config = MCTSConfig(simulations=simulations, c_puct=c_puct, prune=prune, batch_size=batch_size, value=value)
    return MCTSAgent(NetworkEvaluator(net, device), config, seed=seed, greedy=True, name="alphazero")
