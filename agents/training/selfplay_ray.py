"""Self-play on Ray: :class:`RaySelfPlay` (``config.backend == "ray"``), ``config.workers`` actors
(:class:`SelfPlayActor`) that play contiguous shares of each iteration's games with
:func:`agents.training.selfplay.self_play`, put back in game order, so they give the local pool's samples.

* Inference on Ray (``config.inference``; ``"auto"`` is shared when ``device`` is cuda): ``"local"``, every actor evaluates its leaf batches with its own
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
from agents.models.evaluator import NetworkEvaluator, RemotePlanes
from agents.training.samples import Samples
from agents.training.selfplay import merge_results, self_play, shares_of

__all__ = ["RaySelfPlay", "SelfPlayActor", "InferenceActor", "RemoteEvaluator"]


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


class RemoteEvaluator(RemotePlanes):
    """:class:`NetworkEvaluator`'s interface (``evaluate``, ``evaluate_planes``, ``encoder``, ``calls``) over an
    :class:`InferenceActor`: each call is one ``ray.get`` of the actor's ``evaluate_planes`` with the weights'
    ``key``; when the actor holds other weights (restarted) the evaluator publishes ``weights`` to it and asks
    again."""

    def __init__(self, actor, encoder: str, key: str, weights: dict):
        import ray

        self.ray, self.actor, self.encoder, self.key, self.weights = ray, actor, encoder, key, weights
        self.calls = 0

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
             key: str | None = None, board: str | None = None) -> tuple[Samples, dict]:
        """Games ``lo..hi-1`` of the iteration (on ``board`` of a multi-size run)."""
        self.net.load_state_dict(weights)
        evaluator = None
        if self.inference is not None and key is not None:
            evaluator = RemoteEvaluator(self.inference, self.config.model.encoder, key, weights)
        config = self.config if board is None else self.config.for_board(board)
        result = self_play(self.net, config, iteration, start, range(lo, hi), evaluator=evaluator)
        if self.crash_marker is not None:
            try:
                os.rename(self.crash_marker, self.crash_marker + ".taken")
            except FileNotFoundError:
                pass
            else:
                os._exit(1)
        return result

    def evaluation_games(self, weights: dict, opponents: dict, tasks: list, seed: int,
                         board: str | None = None) -> list[float]:
        """The raw policy of ``weights`` in the evaluation games ``tasks`` against ``opponents``
        (:func:`~agents.training.evaluation.play_evaluation_games`) on ``board`` (default the run's): each
        game's results."""
        from agents.network_agent import PolicyAgent
        from agents.training.evaluation import play_evaluation_games

        self.net.load_state_dict(weights)
        self.net.eval()
        player = PolicyAgent(NetworkEvaluator(self.net, "cpu"))
        return play_evaluation_games(player, opponents, board or self.config.board, tasks, seed)


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

    ``config.shared_inference``: one :class:`InferenceActor` more (``dnb-inference-<run>``; 1 GPU when
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
            shared = config.shared_inference
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

    def play(self, net, iteration: int, start: int, board: str | None = None,
             games: range | None = None) -> tuple[Samples, dict]:
        """As :meth:`SelfPlayPool.play <agents.training.selfplay.SelfPlayPool.play>`: a multi-size run names
        the ``board`` of the ``games`` (one call per board, one after another: an inference actor's batch
        is then of one board)."""
        config = self.config if board is None else self.config.for_board(board)
        weights = self.ray.put({k: v.detach().cpu() for k, v in net.state_dict().items()})  # once per call
        key = None
        if self.inference is not None:  # published to the inference actor before any share starts
            self.published += 1
            key = f"{iteration}.{self.published}"
            self.ray.get(self.inference.set_weights.remote(weights, key))
        refs = [actor.play.remote(weights, iteration, start, part.start, part.stop, key, board)
                for actor, part in zip(self.actors, shares_of(config, games))]
        self.fault("self_play")
        return merge_results(config.board, self.ray.get(refs))

    def score_against(self, net, opponents: dict, games: int, seed: int, board: str | None = None) -> dict:
        """The evaluation games of :func:`~agents.training.evaluation.score_against`, split in contiguous
        shares over the self-play actors (which hold the CPUs and sit idle between iterations' shares; a
        task of its own could wait for ever on a cluster the actors fill). Every game is seeded by its own
        task, so the scores are the local backend's; a dying actor is restarted and its share run again.
        ``board``: a multi-size run's board of these games (default the run's)."""
        from agents.training.evaluation import evaluation_games, evaluation_scores

        tasks = evaluation_games(opponents, games)
        if not tasks:
            return {}
        weights = self.ray.put({k: v.detach().cpu() for k, v in net.state_dict().items()})
        shares = [list(share) for share in np.array_split(np.arange(len(tasks)), len(self.actors))]
        opponents_ref = self.ray.put(opponents)
        refs = [actor.evaluation_games.remote(weights, opponents_ref, [tasks[i] for i in share], seed, board)
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
