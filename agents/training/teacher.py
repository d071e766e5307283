"""Teacher datasets: realistic positions labelled by the exact solver, written as training samples.

    dnb teach --board 5x5 --undrawn 26-38 --positions 100000 --out data/teach-5x5 --workers 2
    data = TeacherData.load("data/teach-5x5")       # checked against its manifest

Positions come from games of a mix of agents (``players``: registry specs such as ``greedy``,
``alphabeta:depth=2``, ``prsboxes`` or a network's raw policy ``alphazero:simulations=0``; a game pairs two
of them, possibly one with itself), each game opened by ``opening`` random safe moves and every later move
replaced with probability ``explore`` by a plausible random one (:func:`dnb_env.analysis.realistic_move`).
Up to ``per_game`` positions with ``undrawn`` edges in the asked range are taken from one game. A position
is kept once: the dataset is deduplicated by symmetry-canonical drawn edges and the mover's boxes lead.

Labels are exact, by :class:`dnb_env.solver.Solver` (:func:`label_position`); the dataset format, its labels
and columns, and its loading and checks are in :mod:`agents.training.dataset` (whose names this module
re-exports).

Work is cut in jobs of ``shard_size`` candidate positions; jobs run in worker processes (or Ray tasks) and
are committed in job order (shard written atomically, then the manifest), so the dataset of a run resumed
after a kill is the dataset of one that never stopped: nothing committed is lost, nothing is written twice.
One run writes a folder at a time (:class:`dnb_env.io.RunLock`: a second is refused at once, naming the
first), and it starts by removing the temporary files (``*.tmp*``) of a run killed while writing.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import os
import random
import time
from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np

from agents.arena import make_opening
from agents.training.dataset import (DEFAULT_PLAYERS, FORMAT, MANIFEST, MARGIN, NO_VALUE, OUTCOME, VALUE, VERSION,
                                     TeachConfig, TeacherData, TeacherError, _write_manifest, to_samples)
from agents.training.samples import Record, Samples
from dnb_env.analysis import realistic_move
from dnb_env.core import GameState, geometry
from dnb_env.io import RunLock, atomic_write
from dnb_env.solver import Solver, SolverTooLarge
from dnb_env.symmetry import action_permutation, symmetries

__all__ = ["FORMAT", "VERSION", "MARGIN", "OUTCOME", "VALUE", "NO_VALUE", "TeachConfig", "TeacherData", "TeacherError",
           "generate", "label_position", "canonical_key", "to_samples", "DEFAULT_PLAYERS"]


# ---------------------------------------------------------------------------------------------- labels
def canonical_key(state: GameState) -> bytes:
    """The drawn edges up to the board's symmetries (the smallest image as packed bits) and the mover's
    lead in boxes: positions with equal keys have equal labels up to a symmetry."""
    g = state.geometry
    bits = np.unpackbits(np.frombuffer(state.edges.to_bytes((g.num_actions + 7) // 8, "little"), np.uint8),
                         bitorder="little")[:g.num_actions].astype(bool)
    best = None
    for sym in symmetries(state.rows, state.cols):
        img = np.zeros(g.num_actions, bool)
        img[action_permutation(sym, state.rows, state.cols)] = bits
        packed = np.packbits(img).tobytes()
        if best is None or packed < best:
            best = packed
    return best + _lead(state).to_bytes(2, "little", signed=True)


def label_position(solver: Solver, state: GameState, margin_max: int) -> tuple[int, np.ndarray]:
    """``(kind, values)`` of ``state``: ``values[a]`` the exact margin (``MARGIN``, at most ``margin_max``
    undrawn edges) or outcome (``OUTCOME``) for the mover after each legal move ``a``, ``NO_VALUE`` for
    drawn edges. Raises :class:`dnb_env.solver.SolverTooLarge` past the solver's reach or budget."""
    g = state.geometry
    values = np.full(g.num_actions, NO_VALUE, np.int8)
    undrawn = g.num_actions - state.edges.bit_count()
    if undrawn <= margin_max:
        for a, v in solver.move_values(state).items():
            values[a] = v
        return MARGIN, values
    odd = g.num_boxes % 2 == 1  # no draws: one null-window search decides
    for a in state.legal_actions():
        child = state.apply(a)
        have = _lead(child)  # the child's mover's lead
        if child.current_player == state.current_player:
            wins = solver.at_least(child, 1 - have)
            values[a] = 1 if wins else (-1 if odd or not solver.at_least(child, -have) else 0)
        else:  # the opponent moves: our result is minus theirs
            theirs_win = solver.at_least(child, 1 - have)
            values[a] = -1 if theirs_win else (1 if odd or not solver.at_least(child, -have) else 0)
    return OUTCOME, values


