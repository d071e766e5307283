"""The ``dotsformer`` model family: shapes, the topology mask, the biases, the attention readout, the plot."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from agents.models import build_model, config_from_dict, config_to_dict, make_model_config
from agents.models.dotsformer import (
    DotsformerConfig,
    Dotsformer,
    MSAttention,
    block_kinds,
    relative_position_index,
    to_map,
    to_tokens,
    topology_mask,
)
from dnb_env.core import GameState, parse_board
from dnb_env.observations import encode_batch

TINY = dict(dim=8, heads=2, mlp_ratio=1.0)


def tiny(board="2x2", **kw):
    torch.manual_seed(0)
    return build_model(make_model_config("dotsformer", board=board, **{**TINY, **kw}))


def states(board: str, n: int = 3) -> list[GameState]:
    rows, cols = parse_board(board)
    out, s = [], GameState.new(rows, cols)
    for a in range(n):
        out.append(s)
        s = s.apply(s.legal_actions()[(3 * a + 1) % len(s.legal_actions())])
    return out


# ------------------------------------------------------------------------------------------ shapes

LAYERS = {"baseline": 2, "TT": 2, "RT": 3, "TR": 3}
COMBOS = [(b, o, q) for b in ("2x2", "3x3", "2x4") for o in LAYERS for q in ("multiscale4", "multiscale2", "linear")]
COMBOS += [("5x5", "TR", "multiscale4"), ("5x5", "TT", "linear")]


@pytest.mark.parametrize("board,order,qkv", COMBOS)
def test_output_shapes(board, order, qkv):
    net = tiny(board, order=order, qkv=qkv, layers=LAYERS[order])
    x = torch.as_tensor(encode_batch("chainloop6", states(board)))
    rows, cols = parse_board(board)
    H, W, A = 2 * rows + 1, 2 * cols + 1, (rows + 1) * cols + rows * (cols + 1)
    with torch.no_grad():
        out = net(x)
    assert {k: tuple(v.shape) for k, v in out.items()} == {
        "policy_logits": (3, A), "value": (3,), "initiative_logits": (3, 3), "move_class_logits": (3, 4, H, W)}
    assert out["value"].abs().max() <= 1
    maps = net.attention_maps(x)
    assert [tuple(m.shape) for m in maps] == [(3, 2, H * W, H * W)] * block_kinds(order, LAYERS[order]).count("T")


def test_no_aux_heads_and_other_encoder():
    net = tiny("3x3", aux_heads=False, encoder="alphazero4")
    with torch.no_grad():
        out = net(torch.as_tensor(encode_batch("alphazero4", states("3x3"))))
    assert set(out) == {"policy_logits", "value"}


def test_block_orders():
    assert block_kinds("TR", 6) == "TRRTRR"
    assert block_kinds("RT", 6) == "RRTRRT"
    assert block_kinds("TT", 4) == "TTTT"
    assert block_kinds("baseline", 6) == "RRRRRR"
    net = tiny(order="TR", layers=6)
    assert [type(b).__name__[0] for b in net.blocks] == list("TRRTRR")


def test_tokens_are_row_major_cells_and_round_trip():
    x = torch.arange(2 * 3 * 5 * 7, dtype=torch.float32).reshape(2, 3, 5, 7)
    t = to_tokens(x)
    assert t.shape == (2, 35, 3)
    assert torch.equal(t[1, 2 * 7 + 4], x[1, :, 2, 4])
    assert torch.equal(to_map(t, 5, 7), x)


def test_training_step_reaches_every_bias():
    net = tiny("2x2", order="TT").train()
    x = torch.as_tensor(encode_batch("chainloop6", states("2x2", 4)))
    out = net(x)
    (out["policy_logits"].sum() + out["value"].sum()).backward()
    for blk in net.blocks:
        for p in (blk.attn.w_strong, blk.attn.w_weak, blk.attn.rel_table):
            assert p.grad is not None and p.grad.abs().sum() > 0


# ------------------------------------------------------------------------------------------ topology mask

# The 5x5 grid of a 2x2 board:
#
#        x: 0 1 2 3 4
#     y 0   o - o - o
#       1   | b | b |
#       2   o - o - o
#       3   | b | b |
#       4   o - o - o
#
# Each picture is the row of M for the query cell Q: S strong (2), w weak (1), . none (0). Q itself is
# strong for an edge or a box centre and none for a dot.

TOP_EDGE_OF_BOX_00 = (0, 1), 2, """
    w Q w w .
    S S S w w
    . S . w .
    w w w . .
    . w . . .
