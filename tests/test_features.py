"""Computed chain-structure features: the safe-phase search (C++ against the Python reference, and
against the exact solver where the safe phase ends at once), the long chain rule, their encoders."""

from __future__ import annotations

import os
import random
import subprocess
import sys

import numpy as np
import pytest

from dnb_env import native
from dnb_env.core import GameState, geometry
from dnb_env.analysis import MoveClass, long_chain_count, move_classes, realistic_position
from dnb_env.features import long_chain_rule_moves, safe_phase_value, safe_phase_values
from dnb_env.observations import encode
from dnb_env.solver import Solver, native_available

needs_native = pytest.mark.skipif(not native_available(), reason="the C++ extension is not built")


def positions(seed: int, count: int, lo: int, hi: int, board: str = "5x5"):
    rng = random.Random(seed)
    return [realistic_position(board, rng.randint(lo, hi), rng) for _ in range(count)]


def test_values_only_on_safe_and_capturing_moves():
    seen = 0
    for s in positions(1, 12, 31, 38):
        values = safe_phase_values(s)
        classes = move_classes(s)
        if not (classes == MoveClass.SAFE).any():
            assert values is None
            continue
        if values is None:  # over budget
            continue
        seen += 1
        allowed = (classes == MoveClass.SAFE) | (classes == MoveClass.SCORING)
        assert np.array_equal(~np.isnan(values), allowed)
        assert safe_phase_value(s) == np.nanmax(values)
        assert np.all(np.abs(values[allowed]) <= s.geometry.num_boxes)
    assert seen >= 4


def test_equals_the_exact_solver_where_the_safe_phase_ends_after_the_move():
    """When no safe move is left after a move, the feature is the exact value of that move."""
    solver = Solver()
    checked = 0
    for s in positions(2, 80, 29, 33):
        values = safe_phase_values(s)
        if values is None:
            continue
        exact = solver.move_values(s)
        for a in np.flatnonzero(~np.isnan(values)):
            child = s.apply(int(a))
            if (move_classes(child) == MoveClass.SAFE).any():
                continue
            assert values[a] == exact[int(a)], (s.edges, a)
            checked += 1
    assert checked >= 20


def test_a_tiny_budget_gives_up():
    for s in positions(3, 10, 33, 36):
        if (move_classes(s) == MoveClass.SAFE).sum() >= 3:
            assert safe_phase_values(s, nodes=1) is None
            return
    pytest.fail("no position with three safe moves")


def test_positions_with_many_safe_moves_get_no_values_without_a_search(monkeypatch):
    import dnb_env.features as features

    searched = []
    real = features._values
    monkeypatch.setattr(features, "_values", lambda *a: searched.append(a) or real(*a))
    opening = GameState.from_actions(5, 5, [0, 37])  # 58 undrawn edges, every one of them safe
    assert safe_phase_values(opening) is None and not searched
    assert safe_phase_values(opening, max_safe=None) is None and searched  # the search itself gives up
    # at the limit and below, the values are those of the search without a limit
    for s in [GameState.new(3, 3)] + positions(4, 30, 30, 40):
        n_safe = int((move_classes(s) == MoveClass.SAFE).sum())
        limited, free = safe_phase_values(s, max_safe=24), safe_phase_values(s, max_safe=None)
        if n_safe <= 24:
            assert (limited is None) == (free is None)
            assert limited is None or np.array_equal(limited, free, equal_nan=True)
        else:
            assert limited is None
    searched.clear()
    safe_phase_values(GameState.new(3, 3))  # 24 safe moves: still searched
    assert searched


@needs_native
def test_cpp_search_matches_the_python_reference():
    states = positions(4, 25, 31, 38)
    with native.use_backend("native"):
        fast = [safe_phase_values(s) for s in states]
    with native.use_backend("python"):
        slow = [safe_phase_values(s) for s in states]
    compared = 0
    for s, a, b in zip(states, fast, slow):
        assert (a is None) == (b is None), s.edges
        if a is not None:
            np.testing.assert_array_equal(a, b)
            compared += 1
    assert compared >= 10


