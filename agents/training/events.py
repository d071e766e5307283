"""TensorBoard event files of a run: every metrics row as scalars, so ``tensorboard --logdir RUN`` shows
the losses, the exact-label accuracies, the backward-training start step, the scores against the
evaluation opponents and the times, one point per iteration (or per fit commit).

Optional: the events need ``tensorboardX`` (``pip install 'dnb-env[tensorboard]'``, which also brings the
``tensorboard`` viewer). Without it a run says so once and trains as before. Events are written after
the metrics row is committed, so a resumed run adds the rows it commits and no row twice (a run killed
between the commit and the event write misses that point on the plot; its metrics.jsonl has it).

Tags by the metric's name: ``*_loss`` under ``loss/``, ``*accuracy*`` under ``accuracy/``, ``keep*`` (fits)
under ``held_out/``, ``win_rate_vs_*`` under ``score/``, ``start_step`` under ``curriculum/``, ``*_s`` and
``seconds`` under ``time/``, any other number under ``other/``.
"""

from __future__ import annotations

import math
import os
import time

__all__ = ["EventLog", "tag_of"]


def tag_of(key: str) -> str:
    if "@" in key:  # a multi-size run's per-board value "key@RxC": beside the key's own tag, under the board
        base, _, board = key.partition("@")
        return f"{tag_of(base)}/{board}"
    if key.endswith("_loss"):
        return f"loss/{key[:-5]}"
    if "accuracy" in key:
        return f"accuracy/{key}"
    if key.startswith("keep") or key in ("optimal", "value_sign"):
        return f"held_out/{key}"
    if key.startswith("win_rate_vs_"):
        return f"score/vs_{key[len('win_rate_vs_'):]}"
    if key == "start_step":
        return "curriculum/start_step"
    if key.endswith("_s") or key == "seconds":
        return f"time/{key}"
    return f"other/{key}"


class EventLog:
    """``write(row, step)``: the row's finite numbers as scalars at ``step``, under ``folder/tensorboard``."""

    def __init__(self, folder: str, echo=print):
        self.path = os.path.join(folder, "tensorboard")
        self.echo = echo
        self._writer = None
        self._missing = False

    def _open(self):
        if self._writer is None and not self._missing:
            try:
                from tensorboardX import SummaryWriter
            except ImportError:
                self._missing = True
                self.echo("no TensorBoard events: tensorboardX is not installed (pip install 'dnb-env[tensorboard]')")
                return None
            # a file of its own per writer: the default name (seconds and host) is the same for a run
            # resumed within the second, whose writer would then overwrite the earlier events
            self._writer = SummaryWriter(self.path, filename_suffix=f".{os.getpid()}.{time.time_ns()}")
        return self._writer

    def write(self, row: dict, step: int, skip: tuple[str, ...] = ("iteration", "step")) -> None:
        writer = self._open()
        if writer is None:
            return
        for key, value in row.items():
            if key in skip or isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                continue
            writer.add_scalar(tag_of(key), float(value), step)
        writer.flush()

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
