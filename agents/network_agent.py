"""Playing agents over a policy-value network of any model family: PUCT search or the raw policy.

    make_agent("alphazero", board="3x3", simulations=200)             # shipped ResNet weights
    make_agent("dotsformer", board="5x5", simulations=200)            # shipped Dotsformer weights
    make_agent("alphazero", board="3x3", checkpoint="runs/az-3x3/checkpoint.pt")
    make_agent("alphavit", board="4x5", checkpoint="runs/avit/checkpoint.pt")  # one network, any board

A family whose networks play any board (``alphavit``) loads one checkpoint for every board; a board outside
the ones it was trained on (the checkpoint's ``boards``) plays too, after one
:class:`agents.checkpoint.BoardOutsideTrainingWarning`. Every other family's checkpoint is for its own board.

Playing uses BoxesZero's pruning (exact simple-endgame leaves) unless ``prune=False``, and picks the
most visited move. The search settings are :class:`agents.search.SearchSettings` with the defaults of
:data:`agents.search.settings.PLAY` (200 simulations, the auto solver zones); any of them may be changed
by keyword but ``value``. ``simulations=0`` plays the raw policy (the network's most probable legal move, no
search). The search runs in the units the network's value head was trained on (``config.value``), on the
backend ``search`` names (:func:`agents.search.make_search`: ``"auto"`` = the C++ search when it is built
and the board is at most 12x12; ``"python"``; ``"native"``); both choose the same moves.
"""

from __future__ import annotations

import dataclasses
import os

import numpy as np

from dnb_env._extras import requires_extra

with requires_extra("agents.network_agent"):  # the networks are PyTorch modules: MissingExtra without it
    import torch  # noqa: F401

from agents.base import check_state, value_unit
from agents.checkpoint import CheckpointError, load_network
from agents.models import family_agents, family_for_agent, get_family
from agents.models.evaluator import NetworkEvaluator
from agents.processes import process_threads
from agents.search import MCTSAgent, SearchSettings, choose_backend
from agents.search.agent import check_nimstring_order
from agents.search.settings import PLAY, default, settings_for
from baselines.nimstring import check_threads, nimstring_zone
from baselines.safe_phase import safe_phase_zone
from dnb_env.agent import Analysable, Probabilistic, Seedable
from dnb_env.core import GameState, geometry

SHIPPED_DIR = os.path.join(os.path.dirname(__file__), "checkpoints")


def shipped_checkpoint(board: str, agent: str = "alphazero") -> str:
    """The shipped weights of ``agent`` for ``board``: ``{agent}-{board}.pt``, else, for a family whose
    networks play any board, the one ``{agent}.pt`` of every board."""
    names = [f"{agent}-{board}.pt"]
    family = family_agents().get(agent)
    if family is not None and get_family(family).any_board:
        names.append(f"{agent}.pt")
    for name in names:
        path = os.path.join(SHIPPED_DIR, name)
        if os.path.exists(path):
            return path
    have = sorted(f for f in os.listdir(SHIPPED_DIR) if f.endswith(".pt")) if os.path.isdir(SHIPPED_DIR) else []
    raise CheckpointError(
        f"no shipped {agent} weights for {board} (shipped: {', '.join(have) or 'none'}); train some with "
        f"`dnb train --model {family or agent} --board {board}` and pass checkpoint=PATH"
    )


def shipped_boards(agent: str) -> tuple[str, ...]:
    """The boards ``agent`` has shipped weights for (its ``{agent}-{board}.pt`` files, as
    :func:`shipped_checkpoint` finds them), sorted."""
    prefix = f"{agent}-"
    names = os.listdir(SHIPPED_DIR) if os.path.isdir(SHIPPED_DIR) else []
    return tuple(sorted(f[len(prefix):-len(".pt")] for f in names if f.startswith(prefix) and f.endswith(".pt")))


class PolicyAgent(Seedable, Probabilistic, Analysable):
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

    def analyse(self, state: GameState, deadline: float | None = None) -> dict:
        """The network's raw policy ``[A]`` and value head for the player to move (in the units of its
        ``config.value``)."""
        priors, values = self.evaluator.evaluate([state])
        unit = getattr(getattr(getattr(self.evaluator, "net", None), "config", None), "value", "win")
        return {"kind": "policy", "values": np.asarray(priors[0], dtype=float), "value": values[0],
                "unit": value_unit(unit)}


