"""Supervised training on teacher datasets: any model family learns the exact solver's moves and values.

    dnb fit dotsformer --board 5x5 --data data/teach5-a --held data/teach5-held --steps 40000 --out runs/fit-df
    dnb fit --model resnet --board 5x5 --data data/teach5-a --positions 100000 ...   # the first 100k only

Targets (:func:`agents.training.dataset.to_samples`): the policy is uniform over the best moves
(``temperature=0``) or a softmax of the move labels at ``temperature``; the value is the exact final
margin over the number of boxes (``value="margin"`` models; win/loss-only rows carry no value loss there)
or the exact result (``"win"``); models with auxiliary heads also learn the initiative label of the best
move and every move's class. Batches are mapped by a random board symmetry (``augment``).

Every ``eval_every`` steps the raw policy is scored on the held-out dataset (positions of games never
trained on) and a row goes to ``metrics.jsonl``: per number of moves played, the share of winning
positions (the mover can win) where the policy's move keeps the win (BoxesZero's criterion), the same on
the greedy-hard ones (a move the greedy rule allows loses the win), the share of optimal moves, and the
value head's sign accuracy; greedy's own expected score on the same positions is row 0. The run folder
is committed at the same points (``checkpoint.pt`` written atomically with the optimiser and the step),
and the batches of each chunk of ``eval_every`` steps are drawn from a generator seeded by ``(seed,
chunk)``, so a run killed at any point resumes from its last row to the same network.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import os
import time
from dataclasses import dataclass, field

import numpy as np

from dnb_env._extras import requires_extra

with requires_extra("agents.training.supervised"):
    import torch

from agents.checkpoint import CheckpointError, atomic_torch_save, load_checkpoint, restore_optimizer, save_checkpoint
from agents.models import build_model, config_to_dict
from agents.training.common import encode_all, initial_weights, resolve_device
from agents.training.config import MAX_PROCESSES, LossConfig, field_problems, model_from_dict
from agents.training.dataset import TeacherData, to_samples
from agents.training.events import EventLog
from agents.training.heldout import HeldOut, held_out_report, policy_and_value
from agents.training.losses import total_loss
from agents.training.replay import Replay, has_future_head
from agents.training.store import RunError, read_json, read_metrics
from dnb_env.core import geometry
from dnb_env.io import RunLock, atomic_write
from dnb_env.limits import check_number, check_seed
from dnb_env.symmetry import symmetries

__all__ = ["FitConfig", "fit", "playing_weights"]


#: The most positions in one gradient step.
MAX_BATCH = 1 << 20


@dataclass(frozen=True)
class FitConfig:
    model: object  # a model family's config (board, encoder, value unit, architecture)
    data: tuple[str, ...] = ()  # teacher dataset folders, joined in order
    held: str | None = None  # dataset folder scored every eval_every steps
    positions: int = 0  # train on the first N positions only (0: all)
    steps: int = 20_000
    batch_size: int = 256
    lr: float = 1e-3
    lr_schedule: str = "cosine"  # "cosine" (to lr / 100 at the last step) or "constant"
    temperature: float = 0.0
    augment: bool = True
    loss: LossConfig = field(default_factory=LossConfig)
    eval_every: int = 1000
    eval_positions: int = 2000  # held-out positions scored (the first N)
    seed: int = 0
    threads: int = 1
    init: str | None = None  # start from the weights of this checkpoint (a fit, a training run, playing weights)

    def __post_init__(self):
        object.__setattr__(self, "data", tuple(self.data))
        if not self.data:
            raise ValueError("fit needs at least one teacher dataset (data)")
        if self.steps < 1 or self.batch_size < 1 or self.eval_every < 1 or self.threads < 1:
            raise ValueError("steps, batch_size, eval_every and threads must be >= 1")
        if self.batch_size > MAX_BATCH or self.threads > MAX_PROCESSES:
            raise ValueError(f"batch_size must be at most {MAX_BATCH:,} and threads at most {MAX_PROCESSES}")
        if self.positions < 0 or self.eval_positions < 0:
            raise ValueError("positions and eval_positions must be >= 0")
        check_number(self.lr, "lr", low=0, open_low=True)
        check_number(self.temperature, "temperature", low=0)
        check_seed(self.seed)
        if self.lr_schedule not in ("cosine", "constant"):
            raise ValueError(f"lr_schedule must be 'cosine' or 'constant', not {self.lr_schedule!r}")

    def to_dict(self) -> dict:
        out = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return out | {"model": config_to_dict(self.model), "data": list(self.data), "loss": dataclasses.asdict(self.loss)}

    @classmethod
    def from_dict(cls, data: dict) -> "FitConfig":
        """Inverse of :meth:`to_dict`; the type of every field is checked first (a ValueError names each
        one that is wrong, :func:`agents.training.config.field_problems`)."""
        if not isinstance(data, dict):
            raise ValueError(f"a fit config is a mapping of its settings, not {json.dumps(data)[:40]}")
        data = dict(data)
        problems = field_problems(cls, {k: v for k, v in data.items() if k not in ("model", "data", "loss")})
        loss = data.get("loss", {})
        problems += field_problems(LossConfig, loss, "loss.") if isinstance(loss, dict) else ["loss is not a mapping"]
        folders = data.get("data")
        if not isinstance(folders, list) or not all(isinstance(f, str) for f in folders):
            problems.append(f"data is {json.dumps(folders)[:40]}: not a list of dataset folders")
        if problems:
            raise ValueError("; ".join(problems))
        data["model"] = model_from_dict(data.get("model"))
        data["loss"] = LossConfig(**loss)
        return cls(**data)

    def lr_at(self, step: int) -> float:
        if self.lr_schedule == "constant":
            return self.lr
        return float(self.lr * (0.01 + 0.99 * 0.5 * (1 + np.cos(np.pi * min(step, self.steps) / self.steps))))


def _load_data(config: FitConfig) -> TeacherData:
    data = TeacherData.load_many(config.data, config.model.board)
    if config.positions:
        if config.positions > len(data):
            raise ValueError(f"positions={config.positions} but the data hold {len(data)}")
        data = data.take(np.arange(config.positions))
    return data


def fit(config: FitConfig, out: str, resume: bool = False, progress: bool = True, echo=print, device: str = "cpu",
        workers: int = 1) -> list[dict]:
    """Train ``config`` in the folder ``out`` (or continue it with ``resume``); returns the metrics rows.
    ``device`` (:func:`~agents.training.common.resolve_device`) and ``workers`` (processes that encode the
    data once at the start, :func:`~agents.training.common.encode_all`) change the speed, not the run: they
    are not part of its config, and a run may resume on another device. One run writes a folder at a time
    (:class:`dnb_env.io.RunLock`: a second is refused at once); it starts by removing the temporary files
    (``*.tmp*``) a killed run left."""
    with contextlib.ExitStack() as held:
        locked = os.path.isdir(out)  # an existing folder is locked before it is read; a new one once made
        if locked:
            held.enter_context(RunLock(out, what="fit"))
        return _fit(config, out, resume, progress, echo, device, workers, held, locked)


def _fit(config: FitConfig, out: str, resume: bool, progress: bool, echo, device: str, workers: int,
         held: contextlib.ExitStack, locked: bool) -> list[dict]:
    """:func:`fit` with the folder's lock on ``held`` (taken already where ``locked``)."""
    device = resolve_device(device)
    if device.startswith("cuda"):  # float32 matrix products on the tensor cores (TF32): several times faster, same training
        torch.set_float32_matmul_precision("high")
    if os.path.exists(out) and not os.path.isdir(out):
        raise ValueError(f"{out} exists and is not a folder")
    cfg_path, ckpt_path, metrics_path = (os.path.join(out, n) for n in ("config.json", "checkpoint.pt", "metrics.jsonl"))
    committed, init_state, data, held_data = _read_start(config, out, resume, held, locked, cfg_path, ckpt_path,
                                                         metrics_path)
    net, optimizer, step, rows = _start_net(config, device, init_state, committed, ckpt_path)
    atomic_write(cfg_path, json.dumps(config.to_dict(), indent=1))
    if committed is not None:
        echo(f"resuming {out} at step {step}")
    train = _TrainingSet.of(data, config, workers, progress)
    held_out = HeldOut.of(held_data.take(slice(0, config.eval_positions) if config.eval_positions else slice(None))) if held_data is not None else None
    if held_out is not None and not rows:
        rows.append({"step": 0, "agent": "greedy", **held_out_report(held_out)})
        atomic_write(metrics_path, "".join(json.dumps(r) + "\n" for r in rows))
    syms = symmetries(*geometry(config.model.board).size)
    bar = _progress_bar(progress, config.steps, step)
    t0 = time.perf_counter()
    events = EventLog(out, echo)
    try:
        while step < config.steps:
            chunk = step // config.eval_every
            rng = np.random.default_rng([config.seed, chunk])
            end = min((chunk + 1) * config.eval_every, config.steps)
            totals = _train_steps(net, optimizer, config, train, syms, device, rng, range(step, end), bar)
            net.eval()
            row = {"step": end, "agent": "network", "lr": config.lr_at(end - 1), "seconds": round(time.perf_counter() - t0, 1),
                   **{k: v / (end - step) for k, v in totals.items()}}
            step = end
            if held_out is not None:
                priors, values = policy_and_value(net, held_out.data, device=device)
                row |= held_out_report(held_out, priors, values)
            save_checkpoint(ckpt_path, net, extra={"step": step, "optimizer": optimizer.state_dict(),
                                                   "positions": len(train.replay)})
            rows.append(row)
            atomic_write(metrics_path, "".join(json.dumps(r) + "\n" for r in rows))
            events.write(row, step)
            if bar is None:
                shown = {k: round(v, 3) for k, v in row.items() if k in ("policy_loss", "value_loss", "keep", "keep_hard", "value_sign")}
                echo(f"step {step}: {shown}")
    finally:
        events.close()
        if bar is not None:
            bar.close()
    return rows


