"""Self-play: an iteration's games in lockstep under one network, optionally split over processes.

* Game g of iteration i draws everything from ``default_rng([seed, i, g])``, so a game does not depend
  on which process plays it or beside which others.
* Backward training: the first S moves (the curriculum's start step) are BoxesZero's greedy policy (a
  uniformly random legal move with probability ``opening_random``); they give no samples. From S on
  every move is searched (PUCT, Dirichlet noise at the root); the first ``temperature_moves`` searched
  moves are drawn at ``temperature``, later ones are the most visited.
* The exact solver (``search.solve_root``): a position within its reach is not searched; its label is
  uniform over the moves of best margin, its Q the exact value, the move one of those drawn uniformly.
  Leaves within ``search.solve_leaf`` get exact values inside the search.
* Samples: every searched or solved position (its visit distribution, the game result z, the search's Q,
  the move played) and, while S > 0 and ``extra_nodes``, the well-searched internal nodes of each tree
  (:func:`internal_nodes`).
* A trace row per searched position (step, Q, the network's value of the root, z) feeds the
  curriculum's rollback rule.
* The search runs on the backend ``backend`` names (:func:`agents.search.make_search`; ``"auto"``: the C++
  search when it is built); both backends play the same games and give the same samples.
* Where the games are played (:func:`agents.training.loop.make_pool`, ``config.backend``): ``"local"``,
  :class:`SelfPlayPool` here (this process, or ``config.workers`` spawned processes, each with a
  :class:`SelfPlayWorker` holding its network); ``"ray"``, :class:`~agents.training.selfplay_ray.RaySelfPlay`
  (``config.workers`` Ray actors on a cluster or a local Ray instance). Both split the games into the same
  contiguous shares and put the results back in game order, so they give the same samples.
* The network's evaluations go through an evaluation cache of the call's own (``config.selfplay_cache``,
  :mod:`agents.search.cache`; ``"exact"``: a position evaluated once per iteration, the same games as without
  it but for the last bits of batch-dependent float rounding) on the runtime ``config.selfplay_runtime``
  (:class:`agents.models.evaluator.NetworkEvaluator`). ``benchmarks/selfplay.py`` measures both.
* Shared inference (``config.shared_inference``: ``inference`` shared, or auto on a GPU): one process holds the network and evaluates the leaf
  batches of every self-play process; on the local backend
  :class:`~agents.training.selfplay_shared.SharedInferencePool` (:mod:`agents.training.selfplay_shared`), on
  Ray one inference actor (:mod:`agents.training.selfplay_ray`).
"""

from __future__ import annotations

import functools

import numpy as np

from agents.models import build_model
from agents.models.evaluator import NetworkEvaluator
from agents.processes import call_worker, spawn_worker_pool
from agents.search import final_value, make_search, run_many, visits_to_policy
from agents.search.cache import CachedEvaluator
from agents.training.samples import Record, Samples
from baselines.greedy import GreedyAgent
from dnb_env.core import GameState, geometry

__all__ = ["self_play", "SelfPlayPool", "SelfPlayWorker", "internal_nodes", "opening_move", "shares_of",
           "merge_results", "merge_stats", "play_shares"]


def opening_move(state: GameState, rng: np.random.Generator, random_share: float) -> int:
    """BoxesZero's greedy opening policy with randomness (one of the greedy rule's moves, or with
    probability ``random_share`` any legal move)."""
    options = state.legal_actions() if rng.random() < random_share else GreedyAgent.candidates(state)
    return int(options[int(rng.integers(len(options)))])


def internal_nodes(root, played: int, min_visits: float, min_abs_q: float) -> list[Record]:
    """Expanded nodes below ``root`` (not the subtree of the move ``played``, whose position is searched
    next anyway) with at least ``min_visits`` visits and |Q| >= ``min_abs_q``: each as a sample with its
    visit distribution and its Q (for its own mover) as the value target. ``root``: a search of either
    backend (or a tree node of the Python one); both walk their trees in the same order."""
    return [Record(state, int(np.argmax(counts)), visits_to_policy(counts, 1.0), q, node=True, z=q)
            for state, counts, q in root.internal_nodes(played, min_visits, min_abs_q)]