@needs_native
def test_the_sacrifice_search_without_sacrifices_is_the_safe_phase_search():
    """The alpha-beta search of the sacrifice variant, with no sacrifice allowed, gives the plain search's
    values on every move."""
    solver = Solver(node_limit=500_000)
    compared = 0
    for s in positions(6, 30, 30, 38) + positions(7, 10, 8, 16, board="3x3"):
        plain = solver.safe_phase_values(s, 20_000)
        ab = solver._exact(s).sacrifice_phase_values(s.edges, 0, 20_000, 500_000)
        assert (plain is None) == (ab is None), s.edges
        if plain:
            assert ab == plain, s.edges
            compared += 1
    assert compared >= 15


@needs_native
@pytest.mark.parametrize("sacrifices, n3, lo, hi, n5", [(1, 24, 12, 19, 4), (2, 16, 10, 16, 3)])
def test_cpp_sacrifice_search_matches_the_python_reference(sacrifices, n3, lo, hi, n5):
    states = positions(8 + sacrifices, n3, lo, hi, board="3x3") + positions(10 + sacrifices, n5, 31, 33)
    compared = with_sacrifice = 0
    for s in states:
        with native.use_backend("native"):
            fast = safe_phase_values(s, nodes=200_000, max_safe=None, sacrifices=sacrifices)
        with native.use_backend("python"):
            slow = safe_phase_values(s, nodes=200_000, max_safe=None, sacrifices=sacrifices)
        assert (fast is None) == (slow is None), s.edges
        if fast is None:
            continue
        np.testing.assert_array_equal(fast, slow, err_msg=str(s.edges))
        compared += 1
        conceding = move_classes(s) == MoveClass.CONCEDING
        with_sacrifice += bool((~np.isnan(fast[conceding])).any())
    assert compared >= 12 and with_sacrifice >= 10


@needs_native
def test_the_sacrifice_search_in_a_window_bounds_the_exact_values():
    """Fail-soft: a move whose value lies outside the window gets a bound between it and the window's
    edge, one inside gets its exact value."""
    solver = Solver(node_limit=500_000)
    seen = {"below": 0, "inside": 0, "above": 0}
    for s in positions(16, 25, 28, 34):
        ex = solver._exact(s)
        full = ex.sacrifice_phase_values(s.edges, 2, 20_000, 500_000)
        if not full:
            continue
        for lo, hi in ((-1, 1), (0, 2), (-4, -1), (-3, 3), (-6, 4)):
            win = ex.sacrifice_phase_values(s.edges, 2, 20_000, 500_000, lo, hi)
            if win is None:
                continue
            assert set(win) == set(full)
            for a, v in full.items():
                if v <= lo:
                    assert v <= win[a] <= lo, (s.edges, a, v, win[a])
                    seen["below"] += 1
                elif v >= hi:
                    assert hi <= win[a] <= v, (s.edges, a, v, win[a])
                    seen["above"] += 1
                else:
                    assert win[a] == v
                    seen["inside"] += 1
    assert min(seen.values()) >= 5, seen
    with pytest.raises(ValueError, match="window"):
        ex.sacrifice_phase_values(s.edges, 2, 20_000, 500_000, 1, 1)


def test_sacrifices_hand_over_at_most_two_boxes():
    """Only conceding moves that hand over one or two boxes get values, and the count of boxes handed
    over follows the run: a lone box, a 2-chain opened at its end, a 3-chain."""
    from dnb_env.features import SACRIFICE_BOXES, handout

    checked = {1: 0, 2: 0, 3: 0}
    for s in positions(13, 40, 28, 36):
        for a in np.flatnonzero(move_classes(s) == MoveClass.CONCEDING):
            n = handout(s, int(a))
            # play the captures out: the opponent takes n boxes in a row (at least that many; counts stop
            # at SACRIFICE_BOXES + 1)
            child, taken = s.apply(int(a)), 0
            while taken < n:
                scoring = [int(e) for e in np.flatnonzero(move_classes(child) == MoveClass.SCORING)]
                assert scoring, (s.edges, a, n, taken)
                before = (child.owner0 | child.owner1).bit_count()
                child = child.apply(scoring[0])
                taken += (child.owner0 | child.owner1).bit_count() - before
            checked[min(n, SACRIFICE_BOXES + 1)] += 1
        values = safe_phase_values(s, max_safe=None, sacrifices=1)
        if values is not None:
            for a in np.flatnonzero(move_classes(s) == MoveClass.CONCEDING):
                assert np.isnan(values[a]) == (handout(s, int(a)) > SACRIFICE_BOXES), (s.edges, a)
    assert min(checked.values()) >= 3, checked


