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
* Where the games are played (:func:`make_pool`, ``config.backend``): ``"local"``, :class:`SelfPlayPool`
  (this process, or ``config.workers`` spawned processes); ``"ray"``, :class:`RaySelfPlay` (``config.workers``
  Ray actors on a cluster or a local Ray instance). Both split the games into the same contiguous shares and
  put the results back in game order, so they give the same samples.
* Inference on Ray (``config.inference``): ``"local"``, every actor evaluates its leaf batches with its own
  CPU copy of the network; ``"shared"``, one :class:`InferenceActor` (on a GPU when ``device`` is cuda and the
  cluster has one, else on ``threads`` CPUs) holds the network, and the actors send it their leaf batches
  (:class:`RemoteEvaluator`); the batches that reach it together go through one forward pass. The float
  results then depend on which batches met (a forward pass over other rows), so a shared-inference run
  gives the local run's games only up to float noise, not exactly.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import uuid

import numpy as np

from agents.models import build_model
from agents.models.evaluator import NetworkEvaluator
from agents.processes import spawn_pool
from agents.search import final_value, make_search, run_many, visits_to_policy
from agents.training.samples import Record, Samples
from baselines.greedy import GreedyAgent
from dnb_env.core import GameState, parse_board
from dnb_env.observations import encode_batch

__all__ = ["self_play", "SelfPlayPool", "RaySelfPlay", "SelfPlayActor", "InferenceActor", "RemoteEvaluator", "make_pool",
           "internal_nodes", "opening_move"]


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
    evaluates the leaves instead of ``net`` on ``config.device`` (a :class:`RemoteEvaluator`)."""
    cur = config.curriculum
    value = config.model.value
    evaluator = NetworkEvaluator(net, config.device) if evaluator is None else evaluator
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
    board = parse_board(config.board)
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
            if len(s.history) - start < config.search.temperature_moves:
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


_WORKER_NET: dict = {}


def _self_play_share(state_dict, config, iteration: int, start: int, games: range) -> tuple[Samples, dict]:
    """One worker process's share of an iteration's self-play (its net is built once and reloaded)."""
    net = _WORKER_NET.get("net")
    if net is None or net.config != config.model:
        net = _WORKER_NET["net"] = build_model(config.model).to(config.device)
    net.load_state_dict(state_dict)
    return self_play(net, config, iteration, start, games)


def shares_of(config) -> list[range]:
    """The iteration's games split into ``config.workers`` contiguous shares (empty ones left out)."""
    bounds = np.linspace(0, config.games_per_iteration, config.workers + 1).astype(int)
    return [range(lo, hi) for lo, hi in zip(bounds[:-1], bounds[1:]) if hi > lo]


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
    (:func:`agents.processes.spawn_pool`). With ``workers=1`` the games are played in this process."""

    def __init__(self, config):
        self.config = config
        self.pool = None
        if config.workers > 1:
            self.pool = spawn_pool(config.workers, config.threads)

    def play(self, net, iteration: int, start: int) -> tuple[Samples, dict]:
        cfg = self.config
        if self.pool is None:
            return self_play(net, cfg, iteration, start)
        state = {k: v.detach().cpu() for k, v in net.state_dict().items()}
        shares = [(state, cfg, iteration, start, games) for games in shares_of(cfg)]
        return merge_results(cfg.board, self.pool.starmap(_self_play_share, shares))

    def close(self) -> None:
        if self.pool is not None:
            self.pool.terminate()
            self.pool.join()
            self.pool = None


def make_pool(config, ray_address: str | None = None, fault=None):
    """The self-play pool of ``config.backend`` (module docstring); ``ray_address`` and ``fault`` are the
    Ray pool's (:class:`RaySelfPlay`)."""
    if config.backend == "ray":
        return RaySelfPlay(config, ray_address, fault=fault)
    return SelfPlayPool(config)


