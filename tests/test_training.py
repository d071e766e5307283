"""Self-play training: config, samples, losses, curriculum, the loop, its resume and its commit."""

from __future__ import annotations

import sys

import json
import shutil

import numpy as np
import pytest
import torch

from agents.checkpoint import load_checkpoint
from conftest import Killed, kill_at
from agents.training.config import from_dict, make_train_config, to_dict
from agents.training.curriculum import Curriculum, measure, rollback_table
from agents.training.loop import train
from agents.training.losses import focal_loss, total_loss
from agents.training.replay import Replay, ReplayError
from agents.training.samples import Record, Samples
from agents.training.store import RunError, export_weights
from dnb_env.analysis import Initiative, MoveClass
from dnb_env.core import GameState
from registry import make_agent

QUIET = dict(progress=False, echo=lambda *_: None)


def tiny(model="resnet", **kw):
    base = dict(board="2x2", iterations=2, games_per_iteration=4, simulations=16, eval_positions=0, eval_games=0)
    if model == "resnet":
        base["model.width"] = 8
    return make_train_config(model, "cpu", **{**base, **kw})


def test_config_nests_sections_and_round_trips():
    cfg = tiny(**{"curriculum.rule": "boxeszero", "lr": 3e-4})
    assert cfg.board == "2x2" and cfg.search.simulations == 16 and cfg.model.width == 8
    assert cfg.curriculum.rule == "boxeszero" and cfg.lr == 3e-4 and cfg.mcts().value == "margin"
    assert from_dict(json.loads(json.dumps(to_dict(cfg)))) == cfg
    assert cfg.curriculum.first_step("5x5") == 32 and cfg.curriculum.first_step("2x2") == 6
    with pytest.raises(ValueError, match="unknown training option 'bogus'"):
        tiny(bogus=1)
    with pytest.raises(ValueError, match="curriculum rule"):
        tiny(rule="sometimes")
    with pytest.raises(ValueError, match="workers"):
        tiny(workers=0)
    with pytest.raises(ValueError, match="unknown preset"):
        make_train_config("resnet", "huge")


def test_the_device_is_resolved_like_dnb_fit_s(tmp_path):
    """auto, cpu, cuda or cuda:N, checked before the run folder is made (one rule with ``dnb fit``)."""
    with pytest.raises(ValueError, match="device must be auto, cpu, cuda or cuda:N, not 'gpu'"):
        train(tiny(device="gpu"), str(tmp_path / "gpu"), **QUIET)
    if not torch.cuda.is_available():
        with pytest.raises(ValueError, match="torch sees no CUDA GPU"):
            train(tiny(device="cuda:0"), str(tmp_path / "cuda"), **QUIET)
    assert not (tmp_path / "gpu").exists() and not (tmp_path / "cuda").exists()


def test_samples_are_columnar_and_rebuild_the_positions():
    # player 0 completes the top-left box of a 2x2 board and moves again
    s = GameState.from_actions(2, 2, [0, 6, 2, 4]).apply(7)
    assert s.scores == (1, 0) and s.current_player == 0
    pi = np.zeros(s.num_actions)
    pi[[1, 3]] = 0.5
    rec = [Record(s, 1, pi, 0.25, z=1.0), Record(GameState.new(2, 2), 3, np.full(12, 1 / 12), -0.5, node=True, z=-0.5)]
    smp = Samples.from_records("2x2", rec, iteration=7)
    assert smp.edges.shape == (2, 2) and smp.owners.shape == (2, 2, 1) and smp.pi.dtype == np.float32
    back = smp.states()
    assert (back[0].edges, back[0].owner0, back[0].owner1, back[0].current_player) == (s.edges, s.owner0, s.owner1, s.current_player)
    assert back[0].scores == s.scores and list(smp.step) == [5, 0] and list(smp.iteration) == [7, 7]
    assert smp.move_class[1].tolist() == [MoveClass.SAFE] * 12
    assert smp.initiative[1] == Initiative.NEUTRAL
    replay = Replay(smp)
    b = replay.batch(np.array([0, 1]), "chainloop6", q_mix=0.5)
    assert b["value"].tolist() == [0.625, -0.5]  # (1 - q_mix) z + q_mix q; a node keeps its Q
    assert b["planes"].shape == (2, 6, 5, 5)


def _game_samples(seed: int, iteration: int) -> Samples:
    """The positions of one random 3x3 game as samples of ``iteration``."""
    rng = np.random.default_rng(seed)
    s, records = GameState.new(3, 3), []
    while not s.is_terminal():
        move = int(rng.choice(s.legal_actions()))
        records.append(Record(s, move, np.full(s.num_actions, 1 / s.num_actions), 0.0, z=0.0))
        s = s.apply(move)
    return Samples.from_records("3x3", records, iteration=iteration)