"""
SHARED_EDGE_V01 = (1, 2), 2, """
    . S w S .
    S S Q S S
    . S w S .
    w w w w w
    . w . w .
"""
CENTRE_OF_BOX_00 = (1, 1), 2, """
    . S . w .
    S Q S w w
    . S . w .
    w w w . .
    . w . . .
"""
MIDDLE_DOT = (2, 2), 0, """
    . . . . .
    . . w . .
    . w Q w .
    . . w . .
    . . . . .
"""
CORNER_DOT = (4, 4), 0, """
    . . . . .
    . . . . .
    . . . . .
    . . . . w
    . . . w Q
"""


def picture(text: str, q_value: int) -> np.ndarray:
    code = {"S": 2, "w": 1, ".": 0, "Q": q_value}
    return np.array([[code[ch] for ch in ln.split()] for ln in text.strip().splitlines()], dtype=np.int8)


@pytest.mark.parametrize("case", [TOP_EDGE_OF_BOX_00, SHARED_EDGE_V01, CENTRE_OF_BOX_00, MIDDLE_DOT, CORNER_DOT],
                         ids=["top-edge", "shared-edge", "box-centre", "middle-dot", "corner-dot"])
def test_topology_mask_rows_on_2x2(case):
    (y, x), q_value, drawing = case
    M = topology_mask(2, 2)
    assert M.shape == (25, 25) and M.dtype == np.int8
    np.testing.assert_array_equal(M[y * 5 + x].reshape(5, 5), picture(drawing, q_value))


def test_topology_mask_is_symmetric_with_box_cells_on_the_diagonal():
    for rows, cols in ((1, 1), (2, 2), (2, 3), (5, 5)):
        M = topology_mask(rows, cols)
        np.testing.assert_array_equal(M, M.T)
        H, W = 2 * rows + 1, 2 * cols + 1
        ys, xs = np.divmod(np.arange(H * W), W)
        is_dot = (ys % 2 == 0) & (xs % 2 == 0)
        np.testing.assert_array_equal(np.diag(M), np.where(is_dot, 0, 2))
        assert set(np.unique(M)) == {0, 1, 2}


def test_topology_mask_of_1x1_box():
    # all five box cells are mutually strong; a corner dot is weak to its two edges only
    M = topology_mask(1, 1).reshape(3, 3, 3, 3)
    for a in ((0, 1), (1, 0), (1, 1), (1, 2), (2, 1)):
        for b in ((0, 1), (1, 0), (1, 1), (1, 2), (2, 1)):
            assert M[a][b] == 2
    np.testing.assert_array_equal(M[0, 0], [[0, 1, 0], [1, 0, 0], [0, 0, 0]])


def test_network_uses_the_topology_mask():
    net = tiny("2x3", order="TT")
    attn = net.blocks[0].attn
    M = torch.as_tensor(topology_mask(2, 3))
    assert torch.equal(attn.strong, (M == 2).float()) and torch.equal(attn.weak, (M == 1).float())


# ------------------------------------------------------------------------------------------ relative position


def test_relative_position_index():
    H, W = 5, 7
    idx = relative_position_index(H, W)

    def tok(y, x):
        return y * W + x

    assert idx.shape == (35, 35)
    # the same offset (+1, +2) from two different places reads one table entry
    assert idx[tok(0, 0), tok(1, 2)] == idx[tok(3, 4), tok(4, 6)]
    # the opposite offset, or a transposed one, reads another
    assert idx[tok(0, 0), tok(1, 2)] != idx[tok(1, 2), tok(0, 0)]
    assert idx[tok(0, 0), tok(1, 2)] != idx[tok(0, 0), tok(2, 1)]
    # every one of the (2H-1)(2W-1) offsets has its own row of the table
    ys, xs = np.divmod(np.arange(H * W), W)
    offsets = (ys[:, None] - ys[None, :]) * 100 + (xs[:, None] - xs[None, :])
    assert len(np.unique(idx)) == (2 * H - 1) * (2 * W - 1) == len(np.unique(offsets))
    for o in np.unique(offsets):
        assert len(np.unique(idx[offsets == o])) == 1
    assert idx.min() == 0 and idx.max() == (2 * H - 1) * (2 * W - 1) - 1


# ------------------------------------------------------------------------------------------ presets, configs


def n_params(net) -> int:
    return sum(p.numel() for p in net.parameters())


def test_paper_preset_matches_table_3_size():
    net = build_model(make_model_config("dotsformer", preset="paper"))
    assert net.config == DotsformerConfig()
    assert 1_900_000 <= n_params(net) <= 1_980_000  # Table 3: 1.94M
    assert block_kinds(net.config.order, net.config.layers) == "TRRTRR"


def test_cpu_preset_is_small():
    cfg = make_model_config("dotsformer", preset="cpu", board="3x3")
    assert (cfg.dim, cfg.heads, cfg.layers, cfg.qkv, cfg.order) == (32, 2, 3, "multiscale2", "TR")
    assert n_params(build_model(cfg)) < 200_000


def test_config_round_trip():
    cfg = make_model_config("dotsformer", preset="cpu", board="2x4", topo_bias=False)
    d = config_to_dict(cfg)
    assert d["family"] == "dotsformer" and d["topo_bias"] is False
    assert config_from_dict(d) == cfg


@pytest.mark.parametrize("fields,message", [
    (dict(order="RTR"), "order must be one of"),
    (dict(qkv="multiscale3"), "qkv must be one of"),
    (dict(encoder="edgequad4"), "laid out per box"),
    (dict(dim=30, heads=4), r"dim \(30\) must be divisible by heads \(4\)"),
    (dict(dim=6, heads=2, qkv="multiscale4"), "dim must be divisible by 4"),
    (dict(order="TR", layers=4), "multiple of 3"),
    (dict(layers=0), "layers must be an integer >= 1"),
    (dict(value="score"), "value must be one of"),
    (dict(paper_heads=False), "paper_heads=False is not supported"),
    (dict(bogus=1), "no option.*bogus"),
])
def test_bad_configs_raise(fields, message):
    with pytest.raises(ValueError, match=message):
        make_model_config("dotsformer", **fields)


# ------------------------------------------------------------------------------------------ attention


def test_attention_maps_are_distributions_and_match_forward():
    net = tiny("3x3", order="TR", layers=6)
    x = torch.as_tensor(encode_batch("chainloop6", states("3x3")))
    with torch.no_grad():
        plain = net(x)
        out, maps = net.forward_with_attention(x)
    assert len(maps) == 2  # T R R T R R
    for m in maps:
        assert m.min() >= 0
        torch.testing.assert_close(m.sum(-1), torch.ones(m.shape[:-1]))
    # the explicit softmax of the readout and the SDPA of the normal forward compute the same network
    for k in plain:
        torch.testing.assert_close(out[k], plain[k], atol=1e-5, rtol=1e-4)
    # the normal forward keeps nothing
    assert all(not m.keep_attention and m.last_attention is None for m in net.attention_modules)


def test_baseline_order_has_no_attention():
    net = tiny(order="baseline", layers=2)
    assert net.attention_maps(torch.zeros(1, 6, 5, 5)) == []


def test_w_strong_of_one_head_moves_only_that_heads_map():
    net = tiny("2x2", order="TT")
    x = torch.as_tensor(encode_batch("chainloop6", states("2x2", 1)))
    with torch.no_grad():
        before = net.attention_maps(x)[0]
        net.blocks[0].attn.w_strong[1] += 3.0
        after = net.attention_maps(x)[0]
    assert not torch.allclose(before[:, 1], after[:, 1], atol=1e-4)
    torch.testing.assert_close(before[:, 0], after[:, 0])
    # more weight on strong links: the top edge's own box gets more of its attention in head 1
    strong = torch.as_tensor(topology_mask(2, 2)[1] == 2)
    assert after[0, 1, 1, strong].sum() > before[0, 1, 1, strong].sum()


def test_switching_the_biases_off_removes_their_parameters():
    names = {n for n, _ in tiny(order="TT").named_parameters()}
    assert any(n.endswith("w_strong") for n in names) and any(n.endswith("rel_table") for n in names)
    names = {n for n, _ in tiny(order="TT", topo_bias=False).named_parameters()}
    assert not any("w_strong" in n or "w_weak" in n for n in names)
    assert any(n.endswith("rel_table") for n in names)
    attn = tiny(order="TT", topo_bias=False, rel_pos_bias=False).blocks[0].attn
    assert isinstance(attn, MSAttention) and attn.bias() is None
    assert not hasattr(attn, "strong")


def test_no_ms_trans_ablation_is_smaller():
    full = n_params(build_model(make_model_config("dotsformer", board="3x3", preset="cpu")))
    ablation = n_params(build_model(make_model_config("dotsformer", board="3x3", preset="cpu", qkv="linear",
                                                      topo_bias=False)))
    assert ablation < full


# ------------------------------------------------------------------------------------------ plot


def test_plot_attention_writes_png(tmp_path):
    from agents.models.attention_plot import attention_rows, plot_attention

    net = tiny("2x2", order="TR")
    state = GameState.from_actions(2, 2, [0, 5, 7])
    path = tmp_path / "att.png"
    cell = plot_attention(net, state, str(path))
    data = path.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 5000
    assert [p.name for p in tmp_path.iterdir()] == ["att.png"]  # no temporary file left behind
    # the default query is the edge cell of the most probable legal move
    with torch.no_grad():
        logits = net(torch.as_tensor(encode_batch("chainloop6", [state])))["policy_logits"][0]
    legal = torch.as_tensor(state.legal_mask(), dtype=torch.bool)
    best = int(torch.where(legal, logits, -torch.inf).argmax())
    assert cell == state.geometry.action_cell[best]
    rows, q = attention_rows(net, state, query=(1, 1))
    assert rows.shape == (2, 5, 5) and q == (1, 1)
    np.testing.assert_allclose(rows.sum(axis=(1, 2)), 1.0, rtol=1e-5)
    with pytest.raises(ValueError, match="transformer blocks"):
        plot_attention(net, state, str(path), block=2)


def test_attention_plot_command_line(tmp_path, capsys):
    from agents.models.attention_plot import main

    out = tmp_path / "cli.png"
    assert main(["--board", "2x2", "--moves", "0,5,h 2 0", "--out", str(out), "--query", "v 0 1"]) == 0
    assert out.stat().st_size > 5000
    assert "query cell (1, 2)" in capsys.readouterr().out


@pytest.mark.parametrize("family, board", [("dotsformer", "3x3"), ("resnet", "3x3"), ("dotsformer", "2x4")])
def test_symmetrized_evaluator_gives_symmetric_positions_symmetric_policies(family, board):
    """The architecture argument of agents/models/evaluator.py, checked: a randomly initialised network
    gives a symmetric position an asymmetric policy, and the symmetrized evaluator an exactly symmetric one."""
    from agents.models.evaluator import NetworkEvaluator
    from dnb_env.symmetry import action_permutation, symmetries, transform_state

    torch.manual_seed(0)
    extra = TINY if family == "dotsformer" else dict(blocks=1, width=8)
    net = build_model(make_model_config(family, "cpu", board=board, **extra))
    rows, cols = parse_board(board)
    # a position equal to its left-right mirror: the two outer vertical edges of the first box row drawn
    g = GameState.new(board).geometry
    s = GameState.from_actions(board, actions=[g.num_h, g.num_h + cols])
    fx = next(sym for sym in symmetries(rows, cols) if sym.flip_x and not sym.flip_y and not sym.transpose)
    assert transform_state(fx, s) == s
    perm = action_permutation(fx, rows, cols)
    plain, _ = NetworkEvaluator(net).evaluate([s])
    sym_p, sym_v = NetworkEvaluator(net, symmetrize=True).evaluate([s])
    assert np.abs(plain[0] - plain[0][perm]).max() > 1e-4  # no symmetry for free
    np.testing.assert_allclose(sym_p[0], sym_p[0][perm], atol=1e-6)
    assert abs(sym_p.sum() - 1) < 1e-6 and sym_p[0][s.legal_mask() == 0].sum() == 0
    # the value of a position and of its image agree exactly too
    t_p, t_v = NetworkEvaluator(net, symmetrize=True).evaluate([transform_state(symmetries(rows, cols)[-1], s)])
    np.testing.assert_allclose(t_v, sym_v, atol=1e-5)
