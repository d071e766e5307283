"""Scores on held-out teacher positions: a policy's moves against the exact verdicts, a value against the
exact results.

    held = HeldOut.of(TeacherData.load("data/teach5-held"))
    report = held_out_report(held, *policy_and_value(net, held.data))   # keep, keep_hard, optimal, value_sign, value_auc

``keep`` is the share of winning positions (the mover can win) where the policy's move keeps the win
(BoxesZero's criterion), ``keep_hard`` the same on the greedy-hard ones (a move the greedy rule allows loses
the win), ``optimal`` the share of optimal moves; ``value_sign`` and ``value_auc`` score the value head, and
:func:`paired_auc_difference` compares two values on the same positions (DeLong's method).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from agents.training.dataset import MARGIN, NO_VALUE, TeacherData

__all__ = ["HeldOut", "policy_and_value", "held_out_report", "value_report", "value_auc", "paired_auc_difference"]


@dataclass
class HeldOut:
    """Held-out positions with their exact verdicts, ready to score a policy."""

    data: TeacherData
    winning: np.ndarray  # bool [N]: the mover can win
    keeps: np.ndarray  # bool [N, A]: the move keeps the best result (win / draw / loss class)
    optimal: np.ndarray  # bool [N, A]: the move reaches the best label
    hard: np.ndarray  # bool [N]: a move the greedy rule allows does not keep the best result
    greedy_keep: np.ndarray  # float [N]: the chance that greedy (uniform over its moves) keeps it
    step: np.ndarray  # int [N]: moves played
    labelled: np.ndarray  # bool [N]: the position has move labels (not a result-only row)

    @classmethod
    def of(cls, data: TeacherData) -> "HeldOut":
        from baselines.greedy import GreedyAgent

        s = data.samples
        lead = data.lead
        legal = data.values != NO_VALUE
        vals = data.values.astype(np.int32)
        result = np.where(data.kind[:, None] == MARGIN, np.sign(lead[:, None] + vals), vals)
        result = np.where(legal, result, -9)
        labelled = legal.any(axis=1)
        best_result = np.where(labelled, result.max(axis=1), data.value)  # result-only rows: their own result
        keeps = legal & (result == best_result[:, None])
        optimal = legal & (vals == np.where(legal, vals, -999).max(axis=1, keepdims=True))
        hard = np.zeros(len(s), bool)
        greedy_keep = np.zeros(len(s))
        for i, state in enumerate(s.states()):
            if labelled[i]:
                cand = GreedyAgent.candidates(state)
                hard[i] = not keeps[i, cand].all()
                greedy_keep[i] = keeps[i, cand].mean()
        return cls(data, best_result > 0, keeps, optimal, hard, greedy_keep, s.step.astype(np.int32), labelled)


def policy_and_value(net, data: TeacherData, batch: int = 512, device: str = "cpu") -> tuple[np.ndarray, np.ndarray]:
    """The network's priors ``[N, A]`` and values ``[N]`` on every position of ``data``, in batches."""
    from agents.models.evaluator import NetworkEvaluator

    evaluator = NetworkEvaluator(net, device)
    states = data.samples.states()
    priors, values = [], []
    for i in range(0, len(states), batch):
        p, v = evaluator.evaluate(states[i:i + batch])
        priors.append(np.asarray(p))
        values.append(np.asarray(v))
    return np.concatenate(priors), np.concatenate(values)


def held_out_report(held: HeldOut, priors: np.ndarray | None = None, values: np.ndarray | None = None) -> dict:
    """Scores of a policy (``priors [N, A]``, its top move played; None: greedy's expected score) on
    ``held``: ``keep`` (winning positions), ``keep_hard`` (winning and greedy-hard), ``optimal`` (all),
    each overall and per step (``keep@22``), with the counts ``n`` / ``n_hard``; ``value_sign`` (the
    value's sign against the exact result's on decided positions), overall and per step, and
    ``value_auc`` (:func:`value_auc`), overall and per step, when ``values`` are given."""
    out: dict = {}
    n = len(held.winning)
    if priors is None:
        keep = held.greedy_keep
        opt = np.full(n, np.nan)
    else:
        move = priors.argmax(axis=1)
        keep = held.keeps[np.arange(n), move].astype(float)
        opt = held.optimal[np.arange(n), move].astype(float)
    win = held.winning & held.labelled  # result-only rows score the value alone
    hard = win & held.hard
    out["n"], out["n_hard"] = int(win.sum()), int(hard.sum())
    out["keep"] = float(keep[win].mean()) if win.any() else float("nan")
    out["keep_hard"] = float(keep[hard].mean()) if hard.any() else float("nan")
    if priors is not None:
        out["optimal"] = float(opt[held.labelled].mean()) if held.labelled.any() else float("nan")
    for k in sorted(set(held.step.tolist())):
        at = held.step == k
        if (win & at).any():
            out[f"keep@{k}"] = float(keep[win & at].mean())
        if (hard & at).any():
            out[f"keep_hard@{k}"] = float(keep[hard & at].mean())
    if values is not None:
        out.update(value_report(values, np.asarray(held.data.samples.z), held.step))
    return out


