"""The training loop: self-play -> replay -> gradient steps -> evaluation -> one atomic commit.

    dnb train --model dotsformer --board 3x3 --preset cpu --out runs/df-3x3     # Ctrl-C, then --resume

Every iteration's games are seeded by (seed, iteration, game) and its gradient steps by (seed, iteration),
so a run resumed after a kill gives the same network, replay and metrics as one that was never stopped.
A resume may change only the settings in :data:`~agents.training.config.RESUMABLE`.

``config.backend`` says where the games are played (:func:`make_pool`): ``"local"``
(this process or spawned processes) or ``"ray"`` (self-play actors on a Ray cluster, fed the weights through
the object store once per iteration). The learner (replay, gradient steps, evaluation, the run folder) is
this process on either backend, on ``config.device``; a run may change backend on resume.
"""

from __future__ import annotations

import time

import numpy as np
import torch

from agents.models import build_model
from agents.training.events import EventLog
from agents.network_agent import PolicyAgent
from agents.models.evaluator import NetworkEvaluator
from agents.training import config as config_mod
from agents.training.curriculum import Curriculum, measure
from agents.training.evaluation import accuracy, default_opponents, labelled_positions, score_against
from agents.training.losses import total_loss
from agents.training.plots import plot_training
from agents.training.replay import Replay, has_future_head
from agents.training.selfplay import SelfPlayPool
from agents.training.selfplay_ray import RaySelfPlay
from agents.training.store import RunError, RunStore
from dnb_env.core import geometry

__all__ = ["train", "train_steps", "load_teacher", "make_pool", "initial_weights"]


def make_pool(config, ray_address: str | None = None, fault=None):
    """The self-play pool of ``config.backend``: :class:`~agents.training.selfplay.SelfPlayPool` (``"local"``)
    or :class:`~agents.training.selfplay_ray.RaySelfPlay` (``"ray"``; ``ray_address`` and ``fault`` are its)."""
    if config.backend == "ray":
        return RaySelfPlay(config, ray_address, fault=fault)
    return SelfPlayPool(config)


