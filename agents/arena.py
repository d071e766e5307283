"""Tournaments: any agents, alternating first player, shared random openings, resumable results, Elo.

```python
from agents.arena import TournamentConfig
from registry.tournaments import run_tournament     # the arena's run_tournament with the registry's names
cfg = TournamentConfig(board="5x5", agents=("random", "greedy", "alphabeta:depth=3"), games=100,
                       openings=10, opening_mode="guided", workers=2, seed=0)
report = run_tournament(cfg, out="results/5x5")     # prints the table; writes JSONL, CSV, PNG
```

* Agents are ``(label, factory)`` pairs where ``factory()`` returns an Agent (an SB3 model wrapped by
  :class:`agents.base.SB3Agent`, say; with ``workers > 1`` it must be picklable), or spec strings
  ``name[:key=value,...]`` built inside each worker by the ``build(spec, board, seed) -> Agent`` the caller
  passes (a module-level function, so that it pickles). The arena knows no names: the registry's
  :func:`registry.tournaments.run_tournament` checks the specs and passes
  :func:`registry.specs.agent_from_spec`, so any registered agent, OpenSpiel's MCTSBot as
  ``openspiel_mcts`` included, runs in parallel.
* Each pair plays ``games`` games. Game g uses opening ``g // 2`` and the first seat alternates, so both
  colour assignments see the same opening (Dotsformer Appendix C): the first ``openings`` moves are random,
  "pure" (any legal move) or "guided" (safe moves only while there are any).
* Every finished game is appended to ``results.jsonl`` as one line, flushed and fsynced; a killed run
  resumes with the games it has and plays only the missing ones. A line that is not a game of this
  tournament (a torn last line, bad JSON, a record of the wrong shape) is moved to ``results.jsonl.rejected``
  with a warning; every valid game is kept. The config is saved beside the results (``config.json``) and a
  resume with a different config is refused (``workers``, ``threads`` and ``bootstrap`` may change). An
  ``out`` that cannot be written is an error before any game is played.
* With ``workers > 1`` the games run in spawned processes whose numpy/BLAS and torch use ``threads`` threads
  each (set in their environment before numpy loads there). With one worker the games run in the calling
  process with torch (and any library loaded during the run) at ``threads`` threads, restored after.
* ``backend="ray"``: every game is a Ray task (``threads`` CPUs each, retried by Ray if its worker dies) on
  the cluster at ``ray_address`` (``auto``: the one this machine joined) or, without an address, on a local
  Ray instance of ``workers`` CPUs started for the run. The driver appends each finished game to the same
  ``results.jsonl``, so the results file, standings and resume are those of the local pool, and the same
  seeds give the same games (each game's opening and agent seeds depend only on its id). ``backend`` and
  ``ray_address`` may change on resume. Needs ``pip install 'dnb[ray]'``; an address that does not answer
  or a task larger than the cluster is an error before any game is played or file written.
* The report: win/draw/loss matrix, score rates with Wilson 95% intervals, Elo by maximum likelihood
  (Bradley-Terry, draws as half wins, one virtual draw per pair so that unbeaten agents stay finite,
  anchored so that the mean is 0, or ``random`` = 0 when present) with bootstrap 95% intervals; printed,
  and written as ``pairs.csv``, ``elo.csv`` and ``tournament.png``.

Agents see game states only, never each other.
"""

from __future__ import annotations

import contextlib
import dataclasses
import itertools
import json
import math
import os
import random
import time
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from agents.processes import limit_threads, spawn_pool
from agents.ray_cluster import RaySession, check_backend, check_resources
from dnb_env.analysis import MoveClass, move_classes
from dnb_env.core import GameState, geometry
from dnb_env.io import JsonlAppender, atomic_write, read_jsonl

__all__ = [
    "TournamentConfig",
    "play_game",
    "make_opening",
    "run_tournament",
    "wilson_interval",
    "bradley_terry_elo",
    "TournamentReport",
    "MAX_GAMES",
    "MAX_WORKERS",
]

#: Most games one tournament schedules, all pairs together (pairs x games per pair): the schedule is built
#: in memory (about 200 bytes a game), so a typo such as ``--games 1000000000000`` is refused up front.
MAX_GAMES = 1_000_000
#: Most worker processes (``workers``) and threads per process (``threads``) a tournament accepts.
MAX_WORKERS = 1024


