"""Network, checkpoints (atomic, validated), self-play training with resume, the AlphaZero agent."""

from __future__ import annotations

import json

import numpy as np
import pytest
import torch

from agents.checkpoint import CheckpointError, load_checkpoint, load_network, save_checkpoint
from agents.networks import NetConfig, build_network
from agents.networks.evaluator import NetworkEvaluator
from agents.training.alphazero import make_config, train
from dnb_env.core import GameState
from registry import make_agent


@pytest.mark.parametrize("encoder", ["alphazero4", "chainloop6", "baseline4", "edgequad9"])
def test_network_shapes(encoder):
    net = build_network(NetConfig(board="2x3", encoder=encoder, blocks=1, width=8))
    from dnb_env.observations import encode_batch

    x = torch.from_numpy(encode_batch(encoder, [GameState.new(2, 3)] * 5))
    logits, v = net(x)
    assert logits.shape == (5, 17) and v.shape == (5,) and (v.abs() <= 1).all()


def test_paper_preset_size():
    net = build_network(NetConfig.preset("paper", "5x5"))
    assert 1.3e6 < sum(p.numel() for p in net.parameters()) < 1.5e6


def test_evaluator_masks_illegal_moves():
    net = build_network(NetConfig(board="2x2", blocks=1, width=8))
    s = GameState.from_actions(2, 2, [0, 1, 5])
    p, v = NetworkEvaluator(net).evaluate([s, GameState.new(2, 2)])
    assert np.allclose(p.sum(axis=1), 1) and p[0, [0, 1, 5]].sum() == 0 and v.shape == (2,)


def test_checkpoint_round_trip_and_errors(tmp_path):
    net = build_network(NetConfig(board="3x3", blocks=1, width=8))
    path = str(tmp_path / "net.pt")
    save_checkpoint(path, net)
    loaded, payload = load_network(path, board="3x3", encoder="alphazero4")
    for a, b in zip(net.state_dict().values(), loaded.state_dict().values()):
        assert torch.equal(a, b)
    with pytest.raises(CheckpointError, match="board 3x3, not 5x5"):
        load_checkpoint(path, board="5x5")
    with pytest.raises(CheckpointError, match="encoder alphazero4, not chainloop6"):
        load_checkpoint(path, encoder="chainloop6")
    raw = open(path, "rb").read()
    (tmp_path / "cut.pt").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(CheckpointError, match="corrupt"):
        load_checkpoint(str(tmp_path / "cut.pt"))
    payload["version"] = 99
    torch.save(payload, tmp_path / "v99.pt")
    with pytest.raises(CheckpointError, match="version 99"):
        load_checkpoint(str(tmp_path / "v99.pt"))
    with pytest.raises(CheckpointError, match="does not exist"):
        load_checkpoint(str(tmp_path / "missing.pt"))


def test_training_runs_resumes_and_is_reproducible(tmp_path):
    cfg = make_config("cpu", board="2x2", iterations=2, games_per_iteration=4, simulations=16, eval_positions=20)
    full = train(cfg, str(tmp_path / "a"), progress=False, echo=lambda *_: None, eval_simulations=8)
    assert [m["iteration"] for m in full] == [1, 2]
    # the same run stopped after one iteration and resumed gives the same second iteration
    one = make_config("cpu", board="2x2", iterations=1, games_per_iteration=4, simulations=16, eval_positions=20)
    train(one, str(tmp_path / "b"), progress=False, echo=lambda *_: None, eval_simulations=8)
    resumed = train(cfg, str(tmp_path / "b"), resume=True, progress=False, echo=lambda *_: None, eval_simulations=8)
    assert resumed[-1]["iteration"] == 2
    assert resumed[-1]["policy_loss"] == pytest.approx(full[-1]["policy_loss"], rel=1e-4)
    lines = (tmp_path / "b" / "metrics.jsonl").read_text().splitlines()
    assert [json.loads(x)["iteration"] for x in lines] == [1, 2]
    assert (tmp_path / "b" / "training.png").exists()
    last = json.loads(lines[-1])  # the last iteration is evaluated: raw-policy scores against random and greedy
    for key in ("win_rate_vs_random", "win_rate_vs_greedy"):
        assert 0 <= last[key] <= 1 and (last[key] * cfg.eval_games * 2) % 1 == 0
    assert last["win_rate_vs_random"] == full[-1]["win_rate_vs_random"]  # reproducible too
    with pytest.raises(CheckpointError, match="--resume"):
        train(cfg, str(tmp_path / "b"), progress=False, echo=lambda *_: None)
    other = make_config("cpu", board="2x2", iterations=3, games_per_iteration=5, simulations=16)
    with pytest.raises(ValueError, match="another config"):
        train(other, str(tmp_path / "b"), resume=True, progress=False, echo=lambda *_: None)
    # extending a run with a lower learning rate is allowed, and each row says what it trained with
    annealed = make_config("cpu", board="2x2", iterations=3, games_per_iteration=4, simulations=16, eval_positions=20,
                           lr=1e-4)
    rows = train(annealed, str(tmp_path / "b"), resume=True, progress=False, echo=lambda *_: None, eval_simulations=8)
    assert [m["lr"] for m in rows] == [cfg.lr, cfg.lr, 1e-4]
    assert json.loads((tmp_path / "b" / "config.json").read_text())["lr"] == 1e-4
    agent = make_agent("alphazero", board="2x2", checkpoint=str(tmp_path / "b" / "checkpoint.pt"), simulations=20)
    assert agent.search.config.value == cfg.value_target == "margin"  # the search uses the trained units
    s = GameState.new(2, 2)
    while not s.is_terminal():
        s = s.apply(agent.select_action(s))


