"""The evaluation cache and the inference runtimes of self-play (agents.search.cache, NetworkEvaluator's
``runtime``): the cached path plays the same games, a mirrored position hits the canonical cache with the
mirrored priors, and the traced network computes what the module does. Speed is benchmarks/selfplay.py's."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
import torch

from agents.models import build_model
from agents.models.evaluator import NetworkEvaluator
from agents.search.cache import CachedEvaluator, canonical_rows
from agents.training.config import from_dict, make_train_config, to_dict
from dnb_env.core import GameState
from dnb_env.observations import encode_batch
from dnb_env.symmetry import action_permutation, symmetries, transform_state

# a 3x3 position drawn as moves: the top-left box has three sides, no symmetry maps it onto itself
#   o - o - o   o
#   |
#   o - o   o   o
#
#   o   o   o   o
#                 |
#   o   o   o   o
MOVES = [0, 1, 3, 12, 23]


def net_3x3(family="resnet", seed=0):
    torch.manual_seed(seed)
    return build_model(make_train_config(family, "cpu", board="3x3").model).eval()


class Counting:
    """An evaluator that counts the rows it evaluates."""

    def __init__(self, inner):
        self.inner, self.encoder, self.rows = inner, inner.encoder, 0

    @property
    def calls(self):
        return self.inner.calls

    def evaluate(self, states):
        self.rows += len(states)
        return self.inner.evaluate(states)

    def evaluate_planes(self, planes, masks):
        self.rows += len(planes)
        return self.inner.evaluate_planes(planes, masks)


def test_the_moves_of_the_position_are_as_drawn():
    s = GameState.from_actions(3, 3, MOVES)
    assert s.current_player == 1 and s.scores == (0, 0)
    assert all(transform_state(sym, s).edges != s.edges for sym in symmetries(3, 3)[1:])


@pytest.mark.parametrize("backend", ["native", "python"])
def test_the_exact_cache_plays_the_same_games_with_fewer_network_rows(backend):
    """Same seed, 3x3, every position searched: the cached path plays the uncached path's moves with the
    same visit distributions, and evaluates fewer rows (the searches of a game share positions)."""
    from agents.training.selfplay import self_play

    if backend == "native":
        pytest.importorskip("dnb_env._native")
    net = net_3x3()
    out = {}
    for cache in ("off", "exact"):
        cfg = make_train_config("resnet", "cpu", board="3x3", games_per_iteration=3, simulations=40,
                                extra_nodes=False, selfplay_cache=cache, solve_leaf=0, solve_root=0)
        counting = Counting(NetworkEvaluator(net))
        samples, stats = self_play(net, cfg, iteration=1, start=0, evaluator=counting, backend=backend)
        out[cache] = samples, counting.rows
    (a, rows_off), (b, rows_exact) = out["off"], out["exact"]
    assert len(a) == len(b) == 3 * 24
    np.testing.assert_array_equal(a.move, b.move)
    np.testing.assert_allclose(a.pi, b.pi, atol=1e-12)
    assert rows_exact < 0.9 * rows_off


def test_a_mirrored_position_hits_the_canonical_cache_with_mirrored_priors():
    net = net_3x3()
    s = GameState.from_actions(3, 3, MOVES)
    images = [transform_state(sym, s) for sym in symmetries(3, 3)]
    counting = Counting(NetworkEvaluator(net))
    cache = CachedEvaluator(counting, key="canonical")
    p0, v0 = cache.evaluate([s])
    assert (cache.hits, cache.misses, counting.rows) == (0, 1, 1)
    for sym, t in zip(symmetries(3, 3), images):
        p, v = cache.evaluate([t])
        perm = action_permutation(sym, 3, 3)  # t's move perm[a] is s's move a
        np.testing.assert_array_equal(p[0][perm], p0[0])
        assert v[0] == v0[0]
    assert (cache.hits, cache.misses, counting.rows) == (8, 1, 1)
    # the value is the network's on the canonical image, whichever image asked first
    planes = encode_batch(net.config.encoder, [s])
    image, image_mask, perm = canonical_rows(net.config.encoder, planes, s.legal_mask()[None].astype(bool))
    want_p, want_v = NetworkEvaluator(net).evaluate_planes(image, image_mask)
    np.testing.assert_allclose(p0[0], want_p[0][perm[0]], atol=1e-6)
    assert v0[0] == pytest.approx(float(want_v[0]), abs=1e-6)
    assert np.ptp(NetworkEvaluator(net).evaluate(images)[1]) > 0  # the network alone is not invariant


def test_the_exact_cache_misses_a_mirror_and_evaluates_a_repeated_row_once():
    net = net_3x3()
    s = GameState.from_actions(3, 3, MOVES)
    t = transform_state(symmetries(3, 3)[3], s)
    counting = Counting(NetworkEvaluator(net))
    cache = CachedEvaluator(counting, key="exact")
    p, v = cache.evaluate([s, t, s])
    assert counting.rows == 2 and (cache.hits, cache.misses) == (1, 2)
    want_p, want_v = NetworkEvaluator(net).evaluate([s, t, s])
    np.testing.assert_allclose(p, want_p, atol=1e-6)
    np.testing.assert_allclose(v, want_v, atol=1e-6)
    cache.evaluate([t])
    assert counting.rows == 2 and cache.hits == 2


def test_the_oldest_entries_leave_a_full_cache_first():
    net = net_3x3()
    a, b, c = (GameState.from_actions(3, 3, m) for m in ([0], [0, 1], [0, 1, 2]))
    counting = Counting(NetworkEvaluator(net))
    cache = CachedEvaluator(counting, key="exact", max_entries=2)
    for s in (a, b, c):
        cache.evaluate([s])
    assert len(cache.table) == 2 and counting.rows == 3
    cache.evaluate([c])
    assert counting.rows == 3
    cache.evaluate([a])
    assert counting.rows == 4
    with pytest.raises(ValueError, match="exact' or 'canonical"):
        CachedEvaluator(NetworkEvaluator(net), key="mirror")
    with pytest.raises(ValueError, match="symmetrized"):
        CachedEvaluator(NetworkEvaluator(net, symmetrize=True), key="canonical")


@pytest.mark.parametrize("family", ["resnet", "dotsformer"])
def test_the_traced_and_nnpack_networks_compute_what_the_module_does(family):
    net = net_3x3(family)
    states = [GameState.from_actions(3, 3, MOVES[:k]) for k in range(len(MOVES) + 1)]
    eager = NetworkEvaluator(net).evaluate(states)
    jit = NetworkEvaluator(net, runtime="jit")
    assert jit._module is not net
    got = jit.evaluate(states)
    np.testing.assert_allclose(got[0], eager[0], atol=1e-5)
    np.testing.assert_allclose(got[1], eager[1], atol=1e-5)
    if torch._nnpack_available():
        nnpack = NetworkEvaluator(net, runtime="nnpack")
        assert nnpack._module is not net
        got = nnpack.evaluate(states * 12)  # more rows than one NNPACK pass takes
        np.testing.assert_allclose(got[0], np.concatenate([eager[0]] * 12), atol=1e-5)
        np.testing.assert_allclose(got[1], np.concatenate([eager[1]] * 12), atol=1e-5)
    int8 = NetworkEvaluator(net, runtime="int8").evaluate(states)
    np.testing.assert_allclose(int8[0].sum(axis=1), 1, atol=1e-5)
    assert np.all((int8[0] > 0) == np.stack([s.legal_mask() for s in states]).astype(bool))
    with pytest.raises(ValueError, match="runtime must be one of"):
        NetworkEvaluator(net, runtime="tensorrt")


@pytest.mark.parametrize("family,extra", [("resnet", {}), ("dotsformer", {}), ("alphavit", {}),
                                          ("alphavit", {"variant": "vda", "aux_heads": True})])
def test_the_onnx_runtime_computes_what_the_module_does(family, extra):
    from agents.models import make_model_config
    from agents.models.evaluator import OnnxModule

    net = build_model(make_model_config(family, preset="cpu", board="3x3", **extra)).eval()
    states = [GameState.from_actions(3, 3, MOVES[:k]) for k in range(len(MOVES) + 1)]
    eager = NetworkEvaluator(net).evaluate(states)
    onnx = NetworkEvaluator(net, runtime="onnx")
    assert isinstance(onnx._module, OnnxModule)  # exported, not left eager
    got = onnx.evaluate(states * 5)  # another batch size than the export's
    np.testing.assert_allclose(got[0], np.concatenate([eager[0]] * 5), atol=1e-5)
    np.testing.assert_allclose(got[1], np.concatenate([eager[1]] * 5), atol=1e-5)
    with torch.no_grad():  # every output of the network, auxiliary heads included
        planes = torch.from_numpy(encode_batch(net.config.encoder, states))
        want, have = net(planes), onnx._module(planes)
    assert set(want) == set(have)
    for k in want:
        np.testing.assert_allclose(have[k].numpy(), want[k].numpy(), atol=1e-4)
    if family == "alphavit":  # another board's planes run eagerly
        small = [GameState.from_actions(2, 2, [0, 1])]
        np.testing.assert_allclose(onnx.evaluate(small)[0], NetworkEvaluator(net).evaluate(small)[0], atol=1e-6)


@pytest.mark.parametrize("family,extra,want", [("resnet", {"width": 64}, "nnpack"), ("resnet", {}, "onnx"),
                                               ("dotsformer", {}, "onnx"), ("alphavit", {}, "onnx")])
def test_auto_runtime_picks_what_measured_fastest(family, extra, want, monkeypatch):
    from agents.models import evaluator as ev
    from agents.models import make_model_config

    net = build_model(make_model_config(family, preset="cpu", board="3x3", **extra))
    assert ev.auto_runtime(net) == want and ev.auto_runtime(net, "cuda") == "eager"
    monkeypatch.setattr(ev, "have_onnx", lambda: False)  # without ONNX Runtime installed
    assert ev.auto_runtime(net) == ("nnpack" if family == "resnet" else "eager")


def test_the_onnx_runtime_without_onnxruntime_is_a_clear_error(monkeypatch):
    import builtins

    real = builtins.__import__

    def no_onnxruntime(name, *args, **kwargs):
        if name == "onnxruntime":
            raise ImportError("No module named 'onnxruntime'")
        return real(name, *args, **kwargs)

    monkeypatch.setattr(builtins, "__import__", no_onnxruntime)
    with pytest.raises(ImportError, match=r"pip install 'dnb-env\[onnx\]'"):
        NetworkEvaluator(net_3x3(), runtime="onnx")


def test_the_cache_options_are_checked_and_old_configs_load_without_the_cache():
    with pytest.raises(ValueError, match="selfplay_cache"):
        make_train_config("resnet", "cpu", board="3x3", selfplay_cache="yes")
    with pytest.raises(ValueError, match="selfplay_runtime"):
        make_train_config("resnet", "cpu", board="3x3", selfplay_runtime="tensorrt")
    cfg = make_train_config("resnet", "cpu", board="3x3")
    assert cfg.selfplay_cache == "exact" and from_dict(to_dict(cfg)) == cfg
    old = to_dict(cfg)
    del old["selfplay_cache"], old["selfplay_runtime"]
    assert from_dict(old) == dataclasses.replace(cfg, selfplay_cache="off", selfplay_runtime="eager")
    assert cfg.selfplay_runtime == "auto"