class InferenceActor:
    """A Ray actor holding the network on ``device`` for every self-play actor (``inference="shared"``). The
    learner publishes the weights once per iteration (:meth:`set_weights`, with a key naming them); a call of
    :meth:`evaluate_planes` carries the key it expects and gets None back when the actor holds other weights
    (it was restarted), whereupon the caller publishes them again. An async actor: the calls that have arrived
    while it was busy are evaluated together in one forward pass, and each gets its rows back."""

    def __init__(self, config, device: str = "cpu"):
        import torch

        torch.set_num_threads(config.threads)
        self.evaluator = NetworkEvaluator(build_model(config.model), device)
        self.key = None
        self.pending: list = []
        self.requests = self.forwards = 0

    async def set_weights(self, weights: dict, key: str) -> None:
        self.evaluator.net.load_state_dict(weights)
        self.evaluator.net.eval()
        self.key = key

    async def evaluate_planes(self, planes, masks, key: str):
        if key != self.key:
            return None
        future = asyncio.get_running_loop().create_future()
        self.pending.append((planes, masks, future))
        if len(self.pending) == 1:  # the first of a batch: let the calls already delivered join it, then run it
            await asyncio.sleep(0)
            batch, self.pending = self.pending, []
            try:
                priors, values = self.evaluator.evaluate_planes(np.concatenate([b[0] for b in batch]),
                                                                np.concatenate([b[1] for b in batch]))
            except Exception as exc:  # noqa: BLE001 - every caller of the batch gets the error
                for b in batch:
                    b[2].set_exception(exc)
            else:
                self.requests += len(batch)
                self.forwards += 1
                at = np.cumsum([0] + [len(b[0]) for b in batch])
                for b, lo, hi in zip(batch, at[:-1], at[1:]):
                    b[2].set_result((priors[lo:hi], values[lo:hi]))
        return await future

    async def counts(self) -> dict:
        """``requests`` (leaf batches received) and ``forwards`` (forward passes run) since the start."""
        return {"requests": self.requests, "forwards": self.forwards}


class RemoteEvaluator:
    """:class:`NetworkEvaluator`'s interface (``evaluate``, ``evaluate_planes``, ``encoder``, ``calls``) over an
    :class:`InferenceActor`: each call is one ``ray.get`` of the actor's ``evaluate_planes`` with the weights'
    ``key``; when the actor holds other weights (restarted) the evaluator publishes ``weights`` to it and asks
    again."""

    def __init__(self, actor, encoder: str, key: str, weights: dict):
        import ray

        self.ray, self.actor, self.encoder, self.key, self.weights = ray, actor, encoder, key, weights
        self.calls = 0

    def evaluate(self, states):
        planes = encode_batch(self.encoder, states)
        masks = np.stack([s.legal_mask() for s in states]).astype(bool)
        return self.evaluate_planes(planes, masks)

    def evaluate_planes(self, planes, masks):
        self.calls += 1
        planes = np.ascontiguousarray(planes, dtype=np.float32)
        masks = np.asarray(masks).astype(bool)
        for _ in range(3):
            out = self.ray.get(self.actor.evaluate_planes.remote(planes, masks, self.key))
            if out is not None:
                return out
            self.ray.get(self.actor.set_weights.remote(self.weights, self.key))
        raise RuntimeError(f"the inference actor does not keep the weights {self.key}")


class SelfPlayActor:
    """A Ray actor (CPU) with its own copy of the network, playing shares of iterations' games with
    :func:`self_play`. ``crash_marker``: a test hook, a path; the first actor that finds a file there takes
    it and dies just before returning its share (``os._exit``), once. ``inference``: an
    :class:`InferenceActor`'s handle; a call of :meth:`play` with a weights ``key`` evaluates its leaves there."""

    def __init__(self, config, crash_marker: str | None = None, inference=None):
        import torch

        torch.set_num_threads(config.threads)
        self.config = dataclasses.replace(config, device="cpu")
        self.net = build_model(config.model)
        self.crash_marker = crash_marker
        self.inference = inference

    def play(self, weights: dict, iteration: int, start: int, lo: int, hi: int,
             key: str | None = None) -> tuple[Samples, dict]:
        self.net.load_state_dict(weights)
        evaluator = None
        if self.inference is not None and key is not None:
            evaluator = RemoteEvaluator(self.inference, self.config.model.encoder, key, weights)
        result = self_play(self.net, self.config, iteration, start, range(lo, hi), evaluator=evaluator)
        if self.crash_marker is not None:
            try:
                os.rename(self.crash_marker, self.crash_marker + ".taken")
            except FileNotFoundError:
                pass
            else:
                os._exit(1)
        return result

    def evaluation_games(self, weights: dict, opponents: dict, tasks: list, seed: int) -> list[float]:
        """The raw policy of ``weights`` in the evaluation games ``tasks`` against ``opponents``
        (:func:`~agents.training.evaluation.play_evaluation_games`): each game's results."""
        from agents.network_agent import PolicyAgent
        from agents.training.evaluation import play_evaluation_games

        self.net.load_state_dict(weights)
        self.net.eval()
        player = PolicyAgent(NetworkEvaluator(self.net, "cpu"))
        return play_evaluation_games(player, opponents, self.config.board, tasks, seed)