def test_self_play_workers_play_the_same_games(tmp_path):
    """Self-play split over worker processes gives the games one process plays (per-game seeds)."""
    quiet = dict(progress=False, echo=lambda *_: None)
    one = make_config("cpu", board="2x2", iterations=1, games_per_iteration=5, simulations=16, eval_positions=0,
                      eval_games=0)
    two = make_config("cpu", board="2x2", iterations=1, games_per_iteration=5, simulations=16, eval_positions=0,
                      eval_games=0, workers=2)
    a = train(one, str(tmp_path / "one"), **quiet)
    b = train(two, str(tmp_path / "two"), **quiet)
    assert a[0]["games"] == b[0]["games"] == 5
    with np.load(tmp_path / "one" / "replay.npz") as x, np.load(tmp_path / "two" / "replay.npz") as y:
        for key in ("planes", "policies", "values"):
            np.testing.assert_allclose(x[key], y[key], atol=1e-6)
    assert b[0]["policy_loss"] == pytest.approx(a[0]["policy_loss"], rel=1e-4)
    # a run may move to other workers (or another device) on resume
    more = make_config("cpu", board="2x2", iterations=2, games_per_iteration=5, simulations=16, eval_positions=0,
                       eval_games=0)
    assert [m["iteration"] for m in train(more, str(tmp_path / "two"), resume=True, **quiet)] == [1, 2]
    with pytest.raises(ValueError, match="workers"):
        make_config("cpu", workers=0)


def test_missing_shipped_weights_say_so():
    with pytest.raises(CheckpointError, match="no shipped AlphaZero weights for 7x7"):
        make_agent("alphazero", board="7x7")


@pytest.mark.parametrize("board", ["3x3", "5x5"])
def test_shipped_weights_load_and_play(board):
    agent = make_agent("alphazero", board=board, simulations=32, seed=0)
    s = GameState.new(board)
    while not s.is_terminal():
        s = s.apply(agent.select_action(s))
    assert sum(s.scores) == s.rows * s.cols


def test_zero_simulations_plays_the_raw_policy():
    agent = make_agent("alphazero", board="3x3", simulations=0, seed=0)
    s = GameState.from_actions(3, 3, [0, 5, 13])
    priors, _ = agent.evaluator.evaluate([s])
    assert agent.select_action(s) == int(np.argmax(priors[0]))
    while not s.is_terminal():
        s = s.apply(agent.select_action(s))
    assert sum(s.scores) == 9
    with pytest.raises(ValueError, match="simulations must be >= 0"):
        make_agent("alphazero", board="3x3", simulations=-1)


def test_labelled_positions_are_middle_and_late_game_with_exact_labels():
    from agents.training.alphazero import labelled_positions
    from baselines.solver import Solver

    positions = labelled_positions("3x3", 8, seed=5)
    solver = Solver()
    for p in positions:
        assert 9 <= len(p.state.history) <= 21 and not p.state.is_terminal()
        values = solver.move_values(p.state)
        assert p.optimal == {a for a, v in values.items() if v == max(values.values())}
        assert p.optimal <= p.winning <= set(p.state.legal_actions())
    assert labelled_positions("5x5", 3) == []
    with pytest.raises(ValueError, match="first"):
        labelled_positions("3x3", 1, first=30)


def test_export_weights_for_shipping(tmp_path, capsys):
    from agents.training.alphazero import export_weights
    from registry.cli import main as cli

    cfg = make_config("cpu", board="2x2", iterations=1, games_per_iteration=4, simulations=16, eval_positions=0,
                      eval_games=0)
    train(cfg, str(tmp_path / "run"), progress=False, echo=lambda *_: None, eval_simulations=8)
    assert cli(["export", str(tmp_path / "run"), str(tmp_path / "w.pt")]) == 0
    assert "1 iterations, 4 self-play games" in capsys.readouterr().out
    payload = load_checkpoint(str(tmp_path / "w.pt"), board="2x2")
    assert "optimizer" not in payload["extra"] and payload["extra"]["value_target"] == "margin"
    assert payload["extra"]["config"]["games_per_iteration"] == 4
    agent = make_agent("alphazero", board="2x2", checkpoint=str(tmp_path / "w.pt"), simulations=0)
    assert agent.select_action(GameState.new(2, 2)) in GameState.new(2, 2).legal_actions()
    # exported weights are not a training run, and a missing run is named
    (tmp_path / "wdir").mkdir()
    (tmp_path / "wdir" / "checkpoint.pt").write_bytes((tmp_path / "w.pt").read_bytes())
    with pytest.raises(CheckpointError, match="not a training checkpoint"):
        export_weights(str(tmp_path / "wdir"), str(tmp_path / "x.pt"))
    assert cli(["export", str(tmp_path / "nothing"), str(tmp_path / "y.pt")]) == 2
    assert not (tmp_path / "y.pt").exists()