def _lead(state: GameState) -> int:
    s0, s1 = state.scores
    return s0 - s1 if state.current_player == 0 else s1 - s0


# ---------------------------------------------------------------------------------------------- jobs
@dataclass(frozen=True)
class _Job:
    config: TeachConfig
    index: int
    make_player: Callable  # (spec, board, seed) -> Agent


def _play_positions(job: _Job, rng: random.Random) -> Iterator[tuple[GameState, int, int]]:
    """``(state, game number within the job, pair index)`` of positions taken from the job's games."""
    cfg = job.config
    g = geometry(cfg.board)
    a = g.num_actions
    pairs = cfg.pairs
    players: dict[int, object] = {}
    game = 0
    while True:
        pair_index = rng.randrange(len(pairs))
        i, j = pairs[pair_index]
        if rng.random() < 0.5:
            i, j = j, i
        seats = []
        for p in (i, j):
            if p not in players:
                players[p] = job.make_player(cfg.players[p], cfg.board, cfg.seed * 1_000_003 + job.index * 101 + p)
            seats.append(players[p])
        for agent in seats:
            agent.reset()
        opening = cfg.opening if cfg.opening >= 0 else rng.randint(*g.opening_range)
        opening = min(opening, a - cfg.undrawn_max)
        s = GameState.from_actions(g, actions=make_opening(g, opening, "guided", rng.getrandbits(48)))
        in_range = []
        while not s.is_terminal():
            undrawn = a - s.edges.bit_count()
            if undrawn < cfg.undrawn_min:
                break
            if undrawn <= cfg.undrawn_max:
                in_range.append(s)
            if rng.random() < cfg.explore:
                move = realistic_move(s, rng)
            else:
                move = seats[s.current_player].select_action(s)
            s = s.apply(move)
        for s in rng.sample(in_range, min(cfg.per_game, len(in_range))):
            yield s, game, pair_index
        game += 1


def _run_job(job: _Job) -> dict:
    """Play and label ``config.shard_size`` candidate positions; returns the shard's arrays (unpacked
    records) and its counters."""
    cfg = job.config
    rng = random.Random(cfg.seed * 1_000_003 + job.index)
    solver = Solver(max(cfg.undrawn_max, 0), node_limit=cfg.node_limit)
    seen: set[bytes] = set()
    rows = []
    skipped = duplicates = 0
    games = 0
    for state, game, pair in _play_positions(job, rng):
        if len(rows) + skipped + duplicates >= cfg.shard_size:
            break
        games = max(games, game + 1)
        key = canonical_key(state)
        if key in seen:
            duplicates += 1
            continue
        seen.add(key)
        t = time.process_time()
        undrawn = state.geometry.num_actions - state.edges.bit_count()
        try:
            if 0 <= cfg.move_labels_max < undrawn:
                kind, values = VALUE, np.full(state.geometry.num_actions, NO_VALUE, np.int8)
                result = solver.outcome(state)  # the game's result for the mover, boxes owned included
            else:
                kind, values = label_position(solver, state, cfg.margin_max)
                result = None
        except SolverTooLarge:  # over the node budget: not labelled, counted
            skipped += 1
            continue
        rows.append((state, kind, values, job.index * 100_000 + game, pair, time.process_time() - t, key, result))
    return {"job": job.index, "rows": rows, "skipped": skipped, "duplicates": duplicates, "games": games}


