"""Teacher datasets: exact labels, deduplication, resumption, the manifest checks and the CLI."""

import dataclasses
import json
import os
import random

import numpy as np
import pytest

from agents.training.teacher import (MARGIN, NO_VALUE, OUTCOME, VALUE, TeachConfig, TeacherData, TeacherError,
                                     canonical_key, generate, label_position, to_samples)
from dnb_env.core import GameState
from dnb_env.solver import Solver
from dnb_env.symmetry import symmetries, transform_state
from registry.cli import main as cli
from registry.specs import agent_from_spec

# 2x3 has 17 edges: positions at 5-12 undrawn, margins up to 9 undrawn, outcomes above
SMALL = dict(board="2x3", undrawn_min=5, undrawn_max=12, margin_max=9, shard_size=12, per_game=3,
             players=("greedy", "random", "alphabeta:depth=1"), seed=3)


def _arrays(data: TeacherData) -> dict:
    return {**data.samples.arrays(), "values": data.values, "kind": data.kind, "game": data.game}


def test_labels_are_the_solvers(tmp_path):
    cfg = TeachConfig(positions=40, **SMALL)
    manifest = generate(cfg, str(tmp_path / "d"), agent_from_spec, progress=False)
    data = TeacherData.load(str(tmp_path / "d"))
    assert len(data) == manifest["positions"] == 40
    assert set(data.kind.tolist()) == {MARGIN, OUTCOME}  # both zones are sampled
    solver = Solver()
    for i, s in enumerate(data.samples.states()):
        undrawn = s.num_actions - s.edges.bit_count()
        assert 5 <= undrawn <= 12
        legal = s.legal_mask().astype(bool)
        assert ((data.values[i] != NO_VALUE) == legal).all()
        mv = solver.move_values(s)
        lead = solver.game_value(s) - solver.value(s)
        for a, v in mv.items():
            if data.kind[i] == MARGIN:
                assert data.values[i, a] == v
            else:  # the game's result after a, for the mover
                final = lead + v
                assert data.values[i, a] == (final > 0) - (final < 0)
        assert data.kind[i] == (MARGIN if undrawn <= 9 else OUTCOME)
        best = data.values[i][legal].max()
        assert np.allclose(data.samples.pi[i][legal], np.where(data.values[i][legal] == best, 1, 0) / (data.values[i] == best).sum())
        final = solver.game_value(s)
        assert data.samples.z[i] == (final > 0) - (final < 0)
        assert data.values[i, data.samples.move[i]] == best
    keys = [canonical_key(s) for s in data.samples.states()]
    assert len(set(keys)) == len(keys)


def test_result_only_labels_past_move_labels_max(tmp_path):
    from agents.training.heldout import HeldOut, held_out_report

    cfg = TeachConfig(positions=40, move_labels_max=10, **SMALL)
    generate(cfg, str(tmp_path / "d"), agent_from_spec, progress=False)
    data = TeacherData.load(str(tmp_path / "d"))
    assert set(data.kind.tolist()) == {MARGIN, OUTCOME, VALUE}  # 5-9 margins, 10 outcomes, 11-12 results only
    solver = Solver()
    for i, s in enumerate(data.samples.states()):
        undrawn = s.num_actions - s.edges.bit_count()
        assert data.kind[i] == (VALUE if undrawn > 10 else MARGIN if undrawn <= 9 else OUTCOME)
        if data.kind[i] != VALUE:
            continue
        assert (data.values[i] == NO_VALUE).all() and data.samples.pi[i].sum() == 0
        final = solver.game_value(s)
        assert data.value[i] == data.samples.z[i] == (final > 0) - (final < 0)
        assert s.legal_mask()[data.samples.move[i]]
    value_rows = data.kind == VALUE
    # targets: no policy for those rows at any temperature, their result in win units, unknown in margins
    for t in (0.0, 1.0):
        smp, known = to_samples(data, "win", t)
        assert np.isfinite(smp.pi).all() and (smp.pi[value_rows] == 0).all()
        assert np.allclose(smp.pi[~value_rows].sum(axis=1), 1) and known.all()
    _, known = to_samples(data, "margin")
    assert not known[value_rows].any()
    # held-out scores: their value counts, their (missing) policy does not
    held = HeldOut.of(data)
    assert (held.winning[value_rows] == (data.value[value_rows] > 0)).all()
    priors = np.random.default_rng(0).random(data.samples.pi.shape)
    values = np.where(data.samples.z > 0, 1.0, -1.0)
    report = held_out_report(held, priors, values)
    without = held_out_report(HeldOut.of(data.take(np.flatnonzero(~value_rows))), priors[~value_rows])
    assert report["n"] == without["n"] and report["keep"] == without["keep"]
    assert report["value_sign"] == 1.0


