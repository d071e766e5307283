"""Supervised training on teacher datasets: any model family learns the exact solver's moves and values.

    dnb fit dotsformer --board 5x5 --data data/teach5-a --held data/teach5-held --steps 40000 --out runs/fit-df
    dnb fit --model resnet --board 5x5 --data data/teach5-a --positions 100000 ...   # the first 100k only

Targets (:func:`agents.training.teacher.to_samples`): the policy is uniform over the best moves
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
import math
import os
import time
from dataclasses import dataclass, field

import numpy as np

from dnb_env._extras import requires_extra

with requires_extra("agents.training.supervised"):
    import torch

from agents.checkpoint import CheckpointError, atomic_torch_save, load_checkpoint, restore_optimizer, save_checkpoint
from agents.models import build_model, config_from_dict, config_to_dict, family_of, get_family
from agents.training.config import MAX_PROCESSES, LossConfig, field_problems, model_from_dict
from agents.training.events import EventLog
from agents.training.losses import total_loss
from agents.training.replay import Replay, future_targets, has_future_head
from agents.training.store import RunError, read_json, read_metrics
from agents.training.teacher import MARGIN, NO_VALUE, TeacherData, to_samples
from dnb_env.core import geometry
from dnb_env.io import RunLock, atomic_write
from dnb_env.limits import check_number, check_seed
from dnb_env.observations import encode_batch
from dnb_env.symmetry import symmetries

__all__ = ["FitConfig", "fit", "held_out_report", "HeldOut", "encode_all", "policy_and_value", "resolve_device",
           "value_auc", "initial_weights"]


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


# ---------------------------------------------------------------------------------------------- scoring
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


# ---------------------------------------------------------------------------------------------- training
def initial_weights(config) -> dict:
    """The state dict of ``config.init`` (a checkpoint of any run or fit), checked to be of the run's model:
    the same family and config (but for the board, for a family whose networks play every board; and but
    for the encoder where the run's encoder extends the checkpoint's, :data:`dnb_env.observations.EXTENDS`:
    the input weights of the new channels then start at zero, so the network computes what it did), else a
    ValueError naming what differs."""
    from dnb_env.observations import extends

    payload = load_checkpoint(config.init)
    mine = config_to_dict(config.model)
    theirs = config_to_dict(config_from_dict(payload["model"]))  # options newer than the checkpoint: defaults
    differs = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
    if family_of(config.model) == theirs.get("family") and get_family(theirs["family"]).any_board:
        differs = [k for k in differs if k != "board"]  # one network for every board: pretrained on another
    widen = "encoder" in differs and extends(mine.get("encoder"), theirs.get("encoder"))
    if widen:
        differs.remove("encoder")
    if differs:
        raise ValueError(f"init checkpoint {config.init} is another model than the run's (differs in "
                         + ", ".join(f"{k}: {theirs.get(k)!r} there, {mine.get(k)!r} here" for k in differs) + ")")
    state = payload["state_dict"]
    if widen:
        state = _widened(state, build_model(config.model).state_dict(), config.init)
    return state


def _widened(state: dict, target: dict, source: str) -> dict:
    """``state`` with each tensor that reads the input channels (its dimension 1 smaller than ``target``'s,
    the rest equal) padded with zeros up to ``target``'s shape."""
    out = dict(state)
    for k, want in target.items():
        have = state.get(k)
        if have is None or have.shape == want.shape:
            continue
        if (have.dim() < 2 or have.shape[0] != want.shape[0] or have.shape[2:] != want.shape[2:]
                or have.shape[1] >= want.shape[1]):
            raise ValueError(f"init checkpoint {source}: {k} has shape {tuple(have.shape)}, the run's model "
                             f"{tuple(want.shape)}; only the input channels may grow")
        pad = torch.zeros(want.shape, dtype=have.dtype)
        pad[:, :have.shape[1]] = have
        out[k] = pad
    return out


def resolve_device(device: str) -> str:
    """``"auto"`` (CUDA when torch sees a GPU, else the CPU), ``"cpu"``, ``"cuda"`` or ``"cuda:N"``; a GPU
    asked for but not there is an error."""
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cpu":
        return device
    if device == "cuda" or device.startswith("cuda:"):
        if not torch.cuda.is_available():
            raise ValueError(f"device {device!r} asked for, but torch sees no CUDA GPU (use --device cpu)")
        return device
    raise ValueError(f"device must be auto, cpu, cuda or cuda:N, not {device!r}")


def _encode_chunk(task):
    encoder, states, future = task
    if encoder is None:  # the future head's targets
        return future_targets(states, future)
    return encode_batch(encoder, states)