def _read_start(config: FitConfig, out: str, resume: bool, held: contextlib.ExitStack, locked: bool,
                cfg_path: str, ckpt_path: str, metrics_path: str) -> tuple:
    """What a run reads and checks before it writes anything: ``(committed, init_state, data, held_data)``,
    the committed run it resumes (:func:`_committed`, or None), the weights of ``config.init`` (or None),
    the training data and the held-out data (or None); a new folder is locked here, once made (on ``held``).
    A run that cannot start leaves no folder behind."""
    if os.path.exists(cfg_path) and not resume:
        raise ValueError(f"{out} holds a fit run already: pass resume to continue it, or use another folder")
    if resume and os.path.exists(cfg_path):
        _check_saved_config(cfg_path, config, out)
    committed = None
    if resume and os.path.exists(ckpt_path):  # read (and checked) before anything is written
        committed = _committed(ckpt_path, metrics_path, config)
    init_state = None
    if config.init and not (resume and os.path.exists(ckpt_path)):  # checked before the folder is written
        init_state = initial_weights(config)
    # the data and the held-out set too: a run that cannot start leaves no folder behind
    data = _load_data(config)
    held_data = TeacherData.load_many([config.held], config.model.board) if config.held else None
    if not locked:  # a new folder: locked once made, and checked again under the lock
        held.enter_context(RunLock(out, what="fit"))
        if os.path.exists(cfg_path) and not resume:
            raise ValueError(f"{out} holds a fit run already: pass resume to continue it, or use another folder")
    return committed, init_state, data, held_data