def _shard_arrays(board: str, rows: list, rng: random.Random) -> dict[str, np.ndarray]:
    """The columns of one shard from labelled ``rows``."""
    records = []
    best_of = []
    for state, kind, values, _, _, _, _, result in rows:
        if kind == VALUE:  # no move labels: no policy target; the move is any legal one, not a label
            best_of.append(int(result))
            move = int(rng.choice(state.legal_actions()))
            records.append(Record(state=state, move=move, pi=np.zeros(len(values), np.float32), q=float(result),
                                  z=float(result)))
            continue
        legal = values != NO_VALUE
        best = int(values[legal].max())
        best_of.append(best)
        optimal = np.flatnonzero(legal & (values == best))
        pi = np.zeros(len(values), np.float32)
        pi[optimal] = 1.0 / len(optimal)
        if kind == MARGIN:
            final = _lead(state) + best
            outcome = float((final > 0) - (final < 0))
        else:
            outcome = float(best)
        records.append(Record(state=state, move=int(rng.choice(list(optimal))), pi=pi, q=outcome, z=outcome))
    samples = Samples.from_records(board, records, 0) if records else Samples.empty(board)
    out = samples.arrays()
    a = samples.pi.shape[1]
    out["values"] = np.stack([r[2] for r in rows]) if rows else np.zeros((0, a), np.int8)
    out["value"] = np.array(best_of, np.int8)
    out["kind"] = np.array([r[1] for r in rows], np.int8)
    out["game"] = np.array([r[3] for r in rows], np.int64)
    out["player"] = np.array([r[4] for r in rows], np.int16)
    out["seconds"] = np.array([r[5] for r in rows], np.float32)
    return out


class _Runner:
    """Jobs in order, computed locally, in spawned processes or as Ray tasks, a few ahead of the consumer."""

    def __init__(self, workers: int, backend: str, ray_address: str | None = None):
        self.workers, self.backend, self.ray_address = workers, backend, ray_address

    def map(self, jobs: Iterator[_Job]) -> Iterator[dict]:
        if self.backend == "ray":
            yield from self._ray(jobs)
        elif self.workers <= 1:
            from agents.processes import limit_threads

            with limit_threads(1):
                for job in jobs:
                    yield _run_job(job)
        else:
            from agents.processes import spawn_pool

            pool = spawn_pool(self.workers, 1)
            try:
                yield from pool.imap(_run_job, jobs)
            finally:
                pool.terminate()
                pool.join()

    def _ray(self, jobs: Iterator[_Job]) -> Iterator[dict]:
        from agents.ray_cluster import RaySession, require_ray

        ray = require_ray()
        with RaySession(self.ray_address, num_cpus=None if self.ray_address else self.workers):
            task = ray.remote(num_cpus=1)(_run_job)
            window = []
            for job in jobs:
                window.append(task.remote(job))
                if len(window) >= 2 * self.workers:
                    yield ray.get(window.pop(0))
            for ref in window:
                yield ray.get(ref)


def generate(config: TeachConfig, out: str, make_player: Callable, *, workers: int = 1, backend: str = "local",
             ray_address: str | None = None, progress: bool = True, exclude: list[str] = (), echo=print,
             max_jobs: int | None = None) -> dict:
    """Fill (or continue) the dataset folder ``out`` until it holds ``config.positions`` positions; returns
    the manifest. ``make_player(spec, board, seed)`` builds an agent from a registry spec (it must pickle:
    a module-level function). A folder holding a dataset of another config is refused, except for a larger
    ``positions``. ``exclude``: dataset folders whose positions are never taken (held-out sets).
    ``max_jobs``: stop after that many jobs (for tests and benchmarks)."""
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if os.path.exists(out) and not os.path.isdir(out):
        raise TeacherError(f"{out} exists and is not a folder")
    excluded = set()
    for folder in exclude:  # read first: a start refused here leaves no folder behind
        other = TeacherData.load(folder)
        excluded |= {canonical_key(s) for s in other.samples.states()}
    # a second writer is refused here, before it reads or writes; taking the lock removes the shards and
    # manifests a killed run was writing (NAME.tmpPID)
    with RunLock(out, what="teach"):
        return _generate(config, out, make_player, workers, backend, ray_address, progress, excluded, echo,
                         max_jobs)