def test_canonical_key_is_the_same_for_every_symmetry():
    rng = random.Random(0)
    for board in ("3x3", "2x4"):
        s = GameState.new(board)
        for _ in range(9):
            s = s.apply(rng.choice(s.legal_actions()))
        keys = {canonical_key(transform_state(sym, s)) for sym in symmetries(s.rows, s.cols)}
        assert len(keys) == 1
        assert canonical_key(s.apply(s.legal_actions()[0])) not in keys


def test_outcome_labels_need_no_margins():
    s = GameState.from_actions("2x2", actions=[0, 1, 7])
    kind, values = label_position(Solver(), s, margin_max=0)
    assert kind == OUTCOME and set(values[values != NO_VALUE].tolist()) <= {-1, 0, 1}
    kind, margins = label_position(Solver(), s, margin_max=12)
    assert kind == MARGIN
    legal = margins != NO_VALUE
    assert (np.sign(margins[legal]) == values[legal]).all()  # no boxes are owned yet


def test_a_killed_run_resumes_to_the_same_dataset(tmp_path):
    cfg = TeachConfig(positions=30, **SMALL)
    generate(cfg, str(tmp_path / "once"), agent_from_spec, progress=False)
    generate(cfg, str(tmp_path / "twice"), agent_from_spec, progress=False, max_jobs=1)
    partial = TeacherData.read_manifest(str(tmp_path / "twice"))
    assert 0 < partial["positions"] < 30
    # a shard written but never committed to the manifest (killed in between) is ignored and rewritten
    with open(tmp_path / "twice" / f"shard-{partial['next_job']:06d}.npz", "wb") as f:
        f.write(b"half a shard")
    generate(cfg, str(tmp_path / "twice"), agent_from_spec, progress=False, echo=lambda *a: None)
    one, two = TeacherData.load(str(tmp_path / "once")), TeacherData.load(str(tmp_path / "twice"))
    for k, v in _arrays(one).items():
        assert np.array_equal(v, _arrays(two)[k]), k
    # a larger target continues the same dataset
    more = generate(TeachConfig(positions=45, **SMALL), str(tmp_path / "twice"), agent_from_spec, progress=False,
                    echo=lambda *a: None)
    assert more["positions"] == 45
    grown = TeacherData.load(str(tmp_path / "twice"))
    assert np.array_equal(grown.samples.edges[:30], one.samples.edges)


def test_workers_give_the_same_dataset(tmp_path):
    cfg = TeachConfig(positions=24, **SMALL)
    generate(cfg, str(tmp_path / "one"), agent_from_spec, progress=False)
    generate(cfg, str(tmp_path / "two"), agent_from_spec, progress=False, workers=2)
    one, two = TeacherData.load(str(tmp_path / "one")), TeacherData.load(str(tmp_path / "two"))
    for k, v in _arrays(one).items():
        assert np.array_equal(v, _arrays(two)[k]), k


