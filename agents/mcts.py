"""The old home of the PUCT search, kept so that existing imports work: every name now lives in
:mod:`agents.search` (``MCTSConfig`` is :class:`agents.search.settings.SearchSettings`; ``run_many`` here
is the Python backend's, :func:`agents.search.python.run_many`). New code imports from
:mod:`agents.search`."""

from __future__ import annotations

from agents.search.agent import MCTSAgent
from agents.search.api import Evaluator, visits_to_policy
from agents.search.evaluators import RolloutEvaluator, UniformEvaluator
from agents.search.exact import ExactRoot, final_value, solve_extra
from agents.search.lockstep import begin_all, gc_paused
from agents.search.python import MCTS, Node, run_many
from agents.search.settings import SOLVE_LEAF_CAP, SOLVE_ROOT_CAP, SearchSettings, solver_zone

MCTSConfig = SearchSettings

__all__ = ["Evaluator", "UniformEvaluator", "RolloutEvaluator", "MCTSConfig", "MCTS", "MCTSAgent", "Node", "ExactRoot",
           "begin_all", "final_value", "gc_paused", "run_many", "solve_extra", "solver_zone", "visits_to_policy",
           "SOLVE_LEAF_CAP", "SOLVE_ROOT_CAP"]