def value_report(values: np.ndarray, truth: np.ndarray, step: np.ndarray) -> dict:
    """A value's scores against the exact results ``truth`` (+1 / -1 for the mover, 0 for a draw) of
    positions played at moves ``step``: ``value_sign`` (its sign right, on decided positions) and
    ``value_auc`` (:func:`value_auc`), overall and per step (``value_sign@18``, ``value_auc@18``)."""
    values, truth, step = np.asarray(values, dtype=float), np.asarray(truth), np.asarray(step)
    decided = truth != 0
    right = np.sign(values) == truth
    out = {"value_sign": float(right[decided].mean()) if decided.any() else float("nan"),
           "value_auc": value_auc(values, truth)}
    for k in sorted(set(step.tolist())):
        at = decided & (step == k)
        if at.any():
            out[f"value_sign@{k}"] = float(right[at].mean())
            out[f"value_auc@{k}"] = value_auc(values[at], truth[at])
    return out


def value_auc(values: np.ndarray, truth: np.ndarray) -> float:
    """The chance that a won position (``truth > 0``) gets a higher value than a lost one (``truth < 0``),
    ties counted half: the area under the ROC curve, 0.5 for a value that knows nothing whatever share of
    positions the mover wins (the sign's accuracy does not say that when most positions are won). NaN
    without both kinds."""
    values, truth = np.asarray(values, dtype=float), np.asarray(truth)
    if not (truth > 0).any() or not (truth < 0).any():
        return float("nan")
    return float(_ranked_right(values, truth)[0].mean())


def _ranked_right(values: np.ndarray, truth: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each won position's share of the lost ones it ranks above, and each lost position's share of the won
    ones ranked above it (ties half): the AUC is the mean of either."""
    won, lost = values[truth > 0], values[truth < 0]
    won_sorted, lost_sorted = np.sort(won), np.sort(lost)
    below = np.searchsorted(lost_sorted, won, side="left")
    level = np.searchsorted(lost_sorted, won, side="right") - below
    lo = np.searchsorted(won_sorted, lost, side="left")
    hi = np.searchsorted(won_sorted, lost, side="right")
    return (below + 0.5 * level) / len(lost), (len(won) - hi + 0.5 * (hi - lo)) / len(won)


def paired_auc_difference(first: np.ndarray, second: np.ndarray, truth: np.ndarray,
                          z: float = 1.96) -> tuple[float, float, tuple[float, float], float]:
    """Two values' AUCs (:func:`value_auc`) on the same positions compared by DeLong's method:
    ``(auc_first, auc_second, 95% interval of their difference, two-sided p-value)``. The variance of the
    difference comes from each won and each lost position's share of the pairs it ranks right, so the two
    values' agreement on the same positions narrows it. NaN without both won and lost positions."""
    first, second = np.asarray(first, dtype=float), np.asarray(second, dtype=float)
    truth = np.asarray(truth)
    if not first.shape == second.shape == truth.shape or first.ndim != 1:
        raise ValueError(f"paired_auc_difference needs three 1-D arrays of one length, got {first.shape}, "
                         f"{second.shape} and {truth.shape}")
    nan = float("nan")
    won_mask, lost_mask = truth > 0, truth < 0
    m, n = int(won_mask.sum()), int(lost_mask.sum())
    if m < 2 or n < 2:
        return nan, nan, (nan, nan), nan
    (won_a, lost_a), (won_b, lost_b) = _ranked_right(first, truth), _ranked_right(second, truth)
    per_won, per_lost = [won_a, won_b], [lost_a, lost_b]
    auc_a, auc_b = float(per_won[0].mean()), float(per_won[1].mean())
    s10, s01 = np.cov(np.stack(per_won)), np.cov(np.stack(per_lost))
    var = (s10[0, 0] + s10[1, 1] - 2 * s10[0, 1]) / m + (s01[0, 0] + s01[1, 1] - 2 * s01[0, 1]) / n
    diff = auc_a - auc_b
    sd = math.sqrt(max(float(var), 0.0))
    p = math.erfc(abs(diff) / sd / math.sqrt(2)) if sd > 0 else (1.0 if diff == 0 else 0.0)
    return auc_a, auc_b, (diff - z * sd, diff + z * sd), p