def self_play(net, config, iteration: int, start: int, games: range | None = None,
              backend: str = "auto", evaluator=None) -> tuple[Samples, dict]:
    """Play the iteration's ``games`` (default all ``games_per_iteration``) from start step ``start``;
    returns the samples and stats (``games``, ``positions``, ``nodes``, ``first_player_win_rate``,
    ``network_calls``, ``trace [n, 4]``). ``backend``: the search's (module docstring). ``evaluator``: what
    evaluates the leaves instead of ``net`` on ``config.device`` (a :class:`RemoteEvaluator`); either way
    behind an evaluation cache of this call's own (``config.selfplay_cache``, :mod:`agents.search.cache`)."""
    cur = config.curriculum
    value = config.model.value
    if evaluator is None:
        evaluator = NetworkEvaluator(net, config.device, runtime=config.selfplay_runtime)
    if config.selfplay_cache != "off":
        evaluator = CachedEvaluator(evaluator, config.selfplay_cache)
    mcfg = config.mcts()
    games = range(config.games_per_iteration) if games is None else games
    n = len(games)
    rngs = [np.random.default_rng([config.seed, iteration, g]) for g in games]
    states = []
    for rng in rngs:
        s = GameState.new(config.board)
        while len(s.history) < start and not s.is_terminal():
            s = s.apply(opening_move(s, rng, cur.opening_random))
        states.append(s)
    board = geometry(config.board).size
    searches = [make_search(evaluator, mcfg, rngs[i], backend=backend, board=board) for i in range(n)]
    records: list[list[Record]] = [[] for _ in range(n)]
    nodes: list[list[Record]] = [[] for _ in range(n)]
    trace: list[list] = [[] for _ in range(n)]  # (step, q, v) per searched position
    extra = cur.extra_nodes and start > 0
    active = [i for i in range(n) if not states[i].is_terminal()]
    while active:
        # in the solver zone: no search; the label is uniform over the moves of best margin, Q exact
        exact = {i: e for i in active if (e := searches[i].exact_root.policy(states[i])) is not None}
        net_values = dict(zip(exact, evaluator.evaluate([states[i] for i in exact])[1])) if exact else {}
        searched = [i for i in active if i not in exact]
        counts = dict(zip(searched, run_many([searches[i] for i in searched], [states[i] for i in searched],
                                             evaluator))) if searched else {}
        for i in active:
            s, search = states[i], searches[i]
            if i in exact:
                pi, q = exact[i]
                a = int(rngs[i].choice(np.flatnonzero(pi)))
                records[i].append(Record(s, a, pi, q))
                trace[i].append((len(s.history), q, float(net_values[i])))
                states[i] = s.apply(a)
                continue
            c = counts[i]
            q = search.root_value()
            if len(s.history) - start < config.temperature_moves:
                p = visits_to_policy(c, config.search.temperature)
                a = int(rngs[i].choice(len(p), p=p))
            else:
                a = int(rngs[i].choice(np.flatnonzero(c == c.max())))
            records[i].append(Record(s, a, visits_to_policy(c, 1.0), q))
            trace[i].append((len(s.history), q, search.root_net_value))
            if extra:
                nodes[i].extend(internal_nodes(search, a, cur.node_visits * mcfg.simulations, cur.node_q))
            states[i] = s.apply(a)
        active = [i for i in active if not states[i].is_terminal()]
    ordered, rows, margins = [], [], []  # game by game: its positions, then its internal nodes
    for i in range(n):
        final = states[i]
        margins.append(final.scores[0] - final.scores[1])
        for r, (step, q, v) in zip(records[i], trace[i]):
            r.z = final_value(final.as_seen_by(r.state.current_player), value)
            rows.append((step, q, v, r.z))
        ordered += records[i] + nodes[i]
    samples = Samples.from_records(config.board, ordered, iteration)
    stats = {"games": n, "positions": len(rows), "nodes": sum(map(len, nodes)),
             "first_player_win_rate": float(np.mean([m > 0 for m in margins])) if n else 0.0,
             "network_calls": evaluator.calls, "trace": np.array(rows, dtype=np.float64).reshape(-1, 4)}
    return samples, stats


