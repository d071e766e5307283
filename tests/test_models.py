"""Model families, checkpoints (atomic, validated, version 1 still read), network agents."""

from __future__ import annotations

import os
import pathlib

import numpy as np
import pytest
import torch

from agents.checkpoint import CheckpointError, load_checkpoint, load_network, save_checkpoint
from agents.models import build_model, config_from_dict, config_to_dict, list_families, make_model_config
from agents.models.evaluator import NetworkEvaluator
from agents.network_agent import shipped_checkpoint
from dnb_env.core import GameState, geometry
from dnb_env.observations import encode_batch
from registry import make_agent

FIXTURES = pathlib.Path(__file__).resolve().parent / "fixtures"


def test_families_are_registered_and_unknown_names_are_refused():
    assert list_families() == ["alphavit", "dotsformer", "resnet"]
    with pytest.raises(ValueError, match="unknown model family 'transformer'; known families: alphavit, dotsformer, resnet"):
        make_model_config("transformer")
    with pytest.raises(ValueError, match="resnet models have no option.* dim"):
        make_model_config("resnet", dim=8)
    with pytest.raises(ValueError, match="unknown resnet preset 'huge'"):
        make_model_config("resnet", preset="huge")
    with pytest.raises(ValueError, match="value must be one of"):
        make_model_config("resnet", value="boxes")
    with pytest.raises(ValueError, match="grid"):
        make_model_config("resnet", encoder="edgequad4", paper_heads=True)


@pytest.mark.parametrize("encoder", ["alphazero4", "chainloop6", "baseline4", "edgequad9"])
def test_resnet_outputs(encoder):
    net = build_model(make_model_config("resnet", board="2x3", encoder=encoder, blocks=1, width=8))
    out = net(torch.from_numpy(encode_batch(encoder, [GameState.new(2, 3)] * 5)))
    assert set(out) == {"policy_logits", "value"}
    assert out["policy_logits"].shape == (5, 17) and out["value"].shape == (5,) and (out["value"].abs() <= 1).all()


@pytest.mark.parametrize("board", ["2x2", "3x3", "2x4", "5x5"])
def test_resnet_paper_and_aux_heads(board):
    cfg = make_model_config("resnet", board=board, encoder="chainloop6", blocks=1, width=8, paper_heads=True, aux_heads=True)
    net = build_model(cfg)
    s = GameState.new(board)
    out = net(torch.from_numpy(encode_batch("chainloop6", [s, s.apply(0)])))
    assert out["policy_logits"].shape == (2, s.num_actions) and out["value"].shape == (2,)
    assert out["initiative_logits"].shape == (2, 3)
    assert out["move_class_logits"].shape == (2, 4, 2 * s.rows + 1, 2 * s.cols + 1)


def test_paper_preset_size():
    net = build_model(make_model_config("resnet", preset="paper", board="5x5"))
    assert 1.3e6 < sum(p.numel() for p in net.parameters()) < 1.5e6


def test_config_round_trip():
    cfg = make_model_config("resnet", preset="cpu", board="3x3", value="margin")
    d = config_to_dict(cfg)
    assert d["family"] == "resnet" and d["blocks"] == 3 and d["value"] == "margin"
    assert config_from_dict(d) == cfg
    with pytest.raises(ValueError, match="family"):
        config_from_dict({"board": "3x3"})


def test_config_of_a_geometry_keeps_its_name():
    cfg = make_model_config("resnet", preset="cpu", board=geometry(3, 3))
    assert cfg.board == "3x3" and config_to_dict(cfg)["board"] == "3x3"


def test_evaluator_masks_illegal_moves():
    net = build_model(make_model_config("resnet", board="2x2", blocks=1, width=8))
    s = GameState.from_actions(2, 2, [0, 1, 5])
    p, v = NetworkEvaluator(net).evaluate([s, GameState.new(2, 2)])
    assert np.allclose(p.sum(axis=1), 1) and p[0, [0, 1, 5]].sum() == 0 and v.shape == (2,)


