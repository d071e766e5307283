"""Adapters of agents to and from other ecosystems. The agent contract itself (``Agent``, its optional
capabilities, ``check_state``, ``AgentFailure`` ...) lives in :mod:`dnb_env.agent`; its names are re-exported
here.

* :func:`agent_to_bot` — any Agent as an OpenSpiel ``pyspiel.Bot`` (for ``evaluate_bots`` and friends).
* :class:`SpielBotAgent` — an OpenSpiel bot (C++ or Python, e.g. ``open_spiel.python.algorithms.mcts.MCTSBot``)
  as an Agent; the position is replayed into the bot's own game. :class:`SpielMCTSAgent`: its ``MCTSBot``
  on a clock (simulations from a measured rate).
* :class:`SB3Agent` — a stable-baselines3 / sb3-contrib model trained on our Gymnasium env as an Agent.
* :class:`FunctionAgent` — a plain callable ``state -> action`` as an Agent (:mod:`dnb_env.agent`).

Agents receive the public state only; nothing of an opponent's internals crosses an adapter.
"""

from __future__ import annotations

import gc
import time

import numpy as np

from dnb_env.agent import (Agent, AgentFailure, AgentInputError, Analysable, FunctionAgent, Probabilistic,
                           check_agent_action, check_state)
from dnb_env.clock import MeasuredRate, MoveTimed, move_budget
from dnb_env.core import GameState
from dnb_env.observations import DEFAULT_ENCODER

__all__ = ["Agent", "AgentInputError", "AgentFailure", "agent_to_bot", "check_state", "SpielBotAgent",
           "SpielMCTSAgent", "SB3Agent", "FunctionAgent",
           "check_agent_action", "value_unit"]


def value_unit(value: str) -> str:
    """How :meth:`analyse` names the unit of a value head or search trained on ``value`` (``"win"`` or
    ``"margin"``)."""
    return "margin / boxes" if value == "margin" else "win/loss"


def agent_to_bot(agent: Agent):
    """Any Agent as a ``pyspiel.Bot`` (for ``evaluate_bots`` and other OpenSpiel tools)."""
    import pyspiel

    class AgentBot(pyspiel.Bot):
        def __init__(self, agent):
            pyspiel.Bot.__init__(self)
            self.agent = agent

        def step(self, state):
            return int(self.agent.select_action(GameState.from_pyspiel(state)))

        def restart_at(self, state):
            self.agent.reset()

        def inform_action(self, state, player_id, action):
            pass

        def provides_policy(self):
            return isinstance(self.agent, Probabilistic)

        def get_policy(self, state):
            probs = self.agent.action_probabilities(GameState.from_pyspiel(state))
            return [(a, float(probs[a])) for a in state.legal_actions()]

        def step_with_policy(self, state):
            return self.get_policy(state), self.step(state)

        def is_clonable(self):
            return False

    return AgentBot(agent)


class SpielBotAgent(Analysable):
    """An OpenSpiel bot as an Agent.

    Args:
        bot: a ``pyspiel.Bot`` (or anything with ``step(state)`` and ``restart_at(state)``)
        game: the pyspiel game the bot was built for (``dots_and_boxes`` or ``python_dots_and_boxes``);
            each position is replayed into a fresh state of it
        name: display name
    """

    def __init__(self, bot, game, name: str = "openspiel_bot"):
        self.bot, self.game, self.name = bot, game, name
        params = game.get_parameters()
        self.board = (int(params["num_rows"]), int(params["num_cols"]))

    def _spiel_state(self, state: GameState):
        ps = self.game.new_initial_state()
        for a in state.history:
            ps.apply_action(a)
        return ps

    def select_action(self, state: GameState) -> int:
        check_state(self, state)
        ps = self._spiel_state(state)
        self.bot.restart_at(ps)
        return int(self.bot.step(ps))

    def analyse(self, state: GameState, deadline: float | None = None) -> dict:
        """An MCTS bot's (OpenSpiel's ``MCTSBot``) view: the root visit counts of a search of ``state`` and the
        mean reward of its most visited move, for the player to move; ``"none"`` for other bots."""
        if not hasattr(self.bot, "mcts_search"):
            return {"kind": "none"}
        root = self.bot.mcts_search(self._spiel_state(state))
        values = [None] * state.num_actions
        for child in root.children:
            values[child.action] = float(child.explore_count)
        best = root.best_child() if root.children else None
        value = best.total_reward / best.explore_count if best is not None and best.explore_count else None
        return {"kind": "visits", "values": values, "value": value, "unit": "win/loss"}

    def reset(self) -> None:
        pass


