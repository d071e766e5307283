"""Shared inference on the local backend (``inference=shared``): actor processes, one inference process, leaf
batches through shared memory; the single-process path's samples, merged forward passes, slot-sized pieces,
errors, and no process or shared block left behind."""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from multiprocessing import shared_memory
from pathlib import Path

import numpy as np
import pytest
import torch

from agents.models import build_model
from agents.models.evaluator import NetworkEvaluator
from agents.training.config import make_train_config
from agents.training.loop import make_pool, train
from agents.training.replay import Replay
from agents.training.selfplay_shared import InferenceServer, SharedInferencePool, SlotEvaluator, SlotLayout
from dnb_env.core import GameState
from dnb_env.observations import encode_batch

QUIET = dict(progress=False, echo=lambda *_: None)
ROOT = Path(__file__).parent.parent


def tiny(**kw):
    base = dict(board="2x2", iterations=1, games_per_iteration=5, simulations=16, eval_positions=0, eval_games=0,
                node_q=0.0)
    return make_train_config("resnet", "cpu", **{**base, "model.width": 8, **kw})


def _positions(board: str, n: int, seed: int = 0) -> list[GameState]:
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        s = GameState.new(board)
        for _ in range(int(rng.integers(0, s.num_actions - 1))):
            s = s.apply(int(rng.choice(s.legal_actions())))
        out.append(s)
    return out


def test_auto_inference_shares_the_network_only_on_a_gpu():
    """``inference=auto`` (the default) is shared exactly when the device is cuda and self-play runs in several
    processes or on Ray; on the CPU the pool is the per-process one; ``local`` and ``shared`` are as named."""
    cfg = tiny(workers=2)
    assert cfg.inference == "auto" and not cfg.shared_inference
    pool = make_pool(cfg)
    try:
        assert type(pool).__name__ == "SelfPlayPool"
    finally:
        pool.close()
    cases = {("cuda", 2, "local", "auto"): True, ("cuda:1", 3, "local", "auto"): True,
             ("cuda", 1, "local", "auto"): False, ("cuda", 1, "ray", "auto"): True,
             ("cpu", 4, "ray", "auto"): False, ("cuda", 2, "local", "local"): False,
             ("cpu", 1, "local", "shared"): True}
    for (device, workers, backend, inference), shared in cases.items():
        c = dataclasses.replace(cfg, device=device, workers=workers, backend=backend, inference=inference)
        assert c.shared_inference is shared, (device, workers, backend, inference)


def test_shared_inference_plays_the_single_process_games(tmp_path):
    """Two actor processes and an inference process give one process's samples (per-game seeds; floats up
    to the noise of batch composition), through ``dnb train``'s loop."""
    a = train(tiny(board="3x3"), str(tmp_path / "one"), **QUIET)
    b = train(tiny(board="3x3", workers=2, inference="shared"), str(tmp_path / "shared"), **QUIET)
    assert json.loads((tmp_path / "shared" / "config.json").read_text())["inference"] == "shared"
    assert (a[0]["games"], a[0]["positions"], a[0]["nodes"]) == (b[0]["games"], b[0]["positions"], b[0]["nodes"])
    x = Replay.load(str(tmp_path / "one" / "iterations" / "000001" / "replay.npz")).samples.arrays()
    y = Replay.load(str(tmp_path / "shared" / "iterations" / "000001" / "replay.npz")).samples.arrays()
    assert x.keys() == y.keys() and len(x["move"]) == a[0]["positions"] > 0
    for key in x:
        if x[key].dtype.kind == "f":
            np.testing.assert_allclose(x[key], y[key], atol=1e-4, err_msg=key)
        else:
            np.testing.assert_array_equal(x[key], y[key], err_msg=key)