def test_damaged_or_foreign_folders_are_refused(tmp_path):
    folder = str(tmp_path / "d")
    cfg = TeachConfig(positions=12, **SMALL)
    generate(cfg, folder, agent_from_spec, progress=False)
    with pytest.raises(TeacherError, match="another config"):
        generate(TeachConfig(positions=12, **(SMALL | {"seed": 4})), folder, agent_from_spec, progress=False)
    manifest = json.load(open(os.path.join(folder, "manifest.json")))
    shard = os.path.join(folder, manifest["shards"][0]["file"])
    data = bytearray(open(shard, "rb").read())
    data[len(data) // 2] ^= 0xFF
    open(shard, "wb").write(bytes(data))
    with pytest.raises(TeacherError, match="checksum"):
        TeacherData.load(folder)
    json.dump(manifest | {"version": 1}, open(os.path.join(folder, "manifest.json"), "w"))
    shard_bytes = bytearray(open(shard, "rb").read())
    shard_bytes[len(shard_bytes) // 2] ^= 0xFF
    open(shard, "wb").write(bytes(shard_bytes))  # undamaged again: version 1 (no result-only rows) still reads
    assert len(TeacherData.load(folder)) == 12
    for change, match in (({"version": 99}, "version"), ({"format": "x"}, "not a dnb-teacher"),
                          ({"shards": [{"file": "../x.npz"}]}, "inside the folder")):
        json.dump(manifest | change, open(os.path.join(folder, "manifest.json"), "w"))
        with pytest.raises(TeacherError, match=match):
            TeacherData.load(folder)
    with pytest.raises(TeacherError, match="no manifest"):
        TeacherData.load(str(tmp_path))
    (tmp_path / "file").write_text("x")
    with pytest.raises(TeacherError, match="not a folder"):
        generate(cfg, str(tmp_path / "file"), agent_from_spec, progress=False)


def test_targets_in_margin_and_win_units(tmp_path):
    generate(TeachConfig(positions=20, **SMALL), str(tmp_path / "d"), agent_from_spec, progress=False)
    data = TeacherData.load(str(tmp_path / "d"))
    solver = Solver()
    margin, known = to_samples(data, "margin")
    assert (known == (data.kind == MARGIN)).all()
    for i, s in enumerate(data.samples.states()):
        if known[i]:
            assert margin.z[i] == pytest.approx(solver.game_value(s) / 6)
    win, known = to_samples(data, "win", temperature=1.0)
    assert known.all() and np.array_equal(win.z, data.samples.z)
    legal = data.values != NO_VALUE
    assert np.allclose(win.pi.sum(axis=1), 1) and (win.pi[~legal] == 0).all()
    i = int(np.argmax(data.kind == MARGIN))
    a, b = np.flatnonzero(legal[i])[:2]
    assert np.log(win.pi[i, a] / win.pi[i, b]) == pytest.approx(float(data.values[i, a]) - float(data.values[i, b]), abs=1e-4)
    held_train, held = data.split_by_game(0.3)
    assert not set(held_train.game.tolist()) & set(held.game.tolist()) and len(held_train) + len(held) == len(data)


def test_cli(tmp_path, capsys):
    out = str(tmp_path / "d")
    assert cli(["teach", "--board", "2x2", "--undrawn", "3-6", "--positions", "8", "--players", "greedy,random",
                "--shard-size", "4", "--out", out, "--no-progress"]) == 0
    assert "8 positions" in capsys.readouterr().out
    assert cli(["teach", "--board", "2x2", "--undrawn", "3-x", "--out", out]) == 2
    assert "--undrawn" in capsys.readouterr().err
    assert cli(["teach", "--board", "2x2", "--undrawn", "3-20", "--out", out]) == 2
    assert cli(["teach", "--board", "2x2", "--players", "nobody", "--out", out]) == 2
    assert "unknown agent" in capsys.readouterr().err
    assert cli(["teach", "--board", "2x2", "--undrawn", "3-7", "--margin-max", "3", "--positions", "4",
                "--exclude", str(tmp_path / "nowhere"), "--out", str(tmp_path / "e")]) == 2
    assert "is not a teacher dataset" in capsys.readouterr().err
    assert not (tmp_path / "e").exists()  # no folder from a refused start


# ---------------------------------------------------------------------------------------------- supervised
TINY_DF = {"model.dim": 8, "model.heads": 1, "model.layers": 3}


def _fit_config(data, held, steps=6, **kw):
    from agents.training.config import make_train_config
    from agents.training.supervised import FitConfig

    tc = make_train_config("dotsformer", "cpu", board="2x3", **TINY_DF)
    return FitConfig(model=tc.model, loss=tc.loss, data=(data,), held=held, steps=steps, eval_every=3,
                     batch_size=16, **kw)


@pytest.fixture(scope="module")
def datasets(tmp_path_factory):
    root = tmp_path_factory.mktemp("teach")
    generate(TeachConfig(positions=40, **SMALL), str(root / "train"), agent_from_spec, progress=False)
    generate(TeachConfig(positions=20, **(SMALL | {"seed": 9})), str(root / "held"), agent_from_spec, progress=False,
             exclude=[str(root / "train")])
    return str(root / "train"), str(root / "held")


def test_fit_learns_and_resumes_to_the_same_network(datasets, tmp_path):
    import torch

    from agents.checkpoint import load_network
    from agents.training.supervised import fit

    train, held = datasets
    rows = fit(_fit_config(train, held), str(tmp_path / "once"), progress=False, echo=lambda *a: None)
    assert [r["step"] for r in rows] == [0, 3, 6] and rows[0]["agent"] == "greedy"
    assert rows[1]["policy_loss"] > 0 and "keep" in rows[2] and "value_sign" in rows[2]
    # stopped after the first commit, then resumed: the same weights and rows as one run
    def killed(*_):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):  # killed right after the commit of step 3
        fit(_fit_config(train, held), str(tmp_path / "twice"), progress=False, echo=killed)
    assert [json.loads(r)["step"] for r in open(tmp_path / "twice" / "metrics.jsonl")] == [0, 3]
    again = fit(_fit_config(train, held), str(tmp_path / "twice"), resume=True, progress=False, echo=lambda *a: None)
    a, _ = load_network(str(tmp_path / "once" / "checkpoint.pt"))
    b, _ = load_network(str(tmp_path / "twice" / "checkpoint.pt"))
    for (name, x), (_, y) in zip(a.state_dict().items(), b.state_dict().items()):
        assert torch.equal(x, y), name
    assert [r["step"] for r in again] == [0, 3, 6] and again[2]["keep"] == rows[2]["keep"]
    with pytest.raises(ValueError, match="fit run already"):
        fit(_fit_config(train, held), str(tmp_path / "once"), progress=False)
    with pytest.raises(ValueError, match="another config"):
        fit(_fit_config(train, held, lr=0.5), str(tmp_path / "once"), resume=True, progress=False)


def test_encoding_once_gives_the_batches_of_encoding_per_batch(datasets, tmp_path):
    """``encode_all`` over processes equals the per-batch encoder row for row, a replay batch gathered from
    it equals the encoded one under a symmetry, and a fit encoded by two workers ends at the same network."""
    import torch

    from agents.checkpoint import load_network
    from agents.training.replay import Replay
    from agents.training.common import encode_all
    from agents.training.supervised import fit
    from dnb_env.observations import encode_batch

    train, held = datasets
    samples, _ = to_samples(TeacherData.load(train), "margin", 0.0)
    for encoder in ("chainloop6", "chainloop6_safe"):
        planes = encode_all(samples, encoder, workers=2, chunk=7)
        assert np.array_equal(planes, encode_batch(encoder, samples.states()))
        replay, idx = Replay(samples), np.array([3, 0, 5, 5])
        sym = symmetries(2, 3)[1]
        a, b = replay.batch(idx, encoder, 0.0, sym), replay.batch(idx, encoder, 0.0, sym, planes=planes)
        assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    # the future head's targets likewise, computed once for every row
    future = encode_all(samples, None, workers=2, chunk=7)
    a = replay.batch(idx, "chainloop6", 0.0, sym, True)
    b = replay.batch(idx, "chainloop6", 0.0, sym, True, encode_all(samples, "chainloop6"), future)
    assert "safe_phase" in a and a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    assert future[1].any() and future[0].shape == future[1].shape == (len(samples), samples.pi.shape[1])
    with pytest.raises(ValueError, match="rows"):
        Replay(samples).batch(idx, "chainloop6", 0.0, planes=planes[:3])
    fit(_fit_config(train, held), str(tmp_path / "one"), progress=False, echo=lambda *a: None)
    fit(_fit_config(train, held), str(tmp_path / "two"), progress=False, echo=lambda *a: None, workers=2)
    a, _ = load_network(str(tmp_path / "one" / "checkpoint.pt"))
    b, _ = load_network(str(tmp_path / "two" / "checkpoint.pt"))
    assert all(torch.equal(x, y) for x, y in zip(a.state_dict().values(), b.state_dict().values()))


def test_fit_device_is_checked(datasets, tmp_path):
    import torch

    from agents.training.common import resolve_device
    from agents.training.supervised import fit

    train, held = datasets
    assert resolve_device("cpu") == "cpu" and resolve_device("auto") in ("cpu", "cuda")
    for bad in ("gpu", "cuda:x" if torch.cuda.is_available() else "cuda"):
        with pytest.raises(ValueError, match="device"):
            fit(_fit_config(train, held), str(tmp_path / "d"), progress=False, device=bad)
    assert not (tmp_path / "d").exists()


def test_fit_with_bad_data_writes_no_folder(datasets, tmp_path):
    """Data that is not a teacher dataset, too few positions or a missing held-out set: a clear error, and
    no run folder that a later command would take for a run already begun."""
    from agents.training.supervised import fit
    from agents.training.teacher import TeacherError

    train, held = datasets
    empty = tmp_path / "empty"
    empty.mkdir()
    cases = [(_fit_config(str(empty), held), TeacherError, "not a teacher dataset"),
             (_fit_config(train, held, positions=10**6), ValueError, "positions="),
             (_fit_config(train, str(tmp_path / "nowhere")), TeacherError, "nowhere")]
    for i, (config, error, message) in enumerate(cases):
        with pytest.raises(error, match=message):
            fit(config, str(tmp_path / f"run{i}"), progress=False, echo=lambda *a: None)
        assert not (tmp_path / f"run{i}").exists()


def test_fit_memorises_its_positions(datasets, tmp_path):
    """Scored on its own training positions, a network fitted long enough keeps the win more often than
    it did at the start: the targets reach the policy."""
    from agents.training.supervised import fit

    train, _ = datasets
    config = dataclasses.replace(_fit_config(train, train), steps=300, eval_every=150, lr=3e-3)
    rows = fit(config, str(tmp_path / "m"), progress=False, echo=lambda *a: None)
    assert rows[-1]["optimal"] > rows[1]["optimal"] and rows[-1]["optimal"] >= 0.6


@pytest.mark.parametrize("family", ["dotsformer", "resnet"])
def test_init_from_a_narrower_encoder_widens_the_input_with_zero_weights(datasets, tmp_path, family):
    """A fit whose encoder extends the init checkpoint's (chainloop6_nim over chainloop6_safe) starts from
    its weights, the new input channels' weights zero: the first network computes what the checkpoint's
    did. An encoder that does not extend it is refused."""
    import torch

    from agents.checkpoint import load_network
    from agents.training.config import make_train_config
    from agents.training.common import initial_weights
    from agents.training.supervised import FitConfig, fit
    from agents.models import build_model
    from dnb_env.observations import encode_batch

    train, held = datasets
    tiny = TINY_DF if family == "dotsformer" else {"model.blocks": 1, "model.width": 8}

    def config(encoder, **kw):
        tc = make_train_config(family, "cpu", board="2x3", **(tiny | {"model.encoder": encoder}))
        return FitConfig(model=tc.model, loss=tc.loss, data=(train,), held=held, steps=6, eval_every=3,
                         batch_size=16, **kw)

    base = str(tmp_path / "base")
    fit(config("chainloop6_safe", lr=3e-3), base, progress=False, echo=lambda *a: None)
    start = os.path.join(base, "checkpoint.pt")
    wide = config("chainloop6_nim", init=start)
    net = build_model(wide.model)
    net.load_state_dict(initial_weights(wide))
    old, _ = load_network(start)
    net.eval(), old.eval()
    states = TeacherData.load(held).samples.states()[:8]
    wide_planes = torch.from_numpy(encode_batch("chainloop6_nim", states))
    assert wide_planes[:, 9:].abs().sum() > 0  # the new channels are not empty, and are ignored
    with torch.no_grad():
        a, b = old(torch.from_numpy(encode_batch("chainloop6_safe", states))), net(wide_planes)
    for k in ("policy_logits", "value"):
        torch.testing.assert_close(a[k], b[k], rtol=0, atol=1e-6)
    with pytest.raises(ValueError, match="another model"):
        initial_weights(config("chainloop6_lcr", init=start))  # extends chainloop6, not chainloop6_safe


def test_init_from_a_checkpoint_older_than_a_model_option(datasets, tmp_path):
    """A checkpoint saved before a model option existed (its config lacks the key) is the run's model when the
    run keeps that option's default, and another model when the run sets it otherwise."""
    import torch

    from agents.checkpoint import load_checkpoint
    from agents.training.common import initial_weights

    train, held = datasets
    base = str(tmp_path / "base")
    fit_config = dataclasses.replace(_fit_config(train, held), steps=3, eval_every=3)
    from agents.training.supervised import fit
    fit(fit_config, base, progress=False, echo=lambda *a: None)
    payload = load_checkpoint(os.path.join(base, "checkpoint.pt"))
    assert payload["model"]["future_target"] == "safe_phase"
    del payload["model"]["future_target"]
    old = str(tmp_path / "old.pt")
    torch.save(payload, old)
    state = initial_weights(dataclasses.replace(fit_config, init=old))
    assert set(state) == set(payload["state_dict"])
    other = dataclasses.replace(fit_config.model, future_head=True, future_target="nimstring")
    with pytest.raises(ValueError, match="future_target: 'safe_phase' there, 'nimstring' here"):
        initial_weights(dataclasses.replace(fit_config, init=old, model=other))


def test_fit_starts_from_init_weights_and_refuses_another_model(datasets, tmp_path):
    """``init``: the fit's first network is the checkpoint's (at a vanishing learning rate its weights stay
    the checkpoint's, where a fit without it starts elsewhere), a resume does not load it again, and weights
    of another model are refused before the run folder is made."""
    import torch

    from agents.checkpoint import load_network
    from agents.training.supervised import fit

    train, held = datasets
    base = str(tmp_path / "base")
    fit(dataclasses.replace(_fit_config(train, held), steps=30, eval_every=30, lr=3e-3), base, progress=False,
        echo=lambda *a: None)
    start = os.path.join(base, "checkpoint.pt")
    tuned = str(tmp_path / "tuned")
    config = dataclasses.replace(_fit_config(train, held), lr=1e-9, lr_schedule="constant", init=start)
    fit(config, tuned, progress=False, echo=lambda *a: None)
    a, _ = load_network(start)
    b, _ = load_network(os.path.join(tuned, "checkpoint.pt"))
    for (name, x), (_, y) in zip(a.named_parameters(), b.named_parameters()):  # not the norms' running statistics
        assert torch.allclose(x, y, atol=1e-5), name
    fresh = str(tmp_path / "fresh")
    fit(dataclasses.replace(config, init=None), fresh, progress=False, echo=lambda *a: None)
    c, _ = load_network(os.path.join(fresh, "checkpoint.pt"))
    assert any(not torch.allclose(x, y, atol=1e-3) for (_, x), (_, y) in zip(b.named_parameters(), c.named_parameters()))
    # a resume continues its own weights, not the init checkpoint's
    longer = dataclasses.replace(config, steps=9)
    torch.save({"not": "a checkpoint"}, start + ".gone")
    os.replace(start + ".gone", start)
    fit(longer, tuned, resume=True, progress=False, echo=lambda *a: None)
    # another model: a clear error, and no folder
    from agents.training.config import make_train_config

    other = make_train_config("dotsformer", "cpu", board="2x3", **(TINY_DF | {"model.dim": 16})).model
    with pytest.raises(ValueError, match="another model"):
        fit(dataclasses.replace(config, model=other, init=os.path.join(fresh, "checkpoint.pt")),
            str(tmp_path / "other"), progress=False)
    assert not os.path.exists(tmp_path / "other")


def test_value_sign_by_step_adds_up(datasets):
    from agents.training.heldout import HeldOut, held_out_report

    _, held = datasets
    h = HeldOut.of(TeacherData.load(held))
    truth = np.asarray(h.data.samples.z)
    report = held_out_report(h, h.keeps.astype(np.float32), truth.astype(np.float32))  # the exact values
    assert report["value_sign"] == 1.0
    flipped = held_out_report(h, h.keeps.astype(np.float32), -truth.astype(np.float32))
    decided = truth != 0
    steps = sorted(set(h.step[decided].tolist()))
    assert steps and all(report[f"value_sign@{k}"] == 1.0 and flipped[f"value_sign@{k}"] == 0.0 for k in steps)
    half = np.where(h.step == steps[0], truth, -truth).astype(np.float32)  # right at the first step only
    mixed = held_out_report(h, h.keeps.astype(np.float32), half)
    assert mixed[f"value_sign@{steps[0]}"] == 1.0
    n_first = int((decided & (h.step == steps[0])).sum())
    assert mixed["value_sign"] == pytest.approx(n_first / int(decided.sum()))
    assert report["value_auc"] == 1.0 and flipped["value_auc"] == 0.0
    assert all(np.isnan(report[f"value_auc@{k}"]) or report[f"value_auc@{k}"] == 1.0 for k in steps)


def test_value_auc_counts_pairs():
    from agents.training.heldout import value_auc

    truth = np.array([1, 1, -1, -1, 0])
    assert value_auc(np.array([0.9, 0.1, 0.5, -0.2, 7.0]), truth) == 0.75  # 3 of the 4 won-lost pairs ordered
    assert value_auc(np.zeros(5), truth) == 0.5  # ties count half
    assert value_auc(np.array([0.3, 0.3, 0.3, 0.1, 0.0]), truth) == 0.75  # each won one: a tie and a win
    assert np.isnan(value_auc(np.ones(3), np.array([1, 1, 0])))


def test_paired_auc_difference_matches_value_auc_and_covers():
    from agents.training.heldout import paired_auc_difference, value_auc

    rng = np.random.default_rng(1)
    truth = rng.choice([1, -1, 0], size=400, p=[0.6, 0.3, 0.1])
    common = rng.normal(size=400)
    good = truth + 1.2 * common + 0.6 * rng.normal(size=400)
    poor = 0.6 * truth + 1.2 * common + 0.6 * rng.normal(size=400)
    a, b, (lo, hi), p = paired_auc_difference(good, poor, truth)
    assert (a, b) == pytest.approx((value_auc(good, truth), value_auc(poor, truth)))
    assert 0 < lo < a - b < hi and p < 0.05
    same = paired_auc_difference(good, good, truth)
    assert same[2] == (0.0, 0.0) and same[3] == 1.0
    # the interval covers the true difference about 95% of the time (two values of equal skill here)
    covered = 0
    for _ in range(300):
        truth = rng.choice([1, -1], size=300)
        common = rng.normal(size=300)
        x = truth + common + rng.normal(size=300)
        y = truth + common + rng.normal(size=300)
        lo, hi = paired_auc_difference(x, y, truth)[2]
        covered += lo <= 0.0 <= hi
    assert 0.90 <= covered / 300 <= 0.99
    assert np.isnan(paired_auc_difference(np.ones(3), np.ones(3), np.array([1, 1, 0]))[0])
    with pytest.raises(ValueError, match="one length"):
        paired_auc_difference(np.ones(3), np.ones(2), np.ones(3))


def test_held_out_scores_agree_with_the_solver(datasets):
    from agents.training.heldout import HeldOut, held_out_report
    from baselines.greedy import GreedyAgent

    _, held = datasets
    h = HeldOut.of(TeacherData.load(held))
    solver = Solver()
    for i, s in enumerate(h.data.samples.states()):
        assert h.winning[i] == solver.can_win(s)
        if h.winning[i]:
            assert set(np.flatnonzero(h.keeps[i]).tolist()) == set(solver.winning_moves(s))
        assert h.hard[i] == (not set(GreedyAgent.candidates(s)) <= set(np.flatnonzero(h.keeps[i]).tolist()))
    perfect = h.keeps.astype(np.float32)
    report = held_out_report(h, perfect)
    assert report["keep"] == 1.0 and report["n"] == int(h.winning.sum())
    worst = np.where(h.data.values != NO_VALUE, ~h.keeps, 0).astype(np.float32) + 1e-3 * (h.data.values != NO_VALUE)
    assert held_out_report(h, worst)["keep"] < 1.0


def test_cli_fit(datasets, tmp_path, capsys):
    train, held = datasets
    out = str(tmp_path / "f")
    assert cli(["fit", "dotsformer", "--board", "2x3", "--data", train, "--held", held, "--steps", "2",
                "--eval-every", "2", "--batch-size", "8", "--out", out, "--no-progress",
                *sum((["--set", f"{k}={v}"] for k, v in TINY_DF.items()), [])]) == 0
    assert "keeps the win" in capsys.readouterr().out
    assert cli(["fit", "--board", "3x3", "--data", train, "--out", str(tmp_path / "g"), "--no-progress"]) == 2
    assert "2x3" in capsys.readouterr().err
    assert cli(["fit", "--data", train, "--board", "2x3", "--set", "epochs=3", "--out", str(tmp_path / "h")]) == 2
    # dnb export takes a fit's folder too: playing weights that play as the fit's own checkpoint does
    weights = str(tmp_path / "df.pt")
    assert cli(["export", out, weights]) == 0
    assert "2 supervised steps" in capsys.readouterr().out
    from registry.agents import make_agent

    s = GameState.new(2, 3)
    a = make_agent("dotsformer", board="2x3", checkpoint=weights, simulations=0)
    b = make_agent("dotsformer", board="2x3", checkpoint=os.path.join(out, "checkpoint.pt"), simulations=0)
    assert a.select_action(s) == b.select_action(s)
    from agents.checkpoint import load_checkpoint

    full, shipped = (load_checkpoint(f)["extra"] for f in (os.path.join(out, "checkpoint.pt"), weights))
    assert "optimizer" in full and "optimizer" not in shipped and shipped["step"] == 2


def test_self_play_mixes_teacher_samples_and_starts_where_the_teacher_ends(tmp_path, monkeypatch):
    from agents.training import loop
    from agents.training.config import make_train_config

    folder = str(tmp_path / "d")
    generate(TeachConfig(positions=12, **(SMALL | {"board": "2x2", "undrawn_min": 3, "undrawn_max": 7,
                                                   "margin_max": 3})), folder, agent_from_spec, progress=False)
    cfg = make_train_config("resnet", "cpu", board="2x2", iterations=1, games_per_iteration=2, simulations=8,
                            eval_positions=0, eval_games=0, batch_size=8, epochs=1, **{"model.width": 8,
                            "teacher.data": folder, "teacher.fraction": 0.5})
    seen = []
    real = loop._with_teacher

    def spy(arrays, teacher, n, config, rng):
        out = real(arrays, teacher, n, config, rng)
        seen.append((len(arrays["value"]), n, out["value_mask"].copy()))
        return out

    monkeypatch.setattr(loop, "_with_teacher", spy)
    rows = loop.train(cfg, str(tmp_path / "run"), progress=False, echo=lambda *_: None)
    assert rows[0]["start_step"] == 12 - 7  # the first move the teacher's positions do not cover
    assert seen and all(n == 4 and k <= 4 for k, n, _ in seen)
    data = TeacherData.load(folder)
    assert (data.kind == OUTCOME).any()  # margin units: those rows carry no value loss
    assert all((mask[:k] == 1).all() for k, _, mask in seen)
    assert sum(int((mask[k:] == 0).sum()) for k, _, mask in seen) > 0
    with pytest.raises(ValueError, match="teacher.data"):
        make_train_config("resnet", "cpu", board="2x2", **{"teacher.fraction": 0.5})
    other = make_train_config("resnet", "cpu", board="3x3", **{"teacher.data": folder, "teacher.fraction": 0.5})
    with pytest.raises(ValueError, match="is for 2x2"):
        loop.train(other, str(tmp_path / "run3"), progress=False, echo=lambda *_: None)


def test_self_play_mixes_several_teacher_datasets(tmp_path):
    from agents.training import loop
    from agents.training.config import make_train_config

    near, far = str(tmp_path / "near"), str(tmp_path / "far")
    for folder, lo, hi in ((near, 3, 5), (far, 6, 8)):
        generate(TeachConfig(positions=8, **(SMALL | {"board": "2x2", "undrawn_min": lo, "undrawn_max": hi,
                                                      "margin_max": 8})), folder, agent_from_spec, progress=False)
    cfg = make_train_config("resnet", "cpu", board="2x2", **{"model.width": 8, "teacher.data": f"{near}, {far}",
                                                             "teacher.fraction": 0.5})
    samples, known, largest = loop.load_teacher(cfg)
    both = TeacherData.load(near).concat(TeacherData.load(far))
    assert len(samples) == len(both) == 16 and largest == int(both.undrawn.max()) > 5
    assert np.array_equal(samples.samples.edges, both.samples.edges) and known.all()
    with pytest.raises(ValueError, match="empty folder"):
        make_train_config("resnet", "cpu", board="2x2", **{"teacher.data": f"{near},", "teacher.fraction": 0.5})


def test_teacher_rules_benchmark_scores_the_rules(datasets):
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "teacher_rules.py"
    spec = importlib.util.spec_from_file_location("bench_teacher_rules", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = mod.main(["--held", datasets[1], "--positions", "0"])
    rules = {"greedy", "long chain rule", "safe parity", "safe parity + short chains", "safe-phase search"}
    assert set(out) == rules | {"value, 0 sacrifices"}
    assert all(0.0 <= out[row]["keep"] <= 1.0 for row in rules)


def test_teacher_score_benchmark_agrees_with_the_fits_own_scores(datasets, tmp_path):
    import importlib.util
    import pathlib

    from agents.training.supervised import fit

    train, held = datasets
    out = str(tmp_path / "f")
    fit(_fit_config(train, held, steps=6), out, progress=False)
    last = [json.loads(line) for line in open(os.path.join(out, "metrics.jsonl"))][-1]
    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "teacher_score.py"
    spec = importlib.util.spec_from_file_location("bench_teacher_score", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    rows = mod.main(["--held", held, f"tiny={out}/checkpoint.pt", f"again={out}/checkpoint.pt"])
    assert set(rows) == {"greedy (expected)", "tiny", "again"}
    paired = rows["tiny"]["paired_greedy-hard_vs_again"]
    assert (paired["only_first"], paired["only_second"], paired["diff"], paired["p"]) == (0, 0, 0.0, 1.0)
    assert rows["tiny"]["paired_winning_vs_again"]["ci"][0] <= 0.0 <= rows["tiny"]["paired_winning_vs_again"]["ci"][1]
    auc = rows["tiny"]["paired_auc_vs_again"]
    assert np.isnan(auc["auc"]) or (auc["auc"] == pytest.approx(rows["tiny"]["value_auc"]) and auc["p"] == 1.0)
    for key in ("keep", "keep_hard", "optimal", "value_sign", "n", "n_hard"):
        assert rows["tiny"][key] == pytest.approx(last[key]), key
    assert rows["greedy (expected)"]["keep"] == pytest.approx(
        [json.loads(line) for line in open(os.path.join(out, "metrics.jsonl"))][0]["keep"])


def test_searched_value_benchmark_scores_the_search_and_the_raw_value(datasets, tmp_path):
    """A search whose root is solved exactly knows every result (AUC and sign 1); the raw value scores as
    teacher_score scores it."""
    import importlib.util
    import pathlib

    from agents.training.supervised import fit

    train, held = datasets
    out = str(tmp_path / "f")
    fit(_fit_config(train, held, steps=3), out, progress=False, echo=lambda *a: None)
    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "searched_value.py"
    spec = importlib.util.spec_from_file_location("bench_searched_value", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    net = f"dotsformer:checkpoint={out}/checkpoint.pt"
    rows = mod.main(["--held", held, "--workers", "2", "--json", str(tmp_path / "v.json"),
                     f"raw={net},simulations=0", f"solved={net},simulations=8,solve_root=17"])
    assert rows["solved"]["value_sign"] == 1.0 and rows["solved"]["value_auc"] == 1.0
    spec = importlib.util.spec_from_file_location("bench_teacher_score2", path.parent / "teacher_score.py")
    score = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(score)
    raw = score.main(["--held", held, f"raw={out}/checkpoint.pt"])["raw"]
    assert rows["raw"]["value_auc"] == pytest.approx(raw["value_auc"], abs=1e-5)
    assert json.load(open(tmp_path / "v.json"))["rows"]["solved"]["value_sign"] == 1.0
    with pytest.raises(SystemExit):  # a spec without a name is refused before anything runs
        mod.main(["--held", held, net])
