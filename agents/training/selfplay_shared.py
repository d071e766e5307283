"""Shared inference on the local backend: :class:`SharedInferencePool` (``config.shared_inference``,
``config.backend == "local"``), ``config.workers`` actor processes that play contiguous shares of each
iteration's games with :func:`agents.training.selfplay.self_play` (as :class:`~agents.training.selfplay.SelfPlayPool`'s
workers do) and one inference process that holds the network on ``config.device`` and evaluates the leaf
batches of every actor.

* Transport: one block of shared memory (``multiprocessing.shared_memory``) with a slot per actor
  (:class:`SlotLayout`: request planes and masks, response priors and values, sized for the largest leaf
  batch of a share; a bigger batch goes in slot-sized pieces). An actor writes its batch into its slot and
  sends its shape on its own pipe; the answer on the pipe says the slot holds the results. No array is
  pickled.
* The inference process (:class:`InferenceServer`) waits on every actor's pipe; the batches waiting when it
  looks go through one forward pass (:class:`~agents.models.evaluator.NetworkEvaluator` on ``config.device``
  with ``config.selfplay_runtime``), and each actor gets its rows back. The float results then depend on
  which batches met, so the samples equal the single-process path's only up to float noise (as Ray's shared
  inference, :mod:`agents.training.selfplay_ray`).
* Weights: the learner sends the state dict to the inference process once per :meth:`SharedInferencePool.play`
  call, before any share starts; the actors hold no network.
* Every process ends with the one that made the pool (:func:`agents.processes.spawn_worker_pool`).
"""

from __future__ import annotations

import dataclasses
import math
import multiprocessing
import time
from multiprocessing import connection, shared_memory

import numpy as np

from agents.models import build_model
from agents.models.evaluator import NetworkEvaluator, RemotePlanes
from agents.processes import call_worker, spawn_worker_pool
from agents.training.samples import Samples
from agents.training.selfplay import play_shares, self_play
from dnb_env.core import geometry
from dnb_env.observations import encoder_shape

__all__ = ["SharedInferencePool", "InferenceServer", "SharedActor", "SlotEvaluator", "SlotLayout"]

_ALIGN = 64  # bytes: every array of a slot starts on a cache line