def train_steps(net, optimizer, replay: Replay, config, iteration: int, rng: np.random.Generator,
                teacher: tuple[Replay, np.ndarray] | None = None) -> dict:
    """``epochs`` passes' worth of batches drawn from the replay; returns the mean loss parts. ``teacher``:
    ``(samples, value_known)`` of a teacher dataset, ``config.teacher.fraction`` of every batch."""
    net.train()
    steps = max(1, config.epochs * len(replay) // config.batch_size)
    totals: dict[str, float] = {}
    n_teacher = round(config.teacher.fraction * config.batch_size) if teacher is not None else 0
    for _ in range(steps):
        arrays = replay.draw(rng, config.batch_size - n_teacher, iteration, config.replay.gamma_decay,
                             config.model.encoder, config.curriculum.q_mix, config.replay.augment,
                             has_future_head(config.model))
        if n_teacher:
            arrays = _with_teacher(arrays, teacher, n_teacher, config, rng)
        batch = {k: torch.from_numpy(v).to(config.device) for k, v in arrays.items()}
        loss, parts = total_loss(net(batch["planes"]), batch, config.loss, config.board)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        for k, v in parts.items():
            totals[k] = totals.get(k, 0.0) + v
    net.eval()
    return {k: v / steps for k, v in totals.items()} | {"train_steps": steps}


def _with_teacher(arrays: dict, teacher: tuple[Replay, np.ndarray], n: int, config, rng: np.random.Generator) -> dict:
    """``arrays`` (a replay batch) joined by ``n`` teacher rows under a random symmetry of their own; the
    teacher rows whose value is unknown in the model's unit get ``value_mask`` 0."""
    from dnb_env.symmetry import symmetries

    samples, known = teacher
    idx = rng.integers(len(samples), size=n)
    sym = None
    if config.replay.augment:
        syms = symmetries(*geometry(config.board).size)
        sym = syms[int(rng.integers(len(syms)))]
    extra = samples.batch(idx, config.model.encoder, 0.0, sym, has_future_head(config.model))
    out = {k: np.concatenate([arrays[k], extra[k]]) for k in arrays}
    out["value_mask"] = np.concatenate([np.ones(len(arrays["value"]), np.float32), known[idx].astype(np.float32)])
    return out


def load_teacher(config) -> tuple[Replay, np.ndarray, int] | None:
    """``(samples, value_known, largest undrawn count)`` of ``config.teacher.data``, or None."""
    if not config.teacher.data:
        return None
    from agents.training.teacher import TeacherData, to_samples

    data = TeacherData.load(config.teacher.data)
    if data.config.board != config.board:
        raise ValueError(f"teacher dataset {config.teacher.data} is for {data.config.board}, the run for {config.board}")
    if not len(data):
        raise ValueError(f"teacher dataset {config.teacher.data} holds no positions")
    samples, known = to_samples(data, config.model.value, config.teacher.temperature)
    return Replay(samples), known, int(data.undrawn.max())


def _flat(config) -> dict:
    """The config as ``{"key" or "section.key": value}``."""
    return {f"{name}.{k}" if isinstance(value, dict) and name != "model" else name: v
            for name, value in config_mod.to_dict(config).items()
            for k, v in (value.items() if isinstance(value, dict) and name != "model" else [(None, value)])}


def _check_resume(saved, config) -> list[str]:
    """The resumable settings that ``config`` changes against the run's ``saved`` one ("key old -> new");
    a change of any other setting is an error."""
    mine, theirs = _flat(config), _flat(saved)
    differs = sorted(k for k in mine if k not in config_mod.RESUMABLE and mine[k] != theirs.get(k))
    if differs:
        raise ValueError(f"the run was trained with another config (differs in {differs}); use another --out")
    return [f"{k} {theirs.get(k)} -> {mine[k]}" for k in mine if k in config_mod.RESUMABLE and mine[k] != theirs.get(k)]


def initial_weights(config) -> dict:
    """The state dict of ``config.init`` (a checkpoint of any run or fit), checked to be of the run's model:
    the same family and config, else a ValueError naming what differs."""
    from agents.checkpoint import load_checkpoint
    from agents.models import config_to_dict

    payload = load_checkpoint(config.init)
    mine, theirs = config_to_dict(config.model), payload["model"]
    differs = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
    if differs:
        raise ValueError(f"init checkpoint {config.init} is another model than the run's (differs in "
                         + ", ".join(f"{k}: {theirs.get(k)!r} there, {mine.get(k)!r} here" for k in differs) + ")")
    return payload["state_dict"]


def train(config, out: str, resume: bool = False, progress: bool = True, echo=print, eval_simulations: int = 200,
          opponents: dict | None = None, fault=None, ray_address: str | None = None) -> list[dict]:
    """Train ``config`` in the run folder ``out`` (or continue it with ``resume``); returns the metrics rows.
    ``opponents`` (name -> Agent; default random and greedy) are played by the raw policy at evaluations.
    ``ray_address``: the Ray cluster of ``config.backend="ray"`` (auto or HOST:PORT; None: a local instance).
    ``fault(stage)``: a test hook called at the stages of a commit (:class:`RunStore`) and, on Ray, once an
    iteration's self-play is under way (``"self_play"``)."""
    if config.device.startswith("cuda") and not torch.cuda.is_available():
        raise ValueError(f"device {config.device!r} asked for, but torch sees no CUDA GPU on this machine")
    if ray_address is not None and config.backend != "ray":
        raise ValueError("a Ray address is used only with the ray backend (--backend ray)")
    store = RunStore(out, fault)
    torch.set_num_threads(config.threads)  # deliberate: torch's default (every core) thrashes beside other work
    torch.manual_seed(config.seed)
    net = build_model(config.model).to(config.device)
    if config.init and not (resume and store.has_run()):
        net.load_state_dict(initial_weights(config))
    optimizer = torch.optim.Adam(net.parameters(), lr=config.lr, weight_decay=config.loss.l2)
    replay, metrics = Replay.empty(config.board), []
    teacher = load_teacher(config)
    g = geometry(config.board)
    first = config.curriculum.first_step(config.board)
    if teacher is not None and config.curriculum.start_step is None:  # search where the teacher's zone ends
        first = max(0, g.num_actions - teacher[2])
    curriculum = Curriculum.begin(first)
    if curriculum.start >= g.num_actions:
        raise ValueError(f"curriculum start step {curriculum.start} leaves no move to search on {config.board}")
    start = 0
    if resume:
        if not store.has_run():
            raise RunError(f"--resume: {out} holds no training run to continue")
        changed = _check_resume(store.read_config(), config)
        if changed:
            echo(f"resuming with changed settings: {', '.join(changed)}")
        committed = store.load(config.board)
        if committed is not None:
            net.load_state_dict(committed.payload["state_dict"])
            optimizer.load_state_dict(committed.payload["extra"]["optimizer"])
            start, replay, metrics, curriculum = committed.iteration, committed.replay, committed.metrics, committed.curriculum
            echo(f"resuming after iteration {start} (first searched move {curriculum.start})")
    elif store.has_run():
        raise RunError(f"{out} already holds a run; pass --resume to continue it or choose another --out")
    store.check_writable()  # a file, or a folder that cannot be written: a RunError before anything starts
    pool = make_pool(config, ray_address, fault)  # Ray's checks come before anything is written
    bar = None
    events = EventLog(out, echo)
    try:
        store.write_config(config)
        positions = labelled_positions(config.board, config.eval_positions, seed=config.seed + 12345)
        opponents = default_opponents(config.seed) if opponents is None else opponents
        epsilon = config.curriculum.epsilon_for(config.model.value, config.board)
        bar = _progress(config.iterations, start, progress)
        for iteration in range(start + 1, config.iterations + 1):
            rng = np.random.default_rng([config.seed, iteration])  # reproducible per iteration, also on resume
            lr = config.lr_at(iteration)
            for group in optimizer.param_groups:
                group["lr"] = lr
            t0 = time.perf_counter()
            samples, stats = pool.play(net, iteration, curriculum.start)
            t1 = time.perf_counter()
            replay.add(samples)
            replay.keep_recent(iteration, config.replay.buffer_iterations)
            losses = train_steps(net, optimizer, replay, config, iteration, rng,
                                 teacher[:2] if teacher is not None and config.teacher.fraction > 0 else None)
            t2 = time.perf_counter()
            trace = stats.pop("trace")
            rollback = measure(trace, curriculum.start, config.curriculum, epsilon)
            row = {"iteration": iteration, "start_step": curriculum.start, **stats, **losses, **rollback, "lr": lr,
                   "epochs": config.epochs, "batch_size": config.batch_size, "replay": len(replay),
                   "self_play_s": t1 - t0, "train_s": t2 - t1}
            evaluate = iteration % config.eval_every == 0 or iteration == config.iterations
            row.update(accuracy(net, positions, config.device, eval_simulations if evaluate else None))
            if evaluate and config.backend == "ray":  # the games on the self-play actors: the local scores
                row.update(pool.score_against(net, opponents, config.eval_games, seed=config.seed + iteration))
            elif evaluate:
                player = PolicyAgent(NetworkEvaluator(net, config.device))
                row.update(score_against(player, opponents, config.board, config.eval_games, seed=config.seed + iteration))
            row["rolled_back"] = curriculum.update(rollback, iteration, config.curriculum)
            row["iteration_s"] = time.perf_counter() - t0  # self-play, training and evaluation: the wall time
            metrics.append(row)
            store.commit(iteration, net, optimizer, config, curriculum, replay, metrics, plot=plot_training)
            events.write(row, iteration)
            if bar is not None:
                bar.update(1)
                bar.set_postfix(S=curriculum.start, pl=f"{row['policy_loss']:.2f}", vl=f"{row['value_loss']:.2f}")
    finally:
        pool.close()
        events.close()
        if bar is not None:
            bar.close()
    return metrics


def _progress(total: int, initial: int, enabled: bool):
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover
        return None
    return tqdm(total=total, initial=initial, desc="iterations")