class SelfPlayWorker:
    """A worker process's share of each iteration's self-play: made once per process as it starts
    (:func:`agents.processes.spawn_worker_pool`), it builds the network of ``config.model`` on
    ``config.device`` and loads each iteration's weights into it."""

    def __init__(self, config):
        self.config = config
        self.net = build_model(config.model).to(config.device)

    def play(self, share) -> tuple[Samples, dict]:
        """``share`` = (state dict, iteration, start step, games[, board]): those games of the iteration
        (on ``board`` of a multi-size run, :meth:`TrainConfig.for_board`)."""
        state_dict, iteration, start, games, *board = share
        self.net.load_state_dict(state_dict)
        config = self.config.for_board(board[0]) if board else self.config
        return self_play(self.net, config, iteration, start, games)


def shares_of(config, games: range | None = None) -> list[range]:
    """The iteration's games (or ``games``) split into ``config.workers`` contiguous shares (empty ones left out)."""
    games = range(config.games_per_iteration) if games is None else games
    bounds = games.start + np.linspace(0, len(games), config.workers + 1).astype(int)
    return [range(lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:]) if hi > lo]


def play_shares(pool, config, head: tuple, iteration: int, start: int, board: str | None,
                games: range | None) -> tuple[Samples, dict]:
    """The iteration's ``games`` (all of them by default) played in shares (:func:`shares_of`) by the worker
    objects of ``pool`` (:func:`agents.processes.spawn_worker_pool`), each task ``(*head, iteration, start,
    share[, board])`` to their ``play``; the results merged in game order."""
    tail = () if board is None else (board,)
    shares = [(*head, iteration, start, part, *tail) for part in shares_of(config, games)]
    return merge_results(config.board, pool.map(functools.partial(call_worker, "play"), shares))


def merge_results(board: str, results: list[tuple[Samples, dict]]) -> tuple[Samples, dict]:
    """The shares' (samples, stats) in share order, as one."""
    samples = Samples.empty(board)
    for part, _ in results:
        samples = samples.concat(part)
    return samples, merge_stats([st for _, st in results])


def merge_stats(parts: list[dict]) -> dict:
    games = sum(p["games"] for p in parts)
    return {"games": games, "positions": sum(p["positions"] for p in parts), "nodes": sum(p["nodes"] for p in parts),
            "first_player_win_rate": float(sum(p["first_player_win_rate"] * p["games"] for p in parts) / max(1, games)),
            "network_calls": sum(p["network_calls"] for p in parts),
            "trace": np.concatenate([p["trace"] for p in parts]) if parts else np.zeros((0, 4))}


class SelfPlayPool:
    """``config.workers`` processes that play one iteration's games between them (contiguous shares; see
    :func:`self_play` for the seeding), each with ``config.threads`` threads
    (:func:`agents.processes.spawn_worker_pool`: a :class:`SelfPlayWorker` each). With ``workers=1`` the games
    are played in this process."""

    def __init__(self, config):
        self.config = config
        self.pool = None
        if config.workers > 1:
            self.pool = spawn_worker_pool(config.workers, config.threads, SelfPlayWorker, (config,))

    def play(self, net, iteration: int, start: int, board: str | None = None,
             games: range | None = None) -> tuple[Samples, dict]:
        """The iteration's games from start step ``start``; a multi-size run names the ``board`` of the
        ``games`` (numbered across the iteration, so that every game has its own seed)."""
        cfg = self.config if board is None else self.config.for_board(board)
        if self.pool is None:
            return self_play(net, cfg, iteration, start, games)
        state = {k: v.detach().cpu() for k, v in net.state_dict().items()}
        return play_shares(self.pool, cfg, (state,), iteration, start, board, games)

    def close(self) -> None:
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()
            self.pool = None
