"""The training loop: self-play -> replay -> gradient steps -> evaluation -> one atomic commit.

    dnb train --model dotsformer --board 3x3 --preset cpu --out runs/df-3x3     # Ctrl-C, then --resume

Every iteration's games are seeded by (seed, iteration, game) and its gradient steps by (seed, iteration),
so a run resumed after a kill gives the same network, replay and metrics as one that was never stopped.
A resume may change only the settings in :data:`~agents.training.config.RESUMABLE`.

One loop trains one board or several at once (``config.boards``, e.g. ``"2x2:1,3x3:2"``; a family whose
networks play every board); a single-board run is the mix of its one board. Each iteration's games are split
over the boards by weight (:meth:`BoardMix.split`, numbered across the iteration so that every game keeps its
own seed) and played per board (its search settings and solver zones, :meth:`TrainConfig.for_board`), from
that board's own start step S (:class:`BoardCurricula`); the samples go to that board's replay
(:class:`BoardReplays`); every gradient step takes its batch from one board, drawn in proportion to the
boards' decay-weighted sample counts (:func:`train_steps`; one board: no draw); evaluation is per board.
A multi-size metrics row holds every per-board value under ``"key@RxC"`` (``start_step@3x3``,
``raw_accuracy@2x2``) beside the iteration's totals (games, positions, losses, replay) and ``start_step``,
that of the mix's largest board; a single-board row holds its board's values under their own keys, and its
run folder keeps that board's replay and curriculum as they are (:meth:`RunStore.commit`), so the files of
single-board runs are those of every earlier version and resume as before.

``config.backend`` says where the games are played (:func:`make_pool`): ``"local"``
(this process or spawned processes) or ``"ray"`` (self-play actors on a Ray cluster, fed the weights through
the object store once per iteration). The learner (replay, gradient steps, evaluation, the run folder) is
this process on either backend, on ``config.device``; a run may change backend on resume.
"""

from __future__ import annotations

import contextlib
import dataclasses
import importlib.util
import os
import time

import numpy as np

from dnb_env._extras import extra_hint, requires_extra

with requires_extra("agents.training.loop"):
    import torch

from agents.checkpoint import restore_optimizer
from agents.models import build_model
from agents.training.events import EventLog
from agents.network_agent import PolicyAgent
from agents.models.evaluator import NetworkEvaluator
from agents.training import config as config_mod
from agents.training.boards import BoardMix
from agents.training.curriculum import BoardCurricula, Curriculum, measure
from agents.training.evaluation import EVAL_SEED_OFFSET, accuracy, default_opponents, labelled_positions, score_against
from agents.training.losses import total_loss
from agents.training.plots import plot_training
from agents.training.replay import BoardReplays, Replay, has_future_head
from agents.training.selfplay import SelfPlayPool
from agents.training.selfplay_ray import RaySelfPlay
from agents.training.store import RunError, RunStore
from agents.training.common import initial_weights, resolve_device
from dnb_env.core import geometry

__all__ = ["train", "train_steps", "load_teacher", "make_pool", "initial_weights", "PLOT_EVERY_S"]

#: ``training.png`` is drawn again after an iteration once this many seconds have passed since it was last drawn
#: (the run's start counts), and always after the run's last iteration: drawing it takes about 0.7 s, some 8% of
#: an iteration of a small 3x3 run. ``metrics.jsonl`` and TensorBoard have every iteration at once.
PLOT_EVERY_S = 60.0


def make_pool(config, ray_address: str | None = None, fault=None):
    """The self-play pool of ``config.backend``: :class:`~agents.training.selfplay.SelfPlayPool` (``"local"``),
    or with ``config.shared_inference`` :class:`~agents.training.selfplay_shared.SharedInferencePool`
    (``"local"``: actor processes and one inference process), or
    :class:`~agents.training.selfplay_ray.RaySelfPlay` (``"ray"``; ``ray_address`` and ``fault`` are its)."""
    if config.backend == "ray":
        return RaySelfPlay(config, ray_address, fault=fault)
    if config.shared_inference:
        from agents.training.selfplay_shared import SharedInferencePool

        return SharedInferencePool(config)
    return SelfPlayPool(config)


