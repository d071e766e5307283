"""The ``alphavit`` family: one set of weights for every board, its edge order, its checkpoints and its agent."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch", reason="model families need torch")

from torch import nn  # noqa: E402

from agents.checkpoint import (BoardOutsideTrainingWarning, CheckpointError, load_checkpoint,  # noqa: E402
                               load_network, save_checkpoint, trained_boards)
from agents.models import build_model, config_from_dict, config_to_dict, get_family, make_model_config  # noqa: E402
from agents.models.alphavit import resize_sequence, sincos_embedding  # noqa: E402
from agents.models.common import action_cells  # noqa: E402
from agents.models.evaluator import NetworkEvaluator  # noqa: E402
from agents.models.heads import PolicyHead  # noqa: E402
from dnb_env.core import GameState, geometry  # noqa: E402
from dnb_env.observations import encode_batch  # noqa: E402
from dnb_env.observations import transform_planes  # noqa: E402
from dnb_env.symmetry import symmetries, transform_policy  # noqa: E402

VARIANTS = ("vit", "vid", "vda")
BOARDS = ("1x1", "2x3", "3x3", "5x5", "7x7", "3x5")
TINY = dict(dim=16, heads=2, layers=1, decoder_dim=16, decoder_heads=2, action_embeddings=8, dropout=0.0)


def tiny(variant: str = "vit", board: str = "5x5", **fields):
    torch.manual_seed(0)
    return build_model(make_model_config("alphavit", board=board, variant=variant, **{**TINY, **fields}))


def planes_of(*states) -> torch.Tensor:
    return torch.from_numpy(encode_batch("chainloop6", list(states)))


def midgame(board: str, moves: int, seed: int = 0) -> GameState:
    rng = np.random.default_rng(seed)
    s = GameState.new(board)
    for _ in range(moves):
        s = s.apply(int(rng.choice(s.legal_actions())))
    return s


# ------------------------------------------------------------------------------------------------ shapes


@pytest.mark.parametrize("variant", VARIANTS)
def test_one_set_of_weights_plays_every_board(variant):
    net = tiny(variant, aux_heads=True)
    for board in BOARDS:
        s = GameState.new(board)
        out = net(planes_of(s, s.apply(0), s.apply(s.num_actions - 1)))
        g = geometry(board)
        assert out["policy_logits"].shape == (3, g.num_actions), board
        assert out["value"].shape == (3,) and (out["value"].abs() <= 1).all()
        assert out["initiative_logits"].shape == (3, 3)
        assert out["move_class_logits"].shape == (3, 4, g.height, g.width)


@pytest.mark.parametrize("encoder", ["baseline4", "alphazero4", "chainloop64", "chainloop6_lcr"])
def test_any_grid_encoder(encoder):
    net = tiny(encoder=encoder)
    for board in ("2x2", "3x4"):
        s = GameState.new(board)
        out = net(torch.from_numpy(encode_batch(encoder, [s])))
        assert out["policy_logits"].shape == (1, s.num_actions)


def test_the_paper_defaults_and_the_presets():
    fam = get_family("alphavit")
    assert fam.agent == "alphavit" and fam.any_board
    cfg = make_model_config("alphavit")
    assert (cfg.encoder, cfg.variant, cfg.dim, cfg.heads, cfg.mlp_ratio, cfg.patch, cfg.dropout) == \
        ("chainloop6", "vit", 512, 8, 2.0, 3, 0.1)
    assert [make_model_config("alphavit", variant=v).encoder_layers for v in VARIANTS] == [4, 1, 1]
    sizes = {}
    for board in ("3x3", "5x5"):
        net = build_model(make_model_config("alphavit", preset="cpu", board=board))
        sizes[board] = sum(p.numel() for p in net.parameters())
    assert sizes["3x3"] == sizes["5x5"]  # no parameter depends on the board
    assert 110_000 < sizes["5x5"] < 150_000  # comparable with the dotsformer cpu preset (129,999)
    assert config_from_dict(config_to_dict(cfg)) == cfg


@pytest.mark.parametrize("fields, match", [
    (dict(variant="vix"), "variant must be one of vit, vid, vda"),
    (dict(patch=2), "patch must be odd"),
    (dict(dim=30, heads=4), "divisible by heads"),
    (dict(layers=0), "layers must be an integer >= 1"),
    (dict(pos_embedding="rope"), "pos_embedding must be one of"),
    (dict(pos_interp="nearest"), "pos_interp must be one of"),
    (dict(decoder_input="cells"), "decoder_input must be one of"),
    (dict(dropout=1.0), "dropout must be in"),
    (dict(encoder="edgequad4"), "grid"),
])
def test_bad_configs_are_refused(fields, match):
    with pytest.raises(ValueError, match=match):
        make_model_config("alphavit", **fields)


def test_bad_planes_get_a_clear_error_and_change_nothing():
    net = tiny().train()
    for shape, match in [((1, 5, 7, 7), "planes \\[B, 6, 2R\\+1, 2C\\+1\\]"), ((1, 6, 6, 7), "got planes of 6 x 7"),
                         ((6, 7, 7), "got shape"), ((1, 6, 1, 1), "got planes of 1 x 1")]:
        with pytest.raises(ValueError, match=match):
            net(torch.zeros(shape))
    assert net.trained_boards() == []


# ------------------------------------------------------------------------------------------------ edges


class Pick(nn.Module):
    """A hand-set head: the logit of a token is its channel ``k``."""

    def __init__(self, k: int):
        super().__init__()
        self.k = k

    def forward(self, t):
        return t[..., self.k:self.k + 1]


def cell_tokens(net):
    """Replace the encoder by one that hands each grid cell's input planes to its token (value token 0)."""
    dim = net.config.dim

    def encode(x):
        t = x.flatten(2).transpose(1, 2)
        t = nn.functional.pad(t, (0, dim - t.shape[2]))
        return torch.cat([torch.zeros(len(x), 1, dim), t], dim=1)

    net.encode = encode
    return net