class SpielMCTSAgent(SpielBotAgent, MoveTimed):
    """OpenSpiel's Python ``MCTSBot`` as an Agent that can also think to a clock (:meth:`set_move_time`).

    The bot cannot grow one tree in rounds (each ``mcts_search`` starts a new root), so on a clock its
    ``max_simulations`` is chosen from a measured rate: ``simulations = 0.9 x rate x budget`` (at least 2,
    so that the root has children), where ``budget`` is :func:`dnb_env.clock.move_budget` of the move time
    and ``rate`` (simulations a second) is measured on the agent's earlier searches (half the old rate,
    half the last search's: :class:`dnb_env.clock.MeasuredRate`).
    :meth:`prepare` (called before a game's clock starts) measures it with a probe of ``probe`` simulations
    on the game's position; an agent asked for a timed move without it probes on the move's own position
    (the probe's seconds come off the budget; when too little is left for two more simulations, its tree
    gives the move). Rollouts shorten as a game goes on, so the rate of the last move rarely overestimates the next
    one's. The bot's own ``max_simulations`` is back after every move.

    Args:
        bot: an ``open_spiel.python.algorithms.mcts.MCTSBot``
        game, name: as :class:`SpielBotAgent`
        probe: simulations of the probe that measures the first rate
        clock: seconds (``time.perf_counter``; a fake clock in tests)
    """

    def __init__(self, bot, game, name: str = "openspiel_mcts", *, probe: int = 16, clock=None):
        super().__init__(bot, game, name=name)
        self.probe, self.clock = probe, clock or time.perf_counter
        self.move_time: float | None = None
        self.measured = MeasuredRate()  # simulations a second (a search under a millisecond counts as one)

    @property
    def rate(self) -> float | None:
        """Simulations a second, measured on the earlier searches (None before the first)."""
        return self.measured.rate

    def _search(self, ps, simulations: int):
        """A search of ``simulations`` (fewer when the root is solved); the rate measured on it."""
        saved, self.bot.max_simulations = self.bot.max_simulations, simulations
        start = self.clock()
        try:
            root = self.bot.mcts_search(ps)
        finally:
            self.bot.max_simulations = saved
        spent = self.clock() - start
        self.measured.add(root.explore_count, spent)
        return root, spent

    def prepare(self, state: GameState) -> None:
        """Measure the rate before the clock starts: the probe of the first timed move, on ``state`` (the
        first position of a game has the longest rollouts, so this rate errs on the slow side); then collect
        the garbage of the process."""
        check_state(self, state)
        if self.rate is None and not state.is_terminal():
            self._search(self._spiel_state(state), max(2, self.probe))
        # a full collection now, off the clock: the bot's trees are many small objects, and the first timed
        # search of a process that holds earlier garbage could otherwise pay for a collection of all of it
        gc.collect()

    def select_action(self, state: GameState) -> int:
        if self.move_time is None:
            return super().select_action(state)
        check_state(self, state)
        ps = self._spiel_state(state)
        left = move_budget(self.move_time)
        if self.rate is None:
            probe, spent = self._search(ps, max(2, self.probe))
            left -= spent
            if 0.9 * (self.measured.work_in(max(left, 0.0)) or 0.0) < 2:  # no time for a better search
                return int(probe.best_child().action)
        simulations = max(2, int(0.9 * (self.measured.work_in(max(left, 0.0)) or 0.0)))
        root, _ = self._search(ps, simulations)
        return int(root.best_child().action)


class SB3Agent(Probabilistic):
    """A stable-baselines3 / sb3-contrib model trained on ``DotsAndBoxes`` Gymnasium env as an Agent.

    Args:
        model: the trained model (``MaskablePPO``, ``PPO``, ``DQN``, ...)
        obs_type: the encoder the model was trained with (the env's ``obs_type``)
        deterministic: greedy actions (default) or sampled ones
        name: display name

    MaskablePPO gets the legal mask through ``action_masks``. A model without masking whose choice is
    illegal falls back to its most probable legal action (from ``policy.get_distribution`` where
    available); the count of such fall-backs is kept in ``illegal_choices``.
    """

    def __init__(self, model, obs_type: str = DEFAULT_ENCODER, deterministic: bool = True, name: str = "sb3"):
        self.model, self.obs_type, self.deterministic, self.name = model, obs_type, deterministic, name
        self.illegal_choices = 0

    def _obs(self, state: GameState) -> dict:
        from dnb_env.observations import encode

        return {"observation": encode(self.obs_type, state), "action_mask": state.legal_mask()}

    def select_action(self, state: GameState) -> int:
        obs = self._obs(state)
        mask = obs["action_mask"].astype(bool)
        try:
            action, _ = self.model.predict(obs, deterministic=self.deterministic, action_masks=mask)
        except TypeError:  # a model without action masking
            action, _ = self.model.predict(obs, deterministic=self.deterministic)
        action = int(np.asarray(action).reshape(-1)[0])
        if mask[action]:
            return action
        self.illegal_choices += 1
        probs = self.action_probabilities(state)
        return int(np.argmax(np.where(mask, probs, -1.0)))

    def action_probabilities(self, state: GameState) -> np.ndarray:
        import torch

        obs = self._obs(state)
        policy = self.model.policy
        obs_t, _ = policy.obs_to_tensor(obs)
        with torch.no_grad():
            try:
                dist = policy.get_distribution(obs_t, action_masks=obs["action_mask"].astype(bool)[None])
            except TypeError:
                dist = policy.get_distribution(obs_t)
            probs = dist.distribution.probs[0].cpu().numpy().astype(np.float64)
        probs = probs * obs["action_mask"]
        total = probs.sum()
        return probs / total if total > 0 else obs["action_mask"] / obs["action_mask"].sum()

    def reset(self) -> None:
        pass