def test_checkpoint_round_trip_and_errors(tmp_path):
    net = build_model(make_model_config("resnet", board="3x3", blocks=1, width=8, value="margin"))
    path = str(tmp_path / "net.pt")
    save_checkpoint(path, net)
    loaded, payload = load_network(path, board="3x3", encoder="alphazero4", family="resnet")
    assert loaded.config == net.config and payload["model"]["family"] == "resnet"
    for a, b in zip(net.state_dict().values(), loaded.state_dict().values()):
        assert torch.equal(a, b)
    with pytest.raises(CheckpointError, match="board 3x3, not 5x5"):
        load_checkpoint(path, board="5x5")
    with pytest.raises(CheckpointError, match="encoder alphazero4, not chainloop6"):
        load_checkpoint(path, encoder="chainloop6")
    with pytest.raises(CheckpointError, match="holds a resnet model, not a dotsformer model"):
        load_network(path, family="dotsformer")
    raw = open(path, "rb").read()
    (tmp_path / "cut.pt").write_bytes(raw[: len(raw) // 2])
    with pytest.raises(CheckpointError, match="corrupt") as err:
        load_checkpoint(str(tmp_path / "cut.pt"))
    assert "weights_only" not in str(err.value)
    (tmp_path / "empty.pt").write_bytes(b"")
    with pytest.raises(CheckpointError, match="the file is empty"):
        load_checkpoint(str(tmp_path / "empty.pt"))
    (tmp_path / "text.pt").write_text("101\n")
    with pytest.raises(CheckpointError, match=r"not a torch archive: 4 bytes starting b'101\\n'"):
        load_checkpoint(str(tmp_path / "text.pt"))
    torch.save({"format": "x", "code": _Evil()}, tmp_path / "evil.pt")
    with pytest.raises(CheckpointError, match="objects other than tensors") as err:
        load_checkpoint(str(tmp_path / "evil.pt"))
    assert "weights_only" not in str(err.value) and "posix.system" in str(err.value)
    payload["version"] = 99
    torch.save(payload, tmp_path / "v99.pt")
    with pytest.raises(CheckpointError, match="version 99"):
        load_checkpoint(str(tmp_path / "v99.pt"))
    with pytest.raises(CheckpointError, match="does not exist"):
        load_checkpoint(str(tmp_path / "missing.pt"))
    (tmp_path / "folder.pt").mkdir()
    with pytest.raises(CheckpointError, match="folder.pt is a folder, not a checkpoint file"):
        load_network(str(tmp_path / "folder.pt"))  # was IsADirectoryError
    os.mkfifo(tmp_path / "pipe.pt")
    with pytest.raises(CheckpointError, match="not a regular file"):
        load_checkpoint(str(tmp_path / "pipe.pt"))  # not read (it would wait for a writer forever)
    payload["version"] = 2
    payload["state_dict"] = {k: v[..., :1] if v.ndim else v for k, v in payload["state_dict"].items()}
    torch.save(payload, tmp_path / "wrong.pt")
    with pytest.raises(CheckpointError, match="do not match"):
        load_network(str(tmp_path / "wrong.pt"))


@pytest.mark.parametrize("board", ["3x3", "5x5"])
def test_version_1_checkpoints_load_and_play_the_same_moves_after_conversion(board, tmp_path):
    """AlphaZero files of format version 1 (the ones shipped before the teacher-trained weights, kept as test
    fixtures): read as version 2 (and re-saved as such) they give the same network outputs and the same
    moves."""
    path = str(FIXTURES / f"alphazero-{board}-v1.pt")
    assert torch.load(path, weights_only=True)["version"] == 1
    old, payload = load_network(path, board=board, family="resnet")
    assert payload["version"] == 2 and old.config.value == payload["model"]["value"]
    save_checkpoint(str(tmp_path / "v2.pt"), old)
    new, _ = load_network(str(tmp_path / "v2.pt"), board=board, family="resnet")
    rng = np.random.default_rng(0)
    states = []
    for _ in range(12):
        s = GameState.new(board)
        for _ in range(int(rng.integers(0, s.num_actions - 1))):
            s = s.apply(int(rng.choice(s.legal_actions())))
        states.append(s)
    (p1, v1), (p2, v2) = NetworkEvaluator(old).evaluate(states), NetworkEvaluator(new).evaluate(states)
    assert np.array_equal(p1, p2) and np.array_equal(v1, v2)
    a = make_agent("alphazero", board=board, checkpoint=path, simulations=24, seed=3)
    b = make_agent("alphazero", board=board, checkpoint=str(tmp_path / "v2.pt"), simulations=24, seed=3)
    assert [a.select_action(s) for s in states] == [b.select_action(s) for s in states]


def test_missing_shipped_weights_say_so():
    with pytest.raises(CheckpointError, match="no shipped alphazero weights for 7x7"):
        make_agent("alphazero", board="7x7")


@pytest.mark.parametrize("name,board", [("alphazero", "3x3"), ("alphazero", "5x5"), ("dotsformer", "3x3"),
                                        ("dotsformer", "5x5")])
def test_shipped_weights_load_and_play(name, board):
    agent = make_agent(name, board=board, simulations=32, seed=0)
    trained_in = load_network(shipped_checkpoint(board, name), board=board)[0].config.value
    assert agent.search.config.value == trained_in  # the search runs in the units the net was trained in
    if board == "5x5":  # a 5x5 game on a clock, as in a tournament: untimed, a move near 39 undrawn edges
        agent.set_move_time(0.1)  # can take a minute (each leaf's Nimstring planes search up to a second)
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


class _Evil:
    """Unpickling this would run a shell command: a checkpoint must refuse it unread."""

    def __reduce__(self):
        import os

        return (os.system, ("echo should-never-run",))


def test_analyse_in_the_exact_root_zone_shows_the_moves_the_agent_plays():
    """Where the agent plays the solver's moves, its analysis shows those moves and the exact value, not a
    search it does not use; outside the zone, the search's visit counts."""
    from agents.search.exact import final_value
    from dnb_env.solver import Solver

    s = GameState.from_actions("3x3", actions=[0, 5, 13, 7, 20, 2, 9, 16])
    undrawn = s.num_actions - s.edges.bit_count()
    agent = make_agent("alphazero", board="3x3", simulations=16, seed=0, solve_root=undrawn, solve_leaf=0)
    view = agent.analyse(s)
    best, moves = Solver().best_moves(s)
    assert view["kind"] == "probabilities" and set(np.flatnonzero(view["values"])) == set(moves)
    assert view["value"] == final_value(s, agent.search.config.value, best)
    assert agent.action_probabilities(s) == pytest.approx(view["values"])
    outside = make_agent("alphazero", board="3x3", simulations=16, seed=0, solve_root=undrawn - 1).analyse(s)
    assert outside["kind"] == "visits" and sum(outside["values"]) >= 16