def test_sacrifice_search_skips_positions_with_many_safe_moves(monkeypatch):
    import dnb_env.features as features

    searched = []
    real = features._values
    monkeypatch.setattr(features, "_values", lambda *a: searched.append(a) or real(*a))
    many = next(s for s in positions(15, 40, 38, 44)
                if features.SACRIFICE_MAX_SAFE < (move_classes(s) == MoveClass.SAFE).sum() <= features.SAFE_PHASE_MAX_SAFE)
    assert safe_phase_values(many, sacrifices=2) is None and not searched
    assert safe_phase_values(many) is not None or searched  # the safe-only search still runs there
    searched.clear()
    safe_phase_values(many, sacrifices=2, max_safe=None)
    assert searched


def test_sacrifices_are_checked():
    s = positions(14, 1, 34, 34)[0]
    for bad in (-1, 1.5, True, "1"):
        with pytest.raises(ValueError, match="sacrifices"):
            safe_phase_values(s, sacrifices=bad)
    if native_available():
        with pytest.raises(ValueError, match="sacrifices"):
            Solver().safe_phase_values(s, 100, sacrifices=-1)


@needs_native
def test_the_interpreter_exits_cleanly_after_native_searches():
    # the extension once kept Python strings in C++ statics, released by the exit handlers after the
    # interpreter was gone: Python 3.12 crashed at exit (signal 11) after any safe-phase search
    code = ("import random\n"
            "from dnb_env import native\n"
            "from dnb_env.analysis import realistic_position\n"
            "from dnb_env.features import safe_phase_values\n"
            "assert native.available()\n"
            "found = [safe_phase_values(realistic_position('5x5', 34, random.Random(seed))) for seed in range(20)]\n"
            "assert any(v is not None for v in found)\n"
            "print('searched')")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                          cwd=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    assert done.returncode == 0, (done.returncode, done.stderr[-2000:])
    assert done.stdout.strip() == "searched"


@needs_native
def test_solver_checks_the_position_budget():
    s = positions(5, 1, 34, 34)[0]
    with pytest.raises(ValueError, match="positions"):
        Solver().safe_phase_values(s, 0)


def test_long_chain_rule_moves_are_safe_moves_with_the_wanted_parity():
    dots = 36
    for s in positions(6, 8, 28, 36):
        good = long_chain_rule_moves(s)
        safe = move_classes(s) == MoveClass.SAFE
        assert not (good & ~safe).any()
        for a in np.flatnonzero(safe):
            even = (dots + long_chain_count(s.apply(int(a)))) % 2 == 0
            assert good[a] == (even if s.current_player == 0 else not even)