def test_replay_encodes_each_sample_once_and_batches_as_before(monkeypatch):
    import agents.training.replay as replay_mod

    encoded = []
    real = replay_mod.encode_batch
    monkeypatch.setattr(replay_mod, "encode_batch", lambda name, states: encoded.append(len(states)) or real(name, states))
    replay = Replay.empty("3x3")
    for it in range(1, 6):
        replay.add(_game_samples(it, it))
        replay.keep_recent(it, window=3)  # the oldest game leaves once three are newer
        for draw in range(3):
            idx = np.random.default_rng([it, draw]).choice(len(replay), size=7)
            encoded.clear()
            cached = replay.batch(idx, "chainloop6_safe", 0.0, planes=replay.encoded("chainloop6_safe"))
            encoded_now = sum(encoded)
            fresh = Replay(replay.samples).batch(idx, "chainloop6_safe", 0.0)  # encodes the rows afresh
            assert all(np.array_equal(cached[k], fresh[k]) for k in fresh)
            # the first draw of an iteration encodes only the game just added; later draws nothing
            assert encoded_now == (len(_game_samples(it, it)) if draw == 0 else 0)
    assert len(replay.encoded("chainloop6_safe")) == len(replay) < sum(len(_game_samples(i, i)) for i in range(1, 6))
    encoded.clear()
    replay.encoded("chainloop6")  # another encoder: every row again
    assert sum(encoded) == len(replay)


def test_replay_file_errors_name_the_file(tmp_path):
    path = tmp_path / "replay.npz"
    Replay.empty("2x2").save(str(path))
    assert len(Replay.load(str(path))) == 0
    path.write_bytes(path.read_bytes()[:20])
    with pytest.raises(ReplayError, match="replay.npz is corrupt"):
        Replay.load(str(path))
    np.savez(str(tmp_path / "other.npz"), planes=np.zeros(3))
    with pytest.raises(ReplayError, match="missing column"):
        Replay.load(str(tmp_path / "other.npz"))


def test_focal_loss_focuses_and_balances():
    logits = torch.tensor([[4.0, 0.0, 0.0], [0.0, 0.0, 0.0]])
    target = torch.tensor([0, 0])
    plain = torch.nn.functional.cross_entropy(logits, target, reduction="none")
    focal = focal_loss(logits, target, gamma=2.0, balanced=False)
    p = torch.softmax(logits, 1)[:, 0]
    assert focal.item() == pytest.approx((((1 - p) ** 2) * plain).mean().item())
    assert focal_loss(logits, target, 0.0, False).item() == pytest.approx(plain.mean().item())
    # a rare class gets the larger weight
    t = torch.tensor([0, 0, 0, 1])
    even = torch.zeros(4, 3)
    w = focal_loss(even, t, 0.0, True).item()
    assert w == pytest.approx(np.log(3) * (3 * (4 / 6) + 1 * (4 / 2)) / 4)


def test_total_loss_covers_aux_heads_only_when_present():
    from agents.models import build_model, make_model_config

    for aux in (False, True):
        net = build_model(make_model_config("resnet", board="2x2", encoder="chainloop6", blocks=1, width=8, aux_heads=aux))
        cfg = tiny()
        smp = Samples.from_records("2x2", [Record(GameState.new(2, 2), 0, np.full(12, 1 / 12), 0.0, z=1.0)], 1)
        arrays = Replay(smp).batch(np.array([0, 0]), "chainloop6", 0.0)
        batch = {k: torch.from_numpy(v) for k, v in arrays.items()}
        loss, parts = total_loss(net(batch["planes"]), batch, cfg.loss, "2x2")
        assert loss.requires_grad and ("initiative_loss" in parts) == aux and ("move_class_loss" in parts) == aux


def test_rows_without_a_policy_target_carry_no_policy_or_initiative_loss():
    from agents.models import build_model, make_model_config

    torch.manual_seed(0)
    net = build_model(make_model_config("resnet", board="2x2", encoder="chainloop6", blocks=1, width=8, aux_heads=True))
    rng = np.random.default_rng(0)
    records = []
    for i in range(6):
        s = GameState.new(2, 2)
        for _ in range(i % 4):
            s = s.apply(int(rng.choice(s.legal_actions())))
        pi = np.zeros(12) if i >= 3 else np.full(12, 1 / 12)  # the last three: result only, no policy target
        records.append(Record(s, s.legal_actions()[0], pi, 0.0, z=1.0 if i % 2 else -1.0))
    smp = Samples.from_records("2x2", records, 1)
    batch = {k: torch.from_numpy(v) for k, v in Replay(smp).batch(np.arange(6), "chainloop6", 0.0).items()}
    cfg = tiny().loss
    out = net(batch["planes"])
    out["policy_logits"].retain_grad()
    out["initiative_logits"].retain_grad()
    loss, parts = total_loss(out, batch, cfg, "2x2")
    loss.backward()
    assert out["policy_logits"].grad[3:].abs().max() == 0 and out["policy_logits"].grad[:3].abs().max() > 0
    assert out["initiative_logits"].grad[3:].abs().max() == 0 and out["initiative_logits"].grad[:3].abs().max() > 0
    # the policy and initiative terms are the means over the rows that have a target, the value over all
    first = {k: v[:3] for k, v in batch.items()}
    with torch.no_grad():
        out = net(batch["planes"])
        _, only = total_loss({k: v[:3] for k, v in out.items()}, first, cfg, "2x2")
        _, all_rows = total_loss(out, batch, cfg, "2x2")
    assert all_rows["policy_loss"] == pytest.approx(only["policy_loss"], rel=1e-5)
    assert all_rows["initiative_loss"] == pytest.approx(only["initiative_loss"], rel=1e-5)
    assert all_rows["value_loss"] != pytest.approx(only["value_loss"], rel=1e-5)


