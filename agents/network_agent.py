"""Playing agents over a policy-value network of any model family: PUCT search or the raw policy.

    make_agent("alphazero", board="3x3", simulations=200)             # shipped ResNet weights
    make_agent("dotsformer", board="5x5", simulations=200)            # shipped Dotsformer weights
    make_agent("alphazero", board="3x3", checkpoint="runs/az-3x3/checkpoint.pt")

Playing uses BoxesZero's pruning (exact simple-endgame leaves) unless ``prune=False``, and picks the
most visited move. ``simulations=0`` plays the raw policy (the network's most probable legal move, no
search). The search runs in the units the network's value head was trained on (``config.value``), on the
backend ``search`` names (:func:`agents.search.make_search`: ``"auto"`` = the C++ search when it is built
and the board is at most 9x9; ``"python"``; ``"native"``); both choose the same moves.
"""

from __future__ import annotations

import os

import numpy as np

from agents.base import check_state
from agents.checkpoint import CheckpointError, load_network
from agents.mcts import SOLVE_LEAF_CAP, SOLVE_ROOT_CAP, MCTSAgent, MCTSConfig, solver_zone
from agents.models.evaluator import NetworkEvaluator
from agents.search import choose_backend, make_search
from dnb_env.core import GameState, parse_board

SHIPPED_DIR = os.path.join(os.path.dirname(__file__), "checkpoints")
AGENT_FAMILIES = {"alphazero": "resnet", "dotsformer": "dotsformer"}  # agent name -> model family it plays


def shipped_checkpoint(board: str, agent: str = "alphazero") -> str:
    path = os.path.join(SHIPPED_DIR, f"{agent}-{board}.pt")
    if not os.path.exists(path):
        have = sorted(f for f in os.listdir(SHIPPED_DIR) if f.endswith(".pt")) if os.path.isdir(SHIPPED_DIR) else []
        raise CheckpointError(
            f"no shipped {agent} weights for {board} (shipped: {', '.join(have) or 'none'}); train some with "
            f"`dnb train --model {AGENT_FAMILIES.get(agent, agent)} --board {board}` and pass checkpoint=PATH"
        )
    return path


class PolicyAgent:
    """The raw policy of a network: its most probable legal move (ties broken by the seeded rng)."""

    def __init__(self, evaluator: NetworkEvaluator, seed=None, name: str = "policy",
                 board: tuple[int, int] | None = None):
        self.evaluator, self.name, self.board = evaluator, name, board
        self.rng = np.random.default_rng(seed)

    def reset(self) -> None:
        pass

    def seed(self, seed) -> None:
        self.rng = np.random.default_rng(seed)

    def action_probabilities(self, state: GameState) -> np.ndarray:
        check_state(self, state)  # select_action starts here too
        return self.evaluator.evaluate([state])[0][0]

    def select_action(self, state: GameState) -> int:
        p = self.action_probabilities(state)
        return int(self.rng.choice(np.flatnonzero(p == p.max())))


def make_network_agent(board: str, agent: str = "alphazero", checkpoint: str | None = None, simulations: int = 200,
                       c_puct: float = 1.0, prune: bool = True, batch_size: int = 8, seed=None,
                       device: str = "cpu", symmetrize: bool = False, search: str = "auto", solve_leaf: int = -1,
                       solve_root: int = -1, solve_nodes: int = 1_000_000) -> MCTSAgent | PolicyAgent:
    """``agent`` names the model family to expect (``AGENT_FAMILIES``) and the shipped weights' prefix;
    ``symmetrize`` averages the network over the board's symmetries (:class:`NetworkEvaluator`);
    ``search`` picks the search backend (module docstring). ``solve_leaf`` / ``solve_root``: the exact
    solver's zones in undrawn edges (:class:`agents.mcts.MCTSConfig`; -1 = auto, :func:`solver_zone`;
    0 = off); ``solve_nodes``: its budget per leaf. The raw policy (``simulations=0``) never solves."""
    if simulations < 0:
        raise ValueError(f"simulations must be >= 0 (0 = raw policy), got {simulations}")
    rows_cols = parse_board(board)
    backend = choose_backend(search, rows_cols)  # a bad backend name fails before the checkpoint is read
    path = checkpoint or shipped_checkpoint(board, agent)
    net, _ = load_network(path, board=board, device=device, family=AGENT_FAMILIES[agent])
    evaluator = NetworkEvaluator(net, device, symmetrize=symmetrize)
    if simulations == 0:
        return PolicyAgent(evaluator, seed=seed, name=f"{agent}-policy", board=rows_cols)
    A = GameState.new(rows_cols).num_actions
    config = MCTSConfig(simulations=simulations, c_puct=c_puct, prune=prune, batch_size=batch_size,
                        value=net.config.value, solve_leaf=solver_zone(solve_leaf, A, SOLVE_LEAF_CAP),
                        solve_root=solver_zone(solve_root, A, SOLVE_ROOT_CAP), solve_nodes=solve_nodes)
    out = MCTSAgent(evaluator, config, seed=seed, greedy=True, name=agent, board=rows_cols)
    out.search = make_search(evaluator, config, out.rng, backend=backend, board=rows_cols)
    return out