def test_the_pool_answers_every_share_and_counts_its_forward_passes():
    """A multi-size run's boards one after another through the slots sized for the largest; every evaluator
    call of the actors is one request; closing removes the shared block."""
    cfg = make_train_config("alphavit", "cpu", boards="2x2:1,2x3:1", board="2x3", games_per_iteration=4,
                            simulations=8, **{"model.dim": 16, "model.heads": 2, "model.layers": 1})
    torch.manual_seed(0)
    net = build_model(cfg.model)
    pool = make_pool(dataclasses.replace(cfg, workers=2, inference="shared"))
    assert isinstance(pool, SharedInferencePool) and pool.layout.rows == 2 * cfg.mcts().batch_size
    name = pool.shm.name
    try:
        calls = 0
        for board, games in (("2x2", range(0, 2)), ("2x3", range(2, 4))):
            samples, stats = pool.play(net, 1, 0, board=board, games=games)
            assert stats["games"] == 2 and len(samples) == stats["positions"] > 0
            assert set(samples.arrays()["board"].ravel()) == {board}
            calls += stats["network_calls"]
        counts = pool.counts()
    finally:
        pool.close()
    assert counts["requests"] == calls > 0 and 0 < counts["forwards"] <= counts["requests"]
    assert counts["rows"] > 0 and counts["busy_s"] > 0
    with pytest.raises(FileNotFoundError):
        shared_memory.SharedMemory(name=name)
    pool.close()  # twice: nothing left to close


class _Server:
    """An :class:`InferenceServer` serving in a thread of this process, with two slots."""

    def __init__(self, cfg, rows: int):
        self.layout = SlotLayout(rows=rows, plane_floats=SlotLayout.of(cfg).plane_floats,
                                 actions=SlotLayout.of(cfg).actions)
        self.shm = shared_memory.SharedMemory(create=True, size=2 * self.layout.size)
        self.pipes = [multiprocessing.Pipe() for _ in range(2)]
        self.control, control = multiprocessing.Pipe()
        self.server = InferenceServer(cfg, "cpu", control, [p[0] for p in self.pipes], self.shm.name, self.layout)
        self.thread = threading.Thread(target=self.server.serve, daemon=True)

    def evaluator(self, slot: int, encoder: str) -> SlotEvaluator:
        return SlotEvaluator(self.pipes[slot][1], self.shm.buf, self.layout, slot, encoder)

    def stop(self):
        """The serving loop told to stop (it closes its ends of the pipes as it ends)."""
        if self.thread.is_alive():
            self.control.send(("stop",))
            self.thread.join(10)
        assert not self.thread.is_alive()

    def close(self):
        self.stop()
        self.server.shm.close()
        self.shm.close()
        self.shm.unlink()


def test_waiting_batches_share_one_forward_pass_and_big_ones_go_in_pieces():
    cfg = tiny(board="3x3")
    torch.manual_seed(1)
    net = build_model(cfg.model).eval()
    reference = NetworkEvaluator(net, "cpu", runtime=cfg.selfplay_runtime)
    states = _positions("3x3", 12)
    planes = encode_batch(cfg.model.encoder, states)
    masks = np.stack([s.legal_mask() for s in states]).astype(bool)
    want_p, want_v = reference.evaluate_planes(planes, masks)
    served = _Server(cfg, rows=5)
    try:
        # two actors' requests waiting together: one forward pass, each its own rows back
        asks = []
        for slot, rows in ((0, slice(0, 3)), (1, slice(3, 8))):
            p, m = served.layout.request(served.shm.buf, slot, planes[rows].shape, masks.shape[1])
            p[...], m[...] = planes[rows], masks[rows]
            asks.append((served.pipes[slot][0], planes[rows].shape, masks.shape[1]))
        served.server.handle(("weights", net.state_dict()))
        served.server.answer(asks)
        assert served.server.counts()["forwards"] == 1 and served.server.counts()["requests"] == 2
        for slot, rows in ((0, slice(0, 3)), (1, slice(3, 8))):
            reply = served.pipes[slot][1].recv()
            assert reply[0] == "ok"
            p, v = served.layout.response(served.shm.buf, slot, rows.stop - rows.start, masks.shape[1], *reply[1:])
            np.testing.assert_allclose(p, want_p[rows], atol=1e-5)
            np.testing.assert_allclose(v, want_v[rows], atol=1e-5)
        del p, m, v  # views of the shared block: it closes only without them
        # through the serving loop: 12 rows in a 5-row slot go as 5 + 5 + 2, one evaluator call
        served.thread.start()
        evaluator = served.evaluator(0, cfg.model.encoder)
        got_p, got_v = evaluator.evaluate(states)
        assert evaluator.calls == 1 and got_p.dtype == want_p.dtype and got_v.dtype == want_v.dtype
        np.testing.assert_allclose(got_p, want_p, atol=1e-5)
        np.testing.assert_allclose(got_v, want_v, atol=1e-5)
        assert served.server.counts()["requests"] == 2 + 3
        # leaves larger than a whole slot: a clear error, nothing sent
        with pytest.raises(ValueError, match="do not fit the inference slot"):
            evaluator.evaluate_planes(np.zeros((1, 64, 50, 50), np.float32), np.ones((1, 24), bool))
    finally:
        served.close()