def test_rollback_rules():
    cfg = tiny().curriculum  # dotsformer rule, min_gap 3 (cpu preset), epsilon auto
    assert cfg.epsilon is None and cfg.epsilon_for("margin", "5x5") == 0.02 and cfg.epsilon_for("win", "5x5") == 0.7
    assert tiny(epsilon=0.1).curriculum.epsilon_for("margin", "5x5") == 0.1
    # step, q, v, z: roots at step 6 right 3 of 4; steps 10 right
    trace = np.array([[6, 0.5, 0.2, 1], [6, -0.4, 0.0, -1], [6, 0.3, 0.1, 1], [6, 0.5, 0.3, -1], [10, 0.9, 0.9, 1],
                      [7, 0.0, 0.0, 1]])
    stats = measure(trace, 6, cfg, 0.1)
    assert stats["root_accuracy"] == 0.75 and stats["step_accuracy"] == 1.0 and stats["epsilon"] == 0.1
    # margin units on 5x5: narrow wins (1 and 3 boxes of 25) called right count with half a box, not with 0.1
    narrow = np.array([[6, 0.04, 0.0, 0.04], [6, 0.08, 0.0, 0.12], [6, -0.05, 0.0, -0.04], [6, 0.3, 0.0, -0.2]])
    assert measure(narrow, 6, cfg, 0.1)["root_accuracy"] == 0.0
    assert measure(narrow, 6, cfg, cfg.epsilon_for("margin", "5x5"))["root_accuracy"] == 0.75
    cur = Curriculum.begin(6)
    assert not cur.update(stats, 2, cfg)  # too soon after the start
    assert cur.update(stats, 3, cfg) and cur.start == 5
    assert not cur.update({"root_accuracy": 0.5, "step_accuracy": 1.0}, 9, cfg)
    assert cur.update(stats, 9, cfg) and cur.history == [[0, 6], [3, 5], [9, 4]]
    assert rollback_table(cur.history) == [(6, 3), (5, 6), (4, None)]
    bz = tiny(rule="boxeszero", max_gap=5).curriculum
    cur = Curriculum.begin(3)
    assert cur.update({"mqr": 0.8, "nvr": 0.9}, 1, bz) and not cur.update({"mqr": 0.8, "nvr": 0.5}, 2, bz)
    assert cur.update({}, 6, bz) and cur.start == 1  # the iteration cap (mit)
    assert Curriculum.from_dict(cur.to_dict()) == cur


def test_backward_training_samples_start_at_s_and_move_it(tmp_path):
    # rollbacks allowed every iteration with no accuracy demanded: S moves 6 -> 5 -> 4
    cfg = tiny(iterations=3, min_gap=1, tau_root=0.0, tau_step=0.0, node_q=0.0, node_visits=0.25, solve_root=0,
               solve_leaf=0)  # exact leaves are never expanded: no internal nodes to keep
    rows = train(cfg, str(tmp_path / "run"), **QUIET)
    assert [r["start_step"] for r in rows] == [6, 5, 4] and all(r["rolled_back"] for r in rows)
    assert rows[0]["positions"] == 4 * 6  # four games, searched from move 6 of 12
    assert rows[0]["nodes"] > 0
    replay = Replay.load(str(tmp_path / "run" / "iterations" / "000003" / "replay.npz")).samples
    played = ~replay.node
    assert replay.step[played & (replay.iteration == 1)].min() == 6
    assert replay.step[played & (replay.iteration == 3)].min() == 4
    payload = load_checkpoint(str(tmp_path / "run" / "checkpoint.pt"))
    assert payload["extra"]["curriculum"]["start"] == 3 and payload["extra"]["curriculum"]["history"][-1] == [3, 3]
    assert (tmp_path / "run" / "training.png").stat().st_size > 0
    from agents.training.report import rollback_report

    assert rollback_report([str(tmp_path / "run")]).splitlines()[2:] == [
        "| 6 | 1 |", "| 5 | 1 |", "| 4 | 1 |", "| 3 | (0, now) |"]


def test_training_without_matplotlib_runs_and_says_why_there_is_no_plot(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)          # the plot extra is not installed
    said = []
    rows = train(tiny(iterations=1), str(tmp_path / "run"), **{**QUIET, "echo": said.append})
    assert len(rows) == 1 and (tmp_path / "run" / "checkpoint.pt").exists()
    assert not (tmp_path / "run" / "training.png").exists()
    assert any("dnb-env[plot]" in line for line in said)


def test_the_plot_is_drawn_after_the_last_iteration_and_otherwise_once_its_interval_has_passed(tmp_path, monkeypatch):
    """training.png is drawn after the run's last iteration, after another only once PLOT_EVERY_S seconds have
    passed since it was last drawn, and once more as a resumed run starts (its copies refreshed)."""
    from agents.training import loop

    drawn = []

    def plot(metrics, path):
        drawn.append(len(metrics))
        with open(path, "wb") as f:
            f.write(b"png")

    monkeypatch.setattr(loop, "plot_training", plot)
    monkeypatch.setattr(loop, "PLOT_EVERY_S", 1e9)
    train(tiny(iterations=3), str(tmp_path / "slow"), **QUIET)
    assert drawn == [3]
    train(tiny(iterations=4), str(tmp_path / "slow"), resume=True, **QUIET)
    assert drawn == [3, 3, 4]
    drawn.clear()
    monkeypatch.setattr(loop, "PLOT_EVERY_S", 0.0)
    train(tiny(iterations=3), str(tmp_path / "every"), **QUIET)
    assert drawn == [1, 2, 3] and (tmp_path / "every" / "training.png").read_bytes() == b"png"