def _start_net(config: FitConfig, device: str, init_state: dict | None, committed: tuple | None,
               ckpt_path: str) -> tuple:
    """``(net, optimizer, step, rows)``: the network (seeded, from ``init_state`` where given) on ``device``
    and its optimiser, with the committed run's weights, optimiser state, step and metrics rows when it
    resumes one (else step 0 and no rows)."""
    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    net = build_model(config.model)
    if init_state is not None:
        net.load_state_dict(init_state)
    net = net.to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=config.lr, weight_decay=config.loss.l2)
    step, rows = 0, []
    if committed is not None:
        payload, step, rows = committed
        net.load_state_dict(payload["state_dict"])  # copied onto the device the net is on
        restore_optimizer(optimizer, payload, ckpt_path)
    return net, optimizer, step, rows


@dataclass(frozen=True)
class _TrainingSet:
    """The samples a fit trains on (:class:`Replay`), which of them carry a value (``known``), and their
    input planes and future-head targets encoded once (``future``: None for a model without that head)."""
    replay: Replay
    known: np.ndarray
    planes: object
    future: object

    @classmethod
    def of(cls, data: TeacherData, config: FitConfig, workers: int, progress: bool) -> "_TrainingSet":
        """The training set of ``data``: its targets as ``config`` asks, encoded by ``workers`` processes."""
        samples, known = to_samples(data, config.model.value, config.temperature)
        replay = Replay(samples)
        planes = encode_all(samples, config.model.encoder, workers, progress=progress)
        kind = has_future_head(config.model)
        future = encode_all(samples, None, workers, progress=progress, future=kind) if kind else None
        return cls(replay, known, planes, future)

    def batch(self, idx: np.ndarray, sym, encoder, device: str) -> dict:
        """The tensors of the samples ``idx`` on ``device``, mapped by the symmetry ``sym`` (None: as they are)."""
        arrays = self.replay.batch(idx, encoder, 0.0, sym, self.future is not None, self.planes, self.future)
        arrays["value_mask"] = self.known[idx].astype(np.float32)
        return {k: torch.from_numpy(v).to(device, non_blocking=True) for k, v in arrays.items()}