@pytest.mark.parametrize("board", ["3x3", "4x7", "7x7", "10x10"])
def test_long_chain_rule_moves_recount_each_move_on_every_board(board):
    """The chains are found once and each safe move's count follows from the boxes it touches: the same as
    counting the long chains again after each move, on boards past 5x5 and past the native engine too."""
    g = geometry(board)
    dots = (g.rows + 1) * (g.cols + 1)
    rng = random.Random(board)
    for undrawn in range(g.num_actions - 1, 0, -(g.num_actions // 12)):
        s = realistic_position(board, undrawn, rng)
        good = long_chain_rule_moves(s)
        safe = move_classes(s) == MoveClass.SAFE
        assert not (good & ~safe).any()
        for a in np.flatnonzero(safe):
            even = (dots + long_chain_count(s.apply(int(a)))) % 2 == 0
            assert good[a] == (even if s.current_player == 0 else not even), (board, s.history, a)


#: A 6x6 middle game (44 undrawn edges, three safe moves) whose safe phase ends with more than 40 undrawn
#: edges, where the exact solver of the searches' leaves stops.
BEYOND_LEAVES = (73, 45, 59, 34, 74, 0, 55, 76, 17, 81, 31, 67, 8, 41, 77, 30, 52, 56, 18, 53, 47, 61, 42, 60,
                 58, 1, 64, 39, 66, 3, 26, 19, 35, 79, 5, 70, 49, 4, 7, 38)


@needs_native
def test_an_end_of_the_safe_phase_past_the_solvers_reach_gives_no_values_in_cpp_as_in_python():
    """Where the safe phase ends with more than the leaf solver's 40 undrawn edges the search gives no values,
    in C++ as in the Python reference (before, C++ solved such ends within its node budget, seconds a
    position on 9x9); the encoders' feature channels and flags are then 0."""
    from dnb_env import features

    s = GameState.from_actions(6, 6, BEYOND_LEAVES)
    assert features._solver().max_undrawn == features.SAFE_PHASE_LEAF_UNDRAWN == 40
    ex = features._solver()._exact(s)
    assert ex.safe_phase_values(s.edges, 20_000, 500_000)  # without the limit C++ finds values here
    assert ex.safe_phase_values(s.edges, 20_000, 500_000, max_undrawn=40) is None
    assert ex.sacrifice_phase_values(s.edges, 2, 20_000, 500_000)
    assert ex.sacrifice_phase_values(s.edges, 2, 20_000, 500_000, max_undrawn=40) is None
    for sacrifices in (0, 2):
        assert safe_phase_values(s, sacrifices=sacrifices) is None
        with native.use_backend("python"):
            features.clear_caches()
            assert safe_phase_values(s, sacrifices=sacrifices) is None
    features.clear_caches()
    for name in ("chainloop6_safe", "chainloop6_sac2", "chainloop6_safevalue"):
        assert not encode(name, s)[6:].any(), name


def test_no_end_of_the_safe_phase_on_a_5x5_board_reaches_the_leaf_limit():
    """Every undrawn edge of a position without a safe move is a side of a box with at most two undrawn sides;
    the most undrawn edges that allows on 5x5 (an integer program) is 37, under the leaf solver's 40: the
    limit changes no value on boards of at most 5x5 boxes."""
    optimize = pytest.importorskip("scipy.optimize")
    from dnb_env.features import SAFE_PHASE_LEAF_UNDRAWN

    def most_undrawn(board):
        g = geometry(board)
        n = g.num_actions + g.num_boxes  # x_e (edge e undrawn), low_b (box b has at most two undrawn sides)
        rows, upper = [], []
        for b, sides in enumerate(g.box_sides):  # sum of x over the sides <= 2 when low_b, else <= 4
            row = np.zeros(n)
            row[list(sides)] = 1
            row[g.num_actions + b] = 2
            rows.append(row)
            upper.append(4)
        for e, boxes in enumerate(g.action_boxes):  # an undrawn edge touches a low box
            row = np.zeros(n)
            row[e] = 1
            row[[g.num_actions + b for b in boxes]] -= 1
            rows.append(row)
            upper.append(0)
        c = np.concatenate([-np.ones(g.num_actions), np.zeros(g.num_boxes)])
        found = optimize.milp(c, constraints=optimize.LinearConstraint(np.array(rows), -np.inf, upper),
                              integrality=np.ones(n), bounds=optimize.Bounds(0, 1))
        return round(-found.fun)

    assert most_undrawn("5x5") == 37 <= SAFE_PHASE_LEAF_UNDRAWN
    assert most_undrawn("4x6") == 36 and most_undrawn("5x6") == 44  # 5x6: where the limit starts to matter


def test_safe_encoder_planes():
    g = None
    checked = 0
    for s in positions(7, 10, 31, 36):
        g = s.geometry
        obs = encode("chainloop6_safe", s)
        np.testing.assert_array_equal(obs[:6], encode("chainloop6", s))
        values = safe_phase_values(s)
        if values is None:
            assert not obs[6:].any()
            continue
        checked += 1
        flat6, flat7 = obs[6].reshape(-1)[g.action_flat], obs[7].reshape(-1)[g.action_flat]
        known = ~np.isnan(values)
        np.testing.assert_allclose(flat6[known], values[known] / g.num_boxes, rtol=1e-6)
        assert np.array_equal(flat7 == 1, known & (values == np.nanmax(values)))
        assert (obs[8] == 1).all()
        glob = encode("chainloop6_safevalue", s)
        assert np.allclose(glob[6], np.nanmax(values) / g.num_boxes) and (glob[7] == 1).all()
    assert checked >= 3


def test_future_targets_follow_the_board_symmetries():
    from agents.training.replay import future_targets
    from dnb_env.symmetry import symmetries, transform_policy, transform_state

    states = [s for s in positions(8, 8, 31, 36) if safe_phase_values(s) is not None][:3]
    assert states
    values, mask = future_targets(states)
    assert values.shape == mask.shape == (len(states), 60) and mask.any()
    assert np.all(np.abs(values) <= 1) and not values[mask == 0].any()
    for sym in symmetries(5, 5):
        moved, moved_mask = future_targets([transform_state(sym, s) for s in states])
        np.testing.assert_array_equal(moved, transform_policy(sym, values, 5, 5))
        np.testing.assert_array_equal(moved_mask, transform_policy(sym, mask, 5, 5))


@pytest.mark.parametrize("family", ["dotsformer", "resnet"])
def test_the_future_head_learns_its_target(family):
    """A model with ``future_head`` outputs ``safe_phase [B, A]``, the loss includes it where the mask is 1,
    and a few steps on one batch bring that part down."""
    import torch

    from agents.models import build_model, make_model_config
    from agents.training.config import LossConfig
    from agents.training.losses import total_loss
    from agents.training.replay import future_targets

    torch.manual_seed(0)
    extra = {"paper_heads": True} if family == "resnet" else {}
    net = build_model(make_model_config(family, preset="cpu", board="5x5", encoder="chainloop6", future_head=True, **extra))
    states = [s for s in positions(9, 12, 31, 36) if safe_phase_values(s) is not None][:6]
    values, mask = future_targets(states)
    planes = torch.from_numpy(encode_batch_for(states))
    batch = {"pi": torch.full((len(states), 60), 1 / 60), "value": torch.zeros(len(states)),
             "initiative": torch.zeros(len(states), dtype=torch.int64),
             "move_class": torch.zeros(len(states), 60, dtype=torch.int64),
             "safe_phase": torch.from_numpy(values), "safe_phase_mask": torch.from_numpy(mask)}
    net.train()
    out = net(planes)
    assert out["safe_phase"].shape == (len(states), 60)
    cfg = LossConfig(future_weight=1.0)
    opt = torch.optim.Adam(net.parameters(), lr=3e-3)
    first = None
    for _ in range(30):
        loss, parts = total_loss(net(planes), batch, cfg, "5x5")
        first = parts["future_loss"] if first is None else first
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert parts["future_loss"] < 0.5 * first
    off, parts_off = total_loss(net(planes), {k: v for k, v in batch.items() if not k.startswith("safe")}, cfg, "5x5")
    assert "future_loss" not in parts_off


def encode_batch_for(states):
    from dnb_env.observations import encode_batch

    return encode_batch("chainloop6", states)


def test_the_four_sacrifice_encoder_finds_the_winning_move_the_two_sacrifice_one_misses():
    """A 5x5 midgame position with 34 undrawn edges, from a game of alphabeta against greedy: with two
    sacrifices the search rates a losing move best, with four it rates best the only move that keeps the
    win (by the exact solver)."""
    pytest.importorskip("dnb_env._native")
    from dnb_env.features import SACRIFICE_WIDE_NODES

    edges = 0x56791AAA48648B2
    state = GameState.from_actions(5, 5, [a for a in range(60) if edges >> a & 1])
    assert state.num_actions - state.edges.bit_count() == 34
    two, four = encode("chainloop6_sac2", state), encode("chainloop6_sac4", state)
    assert np.array_equal(four[:9], two[:9]) and (four[11] == 1).all() and (two[11] == 1).all()
    g = state.geometry
    assert np.flatnonzero(two[10].reshape(-1)).tolist() == [g.action_flat[27]]
    assert np.flatnonzero(four[10].reshape(-1)).tolist() == [g.action_flat[25]]
    values = safe_phase_values(state, nodes=SACRIFICE_WIDE_NODES, sacrifices=4)
    known = ~np.isnan(values)
    assert np.allclose(four[9].reshape(-1)[g.action_flat[known]], values[known] / 25)
    solver = Solver()
    assert solver.keeps_win(state, 25) and not solver.keeps_win(state, 27)


def test_endgame_values_are_the_exact_move_values_once_no_safe_move_is_left():
    from dnb_env.features import endgame_values

    rng = random.Random(5)
    solver = Solver()
    checked = 0
    for _ in range(20):
        s = GameState.new(3, 3)
        while not s.is_terminal() and (move_classes(s) == MoveClass.SAFE).any():
            assert endgame_values(s) is None  # a safe move is left: the safe phase is not over
            s = s.apply(rng.choice(s.legal_actions()))
        if s.is_terminal():
            assert endgame_values(s) is None
            continue
        values = endgame_values(s)
        want = solver.move_values(s)
        assert sorted(np.flatnonzero(~np.isnan(values)).tolist()) == sorted(want)
        assert all(values[a] == v for a, v in want.items())
        planes = encode("chainloop6_sac4", s)
        assert (planes[11] == 1).all() and not encode("chainloop6_sac2", s)[11].any()
        g = s.geometry
        assert np.allclose(planes[9].reshape(-1)[g.action_flat[list(want)]], np.array(list(want.values())) / 9)
        best = [a for a, v in want.items() if v == max(want.values())]
        assert sorted(np.flatnonzero(planes[10].reshape(-1)).tolist()) == sorted(g.action_flat[best].tolist())
        checked += 1
    assert checked >= 10


@needs_native
def test_safe_phase_values_are_the_same_in_every_orientation_even_near_the_budget():
    """The search's budget cuts a position in every orientation alike: small budgets, where the order the
    positions are visited in decides whether a search finishes, give values that map with the board."""
    from dnb_env.features import safe_phase_values
    from dnb_env.symmetry import action_permutation, symmetries, transform_state

    rng = random.Random(1)
    finished = 0
    for _ in range(200):
        moves = list(range(40))
        rng.shuffle(moves)
        s = GameState.from_actions(4, 4, moves[:rng.randrange(5, 35)])
        for nodes in (50, 300, 2000):
            base = safe_phase_values(s, nodes, sacrifices=2)
            finished += base is not None
            for sym in symmetries(4, 4):
                got = safe_phase_values(transform_state(sym, s), nodes, sacrifices=2)
                assert (got is None) == (base is None), f"{sym} nodes={nodes}"
                if base is not None:
                    want = np.full_like(base, np.nan)
                    want[action_permutation(sym, 4, 4)] = base
                    np.testing.assert_array_equal(got, want, err_msg=f"{sym} nodes={nodes}")
    assert finished > 10


# Encoders of computed features at 5x5 midgame positions: once, on the default engine (their Python
# reference searches each position for minutes; its parity with the native searches is tested on smaller ones).

def test_the_deep_sacrifice_encoder_reaches_where_the_feature_budget_does_not():
    """A 5x5 position with 37 undrawn edges (from the held-out positions of 35-40 undrawn edges): the
    two-sacrifice search runs out of the feature's 20,000 positions but finishes within the deep budget."""
    pytest.importorskip("dnb_env._native")
    from dnb_env.features import SACRIFICE_DEEP_NODES, safe_phase_values

    edges = 0xB21A10BD121F410
    state = GameState.from_actions(5, 5, [a for a in range(60) if edges >> a & 1])
    assert state.num_actions - state.edges.bit_count() == 37
    near, deep = encode("chainloop6_sac2", state), encode("chainloop6_sac2_deep", state)
    assert not near[11].any() and not near[9].any()  # no values within the feature's budget
    assert (deep[11] == 1).all() and np.array_equal(deep[:9], near[:9])
    values = safe_phase_values(state, nodes=SACRIFICE_DEEP_NODES, sacrifices=2)
    g = state.geometry
    known = ~np.isnan(values)
    plane = deep[9].reshape(-1)
    assert np.allclose(plane[g.action_flat[known]], values[known] / 25)
    best = np.zeros(plane.shape)
    best[g.action_flat[known & (values == np.nanmax(values))]] = 1
    assert np.array_equal(deep[10].reshape(-1), best)


def test_chainloop6_nim38_is_chainloop6_nim_up_to_38_undrawn_edges():
    rng = random.Random(9)
    for undrawn in (30, 38, 39, 41):
        s = realistic_position("5x5", undrawn, rng)
        a, b = encode("chainloop6_nim", s), encode("chainloop6_nim38", s)
        if undrawn <= 38:
            np.testing.assert_array_equal(a, b)
        else:
            np.testing.assert_array_equal(a[:9], b[:9])
            assert not b[9:].any()