def test_training_runs_resumes_and_is_reproducible(tmp_path):
    cfg = tiny(eval_positions=20, eval_games=2)
    full = train(cfg, str(tmp_path / "a"), eval_simulations=8, **QUIET)
    assert [m["iteration"] for m in full] == [1, 2]
    one = tiny(iterations=1, eval_positions=20, eval_games=2)
    train(one, str(tmp_path / "b"), eval_simulations=8, **QUIET)
    resumed = train(cfg, str(tmp_path / "b"), resume=True, eval_simulations=8, **QUIET)
    assert resumed[-1]["iteration"] == 2
    assert resumed[-1]["policy_loss"] == full[-1]["policy_loss"]
    lines = (tmp_path / "b" / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(x)["iteration"] for x in lines] == [1, 2]
    last = json.loads(lines[-1])  # the last iteration is evaluated: raw-policy scores against random and greedy
    for key in ("win_rate_vs_random", "win_rate_vs_greedy"):
        assert 0 <= last[key] <= 1 and (last[key] * 2 * 2) % 1 == 0
    assert last["win_rate_vs_random"] == full[-1]["win_rate_vs_random"]
    assert last["win_rate_vs_greedy"] == full[-1]["win_rate_vs_greedy"]  # every game seeded by itself
    with pytest.raises(RunError, match="--resume"):
        train(cfg, str(tmp_path / "b"), **QUIET)
    with pytest.raises(ValueError, match="another config"):
        train(tiny(iterations=3, simulations=12), str(tmp_path / "b"), resume=True, **QUIET)
    with pytest.raises(RunError, match="holds no training run"):
        train(cfg, str(tmp_path / "nowhere"), resume=True, **QUIET)
    assert not (tmp_path / "nowhere").exists()
    # extending a run with a lower learning rate is allowed, and each row says what it trained with
    rows = train(tiny(iterations=3, lr=1e-4), str(tmp_path / "b"), resume=True, **QUIET)
    assert [m["lr"] for m in rows] == [cfg.lr, cfg.lr, 1e-4]
    # so may its data schedule: games per iteration, gradient passes, batch size
    rows = train(tiny(iterations=4, lr=1e-4, games_per_iteration=6, epochs=1, batch_size=64), str(tmp_path / "b"),
                 resume=True, **QUIET)
    assert [(m["games"], m["epochs"], m["batch_size"]) for m in rows] == [(4, 4, 256)] * 3 + [(6, 1, 64)]
    assert rows[-1]["train_steps"] == max(1, rows[-1]["replay"] // 64)
    assert json.loads((tmp_path / "b" / "config.json").read_text())["lr"] == 1e-4
    # so may the rollback rule's epsilon (rows record it: auto on 2x2 margins is half a box, 0.125), no other
    # curriculum setting
    with pytest.raises(ValueError, match=r"curriculum.tau_root"):
        train(tiny(iterations=4, lr=1e-4, tau_root=0.5), str(tmp_path / "b"), resume=True, **QUIET)
    said = []
    rows = train(tiny(iterations=5, lr=1e-4, games_per_iteration=6, epochs=1, batch_size=64, epsilon=0.3),
                 str(tmp_path / "b"), resume=True, progress=False, echo=said.append)
    assert "resuming with changed settings: curriculum.epsilon None -> 0.3, iterations 4 -> 5" in said
    assert [m["epsilon"] for m in rows] == [0.125] * 4 + [0.3]
    agent = make_agent("alphazero", board="2x2", checkpoint=str(tmp_path / "b" / "checkpoint.pt"), simulations=20)
    assert agent.search.config.value == cfg.model.value == "margin"  # the search uses the trained units
    s = GameState.new(2, 2)
    while not s.is_terminal():
        s = s.apply(agent.select_action(s))


STAGES = ("checkpoint", "replay", "metrics", "rename", "manifest", "views", "prune")



def _run_state(folder):
    payload = load_checkpoint(str(folder / "checkpoint.pt"))
    manifest = json.loads((folder / "manifest.json").read_text())
    replay = Replay.load(str(folder / manifest["dir"] / "replay.npz")).samples.arrays()
    metrics = [{k: v for k, v in row.items() if not k.endswith("_s")}
               for row in map(json.loads, (folder / "metrics.jsonl").read_text().splitlines())]
    return payload["state_dict"], replay, metrics


@pytest.mark.parametrize("stage", STAGES)
def test_a_kill_at_any_commit_boundary_resumes_to_the_same_run(tmp_path, stage):
    cfg = tiny(iterations=3)
    train(cfg, str(tmp_path / "clean"), **QUIET)
    with pytest.raises(Killed):  # at the second iteration's commit
        train(cfg, str(tmp_path / "killed"), fault=kill_at(stage), **QUIET)
    train(cfg, str(tmp_path / "killed"), resume=True, **QUIET)
    (w1, r1, m1), (w2, r2, m2) = _run_state(tmp_path / "clean"), _run_state(tmp_path / "killed")
    assert all(torch.equal(w1[k], w2[k]) for k in w1)
    assert all(np.array_equal(r1[k], r2[k]) for k in r1)
    assert m1 == m2 and [m["iteration"] for m in m2] == [1, 2, 3]
    assert not [p for p in (tmp_path / "killed" / "iterations").iterdir() if p.name.endswith(".partial")]


def test_damaged_run_files_give_clear_errors(tmp_path):
    cfg = tiny()
    train(cfg, str(tmp_path / "r"), **QUIET)
    manifest = json.loads((tmp_path / "r" / "manifest.json").read_text())
    folder = tmp_path / "r" / manifest["dir"]
    metrics = (folder / "metrics.jsonl").read_text()
    (folder / "metrics.jsonl").write_text(metrics[:-20])
    with pytest.raises(RunError, match=r"metrics.jsonl, line 2: not valid JSON"):
        train(tiny(iterations=3), str(tmp_path / "r"), resume=True, **QUIET)
    (folder / "metrics.jsonl").write_text(metrics)
    (folder / "replay.npz").write_bytes(b"garbage")
    with pytest.raises(RunError, match="replay.npz is corrupt"):
        train(tiny(iterations=3), str(tmp_path / "r"), resume=True, **QUIET)
    # the documented recovery: name the iteration before it in the manifest
    (tmp_path / "r" / "manifest.json").write_text(json.dumps({"iteration": 1, "dir": "iterations/000001"}))
    rows = train(tiny(iterations=3), str(tmp_path / "r"), resume=True, **QUIET)
    assert [m["iteration"] for m in rows] == [1, 2, 3]
    # a manifest naming a folder outside the run's iterations is refused, not followed (here to a good copy)
    shutil.copytree(tmp_path / "r" / "iterations" / "000003", tmp_path / "outside")
    for bad in ("../outside", "../../etc", str(tmp_path / "outside"), "iterations/../../outside", "iterations", "."):
        (tmp_path / "r" / "manifest.json").write_text(json.dumps({"iteration": 3, "dir": bad}))
        with pytest.raises(RunError, match=r"manifest.json names the folder .* not an iteration folder"):
            train(tiny(iterations=4), str(tmp_path / "r"), resume=True, **QUIET)
    (tmp_path / "r" / "manifest.json").write_text("{")
    with pytest.raises(RunError, match="manifest.json is damaged"):
        train(tiny(iterations=4), str(tmp_path / "r"), resume=True, **QUIET)


def test_self_play_workers_play_the_same_games(tmp_path):
    """Self-play split over worker processes gives the games one process plays (per-game seeds)."""
    a = train(tiny(iterations=1, games_per_iteration=5, node_q=0.0), str(tmp_path / "one"), **QUIET)
    b = train(tiny(iterations=1, games_per_iteration=5, node_q=0.0, workers=2), str(tmp_path / "two"), **QUIET)
    assert a[0]["games"] == b[0]["games"] == 5 and a[0]["nodes"] == b[0]["nodes"]
    x = Replay.load(str(tmp_path / "one" / "iterations" / "000001" / "replay.npz")).samples.arrays()
    y = Replay.load(str(tmp_path / "two" / "iterations" / "000001" / "replay.npz")).samples.arrays()
    for key in x:
        np.testing.assert_allclose(x[key], y[key], atol=1e-6) if x[key].dtype.kind == "f" else np.testing.assert_array_equal(x[key], y[key])
    assert b[0]["policy_loss"] == pytest.approx(a[0]["policy_loss"], rel=1e-4)
    # a run may move to other workers (or another device) on resume
    assert [m["iteration"] for m in train(tiny(games_per_iteration=5, node_q=0.0), str(tmp_path / "two"), resume=True, **QUIET)] == [1, 2]


def test_labelled_positions_are_middle_and_late_game_with_exact_labels():
    from agents.training.evaluation import labelled_positions
    from dnb_env.solver import Solver

    positions = labelled_positions("3x3", 8, seed=5)
    solver = Solver()
    for p in positions:
        assert 9 <= len(p.state.history) <= 21 and not p.state.is_terminal()
        values = solver.move_values(p.state)
        assert p.optimal == {a for a, v in values.items() if v == max(values.values())}
        assert p.optimal <= p.winning <= set(p.state.legal_actions())
    # larger boards: the late game only, labelled by the native solver
    late = labelled_positions("5x5", 6, seed=5)
    assert len(late) == 6
    for p in late:
        assert 3 <= 60 - len(p.state.history) <= 34 and not p.state.is_terminal()
        values = solver.move_values(p.state)
        best = max(values.values())
        assert p.optimal == {a for a, v in values.items() if v == best}
        assert p.winning == {a for a, v in values.items() if (v > 0) - (v < 0) == (best > 0) - (best < 0)}
    assert labelled_positions("13x3", 2) == []  # beyond the native solver's boards
    with pytest.raises(ValueError, match="first"):
        labelled_positions("3x3", 1, first=30)


def test_export_weights_for_shipping(tmp_path, capsys):
    from registry.cli import main as cli

    import time

    t0 = time.perf_counter()
    train(tiny(iterations=1), str(tmp_path / "run"), **QUIET)
    wall = time.perf_counter() - t0
    assert cli(["export", str(tmp_path / "run"), str(tmp_path / "w.pt")]) == 0
    assert "1 iterations, 4 self-play games" in capsys.readouterr().out
    payload = load_checkpoint(str(tmp_path / "w.pt"), board="2x2")
    # the training time is the iterations' wall time (self-play, training, evaluation), not zero
    row = json.loads((tmp_path / "run" / "metrics.jsonl").read_text().splitlines()[-1])
    assert row["iteration_s"] >= row["self_play_s"] + row["train_s"]
    assert 0 < payload["extra"]["training_seconds"] <= wall
    assert payload["extra"]["training_seconds"] == round(row["iteration_s"], 3)
    assert "optimizer" not in payload["extra"] and payload["model"]["value"] == "margin"
    assert payload["extra"]["config"]["games_per_iteration"] == 4 and payload["extra"]["curriculum"]["start"] == 6
    agent = make_agent("alphazero", board="2x2", checkpoint=str(tmp_path / "w.pt"), simulations=0)
    assert agent.select_action(GameState.new(2, 2)) in GameState.new(2, 2).legal_actions()
    # exported weights are not a training run, and a missing run is named
    (tmp_path / "wdir").mkdir()
    (tmp_path / "wdir" / "checkpoint.pt").write_bytes((tmp_path / "w.pt").read_bytes())
    with pytest.raises(RunError, match="not a training run folder"):
        export_weights(str(tmp_path / "wdir"), str(tmp_path / "x.pt"))
    assert cli(["export", str(tmp_path / "nothing"), str(tmp_path / "y.pt")]) == 2
    assert not (tmp_path / "y.pt").exists()


def test_cli_trains_either_family(tmp_path, capsys):
    from registry.cli import main as cli

    args = ["--board", "2x2", "--iterations", "1", "--games", "2", "--simulations", "8", "--no-progress",
            "--set", "eval_positions=0", "--set", "eval_games=0"]
    assert cli(["train", "alphazero", "--out", str(tmp_path / "az"), *args, "--set", "width=8"]) == 0
    assert load_checkpoint(str(tmp_path / "az" / "checkpoint.pt"))["model"]["family"] == "resnet"
    assert cli(["train", "--model", "resnet", "--out", str(tmp_path / "rn"), *args, "--set", "model.blocks=1"]) == 0
    assert cli(["train", "--model", "dotsformer", "--out", str(tmp_path / "df"), *args]) == 0
    assert load_checkpoint(str(tmp_path / "df" / "checkpoint.pt"))["model"]["family"] == "dotsformer"
    assert cli(["plot", "attention", "--checkpoint", str(tmp_path / "df" / "checkpoint.pt"), "--moves", "0,5",
                "--out", str(tmp_path / "att.png")]) == 0
    assert (tmp_path / "att.png").read_bytes()[:4] == b"\x89PNG"
    with pytest.raises(SystemExit):  # a ResNet has no attention maps
        cli(["plot", "attention", "--checkpoint", str(tmp_path / "rn" / "checkpoint.pt"), "--out", str(tmp_path / "x.png")])
    assert cli(["train", "alphazero", "--model", "dotsformer", "--out", str(tmp_path / "x"), *args]) == 2
    assert cli(["train", "--model", "gpt", "--out", str(tmp_path / "y"), *args]) == 2
    assert "unknown model family 'gpt'" in capsys.readouterr().err


def test_cli_train_out_that_cannot_be_written(tmp_path, capsys, monkeypatch):
    """A file, a path under a file and a read-only folder as --out: `dnb: error:` and exit code 2 (were
    FileExistsError, NotADirectoryError and PermissionError tracebacks), and nothing written."""
    import os

    from agents.training import store as store_mod
    from registry.cli import main as cli

    mine = tmp_path / "file.txt"
    mine.write_text("mine\n")
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    if os.access(ro, os.W_OK):  # root: the mode does not stop writes, so the permission check is simulated
        real = os.access
        monkeypatch.setattr(os, "access", lambda p, mode, **kw: os.path.abspath(p) != str(ro) and real(p, mode, **kw))
    args = ["--board", "1x1", "--iterations", "1", "--games", "1", "--simulations", "2", "--no-progress"]
    try:
        for out, message in ((mine, f"the run folder {mine} is a file"),
                             (mine / "sub", f"cannot be made: {mine} is a file"),
                             (ro, "permission denied"), (ro / "run", "permission denied")):
            assert cli(["train", "--out", str(out), *args]) == 2
            err = capsys.readouterr().err
            assert err.startswith("dnb: error: ") and message in err and "Traceback" not in err, err
        assert mine.read_text() == "mine\n" and list(ro.iterdir()) == []
    finally:
        ro.chmod(0o700)
    # what the check cannot foresee (a read-only file system): the same error when the config is written
    monkeypatch.setattr(store_mod, "write_json_atomic", lambda path, obj: (_ for _ in ()).throw(
        PermissionError(30, "Read-only file system", path)))
    assert cli(["train", "--out", str(tmp_path / "rofs"), *args]) == 2
    assert "dnb: error: cannot write the run folder" in capsys.readouterr().err


def test_aux_labels_of_a_drawn_position():
    # box (0, 0) has three sides: 7 captures it; 3 leaves it (a sacrifice of the initiative to come);
    # 9 and 10 give box (1, 0) its third side
    s = GameState.from_text("""
+---+---+
|
+---+   +

+---+   +
""", current_player=1)
    rec = [Record(s, 7, np.full(12, 1 / 7), 0.0, z=1.0), Record(s, 3, np.full(12, 1 / 7), 0.0, z=1.0)]
    smp = Samples.from_records("2x2", rec, 1)
    assert smp.initiative.tolist() == [Initiative.CAPTURE, Initiative.SACRIFICE]
    F, C, S, K = MoveClass.FORBIDDEN, MoveClass.CONCEDING, MoveClass.SAFE, MoveClass.SCORING
    #                                h00 h01 h10 h11 h20 h21 v00 v01 v02 v10 v11 v12
    assert smp.move_class[0].tolist() == [F, F, F, S, F, S, F, K, S, C, C, S]
    b = Replay(smp).batch(np.array([0]), "chainloop6", 0.0)
    assert b["move_class"][0].tolist() == smp.move_class[0].tolist() and b["initiative"][0] == Initiative.CAPTURE


def test_dotsformer_end_to_end_moves_s_survives_a_kill_and_plays(tmp_path):
    from agents.checkpoint import CheckpointError

    cfg = tiny("dotsformer", iterations=3, min_gap=1, tau_root=0.0, tau_step=0.0, **{"model.dim": 8, "model.heads": 2})
    with pytest.raises(Killed):
        train(cfg, str(tmp_path / "df"), fault=kill_at("manifest"), **QUIET)
    rows = train(cfg, str(tmp_path / "df"), resume=True, **QUIET)
    assert [r["start_step"] for r in rows] == [6, 5, 4]
    assert all(r["initiative_loss"] > 0 and r["move_class_loss"] > 0 for r in rows)
    path = str(tmp_path / "df" / "checkpoint.pt")
    for sims in (0, 12):
        agent = make_agent("dotsformer", board="2x2", checkpoint=path, simulations=sims, seed=0)
        s = GameState.new(2, 2)
        while not s.is_terminal():
            s = s.apply(agent.select_action(s))
    with pytest.raises(CheckpointError, match="holds a dotsformer model, not a resnet model"):
        make_agent("alphazero", board="2x2", checkpoint=path)
    with pytest.raises(CheckpointError, match="board 2x2, not 3x3"):
        make_agent("dotsformer", board="3x3", checkpoint=path)
    with pytest.raises(ValueError, match="no option"):
        make_agent("dotsformer", board="2x2", checkpoint=path, depth=3)
    with pytest.raises(CheckpointError, match="no shipped dotsformer weights for 7x7"):
        make_agent("dotsformer", board="7x7")


def test_positions_in_the_solver_zone_are_labelled_with_every_optimal_move():
    """On 2x2 from move 6 every position is within the auto root zone (two thirds of the 12 edges: 8): no search,
    the label is uniform over the moves of best margin and Q is the exact value; a saved config written
    before the solver options existed loads with them off."""
    from agents.models import build_model
    from agents.training.selfplay import self_play
    from dnb_env.solver import Solver

    cfg = tiny(games_per_iteration=6)
    assert cfg.mcts().solve_root == 8 and cfg.mcts().solve_leaf == 7
    samples, stats = self_play(build_model(cfg.model), cfg, iteration=1, start=6)
    assert stats["positions"] == len(samples) > 6
    exact = Solver()
    for state, pi, q in zip(samples.states(), samples.pi, samples.q):
        mv = exact.move_values(state)
        best = max(mv.values())
        want = np.zeros(state.num_actions)
        want[[a for a, v in mv.items() if v == best]] = 1
        np.testing.assert_allclose(pi, want / want.sum(), atol=1e-6)
        assert q == pytest.approx(exact.game_value(state) / 4)  # margin units (the cpu preset)
    old = to_dict(cfg)
    for key in ("solve_leaf", "solve_root"):
        del old["search"][key]
    assert from_dict(old).mcts().solve_root == 0 and from_dict(old).mcts().solve_leaf == 0
    assert from_dict(to_dict(cfg)) == cfg


def test_a_config_of_before_the_renames_loads_the_same():
    """A run folder's config.json of before the search section was the search settings: ``search.batch`` is
    ``search.batch_size``, ``search.temperature_moves`` the top-level ``temperature_moves``, and the search
    settings it lacks take their self-play defaults; ``--set`` takes the old keys too."""
    from agents.training.overrides import parse_settings

    cfg = tiny(**{"search.batch_size": 4, "temperature_moves": 3})
    old = to_dict(cfg)
    search = old["search"]
    search["batch"], search["temperature_moves"] = search.pop("batch_size"), old.pop("temperature_moves")
    for key in ("selection", "add_noise", "virtual_loss", "reuse_tree", "solve_root_nodes", "solve_tt_mb"):
        del search[key]
    assert from_dict(old) == cfg and from_dict(old).mcts() == cfg.mcts()
    assert cfg.mcts().value == cfg.model.value and "value" not in to_dict(cfg)["search"]
    assert parse_settings("resnet", ["search.batch=4", "search.temperature_moves=3", "batch=2"]) == {
        "search.batch_size": 2, "temperature_moves": 3}


def test_a_run_starts_from_the_weights_of_init(tmp_path, monkeypatch):
    """``init`` loads a checkpoint of the same model before the first iteration (and only then: a resume
    keeps the run's own weights); a checkpoint of another model is refused before anything is written."""
    import agents.training.loop as loop
    from agents.checkpoint import save_checkpoint
    from agents.models import build_model

    cfg = tiny(iterations=1)
    torch.manual_seed(7)
    donor = build_model(cfg.model)
    save_checkpoint(str(tmp_path / "donor.pt"), donor)
    seen = []
    real_train_steps = loop.train_steps
    monkeypatch.setattr(loop, "train_steps", lambda net, *a, **k: (seen.append({k: v.clone() for k, v in net.state_dict().items()}),
                                                                     real_train_steps(net, *a, **k))[1])
    train(tiny(iterations=1, init=str(tmp_path / "donor.pt")), str(tmp_path / "a"), **QUIET)
    after_one = load_checkpoint(str(tmp_path / "a" / "checkpoint.pt"))["state_dict"]
    assert all(torch.equal(seen[0][k], v) for k, v in donor.state_dict().items())
    train(tiny(iterations=1), str(tmp_path / "b"), **QUIET)  # without init: other (random) weights
    assert not all(torch.equal(seen[1][k], v) for k, v in donor.state_dict().items())
    # a resume keeps the run's weights, whatever init says
    train(tiny(iterations=2, init=str(tmp_path / "donor.pt")), str(tmp_path / "a"), resume=True, **QUIET)
    assert all(torch.equal(seen[2][k], after_one[k]) for k in after_one)
    assert not all(torch.equal(seen[2][k], v) for k, v in donor.state_dict().items())
    other = build_model(tiny(**{"model.width": 12}).model)
    save_checkpoint(str(tmp_path / "other.pt"), other)
    with pytest.raises(ValueError, match="width"):
        train(tiny(iterations=1, init=str(tmp_path / "other.pt")), str(tmp_path / "c"), **QUIET)
    assert not (tmp_path / "c").exists()


def test_training_plot_has_integer_iterations_and_no_empty_legend_entries(tmp_path, monkeypatch):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from agents.training import plots

    figures = []
    monkeypatch.setattr(plt, "close", figures.append)  # keep the figure to look at it
    metrics = [{"iteration": i, "start_step": 5 - i, "policy_loss": 1.0 / i, "value_loss": 0.5,
                "win_rate_vs_greedy": None if i < 3 else 0.5} for i in (1, 2, 3)]
    plots.plot_training(metrics, str(tmp_path / "t.png"))
    assert (tmp_path / "t.png").stat().st_size > 1000
    axes = figures[0].axes
    for ax in axes:
        ticks = [t for t in ax.get_xticks() if ax.get_xlim()[0] <= t <= ax.get_xlim()[1]]
        assert all(float(t).is_integer() for t in ticks), ticks
    scores = axes[2]
    assert [line.get_label() for line in scores.lines] == ["win rate vs greedy"]
    assert list(scores.lines[0].get_xdata()) == [3]  # the iterations without a score are not plotted
    assert all(line.get_xdata().size for ax in axes for line in ax.lines)


def test_runs_write_tensorboard_events_once_per_row(tmp_path):
    """The event files hold every metrics row's numbers under their tags, one point per iteration, and a
    resumed run adds its new iterations without repeating the old ones; a fit writes its rows likewise."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from agents.training.events import tag_of

    train(tiny(iterations=2), str(tmp_path / "run"), **QUIET)
    train(tiny(iterations=3), str(tmp_path / "run"), resume=True, **QUIET)
    rows = [json.loads(x) for x in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    events = EventAccumulator(str(tmp_path / "run" / "tensorboard"))
    events.Reload()
    tags = events.Tags()["scalars"]
    assert {"loss/policy", "loss/value", "curriculum/start_step", "time/self_play_s"} <= set(tags)
    for key in ("policy_loss", "start_step"):
        points = events.Scalars(tag_of(key))
        assert [p.step for p in points] == [1, 2, 3]
        assert [p.value for p in points] == pytest.approx([r[key] for r in rows], rel=1e-6)
    assert tag_of("win_rate_vs_greedy") == "score/vs_greedy" and tag_of("raw_accuracy") == "accuracy/raw_accuracy"


def test_event_logs_opened_within_one_second_keep_each_others_points(tmp_path):
    """Each writer has a file of its own: runs resumed in quick succession lose no earlier point."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    from agents.training.events import EventLog

    for step in (1, 2, 3):
        log = EventLog(str(tmp_path))
        log.write({"policy_loss": float(step), "iteration": step}, step)
        log.close()
    events = EventAccumulator(str(tmp_path / "tensorboard"))
    events.Reload()
    assert [(p.step, p.value) for p in events.Scalars("loss/policy")] == [(1, 1.0), (2, 2.0), (3, 3.0)]