def test_an_actor_hears_of_missing_weights_and_of_an_ended_inference_process():
    cfg = tiny()
    served = _Server(cfg, rows=4)
    served.thread.start()
    evaluator = served.evaluator(1, cfg.model.encoder)
    try:
        with pytest.raises(RuntimeError, match="no weights were published to the inference process"):
            evaluator.evaluate(_positions("2x2", 2))
        # weights that do not fit the network: the learner hears why, and the server goes on serving
        served.control.send(("weights", {"no such layer": torch.zeros(1)}))
        reply = served.control.recv()
        assert reply[0] == "error" and "RuntimeError" in reply[1] and served.thread.is_alive()
        served.stop()  # its ends closed as it ended: the actor is told, not left waiting
        with pytest.raises(RuntimeError, match="the inference process has ended"):
            evaluator.evaluate(_positions("2x2", 2))
    finally:
        served.close()


POOL = """
import sys, time
from agents.training.config import make_train_config
from agents.training.selfplay_shared import SharedInferencePool

if __name__ == "__main__":
    cfg = make_train_config("resnet", "cpu", board="2x2", workers=2, inference="shared", **{"model.width": 8})
    pool = SharedInferencePool(cfg)
    pool.counts()  # the inference process is up
    while len(pool.actors._pool) < 2:
        time.sleep(0.05)
    print(pool.shm.name, *(p.pid for p in pool.server._pool + pool.actors._pool), flush=True)
    time.sleep(60)
"""


def _alive(pid: int) -> bool:
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return text[text.rindex(")") + 2:].split()[0] != "Z"


def test_the_processes_and_the_shared_block_end_with_the_learner():
    """The learner killed outright (SIGKILL): the inference and actor processes end, and the shared block
    is removed (by multiprocessing's resource tracker)."""
    proc = subprocess.Popen([sys.executable, "-c", textwrap.dedent(POOL)], cwd=ROOT, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        name, *pids = proc.stdout.readline().split()
        children = [int(p) for p in pids]
        assert len(children) == 3 and all(map(_alive, children)), proc.stderr.read()
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
        end = time.monotonic() + 10
        while time.monotonic() < end and (any(map(_alive, children)) or os.path.exists(f"/dev/shm/{name}")):
            time.sleep(0.05)
        assert not any(map(_alive, children))
        assert not os.path.exists(f"/dev/shm/{name}")
    finally:
        proc.kill()
        proc.wait()
        for pid in children if "children" in locals() else []:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_the_gpu_self_play_benchmark_runs():
    """``benchmarks/selfplay_gpu.py`` at a tiny budget on the CPU: both paths give rows (figures not asserted)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("bench_selfplay_gpu", ROOT / "benchmarks" / "selfplay_gpu.py")
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    res = bench.main(["--device", "cpu", "--families", "resnet", "--board", "2x2", "--batches", "4,8", "--reps", "1",
                      "--simulations", "8", "--games", "2", "--moves", "3", "--actors", "1"])
    rows = res["families"]["resnet"]["self_play"]
    assert [r["path"] for r in rows] == ["single", "shared"]
    assert all(r["positions_per_s"] > 0 and r["leaves_per_s"] > 0 and 0 < r["busy"] <= 1 for r in rows)
    assert set(res["families"]["resnet"]["batched"]) == {4, 8}