def _aligned(n: int) -> int:
    return -(-n // _ALIGN) * _ALIGN


@dataclasses.dataclass(frozen=True)
class SlotLayout:
    """One actor's slot in the shared block: room for ``rows`` leaves of up to ``plane_floats`` float32
    plane values and ``actions`` moves each; requests (planes float32, masks bool) and responses (priors and
    values, room for float64) side by side."""

    rows: int
    plane_floats: int
    actions: int

    @classmethod
    def of(cls, config) -> "SlotLayout":
        """The layout for ``config``'s self-play: a share's games (``games_per_iteration / workers``, rounded
        up) times the leaves a search collects per round, on the largest board of the run."""
        mix = config.board_mix()
        boards = mix.boards if mix is not None else [config.board]
        share = math.ceil(config.games_per_iteration / config.workers)
        leaves = max(max(1, config.for_board(b).mcts().batch_size) for b in boards)
        planes = max(math.prod(encoder_shape(config.model.encoder, *_rows_cols(b))) for b in boards)
        actions = max(geometry(b).num_actions for b in boards)
        return cls(rows=share * leaves, plane_floats=planes, actions=actions)

    @property
    def parts(self) -> tuple[int, int, int, int]:
        """Bytes of the slot's planes, masks, priors and values regions (each aligned)."""
        return (_aligned(self.rows * self.plane_floats * 4), _aligned(self.rows * self.actions),
                _aligned(self.rows * self.actions * 8), _aligned(self.rows * 8))

    @property
    def size(self) -> int:
        """Bytes of one slot."""
        return sum(self.parts)

    def fit(self, plane_shape: tuple, actions: int) -> int:
        """How many leaves of planes ``plane_shape (C, H, W)`` and ``actions`` moves one request holds."""
        return min(self.rows, self.rows * self.plane_floats // max(1, math.prod(plane_shape)),
                   self.rows * self.actions // max(1, actions))  # the values part holds ``rows`` leaves

    def request(self, buf, slot: int, shape: tuple, actions: int) -> tuple[np.ndarray, np.ndarray]:
        """Views of slot ``slot``'s request: planes of ``shape (n, C, H, W)`` and masks ``[n, actions]``."""
        base, (p, m, _, _) = slot * self.size, self.parts
        planes = np.ndarray(shape, np.float32, buf, base)
        masks = np.ndarray((shape[0], actions), np.bool_, buf, base + p)
        return planes, masks

    def response(self, buf, slot: int, n: int, actions: int, priors_dtype, values_dtype):
        """Views of slot ``slot``'s response: priors ``[n, actions]`` and values ``[n]`` of the dtypes given."""
        base, (p, m, q, _) = slot * self.size, self.parts
        priors = np.ndarray((n, actions), np.dtype(priors_dtype), buf, base + p + m)
        values = np.ndarray((n,), np.dtype(values_dtype), buf, base + p + m + q)
        return priors, values


def _rows_cols(board: str) -> tuple[int, int]:
    g = geometry(board)
    return g.rows, g.cols


class InferenceServer:
    """The inference process's worker object: the network of ``config.model`` on ``device``, the shared
    block ``shm_name`` of ``layout``, the inference end of each actor's pipe (``pipes[k]`` serves slot
    ``k``) and the learner's ``control`` pipe. :meth:`serve` runs until the learner says stop."""

    def __init__(self, config, device: str, control, pipes, shm_name: str, layout: SlotLayout):
        self.net = build_model(config.model).to(device).eval()
        self.device, self.runtime = device, config.selfplay_runtime
        self.control, self.slots = control, {pipe: k for k, pipe in enumerate(pipes)}
        self.shm = shared_memory.SharedMemory(name=shm_name)
        self.layout = layout
        self.evaluator = None
        self.stats = {"requests": 0, "forwards": 0, "rows": 0, "busy_s": 0.0}

    def serve(self, _=None) -> dict:
        """Answer the actors' requests and the learner's messages (``("weights", state_dict)``, ``("counts",)``,
        ``("stop",)``) until stop, or until the learner's pipe closes; returns the counts."""
        try:
            return self._serve()
        finally:  # whatever ended it, the learner and the actors see the pipes close instead of waiting
            for pipe in [self.control, *self.slots]:
                pipe.close()

    def _serve(self) -> dict:
        live = list(self.slots)
        while True:
            ready = connection.wait([self.control, *live])
            if self.control in ready:
                try:
                    message = self.control.recv()
                except EOFError:
                    return self.counts()
                if message[0] == "stop":
                    return self.counts()
                self.control.send(self.handle(message))
            asks = []
            for pipe in ready:
                if pipe is self.control:
                    continue
                try:
                    asks.append((pipe, *pipe.recv()))
                except EOFError:  # that actor has ended
                    live.remove(pipe)
            if asks:
                self.answer(asks)

    def handle(self, message):
        """The answer to a learner's message: weights loaded (``"ok"``), or the counts; a failure (the
        evaluator cannot be built on this device or runtime) is answered as ``("error", why)``."""
        try:
            return self._handle(message)
        except Exception as exc:  # noqa: BLE001 - the learner raises it
            return ("error", f"{type(exc).__name__}: {exc}")

    def _handle(self, message):
        if message[0] == "weights":
            self.net.load_state_dict(message[1])
            self.evaluator = NetworkEvaluator(self.net, self.device, runtime=self.runtime)
            return "ok"
        if message[0] == "counts":
            return self.counts()
        return ("error", f"unknown message {message[0]!r}")

    def counts(self) -> dict:
        """``requests`` (leaf batches answered), ``forwards`` (forward passes), ``rows`` (leaves evaluated) and
        ``busy_s`` (seconds in the forward passes) since the start."""
        return dict(self.stats)

    def answer(self, asks: list) -> None:
        """One forward pass per leaf shape over the waiting requests ``(pipe, shape, actions)``; every
        actor's rows written back into its slot, then the actor told."""
        groups: dict = {}
        for pipe, shape, actions in asks:
            groups.setdefault((tuple(shape[1:]), actions), []).append((pipe, shape[0]))
        buf = self.shm.buf
        for (plane_shape, actions), members in groups.items():
            views = [self.layout.request(buf, self.slots[pipe], (n, *plane_shape), actions) for pipe, n in members]
            try:
                if self.evaluator is None:
                    raise RuntimeError("no weights were published to the inference process")
                start = time.perf_counter()
                priors, values = self.evaluator.evaluate_planes(np.concatenate([v[0] for v in views]),
                                                                np.concatenate([v[1] for v in views]))
                self.stats["busy_s"] += time.perf_counter() - start
            except Exception as exc:  # noqa: BLE001 - every actor of the pass gets the error
                for pipe, _ in members:
                    pipe.send(("error", f"{type(exc).__name__}: {exc}"))
                continue
            self.stats["requests"] += len(members)
            self.stats["forwards"] += 1
            self.stats["rows"] += len(priors)
            lo = 0
            for pipe, n in members:
                p, v = self.layout.response(buf, self.slots[pipe], n, actions, priors.dtype, values.dtype)
                p[...], v[...] = priors[lo:lo + n], values[lo:lo + n]
                lo += n
                pipe.send(("ok", priors.dtype.str, values.dtype.str))


class SlotEvaluator(RemotePlanes):
    """:class:`~agents.models.evaluator.NetworkEvaluator`'s interface (``evaluate``, ``evaluate_planes``,
    ``encoder``, ``calls``) over slot ``slot`` of the shared block ``buf``: each call writes the leaves into
    the slot, asks the inference process on ``pipe`` and reads the answer from the slot (a batch bigger
    than the slot in slot-sized pieces)."""

    def __init__(self, pipe, buf, layout: SlotLayout, slot: int, encoder: str):
        self.pipe, self.buf, self.layout, self.slot, self.encoder = pipe, buf, layout, slot, encoder
        self.calls = 0

    def evaluate_planes(self, planes, masks):
        self.calls += 1
        planes = np.ascontiguousarray(planes, dtype=np.float32)
        masks = np.asarray(masks).astype(bool)
        fit = self.layout.fit(planes.shape[1:], masks.shape[1])
        if fit < 1:
            raise ValueError(f"leaves of shape {planes.shape[1:]} with {masks.shape[1]} moves do not fit the "
                             f"inference slot ({self.layout})")
        if len(planes) <= fit:
            return self._ask(planes, masks)
        parts = [self._ask(planes[i:i + fit], masks[i:i + fit]) for i in range(0, len(planes), fit)]
        return np.concatenate([p for p, _ in parts]), np.concatenate([v for _, v in parts])

    def _ask(self, planes: np.ndarray, masks: np.ndarray):
        request = self.layout.request(self.buf, self.slot, planes.shape, masks.shape[1])
        request[0][...], request[1][...] = planes, masks
        try:
            self.pipe.send((planes.shape, masks.shape[1]))
            reply = self.pipe.recv()
        except (EOFError, OSError):
            raise RuntimeError("the inference process has ended") from None
        if reply[0] != "ok":
            raise RuntimeError(f"the inference process failed: {reply[1]}")
        priors, values = self.layout.response(self.buf, self.slot, len(planes), masks.shape[1], reply[1], reply[2])
        return priors.copy(), values.copy()


class SharedActor:
    """A self-play actor process's worker object: it claims the next free slot (``claim``, a shared counter)
    and keeps that slot's pipe (``pipes[slot]``); :meth:`play` plays a share with its leaves evaluated by
    the inference process."""

    def __init__(self, config, claim, pipes, shm_name: str, layout: SlotLayout):
        with claim.get_lock():
            self.slot = claim.value
            claim.value += 1
        self.config, self.layout = config, layout
        if self.slot >= len(pipes):  # started in place of an actor that died: no slot is left for it, and a
            self.pipe = self.shm = None  # failing start would only be started again, without end
            return
        self.pipe = pipes[self.slot]
        for k, pipe in enumerate(pipes):
            if k != self.slot:
                pipe.close()
        self.shm = shared_memory.SharedMemory(name=shm_name)

    def play(self, share) -> tuple[Samples, dict]:
        """``share`` = (iteration, start step, games[, board]): those games of the iteration (on ``board`` of
        a multi-size run)."""
        if self.pipe is None:
            raise RuntimeError("a self-play actor process ended; the shared-inference pool cannot replace it")
        iteration, start, games, *board = share
        config = self.config.for_board(board[0]) if board else self.config
        evaluator = SlotEvaluator(self.pipe, self.shm.buf, self.layout, self.slot, config.model.encoder)
        return self_play(None, config, iteration, start, games, evaluator=evaluator)


class SharedInferencePool:
    """``config.workers`` actor processes and one inference process on ``config.device`` (module docstring),
    each with ``config.threads`` threads; :meth:`play` as :class:`~agents.training.selfplay.SelfPlayPool`'s
    (same shares, same seeds, results in game order)."""

    def __init__(self, config):
        self.config = config
        self.layout = SlotLayout.of(config)
        ctx = multiprocessing.get_context("spawn")
        self.shm = shared_memory.SharedMemory(create=True, size=self.layout.size * config.workers)
        pipes = [ctx.Pipe() for _ in range(config.workers)]  # (inference end, actor end)
        self.control, control = ctx.Pipe()
        self.server = self.actors = self.serving = None
        try:
            self.server = spawn_worker_pool(1, config.threads, InferenceServer,
                                            (config, config.device, control, [p[0] for p in pipes], self.shm.name,
                                             self.layout))
            self.serving = self.server.apply_async(call_worker, ("serve", None))
            self.actors = spawn_worker_pool(config.workers, config.threads, SharedActor,
                                            (config, ctx.Value("i", 0), [p[1] for p in pipes], self.shm.name,
                                             self.layout))
        except BaseException:
            self.close()
            raise
        finally:  # the children hold their ends now: a process that ends closes them for the others
            for end in [control, *(e for p in pipes for e in p)]:
                end.close()

    def _tell(self, message):
        try:
            self.control.send(message)
            reply = self.control.recv()
        except (EOFError, OSError):
            raise RuntimeError("the inference process has ended") from None
        if isinstance(reply, tuple) and reply[:1] == ("error",):
            raise RuntimeError(f"the inference process failed: {reply[1]}")
        return reply

    def counts(self) -> dict:
        """The inference process's counts since the start (:meth:`InferenceServer.counts`)."""
        return self._tell(("counts",))

    def play(self, net, iteration: int, start: int, board: str | None = None,
             games: range | None = None) -> tuple[Samples, dict]:
        """The iteration's games from start step ``start`` (a multi-size run names the ``board`` of the
        ``games``); the weights go to the inference process first."""
        cfg = self.config if board is None else self.config.for_board(board)
        self._tell(("weights", {k: v.detach().cpu() for k, v in net.state_dict().items()}))
        return play_shares(self.actors, cfg, (), iteration, start, board, games)

    def close(self) -> None:
        if self.actors is not None:
            self.actors.terminate()
            self.actors.join()
            self.actors = None
        if self.server is not None:
            try:
                self.control.send(("stop",))
                self.serving.get(timeout=10)
            except Exception:  # noqa: BLE001 - an inference process already gone is ended below anyway
                pass
            self.server.terminate()
            self.server.join()
            self.server = None
        if self.shm is not None:
            self.control.close()
            self.shm.close()
            self.shm.unlink()
            self.shm = None