def encode_all(samples, encoder: str | None, workers: int = 1, chunk: int = 2000, progress: bool = False,
               future: str = "safe_phase"):
    """Every row of ``samples`` encoded by ``encoder`` (``[N, C, H, W]`` float32), over ``workers``
    processes in chunks of ``chunk`` positions: a fit encodes its data once instead of every batch (the
    computed-feature encoders spend about half a millisecond a position in the exact safe-phase search).
    ``encoder=None``: the future head's targets of every row instead, ``(values [N, A], mask [N, A])``
    (:func:`agents.training.replay.future_targets` of kind ``future``), which run the same searches."""
    from agents.processes import spawn_pool

    if workers < 1 or chunk < 1:
        raise ValueError("workers and chunk must be >= 1")
    n = len(samples)
    tasks = ((encoder, samples.states(np.arange(i, min(i + chunk, n))), future) for i in range(0, n, chunk))
    bar = None
    if progress:
        try:
            from tqdm import tqdm

            bar = tqdm(total=n, unit="pos", desc=f"encode {encoder or 'future targets'}")
        except ImportError:
            pass
    parts = []
    pool = spawn_pool(workers, 1) if workers > 1 else None
    try:
        results = pool.imap(_encode_chunk, tasks) if pool is not None else map(_encode_chunk, tasks)
        for part in results:
            parts.append(part)
            if bar is not None:
                bar.update(len(part[0]) if encoder is None else len(part))
    finally:
        if pool is not None:
            pool.close()
            pool.join()
        if bar is not None:
            bar.close()
    if encoder is None:
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    return np.concatenate(parts)


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
    ``device`` (:func:`resolve_device`) and ``workers`` (processes that encode the data once at the start,
    :func:`encode_all`) change the speed, not the run: they are not part of its config, and a run may
    resume on another device. One run writes a folder at a time (:class:`dnb_env.io.RunLock`: a second is
    refused at once); it starts by removing the temporary files (``*.tmp*``) a killed run left."""
    with contextlib.ExitStack() as held:
        locked = os.path.isdir(out)  # an existing folder is locked before it is read; a new one once made
        if locked:
            held.enter_context(RunLock(out, what="fit"))
        return _fit(config, out, resume, progress, echo, device, workers, held, locked)


def _fit(config: FitConfig, out: str, resume: bool, progress: bool, echo, device: str, workers: int,
         held: contextlib.ExitStack, locked: bool) -> list[dict]:
    device = resolve_device(device)
    if device.startswith("cuda"):  # float32 matrix products on the tensor cores (TF32): several times faster, same training
        torch.set_float32_matmul_precision("high")
    if os.path.exists(out) and not os.path.isdir(out):
        raise ValueError(f"{out} exists and is not a folder")
    cfg_path, ckpt_path, metrics_path = (os.path.join(out, n) for n in ("config.json", "checkpoint.pt", "metrics.jsonl"))
    rows: list[dict] = []
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

    torch.set_num_threads(config.threads)
    torch.manual_seed(config.seed)
    net = build_model(config.model)
    if init_state is not None:
        net.load_state_dict(init_state)
    net = net.to(device)
    optimizer = torch.optim.Adam(net.parameters(), lr=config.lr, weight_decay=config.loss.l2)
    step = 0
    if committed is not None:
        payload, step, rows = committed
        net.load_state_dict(payload["state_dict"])  # copied onto the device the net is on
        restore_optimizer(optimizer, payload, ckpt_path)
    atomic_write(cfg_path, json.dumps(config.to_dict(), indent=1))
    if committed is not None:
        echo(f"resuming {out} at step {step}")
    samples, known = to_samples(data, config.model.value, config.temperature)
    replay = Replay(samples)
    planes = encode_all(samples, config.model.encoder, workers, progress=progress)
    kind = has_future_head(config.model)
    future = encode_all(samples, None, workers, progress=progress, future=kind) if kind else None
    held = HeldOut.of(held_data.take(slice(0, config.eval_positions) if config.eval_positions else slice(None))) if held_data is not None else None
    if held is not None and not rows:
        rows.append({"step": 0, "agent": "greedy", **held_out_report(held)})
        atomic_write(metrics_path, "".join(json.dumps(r) + "\n" for r in rows))
    syms = symmetries(*geometry(config.model.board).size)
    bar = None
    if progress:
        try:
            from tqdm import tqdm

            bar = tqdm(total=config.steps, initial=step, unit="step", desc="fit")
        except ImportError:
            pass
    t0 = time.perf_counter()
    events = EventLog(out, echo)
    try:
        while step < config.steps:
            chunk = step // config.eval_every
            rng = np.random.default_rng([config.seed, chunk])
            end = min((chunk + 1) * config.eval_every, config.steps)
            totals: dict[str, float] = {}
            net.train()
            for s in range(step, end):
                for group in optimizer.param_groups:
                    group["lr"] = config.lr_at(s)
                idx = rng.integers(len(replay), size=min(config.batch_size, len(replay)))
                sym = syms[int(rng.integers(len(syms)))] if config.augment else None
                arrays = replay.batch(idx, config.model.encoder, 0.0, sym, future is not None, planes, future)
                arrays["value_mask"] = known[idx].astype(np.float32)
                batch = {k: torch.from_numpy(v).to(device, non_blocking=True) for k, v in arrays.items()}
                loss, parts = total_loss(net(batch["planes"]), batch, config.loss, config.model.board)
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
                for k, v in parts.items():
                    totals[k] = totals.get(k, 0.0) + v
                if bar is not None:
                    bar.update(1)
            net.eval()
            row = {"step": end, "agent": "network", "lr": config.lr_at(end - 1), "seconds": round(time.perf_counter() - t0, 1),
                   **{k: v / (end - step) for k, v in totals.items()}}
            step = end
            if held is not None:
                priors, values = policy_and_value(net, held.data, device=device)
                row |= held_out_report(held, priors, values)
            save_checkpoint(ckpt_path, net, extra={"step": step, "optimizer": optimizer.state_dict(),
                                                   "positions": len(replay)})
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
