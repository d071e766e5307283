"""What goes into a search and what comes out, for both backends (mctx's ``RootFnOutput`` and
``PolicyOutput`` are the model); ``A`` is the board's ``num_actions``.

    priors, values = evaluator.evaluate(states)          # Evaluator: priors [B, A], values [B]
    search.begin(state, RootOutput(priors[0], values[0]))  # the root's evaluation, when the caller has it
    out = search.output()                                # SearchOutput: visit_counts [A], q_values [A], ...
    policy = visits_to_policy(out.visit_counts, 0.4)     # [A] move probabilities at a temperature
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, Sequence

import numpy as np

from dnb_env.core import GameState

__all__ = ["Evaluator", "RootOutput", "SearchOutput", "visits_to_policy"]


class Evaluator(Protocol):
    def evaluate(self, states: Sequence[GameState]) -> tuple[np.ndarray, np.ndarray]:
        """``(priors [B, num_actions], values [B])``: move probabilities (need not be masked) and the
        expected result in [-1, 1] for the player to move in each state."""


@dataclass(frozen=True)
class RootOutput:
    """The evaluator's view of a search's root (mctx ``RootFnOutput``).

    * ``priors``: ``[A]`` move probabilities (need not be masked: the search keeps the legal moves and
      renormalises).
    * ``value``: the expected result for the player to move, in the search's value units.
    """

    priors: np.ndarray
    value: float


@dataclass(frozen=True)
class SearchOutput:
    """The root statistics of a finished search (mctx ``PolicyOutput``), equal on both backends.

    * ``visit_counts``: ``[A]`` float64, root visits per action (0 for moves not searched).
    * ``q_values``: ``[A]`` float64, mean backed-up value ``Q(s, a)`` for the root's mover (0 where unvisited).
    * ``priors``: ``[A]`` float64, the root priors the search used (renormalised over the searched moves,
      with the root noise when there is some; 0 elsewhere).
    * ``value``: the search's value of the root for its mover (``sum W / sum N``).
    * ``net_value``: the evaluator's value of the root when this search evaluated it (None when a kept
      subtree's root was reused).

    The move is the caller's to choose (:func:`visits_to_policy` at a temperature, ties broken by its own
    random generator): the search draws no random numbers for it.
    """

    visit_counts: np.ndarray
    q_values: np.ndarray
    priors: np.ndarray
    value: float
    net_value: float | None


def visits_to_policy(counts: np.ndarray, temperature: float) -> np.ndarray:
    """Visit counts -> move probabilities: ``N^(1/T)`` normalised; T = 0 puts all mass on the most visited."""
    if temperature == 0:
        p = (counts == counts.max()).astype(np.float64)
    else:
        p = np.power(counts / max(counts.max(), 1e-12), 1.0 / temperature)
    return p / p.sum()