def _generate(config: TeachConfig, out: str, make_player: Callable, workers: int, backend: str,
              ray_address: str | None, progress: bool, excluded: set, echo, max_jobs: int | None) -> dict:
    if os.path.exists(os.path.join(out, MANIFEST)):
        manifest = TeacherData.read_manifest(out)
        saved = TeachConfig.from_dict(manifest["config"])
        if dataclasses.replace(saved, positions=config.positions) != config:
            differs = [k for k, v in config.to_dict().items() if k != "positions" and saved.to_dict()[k] != v]
            raise TeacherError(f"{out} holds a teacher dataset of another config ({os.path.join(out, MANIFEST)} "
                               f"differs in {differs}); use another folder")
        manifest["config"] = config.to_dict()
        known = TeacherData.load(out)
        seen = {canonical_key(s) for s in known.samples.states()}
        echo(f"resuming {out}: {manifest['positions']} positions in {len(manifest['shards'])} shards")
    else:
        manifest = {"format": FORMAT, "version": VERSION, "config": config.to_dict(),
                    "pairs": [[config.players[i], config.players[j]] for i, j in config.pairs],
                    "shards": [], "positions": 0, "next_job": 0,
                    "counts": {"skipped": 0, "duplicates": 0, "games": 0, "label_seconds": 0.0}}
        seen = set()
    seen |= excluded
    if manifest["positions"] >= config.positions:
        _write_manifest(out, manifest)
        return manifest

    bar = None
    if progress:
        try:
            from tqdm import tqdm

            bar = tqdm(total=config.positions, initial=manifest["positions"], unit="pos", desc="teach")
        except ImportError:
            pass

    def jobs():
        j = manifest["next_job"]
        while max_jobs is None or j < manifest["next_job"] + max_jobs:
            yield _Job(config, j, make_player)
            j += 1

    start_job = manifest["next_job"]
    try:
        for result in _Runner(workers, backend, ray_address).map(jobs()):
            fresh = [r for r in result["rows"] if r[6] not in seen]
            dups = len(result["rows"]) - len(fresh)
            fresh = fresh[: config.positions - manifest["positions"]]
            seen.update(r[6] for r in fresh)
            name = f"shard-{result['job']:06d}.npz"
            buf = io.BytesIO()
            np.savez_compressed(buf, **_shard_arrays(config.board, fresh, random.Random(result["job"])))
            data = buf.getvalue()
            atomic_write(os.path.join(out, name), data)
            manifest["shards"].append({"file": name, "positions": len(fresh), "job": result["job"],
                                       "sha256": hashlib.sha256(data).hexdigest()})
            manifest["positions"] += len(fresh)
            manifest["next_job"] = result["job"] + 1
            counts = manifest["counts"]
            counts["skipped"] += result["skipped"]
            counts["duplicates"] += result["duplicates"] + dups
            counts["games"] += result["games"]
            counts["label_seconds"] = round(counts["label_seconds"] + sum(r[5] for r in fresh), 3)
            _write_manifest(out, manifest)
            if bar is not None:
                bar.update(len(fresh))
            if manifest["positions"] >= config.positions:
                break
            if max_jobs is not None and manifest["next_job"] >= start_job + max_jobs:
                break
    finally:
        if bar is not None:
            bar.close()
    return manifest