@dataclass(frozen=True)
class TournamentConfig:
    """All that defines a tournament; saved as ``config.json`` beside the results."""

    board: str = "5x5"
    agents: tuple[str, ...] = ("random", "greedy")
    games: int = 20  # per pair
    openings: int = 0  # random opening moves
    opening_mode: str = "guided"  # "pure" or "guided"
    mode: str = "round_robin"  # or "gauntlet": the first agent against each other one
    workers: int = 1  # processes playing games (1: in the calling process)
    threads: int = 1  # numpy/BLAS and torch threads of each worker process, or of this one (workers=1)
    seed: int = 0
    bootstrap: int = 200  # bootstrap samples for the Elo intervals (0: none)
    backend: str = "local"  # "local" (processes of this machine) or "ray" (games as Ray tasks)
    ray_address: str | None = None  # with backend "ray": auto, HOST:PORT, or None (a local Ray instance)

    def __post_init__(self):
        check_backend(self.backend)
        if self.ray_address is not None and self.backend != "ray":
            raise ValueError(f"ray_address is used only with backend 'ray', not {self.backend!r}")
        edges = geometry(self.board).num_actions
        if len(self.agents) < 2:
            raise ValueError("a tournament needs at least two agents")
        if len(set(self.agents)) != len(self.agents):
            raise ValueError(f"agent entries must be distinct, got {list(self.agents)}")
        if self.games < 1:
            raise ValueError(f"games must be >= 1, got {self.games}")
        if not 0 <= self.openings < edges:
            raise ValueError(f"openings must be in 0..{edges - 1} (a {self.board} board has {edges} edges), "
                             f"got {self.openings}")
        if self.opening_mode not in ("pure", "guided"):
            raise ValueError(f"opening_mode must be 'pure' or 'guided', got {self.opening_mode!r}")
        if self.mode not in ("round_robin", "gauntlet"):
            raise ValueError(f"mode must be 'round_robin' or 'gauntlet', got {self.mode!r}")
        for name in ("workers", "threads"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
            if getattr(self, name) > MAX_WORKERS:
                raise ValueError(f"{name} must be at most {MAX_WORKERS}, got {getattr(self, name)}")
        pairs = len(self.pairs())
        if pairs * self.games > MAX_GAMES:
            raise ValueError(f"a tournament plays at most {MAX_GAMES:,} games in all (pairs x games per pair), "
                             f"got {pairs} pair{'s' * (pairs != 1)} x {self.games:,} games")
        if self.bootstrap < 0:
            raise ValueError(f"bootstrap must be >= 0, got {self.bootstrap}")

    def pairs(self) -> list[tuple[int, int]]:
        n = len(self.agents)
        if self.mode == "gauntlet":
            return [(0, j) for j in range(1, n)]
        return list(itertools.combinations(range(n), 2))

    def to_json(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "TournamentConfig":
        known = {f.name for f in dataclasses.fields(cls)}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown tournament config keys: {sorted(unknown)}")
        data = dict(data)
        data["agents"] = tuple(data.get("agents", ()))
        return cls(**data)


def make_opening(board: str, moves: int, mode: str, seed: int) -> list[int]:
    """The first ``moves`` moves of a game, random ("pure") or random safe moves ("guided")."""
    rng = random.Random(seed)
    s = GameState.new(board)
    out = []
    for _ in range(moves):
        if s.is_terminal():
            break
        legal = s.legal_actions()
        if mode == "guided":
            cls = move_classes(s)
            safe = [a for a in legal if cls[a] == MoveClass.SAFE]
            legal = safe or legal
        a = rng.choice(legal)
        out.append(a)
        s = s.apply(a)
    return out


def play_game(board: str, first, second, opening: Sequence[int] = ()) -> dict:
    """Play ``first`` (player 0) against ``second`` from the opening; returns a record."""
    s = GameState.from_actions(board, actions=list(opening))
    agents = (first, second)
    for a in agents:
        a.reset()
    think = [0.0, 0.0]
    while not s.is_terminal():
        p = s.current_player
        t = time.perf_counter()
        action = agents[p].select_action(s)
        think[p] += time.perf_counter() - t
        if not s.is_legal(action):
            raise RuntimeError(f"agent {agents[p].name!r} chose illegal action {action!r}")
        s = s.apply(action)
    return {"scores": list(s.scores), "moves": list(s.history), "think_s": think}


# ------------------------------------------------------------------------------ workers
def _build(entry, board: str, seed: int, build: Callable | None):
    if isinstance(entry, str):
        return build(entry, board, seed)
    _, factory = entry
    return factory()


def _label(entry) -> str:
    return entry if isinstance(entry, str) else entry[0]


def _seats(i: int, j: int, g: int) -> tuple[int, int]:
    """(first, second) agent of game ``g`` of pair (i, j): the first seat alternates."""
    return (i, j) if g % 2 == 0 else (j, i)


class _Games:
    """Plays the games of one run: one agent per entry, reseeded with each game's seed (an agent without
    ``seed`` is built anew for every game). Owned by the run: made by :func:`run_tournament`, or once in each
    worker process of the run's pool; no agent outlives its run."""

    def __init__(self, board: str, entries: Sequence, build: Callable | None = None):
        self.board, self.entries, self.build, self.agents = board, entries, build, {}

    def agent(self, k: int, seed: int):
        agent = self.agents.get(k)
        if agent is None:
            agent = _build(self.entries[k], self.board, seed, self.build)
            if hasattr(agent, "seed"):
                self.agents[k] = agent
                if not isinstance(self.entries[k], str):  # a factory's agent: seeded like every later game
                    agent.seed(seed)
        else:
            agent.seed(seed)
        return agent

    def play(self, task) -> dict:
        i, j, g, opening, agent_seed = task
        first_idx, second_idx = _seats(i, j, g)
        a = self.agent(first_idx, agent_seed)
        b = self.agent(second_idx, agent_seed + 1)
        t = time.perf_counter()
        rec = play_game(self.board, a, b, opening)
        rec.update(
            id=f"{i}-{j}-{g}", pair=[i, j], game=g, first=_label(self.entries[first_idx]),
            second=_label(self.entries[second_idx]), opening=list(opening), seconds=time.perf_counter() - t,
        )
        s0, s1 = rec["scores"]
        rec["result_first"] = 1.0 if s0 > s1 else (0.0 if s0 < s1 else 0.5)
        return rec


def _worker_pool(workers: int, threads: int, board: str, entries: Sequence, build: Callable | None = None):
    """A pool of ``workers`` spawned processes that play with :func:`_worker_play`, each with ``threads``
    threads for numpy/BLAS and torch (:func:`agents.processes.spawn_pool`)."""
    return spawn_pool(workers, threads, _worker_init, (board, entries, build))


def _worker_init(board: str, entries: Sequence, build: Callable | None = None) -> None:
    """In a worker process: the run's :class:`_Games`."""
    global _WORKER
    _WORKER = _Games(board, entries, build)


def _worker_play(task) -> dict:
    return _WORKER.play(task)


_RAY_RUN: dict = {}  # in a Ray worker process: the _Games of the run whose tasks it plays now


def _ray_play(run: str, board: str, entries: Sequence, build: Callable | None, threads: int, task) -> dict:
    """A Ray task: one game. A worker process keeps the agents of one run (``run``) between its games,
    reseeded per game like the local pool's; a task of another run replaces them."""
    games = _RAY_RUN.get(run)
    if games is None:
        _RAY_RUN.clear()
        games = _RAY_RUN[run] = _Games(board, entries, build)
    with limit_threads(threads):
        return games.play(task)


def _ray_games(ray, config: TournamentConfig, entries: Sequence, build: Callable | None, tasks: list):
    """The records of ``tasks`` played as Ray tasks, in the order they finish; at most about twice as
    many in flight as the cluster runs at once. Closing the generator early cancels the rest."""
    import uuid

    play = ray.remote(num_cpus=config.threads, max_retries=3)(_ray_play)
    run, entries_ref = uuid.uuid4().hex, ray.put(list(entries))
    window = max(2, 2 * int(ray.cluster_resources().get("CPU", 1) // config.threads))
    todo, pending = iter(tasks), []
    try:
        while True:
            for task in itertools.islice(todo, window - len(pending)):
                pending.append(play.remote(run, config.board, entries_ref, build, config.threads, task))
            if not pending:
                return
            ready, pending = ray.wait(pending, num_returns=1)
            yield ray.get(ready[0])
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)


# ------------------------------------------------------------------------------ storage
def _record_problem(rec, games: dict, labels: Sequence[str]) -> str | None:
    """Why a line of ``results.jsonl`` is not a game of this tournament (None when it is one).
    ``games``: id -> (pair index, i, j, g)."""
    if not isinstance(rec, dict):
        return f"a JSON {type(rec).__name__}, not a game record"
    key = rec.get("id")
    if not isinstance(key, str) or key not in games:
        return f"no game of this tournament has id {key!r}"
    first, second = _seats(*games[key][1:])
    if (rec.get("first"), rec.get("second")) != (labels[first], labels[second]):
        return f"game {key} is {labels[first]} vs {labels[second]}, not {rec.get('first')!r} vs {rec.get('second')!r}"
    if rec.get("result_first") not in (0, 0.5, 1):
        return f"game {key} has no result_first of 0, 0.5 or 1"
    return None


class _FolderLock:
    """An exclusive lock on a results folder for the length of a run, so two runs cannot append the
    same games to one file."""

    def __init__(self, folder: str):
        self.f = open(os.path.join(folder, ".lock"), "w")
        try:
            import fcntl
        except ImportError:  # pragma: no cover - not POSIX: no lock
            return
        try:
            fcntl.flock(self.f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self.f.close()
            raise ValueError(f"another tournament is writing to {folder}; wait for it or stop it first") from None

    def close(self):
        self.f.close()


# ------------------------------------------------------------------------------ statistics
def wilson_interval(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a rate (draws may count as half successes)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def bradley_terry_elo(n_agents: int, games: Sequence[tuple[int, int, float]], prior_draws: float = 1.0,
                      anchor: int | None = None, iters: int = 500) -> np.ndarray:
    """Maximum-likelihood Elo from (i, j, score of i) games; draws count half. ``prior_draws`` virtual draws
    per pair keep unbeaten agents finite. Anchored to mean 0, or ``anchor``'s rating = 0."""
    wins = np.zeros((n_agents, n_agents))
    for i, j, s in games:
        wins[i, j] += s
        wins[j, i] += 1 - s
    played = wins + wins.T
    pairs = played > 0
    wins = wins + prior_draws * 0.5 * pairs
    played = wins + wins.T
    gamma = np.ones(n_agents)
    total = wins.sum(axis=1)
    for _ in range(iters):  # minorisation-maximisation (Hunter 2004)
        denom = (played / (gamma[:, None] + gamma[None, :])).sum(axis=1)
        new = np.where(denom > 0, total / np.maximum(denom, 1e-300), gamma)
        new /= np.exp(np.mean(np.log(np.maximum(new, 1e-300))))
        if np.max(np.abs(new - gamma)) < 1e-10:
            gamma = new
            break
        gamma = new
    elo = 400 * np.log10(np.maximum(gamma, 1e-300))
    return elo - (elo[anchor] if anchor is not None else elo.mean())


@dataclass
class TournamentReport:
    labels: list[str]
    wdl: np.ndarray  # [n, n, 3] wins, draws, losses of row against column
    elo: np.ndarray
    elo_ci: np.ndarray  # [n, 2]
    games: int

    def score(self, i: int, j: int) -> tuple[float, int, tuple[float, float]]:
        w, d, l_ = self.wdl[i, j]
        n = int(w + d + l_)
        rate = (w + 0.5 * d) / n if n else float("nan")
        return rate, n, wilson_interval(w + 0.5 * d, n)

    def results_of(self, i: int) -> dict[str, dict]:
        """Agent ``i``'s record against each opponent it met: label -> wins, draws, losses, score (wins +
        draws/2 per game) and its Wilson 95% interval ``ci95``."""
        out = {}
        for j, label in enumerate(self.labels):
            if j != i and self.wdl[i, j].sum():
                score, _, (lo, hi) = self.score(i, j)
                w, d, l_ = (int(x) for x in self.wdl[i, j])
                out[label] = {"wins": w, "draws": d, "losses": l_, "score": score, "ci95": [lo, hi]}
        return out

    def table(self) -> str:
        n = len(self.labels)
        width = max(len(x) for x in self.labels) + 2
        lines = [f"{'Elo':>6} {'95% CI':>15}  agent"]
        for k in np.argsort(-self.elo):
            lo, hi = self.elo_ci[k]
            lines.append(f"{self.elo[k]:>6.0f} [{lo:>5.0f},{hi:>6.0f}]  {self.labels[k]}")
        lines.append("")
        lines.append("score of row vs column (wins + draws/2, n games, Wilson 95% interval):")
        for i in range(n):
            cells = []
            for j in range(n):
                if i == j or self.wdl[i, j].sum() == 0:
                    continue
                rate, games, (lo, hi) = self.score(i, j)
                cells.append(f"vs {self.labels[j]}: {rate:.3f} [{lo:.3f}, {hi:.3f}] (n={games})")
            lines.append(f"{self.labels[i]:<{width}}" + "; ".join(cells))
        return "\n".join(lines)

    def write_csv(self, out: str) -> None:
        rows = ["agent,opponent,wins,draws,losses,score,ci_low,ci_high"]
        for i, j in itertools.permutations(range(len(self.labels)), 2):
            if self.wdl[i, j].sum():
                rate, _, (lo, hi) = self.score(i, j)
                w, d, l_ = self.wdl[i, j]
                rows.append(f"{_csv(self.labels[i])},{_csv(self.labels[j])},{int(w)},{int(d)},{int(l_)},"
                            f"{rate:.4f},{lo:.4f},{hi:.4f}")
        atomic_write(os.path.join(out, "pairs.csv"), "\n".join(rows) + "\n")
        rows = ["agent,elo,ci_low,ci_high"]
        for k, label in enumerate(self.labels):
            rows.append(f"{_csv(label)},{self.elo[k]:.1f},{self.elo_ci[k, 0]:.1f},{self.elo_ci[k, 1]:.1f}")
        atomic_write(os.path.join(out, "elo.csv"), "\n".join(rows) + "\n")

    def plot(self, path: str) -> None:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        n = len(self.labels)
        fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(6 + 1.2 * n, 4 + 0.3 * n))
        order = np.argsort(-self.elo)
        err = np.abs(self.elo_ci[order] - self.elo[order, None]).T
        ax1.errorbar(range(n), self.elo[order], yerr=err, fmt="o", capsize=4)
        ax1.set_xticks(range(n), [self.labels[k] for k in order], rotation=30, ha="right")
        ax1.set_ylabel("Elo (bootstrap 95% interval)")
        ax1.set_title("Ratings")
        ax1.grid(alpha=0.3)
        rates = np.full((n, n), np.nan)
        for i, j in itertools.permutations(range(n), 2):
            if self.wdl[i, j].sum():
                rates[i, j] = self.score(i, j)[0]
        im = ax2.imshow(rates[np.ix_(order, order)], vmin=0, vmax=1, cmap="RdBu")
        for a, i in enumerate(order):
            for b, j in enumerate(order):
                if not np.isnan(rates[i, j]):
                    ax2.text(b, a, f"{rates[i, j]:.2f}", ha="center", va="center", fontsize=8)
        ax2.set_xticks(range(n), [self.labels[k] for k in order], rotation=30, ha="right")
        ax2.set_yticks(range(n), [self.labels[k] for k in order])
        ax2.set_title("Score of row vs column")
        fig.colorbar(im, ax=ax2, fraction=0.046)
        fig.tight_layout()
        tmp = path + ".tmp.png"
        fig.savefig(tmp, dpi=110)
        plt.close(fig)
        os.replace(tmp, path)


def _csv(text: str) -> str:
    return f'"{text}"' if "," in text else text


def summarise(labels: list[str], records: list[dict], bootstrap: int = 200, seed: int = 0) -> TournamentReport:
    n = len(labels)
    index = {label: k for k, label in enumerate(labels)}
    wdl = np.zeros((n, n, 3))
    games = []
    for r in records:
        i, j = index[r["first"]], index[r["second"]]
        s = r["result_first"]
        games.append((i, j, s))
        col = 0 if s == 1 else (1 if s == 0.5 else 2)
        wdl[i, j, col] += 1
        wdl[j, i, 2 - col] += 1
    anchor = index.get("random")
    elo = bradley_terry_elo(n, games, anchor=anchor)
    rng = np.random.default_rng(seed)
    samples = []
    if games and bootstrap > 0:
        arr = np.array(games)
        for _ in range(bootstrap):
            pick = arr[rng.integers(len(arr), size=len(arr))]
            samples.append(bradley_terry_elo(n, [(int(i), int(j), s) for i, j, s in pick], anchor=anchor, iters=200))
        ci = np.percentile(np.array(samples), [2.5, 97.5], axis=0).T
    else:
        ci = np.stack([elo, elo], axis=1)
    return TournamentReport(labels, wdl, elo, ci, len(records))


# ------------------------------------------------------------------------------ driver
# may change on resume: they do not change which games are played
_FREE_KEYS = ("workers", "threads", "bootstrap", "backend", "ray_address")


def _check_or_save_config(cfg_path: str, config: TournamentConfig) -> None:
    """Save the config beside the results, or check that a resumed run has the same one."""
    if not os.path.exists(cfg_path):
        atomic_write(cfg_path, json.dumps(config.to_json(), indent=2) + "\n")
        return
    with open(cfg_path) as f:
        saved = json.load(f)
    same = {k: v for k, v in json.loads(json.dumps(config.to_json())).items() if k not in _FREE_KEYS}
    if {k: v for k, v in saved.items() if k not in _FREE_KEYS} != same:
        raise ValueError(
            f"{os.path.dirname(cfg_path)} holds a tournament with another config; use another --out or the same "
            f"options.\nsaved: {saved}\nnow:   {config.to_json()}"
        )


def _open_results(out: str, config: TournamentConfig, games: dict):
    """Lock the folder ``out``, save or check its config and read the games on file (each id once; bad lines
    moved aside); returns (lock, games, appender). A folder that cannot be written is a ValueError."""
    lock = None
    try:
        os.makedirs(out, exist_ok=True)
        lock = _FolderLock(out)
        _check_or_save_config(os.path.join(out, "config.json"), config)
        path = os.path.join(out, "results.jsonl")
        done = {}
        for rec in read_jsonl(path, lambda rec: _record_problem(rec, games, config.agents)):
            done.setdefault(rec["id"], rec)  # a game on file twice counts once
        return lock, list(done.values()), JsonlAppender(path)
    except BaseException as exc:
        if lock is not None:
            lock.close()
        if isinstance(exc, OSError):
            where = f" ({exc.filename})" if exc.filename and exc.filename != out else ""
            raise ValueError(f"cannot write results to the folder {out}: {exc.strerror or exc}{where}") from None
        raise


def gauntlet(board: str, entry, opponents: Sequence = ("random", "greedy"), games: int = 400,
             seed: int = 0, openings: int = 0, progress: bool = False, *,
             build: Callable | None = None) -> TournamentReport:
    """``entry`` (a spec, or ``(label, factory)``) against each of ``opponents`` (specs or pairs too),
    ``games`` games each with the first seat alternating, in this process; ``report.results_of(0)`` has its
    scores and intervals. Specs need ``build`` (:func:`registry.tournaments.gauntlet` passes the registry's)."""
    entries = [entry, *opponents]
    cfg = TournamentConfig(board=board, agents=tuple(map(_label, entries)), games=games, mode="gauntlet",
                           seed=seed, openings=openings, bootstrap=0)
    return run_tournament(cfg, agents=entries, progress=progress, echo=None, build=build)


def format_results(results: dict[str, dict]) -> str:
    """Lines "vs NAME over N games: W/D/L, score [Wilson 95% interval]" of :meth:`TournamentReport.results_of`."""
    return "\n".join(
        f"vs {name} over {r['wins'] + r['draws'] + r['losses']} games: {r['wins']} W {r['draws']} D {r['losses']} L, "
        f"score {r['score']:.3f} (95% CI {r['ci95'][0]:.3f}-{r['ci95'][1]:.3f})" for name, r in results.items())


def run_tournament(config: TournamentConfig, out: str | None = None, agents: Sequence | None = None,
                   progress: bool = True, echo: Callable[[str], None] | None = print, *,
                   build: Callable | None = None) -> TournamentReport:
    """Play (or resume) the tournament; results under ``out`` when given. ``agents`` may replace the spec
    strings of ``config.agents`` with ``(label, factory)`` entries of the same labels, in the same order;
    the spec strings left are built by ``build(spec, board, seed) -> Agent`` (module-level, so that it
    pickles), which the caller checks beforehand (:func:`registry.tournaments.run_tournament` does both)."""
    entries = list(agents) if agents is not None else list(config.agents)
    labels = [_label(e) for e in entries]
    if labels != list(config.agents):
        raise ValueError(f"agent entries {labels} do not match config.agents {list(config.agents)}")
    specs = [e for e in entries if isinstance(e, str)]
    if specs and build is None:
        raise ValueError(f"agent specs {specs} need a builder: pass build=, or run the tournament through "
                         "registry.tournaments.run_tournament (the registry's names)")
    games = {f"{i}-{j}-{g}": (p, i, j, g) for p, (i, j) in enumerate(config.pairs()) for g in range(config.games)}
    done: list[dict] = []
    appender = lock = session = None
    if config.backend == "ray":  # before the folder is touched: a cluster that is not there changes nothing
        session = RaySession(config.ray_address, num_cpus=config.workers)
        try:
            check_resources(session.resources(), cpus=config.threads, what=f"a game ({config.threads} threads)")
        except ValueError:
            session.close()
            raise
    if out is not None:
        try:
            lock, done, appender = _open_results(out, config, games)
        except BaseException:
            if session is not None:
                session.close()
            raise
    have = {r["id"] for r in done}
    tasks = []
    for key, (pair_index, i, j, g) in games.items():
        if key in have:
            continue
        op_seed = (config.seed * 1_000_003 + pair_index * 10_007 + g // 2) & 0x7FFFFFFF
        opening = make_opening(config.board, config.openings, config.opening_mode, op_seed) if config.openings else []
        agent_seed = (config.seed * 7_919 + pair_index * 104_729 + g * 2) & 0x7FFFFFFF
        tasks.append((i, j, g, opening, agent_seed))
    if echo and done:
        echo(f"resuming: {len(done)} games on file, {len(tasks)} to play")
    records = list(done)
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover
        tqdm = None
    bar = tqdm(total=len(tasks), desc="games", disable=not progress or tqdm is None) if tqdm else None
    pool = None
    clean = False
    in_process = contextlib.ExitStack()
    try:
        if session is not None:
            finished = _ray_games(session.ray, config, entries, build, tasks)
        elif config.workers > 1 and len(tasks) > 1:
            pool = _worker_pool(min(config.workers, len(tasks)), config.threads, config.board, entries,
                                build)  # no idle ones
            finished = pool.imap_unordered(_worker_play, tasks)
        else:
            in_process.enter_context(limit_threads(config.threads))
            finished = map(_Games(config.board, entries, build).play, tasks)
        for rec in finished:
            records.append(rec)
            if appender:
                appender.add(rec)
            if bar:
                bar.update(1)
        clean = True
    finally:
        if pool is not None:
            if clean:
                pool.close()
                pool.join()
            else:
                pool.terminate()
        in_process.close()
        if session is not None:
            if not clean:
                finished.close()  # cancels the games still running
            session.close()
        if bar:
            bar.close()
        if appender:
            appender.close()
        if lock:
            lock.close()
    order = {key: k for k, key in enumerate(games)}  # the order games finished in does not matter
    records.sort(key=lambda r: order[r["id"]])
    report = summarise(labels, records, bootstrap=config.bootstrap, seed=config.seed)
    if out is not None:
        report.write_csv(out)
        report.plot(os.path.join(out, "tournament.png"))
    if echo:
        echo(f"{config.board}, {len(records)} games, {config.games} per pair, openings {config.openings} "
             f"{config.opening_mode if config.openings else ''}".rstrip())
        echo(report.table())
    return report