def _train_steps(net, optimizer, config: FitConfig, train: _TrainingSet, syms, device: str, rng, steps: range,
                 bar) -> dict[str, float]:
    """Take the gradient steps ``steps``, each on a batch drawn from ``rng`` (mapped by a random symmetry of
    ``syms`` with ``augment``); returns the sum of each loss part over them."""
    totals: dict[str, float] = {}
    net.train()
    for s in steps:
        for group in optimizer.param_groups:
            group["lr"] = config.lr_at(s)
        idx = rng.integers(len(train.replay), size=min(config.batch_size, len(train.replay)))
        sym = syms[int(rng.integers(len(syms)))] if config.augment else None
        batch = train.batch(idx, sym, config.model.encoder, device)
        loss, parts = total_loss(net(batch["planes"]), batch, config.loss, config.model.board)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        for k, v in parts.items():
            totals[k] = totals.get(k, 0.0) + v
        if bar is not None:
            bar.update(1)
    return totals


def _progress_bar(progress: bool, steps: int, step: int):
    """A tqdm bar of the steps, at ``step`` of ``steps``; None without ``progress`` or tqdm."""
    if not progress:
        return None
    try:
        from tqdm import tqdm
    except ImportError:
        return None
    return tqdm(total=steps, initial=step, unit="step", desc="fit")


def _check_saved_config(path: str, config: FitConfig, out: str) -> None:
    """The fit config saved at ``path`` (read through :class:`FitConfig`, so that settings added since the
    run was made compare as their defaults) is ``config`` but for ``steps``; a ValueError names the file
    and what is wrong or differs."""
    data = read_json(path)
    try:
        saved = FitConfig.from_dict(data).to_dict()
    except (TypeError, ValueError, KeyError) as exc:
        raise ValueError(f"{path} is not a fit config of this version: {exc}") from None
    mine = config.to_dict()
    differs = sorted(k for k in mine if k != "steps" and mine[k] != saved.get(k))
    if differs:
        raise ValueError(f"the run in {out} has another config ({path} differs in {differs})")


def _committed(ckpt_path: str, metrics_path: str, config: FitConfig) -> tuple[dict, int, list[dict]]:
    """``(checkpoint payload, step, metrics rows up to it)`` of a fit run's last commit, checked: the
    checkpoint is of the run's board and records its step (its optimiser: :func:`restore_optimizer`), the
    metrics are rows with a step up to the commit before it at least; else a ValueError naming the file."""
    payload = load_checkpoint(ckpt_path, board=config.model.board)
    step = payload["extra"].get("step")
    if not isinstance(step, int) or isinstance(step, bool) or step < 0:
        raise CheckpointError(f"{ckpt_path} is corrupt: its step is {step!r}, not a count of steps")
    rows = read_metrics(metrics_path, key="step") if os.path.exists(metrics_path) else []
    last = max((r["step"] for r in rows), default=0)
    if last < step - config.eval_every:  # a commit writes the checkpoint, then its row: at most one row behind
        raise RunError(f"{metrics_path} ends at step {last}, the checkpoint {ckpt_path} is at step {step}: "
                       f"its rows in between are missing")
    return payload, step, [r for r in rows if r["step"] <= step]


def playing_weights(run: str, path: str) -> dict:
    """The network of the fit run ``run`` as a checkpoint without the optimiser (to play or ship); returns
    what it records of the fit (``step``, ``positions``)."""
    payload = load_checkpoint(os.path.join(run, "checkpoint.pt"))
    payload["extra"] = {"step": payload["extra"].get("step"), "positions": payload["extra"].get("positions")}
    atomic_torch_save(payload, path)
    return payload["extra"]