def hand_set(variant: str):
    net = cell_tokens(tiny(variant, decoder_input="edges"))
    if variant == "vid":  # decoder inputs = the edge tokens in action order, no decoder layer
        net.decoder, net.decoder_in, net.decoder_norm = nn.ModuleList(), nn.Identity(), nn.Identity()
    return net


@pytest.mark.parametrize("variant", ["vit", "vid"])
@pytest.mark.parametrize("board", ["1x1", "2x3", "3x3", "3x5", "5x5"])
def test_a_cells_logit_lands_on_its_edges_action(variant, board):
    """A logit set by hand on grid cell i comes out as the policy logit of the action whose edge is cell i:
    the map of the resnet and dotsformer policy heads, in OpenSpiel's numbering."""
    net = hand_set(variant)
    net.policy_head = Pick(0)
    g = geometry(board)
    x = torch.zeros(1, 6, g.height, g.width)
    x[0, 0] = torch.arange(g.height * g.width, dtype=torch.float32).reshape(g.height, g.width)
    logits = net(x)["policy_logits"][0].long()
    resnet_map = PolicyHead(4, g.height, g.width, board).cells
    assert torch.equal(logits, resnet_map) and torch.equal(logits, action_cells(board))
    R, C = g.size
    for a, cell in enumerate(logits.tolist()):
        y, x_ = divmod(cell, g.width)
        if a < (R + 1) * C:  # h(r, c) = r*C + c at (2r, 2c+1)
            assert (y, x_) == (2 * (a // C), 2 * (a % C) + 1)
        else:  # v(r, c) = (R+1)*C + r*(C+1) + c at (2r+1, 2c)
            r, c = divmod(a - (R + 1) * C, C + 1)
            assert (y, x_) == (2 * r + 1, 2 * c)


@pytest.mark.parametrize("variant", ["vit", "vid"])
@pytest.mark.parametrize("board", ["3x3", "2x3", "3x5"])
def test_the_edge_map_commutes_with_every_symmetry(variant, board):
    """With a head that reads the drawn-edge plane, the policy of every symmetric image (8 on a square
    board, 4 on a rectangle) is the image of the policy and the drawn edges of the image's state."""
    net = hand_set(variant)
    net.policy_head = Pick(2)  # chainloop6 channel 2: drawn edges
    s = midgame(board, 5)
    planes = encode_batch("chainloop6", [s])
    drawn = np.array([0.0 if s.is_legal(a) else 1.0 for a in range(s.num_actions)])
    base = net(torch.from_numpy(planes))["policy_logits"][0].numpy()
    np.testing.assert_array_equal(base, drawn)
    syms = symmetries(*geometry(board).size)
    assert len(syms) == (8 if board == "3x3" else 4)
    for sym in syms:
        image = net(torch.from_numpy(transform_planes(sym, "chainloop6", planes)))["policy_logits"][0].numpy()
        np.testing.assert_array_equal(image, transform_policy(sym, base, *geometry(board).size))


@pytest.mark.parametrize("variant", VARIANTS)
def test_illegal_moves_are_masked(variant):
    net = tiny(variant)
    ev = NetworkEvaluator(net)
    for board in ("2x3", "3x3", "4x5"):
        states = [midgame(board, k, seed=k) for k in (0, 3, 7)]
        priors, values = ev.evaluate(states)
        for s, p in zip(states, priors):
            legal = s.legal_mask().astype(bool)
            assert p.shape == (s.num_actions,) and np.all(p[~legal] == 0) and np.all(p[legal] > 0)
            assert abs(p.sum() - 1) < 1e-6
        assert values.shape == (3,)


# ------------------------------------------------------------------------------------------------ position embeddings


def test_position_embeddings_on_other_sizes():
    net = tiny()
    table = net.pos_table.detach()
    np.testing.assert_array_equal(net.position_embedding(11, 11).detach(), table.flatten(1).T)  # 5x5: as it is
    small = net.position_embedding(5, 7).detach().T.reshape(-1, 5, 7)  # 2x3: resized, corners kept
    for (y, x), (ty, tx) in {(0, 0): (0, 0), (0, 6): (0, 10), (4, 0): (10, 0), (4, 6): (10, 10)}.items():
        torch.testing.assert_close(small[:, y, x], table[:, ty, tx])
    big, part = sincos_embedding(15, 15, 16), sincos_embedding(7, 5, 16)
    torch.testing.assert_close(big[:, :7, :5], part)  # sincos: a cell's embedding does not depend on the board
    seq = torch.randn(2, 9, 4)
    assert resize_sequence(seq, 9) is seq and resize_sequence(seq, 24).shape == (2, 24, 4)


# ------------------------------------------------------------------------------------------------ checkpoints


def train_step(net, boards):
    net.train()
    opt = torch.optim.SGD(net.parameters(), lr=0.01)
    for board in boards:
        out = net(planes_of(GameState.new(board), midgame(board, 2)))
        loss = out["value"].pow(2).mean() + out["policy_logits"].logsumexp(1).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
    return net.eval()


@pytest.mark.parametrize("variant", VARIANTS)
def test_checkpoints_round_trip_and_record_their_boards(variant, tmp_path):
    net = tiny(variant, board="3x3")
    assert net.trained_boards() == []
    with torch.no_grad():  # evaluation records nothing
        net.train()(planes_of(GameState.new("4x4")))
    train_step(net, ["3x3", "2x2", "3x3"])
    assert net.trained_boards() == ["2x2", "3x3"]
    path = str(tmp_path / "avit.pt")
    save_checkpoint(path, net)
    payload = load_checkpoint(path)
    assert payload["boards"] == ["2x2", "3x3"] == trained_boards(payload)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # a trained board: no warning
        loaded, _ = load_network(path, board="2x2", family="alphavit")
    assert loaded.trained_boards() == ["2x2", "3x3"]
    x = planes_of(midgame("4x5", 6))
    with torch.no_grad():
        for k, v in net(x).items():
            torch.testing.assert_close(loaded(x)[k], v)


def test_an_untrained_board_warns_once_naming_the_board_and_the_trained_set(tmp_path):
    net = train_step(tiny(board="3x3"), ["3x3"])
    path = str(tmp_path / "avit.pt")
    save_checkpoint(path, net)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        loaded, _ = load_network(path, board="4x5")
        with torch.no_grad():
            loaded(planes_of(GameState.new("4x5")))
    assert [w.category for w in caught] == [BoardOutsideTrainingWarning]
    assert "trained on 3x3, not 4x5" in str(caught[0].message)
    with pytest.raises(CheckpointError, match="holds a alphavit model, not a resnet model"):
        load_network(path, board="4x5", family="resnet")


def test_files_without_a_boards_record_were_trained_on_their_board(tmp_path):
    net = tiny(board="3x3")
    path = str(tmp_path / "old.pt")
    save_checkpoint(path, net)
    payload = torch.load(path, weights_only=True)
    del payload["boards"]
    torch.save(payload, path)
    assert trained_boards(load_checkpoint(path)) == ["3x3"]
    with pytest.warns(BoardOutsideTrainingWarning, match="trained on 3x3, not 5x5"):
        load_checkpoint(path, board="5x5")
    payload["boards"] = "3x3"
    torch.save(payload, path)
    with pytest.raises(CheckpointError, match="trained boards are '3x3', not a list"):
        load_checkpoint(path)


def test_other_families_still_refuse_other_boards(tmp_path):
    net = build_model(make_model_config("resnet", board="3x3", blocks=1, width=8))
    path = str(tmp_path / "az.pt")
    save_checkpoint(path, net)
    assert "boards" not in load_checkpoint(path)
    with pytest.raises(CheckpointError, match="is for board 3x3, not 4x4"):
        load_checkpoint(path, board="4x4")


# ------------------------------------------------------------------------------------------------ training and play


@pytest.fixture(scope="module")
def trained_run(tmp_path_factory):
    """``dnb train --model alphavit --board 2x2``: one tiny iteration."""
    from registry.cli import main as cli

    out = tmp_path_factory.mktemp("avit") / "run"
    assert cli(["train", "--model", "alphavit", "--board", "2x2", "--iterations", "1", "--games", "2",
                "--simulations", "4", "--out", str(out), "--no-progress", "--set", "eval_positions=0",
                "--set", "eval_games=0", "--set", "model.dim=16", "--set", "model.heads=2",
                "--set", "model.layers=1"]) == 0
    return str(out / "checkpoint.pt")


def test_dnb_train_runs_and_records_the_board(trained_run):
    payload = load_checkpoint(trained_run)
    assert payload["model"]["family"] == "alphavit" and payload["model"]["dim"] == 16
    assert payload["boards"] == ["2x2"]


def test_make_agent_plays_full_games_on_3x3_and_4x5_from_one_checkpoint(trained_run):
    from registry import make_agent

    for board in ("3x3", "4x5"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            agent = make_agent("alphavit", board=board, seed=0, checkpoint=trained_run, simulations=4)
            s = GameState.new(board)
            while not s.is_terminal():
                s = s.apply(agent.select_action(s))
        assert sum(s.scores) == geometry(board).num_boxes
        outside = [w for w in caught if issubclass(w.category, BoardOutsideTrainingWarning)]
        assert len(outside) == 1 and f"trained on 2x2, not {board}" in str(outside[0].message)
    policy = make_agent("alphavit", board="2x2", seed=0, checkpoint=trained_run, simulations=0)
    assert GameState.new("2x2").is_legal(policy.select_action(GameState.new("2x2")))


def test_the_shipped_weights_play_every_board_and_warn_outside_their_boards():
    from agents.network_agent import shipped_checkpoint
    from registry import make_agent

    path = shipped_checkpoint("4x5", "alphavit")
    assert path.endswith("alphavit.pt") and shipped_checkpoint("3x3", "alphavit") == path
    trained = load_checkpoint(path)["boards"]
    # the distillation curriculum it comes from (9x9 and 10x10 left unseen on purpose)
    assert set(trained) == {"2x2", "3x3", "3x5", "4x4", "4x6", "5x5", "5x7", "6x6", "6x8", "7x7", "8x8"}
    for board in ("1x1", "2x2", "3x4", "5x5", "7x7", "2x7", "9x9"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            agent = make_agent("alphavit", board=board, seed=0, simulations=0)
            s = GameState.new(board)
            for _ in range(min(6, s.num_actions)):  # the raw policy's moves are legal and of this board
                s = s.apply(agent.select_action(s))
        outside = [w for w in caught if issubclass(w.category, BoardOutsideTrainingWarning)]
        assert len(outside) == (board not in trained)
    searched = make_agent("alphavit", board="3x3", seed=0, simulations=16)
    assert GameState.new("3x3").is_legal(searched.select_action(GameState.new("3x3")))


def test_no_shipped_weights_names_the_one_file_it_looks_for(monkeypatch, tmp_path):
    from agents import network_agent

    monkeypatch.setattr(network_agent, "SHIPPED_DIR", str(tmp_path))
    with pytest.raises(CheckpointError, match="no shipped alphavit weights for 4x5"):
        network_agent.shipped_checkpoint("4x5", "alphavit")
    save_checkpoint(str(tmp_path / "alphavit.pt"), tiny())
    assert network_agent.shipped_checkpoint("4x5", "alphavit") == str(tmp_path / "alphavit.pt")
    with pytest.raises(CheckpointError, match="no shipped alphazero weights for 4x5"):
        network_agent.shipped_checkpoint("4x5", "alphazero")


def test_dnb_fit_trains_alphavit(tmp_path):
    from agents.training.teacher import TeachConfig, generate
    from registry.cli import main as cli
    from registry.specs import agent_from_spec

    data = str(tmp_path / "teach")
    generate(TeachConfig(board="2x2", undrawn_min=3, undrawn_max=7, margin_max=7, positions=12, shard_size=12,
                         per_game=3, players=("greedy", "random"), seed=1), data, agent_from_spec, progress=False)
    out = tmp_path / "fit"
    assert cli(["fit", "--model", "alphavit", "--board", "2x2", "--data", data, "--steps", "2", "--eval-every", "2",
                "--batch-size", "4", "--out", str(out), "--no-progress", "--set", "model.dim=16",
                "--set", "model.heads=2", "--set", "model.layers=1"]) == 0
    payload = load_checkpoint(str(out / "checkpoint.pt"))
    assert payload["model"]["family"] == "alphavit" and payload["boards"] == ["2x2"]


def test_a_network_agent_makes_its_first_pass_on_a_board_before_the_clock():
    """``prepare`` (the arena calls it before a game's clock) runs the network once per board size; a playout
    search has nothing to warm and its random stream is left alone."""
    from registry import make_agent

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", BoardOutsideTrainingWarning)
        agent = make_agent("alphavit", board="6x6", seed=0)
    ev = agent.search.evaluator
    before = ev.calls
    agent.prepare(GameState.new(6, 6))
    agent.prepare(GameState.new(6, 6).apply(0))
    assert ev.calls == before + 1
    agent.prepare(GameState.new(7, 6))
    assert ev.calls == before + 2
    uct, again = (make_agent("mcts", board="3x3", seed=0, simulations=20) for _ in range(2))
    assert not hasattr(uct.search.evaluator, "warm_up")
    uct.prepare(GameState.new(3, 3))  # nothing asked of the playouts: the same moves as an unprepared twin
    s = GameState.new(3, 3)
    assert [uct.select_action(s) for _ in range(3)] == [again.select_action(s) for _ in range(3)]
