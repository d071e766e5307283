"""Backward training: where self-play starts searching, and when that start moves earlier.

The state (:class:`Curriculum`) is the start step S, the iteration of its last change and the history of
``(iteration, S)`` pairs; it is saved with every checkpoint. Self-play reports a trace of its searched
positions (step, the search's Q, the network's value of the root, the game's result, all for the mover
and in the model's value units); :func:`measure` turns it into the rule's statistics and
:meth:`Curriculum.update` applies the rule of :class:`~agents.training.config.CurriculumConfig`.

A multi-size run (``boards``) keeps one :class:`Curriculum` per board in a :class:`BoardCurricula`: each
board its own S, moved by its own games' statistics; saved as ``{board: curriculum}`` (:func:`curriculum_from_dict`
reads either kind).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

__all__ = ["Curriculum", "BoardCurricula", "curriculum_from_dict", "measure", "TRACE_COLUMNS", "rollback_table"]

TRACE_COLUMNS = ("step", "q", "v", "z")  # one row per searched position of an iteration's games


def measure(trace: np.ndarray, start: int, cfg, epsilon: float) -> dict:
    """The rollback statistics of one iteration's self-play trace ``[n, 4]`` (columns ``TRACE_COLUMNS``);
    ``epsilon``: ``cfg.epsilon_for`` the run's value unit and board (recorded in the result)."""
    if len(trace) == 0:
        return {}
    step, q, v, z = trace.T
    correct = np.where(z == 0, np.abs(q) < epsilon, (np.sign(q) == np.sign(z)) & (np.abs(q) >= epsilon))
    root = step == start
    later = (step > start) & ((step - start) % cfg.step_interval == 0)
    out = {"epsilon": float(epsilon), "mqr": float(np.mean(np.abs(q) > cfg.mq_threshold)),
           "nvr": float(np.mean((np.abs(v) >= cfg.nv_threshold) & (v * q >= 0)))}
    if root.any():
        out["root_accuracy"] = float(correct[root].mean())
    if later.any():
        out["step_accuracy"] = float(correct[later].mean())
    return out


@dataclass
class Curriculum:
    start: int
    last_change: int = 0
    history: list = field(default_factory=list)  # [iteration, S] at the start and after every change

    @classmethod
    def begin(cls, start: int) -> "Curriculum":
        return cls(start, 0, [[0, start]])

    def to_dict(self) -> dict:
        return {"start": self.start, "last_change": self.last_change, "history": [list(h) for h in self.history]}

    @classmethod
    def from_dict(cls, data: dict) -> "Curriculum":
        return cls(int(data["start"]), int(data["last_change"]), [list(map(int, h)) for h in data["history"]])

    def update(self, stats: dict, iteration: int, cfg) -> bool:
        """Apply ``cfg.rule`` after ``iteration`` with that iteration's :func:`measure` ``stats``; returns
        whether S moved."""
        if self.start <= 0 or cfg.rule == "none":
            return False
        gap = iteration - self.last_change
        if cfg.rule == "dotsformer":
            ready = (gap >= cfg.min_gap and stats.get("root_accuracy", 0.0) >= cfg.tau_root
                     and stats.get("step_accuracy", 0.0) >= cfg.tau_step)
        else:  # boxeszero
            ready = gap >= cfg.max_gap or (stats.get("mqr", 0.0) >= cfg.mqr_threshold
                                           and stats.get("nvr", 0.0) >= cfg.nvr_threshold)
        if not ready:
            return False
        self.start = max(0, self.start - cfg.step_size)
        self.last_change = iteration
        self.history.append([iteration, self.start])
        return True


@dataclass
class BoardCurricula:
    """Board -> its :class:`Curriculum` (a multi-size run; the boards in the mix's order)."""

    boards: dict

    def __getitem__(self, board: str) -> Curriculum:
        return self.boards[board]

    def to_dict(self) -> dict:
        return {b: c.to_dict() for b, c in self.boards.items()}

    @classmethod
    def from_dict(cls, data: dict) -> "BoardCurricula":
        return cls({str(b): Curriculum.from_dict(c) for b, c in data.items()})


def curriculum_from_dict(data: dict) -> Curriculum | BoardCurricula:
    """A saved :class:`Curriculum` (keys ``start``, ...) or :class:`BoardCurricula` (keys ``"RxC"``)."""
    return Curriculum.from_dict(data) if "start" in data else BoardCurricula.from_dict(data)


def rollback_table(history: list) -> list[tuple[int, int | None]]:
    """``(S, iterations spent at S before moving on)`` for every start step the run reached, as in the
    papers' Tables 5/8/9/11; the current step's count is ``None`` (not moved on yet)."""
    rows = []
    for (it, s), nxt in zip(history, history[1:] + [None]):
        rows.append((s, None if nxt is None else nxt[0] - it))
    return rows