class RaySelfPlay:
    """``config.workers`` self-play actors of ``config.threads`` CPUs each on the Ray cluster at ``address``
    (None: a local Ray instance, stopped by :meth:`close`). Each iteration the learner's weights go into the
    object store once (``ray.put``) and every actor plays its share of the games (:func:`shares_of`) with
    them; the shares come back whole and are put in game order.

    Faults are Ray's business: an actor that dies is restarted (``max_restarts``) and the call it was
    running is run again on the new one (``max_task_retries``). A share is one return value, so a share
    played twice is received once and a share cut short is not received at all: no sample is duplicated
    or half written. Past ``RESTARTS`` deaths of one actor the iteration fails; the run folder keeps the
    last committed iteration (``--resume``).

    ``fault("self_play")`` is called once the shares are submitted (tests kill an actor there); the actors
    are named ``dnb-self-play-<run>-<k>`` in Ray's namespace.

    ``config.inference == "shared"``: one :class:`InferenceActor` more (``dnb-inference-<run>``; 1 GPU when
    ``device`` is cuda and the cluster has a GPU, else ``threads`` CPUs, counted in the resource check), to
    which the weights are published once per iteration before the shares start.
    """

    RESTARTS = 3

    def __init__(self, config, address: str | None = None, fault=None, crash_marker: str | None = None):
        from agents.ray_cluster import RaySession, check_resources

        self.config, self.fault = config, fault or (lambda stage: None)
        self.session = RaySession(address)
        self.inference, self.published = None, 0
        try:
            resources = self.session.resources()
            shared = config.inference == "shared"
            gpu = shared and config.device.startswith("cuda") and resources.get("GPU", 0) >= 1
            cpus = config.workers * config.threads + (config.threads if shared and not gpu else 0)
            check_resources(resources, cpus=cpus, gpus=1 if gpu else 0,
                            what=f"self-play ({config.workers} actors x {config.threads} threads"
                                 + (f" + an inference actor on {'a GPU' if gpu else 'CPU'})" if shared else ")"))
            ray = self.ray = self.session.ray
            run = uuid.uuid4().hex[:8]
            if shared:
                self.inference = ray.remote(num_cpus=0 if gpu else config.threads, num_gpus=1 if gpu else 0,
                                            max_restarts=self.RESTARTS, max_task_retries=self.RESTARTS)(
                    InferenceActor).options(name=f"dnb-inference-{run}").remote(config, "cuda" if gpu else "cpu")
            actor = ray.remote(num_cpus=config.threads, max_restarts=self.RESTARTS,
                               max_task_retries=self.RESTARTS)(SelfPlayActor)
            self.actors = [actor.options(name=f"dnb-self-play-{run}-{k}").remote(config, crash_marker, self.inference)
                           for k in range(config.workers)]
        except BaseException:
            self.session.close()
            raise

    def play(self, net, iteration: int, start: int) -> tuple[Samples, dict]:
        weights = self.ray.put({k: v.detach().cpu() for k, v in net.state_dict().items()})  # once per iteration
        key = None
        if self.inference is not None:  # published to the inference actor before any share starts
            self.published += 1
            key = f"{iteration}.{self.published}"
            self.ray.get(self.inference.set_weights.remote(weights, key))
        refs = [actor.play.remote(weights, iteration, start, games.start, games.stop, key)
                for actor, games in zip(self.actors, shares_of(self.config))]
        self.fault("self_play")
        return merge_results(self.config.board, self.ray.get(refs))

    def score_against(self, net, opponents: dict, games: int, seed: int) -> dict:
        """The evaluation games of :func:`~agents.training.evaluation.score_against`, split in contiguous
        shares over the self-play actors (which hold the CPUs and sit idle between iterations' shares; a
        task of its own could wait for ever on a cluster the actors fill). Every game is seeded by its own
        task, so the scores are the local backend's; a dying actor is restarted and its share run again."""
        from agents.training.evaluation import evaluation_games, evaluation_scores

        tasks = evaluation_games(opponents, games)
        if not tasks:
            return {}
        weights = self.ray.put({k: v.detach().cpu() for k, v in net.state_dict().items()})
        shares = [list(share) for share in np.array_split(np.arange(len(tasks)), len(self.actors))]
        opponents_ref = self.ray.put(opponents)
        refs = [actor.evaluation_games.remote(weights, opponents_ref, [tasks[i] for i in share], seed)
                for actor, share in zip(self.actors, shares) if share]
        return evaluation_scores(tasks, [r for part in self.ray.get(refs) for r in part], games)

    def close(self) -> None:
        for actor in getattr(self, "actors", []):
            self.ray.kill(actor)
        self.actors = []
        if getattr(self, "inference", None) is not None:
            self.ray.kill(self.inference)
            self.inference = None
        self.session.close()