#: The search settings a player may change (every field of SearchSettings but the value unit, the network's).
SEARCH_OPTIONS = tuple(f.name for f in dataclasses.fields(SearchSettings) if f.name != "value")


def make_network_agent(board, agent: str = "alphazero", checkpoint: str | None = None, *, seed=None,
                       device: str = "cpu", symmetrize: bool = False, search: str = "auto",
                       nimstring_edges: int = -1, safe_phase: int = -1, nimstring_order: str = "rule",
                       nimstring_threads: int = 1, **settings) -> MCTSAgent | PolicyAgent:
    """The network agent for ``board`` ("RxC", (rows, cols) or a Geometry). ``agent`` names the model family
    to expect (the family that plays as ``agent``,
    :func:`agents.models.family_for_agent`) and the shipped weights' prefix;
    ``symmetrize`` averages the network over the board's symmetries (:class:`NetworkEvaluator`);
    ``search`` picks the search backend (module docstring). ``settings``: search settings
    (``SEARCH_OPTIONS``: ``simulations``, ``c_puct``, ``prune``, ``batch_size``, ``solve_nodes``, ...)
    changed from :data:`agents.search.settings.PLAY`; ``solve_leaf`` / ``solve_root`` are the exact
    solver's zones in undrawn edges (-1 = auto, :func:`agents.search.settings.solver_zone`; 0 = off). The
    raw policy (``simulations=0``) never solves. ``nimstring_edges``: within this many undrawn edges, outside
    the root's solver zone, the agent plays a safe move that wins Nimstring where the exact solver does not
    show it to lose on boxes, and does not play one it shows to lose (:class:`MCTSAgent`; -1 = auto,
    :func:`baselines.nimstring.nimstring_zone`: 44 on 5x5; 0 = off); ``nimstring_order``: the order in which
    it tries the safe moves (:data:`agents.search.agent.NIMSTRING_ORDERS`: the long chain rule's, or the
    network's prior); ``nimstring_threads``: 2 to search and check in two threads on a clock
    (:func:`baselines.nimstring.check_threads`). ``safe_phase``: with at most this many safe moves
    left the agent plays the safe-phase search's best move (:class:`MCTSAgent`; -1 = auto,
    :func:`baselines.safe_phase.safe_phase_zone`: 20 from 6x6 on, off where the Nimstring move plays; 0 = off). The network's forward passes run on the
    threads this process was given (:func:`agents.processes.process_threads`: a tournament's ``threads``, else
    1), not on torch's default of every core."""
    unknown = sorted(set(settings) - set(SEARCH_OPTIONS))
    if unknown:
        raise TypeError(f"make_network_agent() got unknown search setting(s) {', '.join(unknown)}; "
                        f"the settings: {', '.join(SEARCH_OPTIONS)}")
    simulations = settings.get("simulations", default("simulations", PLAY))
    if simulations < 0:
        raise ValueError(f"simulations must be >= 0 (0 = raw policy), got {simulations}")
    g = geometry(board)
    rows_cols = g.size
    nimstring_edges = nimstring_zone(nimstring_edges, g.num_actions)  # bad values fail before the checkpoint is read
    safe_phase = safe_phase_zone(safe_phase, g.num_actions)
    check_nimstring_order(nimstring_order)  # before the checkpoint is read
    check_threads(nimstring_threads)
    backend = choose_backend(search, rows_cols)
    path = checkpoint or shipped_checkpoint(g.name, agent)
    net, _ = load_network(path, board=g.name, device=device, family=family_for_agent(agent))
    evaluator = NetworkEvaluator(net, device, symmetrize=symmetrize, threads=process_threads())
    if simulations == 0:
        return PolicyAgent(evaluator, seed=seed, name=f"{agent}-policy", board=rows_cols)
    config = settings_for(g, PLAY, **settings, value=net.config.value)
    return MCTSAgent(evaluator, config, seed=seed, greedy=True, name=agent, board=rows_cols, backend=backend,
                     nimstring_edges=nimstring_edges, safe_phase=safe_phase, nimstring_order=nimstring_order,
                     nimstring_threads=nimstring_threads)