def train_steps(net, optimizer, replay: Replay | BoardReplays, config, iteration: int, rng: np.random.Generator,
                teacher: tuple[Replay, np.ndarray] | None = None) -> dict:
    """``epochs`` passes' worth of batches over the replay's samples, each batch of one board
    (:meth:`BoardReplays.draw`: the board by its decay-weighted sample count, its own symmetries; the loss on
    that board); a :class:`Replay` is the replay of its one board. ``teacher``: ``(samples, value_known)`` of
    a teacher dataset of the run's board, ``config.teacher.fraction`` of every batch. Returns the mean loss
    parts and ``train_steps``, with several boards also ``train_steps@RxC``."""
    replays = replay if isinstance(replay, BoardReplays) else BoardReplays({replay.samples.board: replay})
    net.train()
    steps = max(1, config.epochs * len(replays) // config.batch_size)
    totals: dict[str, float] = {}
    per_board = dict.fromkeys(replays.boards, 0)
    n_teacher = round(config.teacher.fraction * config.batch_size) if teacher is not None else 0
    for _ in range(steps):
        board, arrays = replays.draw(rng, config.batch_size - n_teacher, iteration, config.replay.gamma_decay,
                                     config.model.encoder, config.curriculum.q_mix, config.replay.augment,
                                     has_future_head(config.model))
        if n_teacher:
            arrays = _with_teacher(arrays, teacher, n_teacher, config, rng)
        batch = {k: torch.from_numpy(v).to(config.device) for k, v in arrays.items()}
        loss, parts = total_loss(net(batch["planes"]), batch, config.loss, board)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        per_board[board] += 1
        for k, v in parts.items():
            totals[k] = totals.get(k, 0.0) + v
    net.eval()
    out = {k: v / steps for k, v in totals.items()} | {"train_steps": steps}
    if len(per_board) > 1:
        out |= {f"train_steps@{b}": n for b, n in per_board.items()}
    return out


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
    extra = samples.batch(idx, config.model.encoder, 0.0, sym, has_future_head(config.model),
                          planes=samples.encoded(config.model.encoder))  # the dataset encoded at the first batch
    out = {k: np.concatenate([arrays[k], extra[k]]) for k in arrays}
    out["value_mask"] = np.concatenate([np.ones(len(arrays["value"]), np.float32), known[idx].astype(np.float32)])
    return out


def load_teacher(config) -> tuple[Replay, np.ndarray, int] | None:
    """``(samples, value_known, largest undrawn count)`` of ``config.teacher.data``, or None."""
    if not config.teacher.data:
        return None
    from agents.training.dataset import TeacherData, to_samples

    data = TeacherData.load_many(config.teacher.folders, config.board)
    samples, known = to_samples(data, config.model.value, config.teacher.temperature)
    return Replay(samples), known, int(data.undrawn.max())


def _flat(config) -> dict:
    """The config as ``{"key" or "section.key": value}``."""
    return {f"{name}.{k}" if isinstance(value, dict) and name != "model" else name: v
            for name, value in config_mod.to_dict(config).items()
            for k, v in (value.items() if isinstance(value, dict) and name != "model" else [(None, value)])}


def _check_resume(saved, config, path: str = "config.json") -> list[str]:
    """The resumable settings that ``config`` changes against the run's ``saved`` one (read from ``path``)
    ("key old -> new"); a change of any other setting is an error."""
    mine, theirs = _flat(config), _flat(saved)
    differs = sorted(k for k in mine if k not in config_mod.RESUMABLE and mine[k] != theirs.get(k))
    if differs:
        raise ValueError(f"the run was trained with another config ({path} differs in {differs}); use another --out")
    return [f"{k} {theirs.get(k)} -> {mine[k]}" for k in mine if k in config_mod.RESUMABLE and mine[k] != theirs.get(k)]


def train(config, out: str, resume: bool = False, progress: bool = True, echo=print, eval_simulations: int = 200,
          opponents: dict | None = None, fault=None, ray_address: str | None = None) -> list[dict]:
    """Train ``config`` in the run folder ``out`` (or continue it with ``resume``); returns the metrics rows.
    ``opponents`` (name -> Agent; default random and greedy) are played by the raw policy at evaluations.
    ``ray_address``: the Ray cluster of ``config.backend="ray"`` (auto or HOST:PORT; None: a local instance).
    ``fault(stage)``: a test hook called at the stages of a commit (:class:`RunStore`) and, on Ray, once an
    iteration's self-play is under way (``"self_play"``)."""
    device = resolve_device(config.device)  # auto: a CUDA GPU if torch sees one; a GPU not there: an error
    if device != config.device:
        config = dataclasses.replace(config, device=device)
    if ray_address is not None and config.backend != "ray":
        raise ValueError("a Ray address is used only with the ray backend (--backend ray)")
    store = RunStore(out, fault)
    with contextlib.ExitStack() as held:
        locked = os.path.isdir(out)  # an existing folder is locked before it is read; a new one before it is made
        if locked:  # a second run of the folder is refused here, before it reads or writes
            held.enter_context(store.lock("train"))
        return _train(config, out, store, resume, progress, echo, eval_simulations, opponents, fault, ray_address,
                      held, locked)


def _train(config, out: str, store: RunStore, resume: bool, progress: bool, echo, eval_simulations: int,
           opponents: dict | None, fault, ray_address: str | None, held: contextlib.ExitStack,
           locked: bool) -> list[dict]:
    """:func:`train` with the folder's lock on ``held`` (taken already where ``locked``)."""
    torch.set_num_threads(config.threads)  # deliberate: torch's default (every core) thrashes beside other work
    torch.manual_seed(config.seed)
    net = build_model(config.model).to(config.device)
    if config.init and not (resume and store.has_run()):
        net.load_state_dict(initial_weights(config))
    optimizer = torch.optim.Adam(net.parameters(), lr=config.lr, weight_decay=config.loss.l2)
    single = not config.boards  # one board: the mix of that board alone
    mix = BoardMix(((config.board, 1.0),)) if single else config.board_mix()
    metrics = []
    teacher = load_teacher(config)  # of the run's board (a config with boards takes none)
    curricula = _first_curricula(config, mix, teacher)
    replays = BoardReplays.empty(mix.boards)
    start, committed = 0, None
    if resume:
        resumed = _resume(config, out, store, echo, net, optimizer, mix, single)
        if resumed is not None:
            start, metrics, committed, replays, curricula = resumed
    elif store.has_run():
        raise RunError(f"{out} already holds a run; pass --resume to continue it or choose another --out")
    store.check_writable()  # a file, or a folder that cannot be written: a RunError before anything starts
    pool = make_pool(config, ray_address, fault)  # Ray's checks come before anything is written
    if not locked:  # a new folder: locked (and so made) only once every check has passed
        _lock_new_folder(store, out, held, pool)
    bar = events = None
    try:
        events = EventLog(out, echo)
        store.write_config(config)
        opponents = default_opponents(config.seed) if opponents is None else opponents
        bar = _progress(config.iterations, start, progress)
        eval_seed = config.seed + EVAL_SEED_OFFSET
        positions = {b: labelled_positions(b, config.eval_positions, seed=eval_seed) for b in mix.boards}
        teach = teacher[:2] if teacher is not None and config.teacher.fraction > 0 else None
        largest = max(mix.boards, key=lambda b: geometry(b).num_actions)
        plot = _training_plot(echo)
        if committed is not None:
            store.refresh_views(committed, plot)
        plotted = time.monotonic()
        for iteration in range(start + 1, config.iterations + 1):
            rng = np.random.default_rng([config.seed, iteration])  # reproducible per iteration, also on resume
            lr = config.lr_at(iteration)
            for group in optimizer.param_groups:
                group["lr"] = lr
            row = _iteration(net, optimizer, pool, config, mix, single, iteration, lr, rng, replays, curricula,
                             positions, opponents, eval_simulations, teach)
            metrics.append(row)
            draw = plot if iteration == config.iterations or time.monotonic() - plotted >= PLOT_EVERY_S else None
            if single:  # its files as a single-board run's: the board's replay and curriculum themselves
                store.commit(iteration, net, optimizer, config, curricula[config.board], replays[config.board],
                             metrics, plot=draw)
            else:
                store.commit(iteration, net, optimizer, config, curricula, replays, metrics, plot=draw)
            if draw is not None:
                plotted = time.monotonic()
            events.write(row, iteration)
            if bar is not None:
                bar.update(1)
                bar.set_postfix(S=curricula[largest].start, pl=f"{row['policy_loss']:.2f}",
                                vl=f"{row['value_loss']:.2f}")
    finally:
        pool.close()
        if events is not None:
            events.close()
        if bar is not None:
            bar.close()
    return metrics


def _first_curricula(config, mix: BoardMix, teacher: tuple[Replay, np.ndarray, int] | None) -> BoardCurricula:
    """Each board's curriculum at its first step (on the teacher's board, where the teacher's zone ends
    unless the config gives a start step); ValueError for a start that leaves no move to search."""
    firsts = {b: config.curriculum.first_step(b) for b in mix.boards}
    if teacher is not None and config.curriculum.start_step is None:  # search where the teacher's zone ends
        firsts[config.board] = max(0, geometry(config.board).num_actions - teacher[2])
    curricula = BoardCurricula({b: Curriculum.begin(firsts[b]) for b in mix.boards})
    for b in mix.boards:
        if curricula[b].start >= geometry(b).num_actions:
            raise ValueError(f"curriculum start step {curricula[b].start} leaves no move to search on {b}")
    return curricula


def _resume(config, out: str, store: RunStore, echo, net, optimizer, mix: BoardMix, single: bool) -> tuple | None:
    """Continue the run in ``out``: its saved config checked against ``config`` (the changed settings
    echoed) and its last commit's network and optimiser loaded into ``net`` and ``optimizer``; returns
    ``(start, metrics, committed, replays, curricula)`` of that commit, or None where nothing is committed
    yet. A RunError where ``out`` holds no run."""
    if not store.has_run():
        raise RunError(f"--resume: {out} holds no training run to continue")
    changed = _check_resume(store.read_config(), config, os.path.join(out, "config.json"))
    if changed:
        echo(f"resuming with changed settings: {', '.join(changed)}")
    committed = store.load(config.board if single else None)
    if committed is None:
        return None
    net.load_state_dict(committed.payload["state_dict"])
    restore_optimizer(optimizer, committed.payload, os.path.join(out, committed.folder, "checkpoint.pt"))
    replays, curricula = _as_mix(config.board, committed.replay, committed.curriculum)
    shown = (str(curricula[config.board].start) if single
             else ", ".join(f"{b}: {curricula[b].start}" for b in mix.boards))
    echo(f"resuming after iteration {committed.iteration} (first searched move {shown})")
    return committed.iteration, committed.metrics, committed, replays, curricula


def _lock_new_folder(store: RunStore, out: str, held: contextlib.ExitStack, pool) -> None:
    """Lock (and so make) the new run folder ``out`` on ``held``; a RunError where another run made it
    since it was looked at. The self-play ``pool`` is closed where this fails."""
    try:
        held.enter_context(store.lock("train"))
        if store.has_run():  # made by another run since it was looked at
            raise RunError(f"{out} already holds a run; pass --resume to continue it or choose another --out")
    except BaseException:
        pool.close()
        raise


def _training_plot(echo):
    """The function that draws ``training.png`` (:func:`plot_training`); None, said through ``echo``, where
    matplotlib is missing."""
    plot = plot_training if importlib.util.find_spec("matplotlib") is not None else None
    if plot is None and echo is not None:
        echo(f"no training.png: the plot needs matplotlib: {extra_hint('matplotlib')}")
    return plot


def _as_mix(board: str, replay: Replay | BoardReplays, curriculum: Curriculum | BoardCurricula):
    """A committed replay and curriculum as those of a mix: a single-board run's (a :class:`Replay` and a
    :class:`Curriculum`) as the mix of its one ``board``."""
    if isinstance(replay, Replay):
        replay = BoardReplays({board: replay})
    if isinstance(curriculum, Curriculum):
        curriculum = BoardCurricula({board: curriculum})
    return replay, curriculum


def _iteration(net, optimizer, pool, config, mix: BoardMix, single: bool, iteration: int, lr: float,
               rng: np.random.Generator, replays: BoardReplays, curricula: BoardCurricula, positions: dict,
               opponents: dict, eval_simulations: int, teacher: tuple[Replay, np.ndarray] | None) -> dict:
    """One iteration (module docstring): self-play per board, the gradient steps, the evaluation per board
    and every board's curriculum rule; returns the metrics row (``single``: the board's values under their
    own keys; else :func:`_mix_row`)."""
    t0 = time.perf_counter()
    counts, offset = mix.split(config.games_per_iteration), 0
    stats, rollbacks, evals, rolled = {}, {}, {}, {}
    starts = {b: curricula[b].start for b in mix.boards}
    for b in mix.boards:
        games = range(offset, offset + counts[b])
        offset += counts[b]
        if not counts[b]:
            continue
        samples, stats[b] = pool.play(net, iteration, starts[b], board=b, games=games)
        replays.add(samples)
        epsilon = config.curriculum.epsilon_for(config.model.value, b)
        rollbacks[b] = measure(stats[b].pop("trace"), starts[b], config.curriculum, epsilon)
    t1 = time.perf_counter()
    replays.keep_recent(iteration, config.replay.buffer_iterations)
    losses = train_steps(net, optimizer, replays, config, iteration, rng, teacher)
    t2 = time.perf_counter()
    evaluate = iteration % config.eval_every == 0 or iteration == config.iterations
    for b in mix.boards:
        evals[b] = accuracy(net, positions[b], config.device, eval_simulations if evaluate else None)
        if evaluate and config.backend == "ray":  # the games on the self-play actors: the local scores
            evals[b] |= pool.score_against(net, opponents, config.eval_games, seed=config.seed + iteration, board=b)
        elif evaluate:
            player = PolicyAgent(NetworkEvaluator(net, config.device))
            evals[b] |= score_against(player, opponents, b, config.eval_games, seed=config.seed + iteration)
        rolled[b] = b in rollbacks and curricula[b].update(rollbacks[b], iteration, config.curriculum)
    timing = {"replay": len(replays), "self_play_s": t1 - t0, "train_s": t2 - t1}
    if single:
        (b,) = mix.boards
        row = {"iteration": iteration, "start_step": starts[b], **stats[b], **losses, **rollbacks[b], "lr": lr,
               "epochs": config.epochs, "batch_size": config.batch_size, **timing, **evals[b],
               "rolled_back": rolled[b]}
    else:
        row = _mix_row(config, mix, iteration, starts, counts, stats, rollbacks, evals, rolled, losses, timing,
                       replays)
    row["iteration_s"] = time.perf_counter() - t0  # self-play, training and evaluation: the wall time
    if not single:
        row["lr"] = lr
    return row


def _mix_row(config, mix: BoardMix, iteration: int, starts: dict, counts: dict, stats: dict, rollbacks: dict,
             evals: dict, rolled: dict, losses: dict, timing: dict, replays: BoardReplays) -> dict:
    """A multi-size run's row (without ``iteration_s`` and ``lr``): the iteration's totals, then each board's
    values under ``"key@RxC"``."""
    per = {b: {"start_step": starts[b], "games": counts[b], **stats.get(b, {}), **rollbacks.get(b, {}),
               "replay": len(replays[b]), **evals[b], "rolled_back": rolled[b]} for b in mix.boards}
    totals = list(stats.values())
    games = sum(t["games"] for t in totals)
    largest = max(mix.boards, key=lambda b: geometry(b).num_actions)
    row = {"iteration": iteration, "start_step": starts[largest], "boards": str(mix), "games": games,
           "positions": sum(t["positions"] for t in totals), "nodes": sum(t["nodes"] for t in totals),
           "first_player_win_rate": sum(t["first_player_win_rate"] * t["games"] for t in totals) / max(1, games),
           "network_calls": sum(t["network_calls"] for t in totals), **losses, "epochs": config.epochs,
           "batch_size": config.batch_size, **timing, "rolled_back": any(rolled.values())}
    for b in mix.boards:
        row |= {f"{k}@{b}": v for k, v in per[b].items()}
    return row


def _progress(total: int, initial: int, enabled: bool):
    if not enabled:
        return None
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover
        return None
    return tqdm(total=total, initial=initial, desc="iterations")

