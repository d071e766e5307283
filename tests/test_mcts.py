"""PUCT search: exact answers on small positions, no sign flip after a box, batching, tree reuse."""

from __future__ import annotations

import random
import textwrap

import numpy as np
import pytest

from agents.search import (MCTS, MCTSAgent, RolloutEvaluator, SearchSettings, UniformEvaluator, final_value,
                           visits_to_policy)
from dnb_env.analysis import realistic_move
from dnb_env.core import GameState
from dnb_env.solver import Solver

pytestmark = pytest.mark.usefixtures("each_backend")  # the search prunes with the Python or the native analysis

SACRIFICE = textwrap.dedent(
    """
    +---+---+---+
    |           |
    +---+---+---+
    """
)  # 1x3 closed at both ends: the mover may take all three boxes


def test_takes_all_boxes_after_a_capture_without_sign_flip():
    # taking box 0 (or 2) keeps the turn; a search that negated across that move would shun it
    s = GameState.from_text(SACRIFICE)
    counts = MCTS(UniformEvaluator(), SearchSettings(simulations=200, prune=False), np.random.default_rng(0)).run(s)
    assert int(np.argmax(counts)) in (7, 8)


@pytest.mark.parametrize("prune", [False, True])
def test_finds_exact_best_moves_on_small_boards(prune):
    rng = random.Random(1)
    solver = Solver()
    agree = 0
    for _ in range(12):
        s = GameState.new(2, 3)
        for _ in range(rng.randrange(8, 12)):  # 5-9 edges left: 600 simulations see the whole tree
            s = s.apply(realistic_move(s, rng))
        if s.is_terminal():
            agree += 1
            continue
        agent = MCTSAgent(RolloutEvaluator(4, seed=0), SearchSettings(simulations=600, prune=prune), seed=0)
        a = agent.select_action(s)
        mv = solver.move_values(s)
        best_sign = np.sign(solver.game_value(s))
        # the search optimises the win/loss/draw result: the chosen move must keep the best result
        s0, s1 = s.scores
        have = s0 - s1 if s.current_player == 0 else s1 - s0
        agree += np.sign(have + mv[a]) == best_sign
    assert agree >= 11


def test_margin_values_find_the_best_margin():
    # value="margin": the search scores leaves by box margin, so its move must be margin-optimal
    rng = random.Random(4)
    solver = Solver()
    agree = 0
    for _ in range(12):
        s = GameState.new(2, 3)
        for _ in range(rng.randrange(8, 12)):
            s = s.apply(realistic_move(s, rng))
        if s.is_terminal():
            agree += 1
            continue
        agent = MCTSAgent(RolloutEvaluator(4, seed=0, value="margin"),
                          SearchSettings(simulations=2000, value="margin"), seed=0)
        mv = solver.move_values(s)
        agree += mv[agent.select_action(s)] == max(mv.values())
    assert agree >= 11


def test_final_value_units():
    s = GameState.from_text(SACRIFICE)
    s0, s1 = s.scores
    me = s.current_player
    have = s0 - s1 if me == 0 else s1 - s0
    assert final_value(s, "margin", 3) == pytest.approx((have + 3) / (s.rows * s.cols))
    assert final_value(s, "win", 3) == float(np.sign(have + 3))
    with pytest.raises(ValueError, match="value must be"):
        SearchSettings(value="score")


def test_batched_search_counts_every_simulation():
    s = GameState.new(3, 3)
    for bs in (1, 8, 32):
        counts = MCTS(UniformEvaluator(), SearchSettings(simulations=100, batch_size=bs), np.random.default_rng(0)).run(s)
        assert counts.sum() == 100 and (counts[s.legal_mask() == 0] == 0).all()


def test_tree_reuse_keeps_the_subtree():
    agent = MCTSAgent(UniformEvaluator(), SearchSettings(simulations=200), seed=0)
    s = GameState.new(2, 2)
    a = agent.select_action(s)
    kept = agent.search.root
    assert kept is not None and kept.state == s.apply(a)
    before = kept.visits
    agent.select_action(s.apply(a))
    assert agent.search.root is not None and before > 0


def test_noise_and_temperature():
    p = visits_to_policy(np.array([0.0, 10.0, 30.0]), 1.0)
    assert p.tolist() == [0.0, 0.25, 0.75]
    assert visits_to_policy(np.array([1.0, 3.0, 3.0]), 0.0).tolist() == [0.0, 0.5, 0.5]
    cfg = SearchSettings(simulations=50, add_noise=True)
    counts = MCTS(UniformEvaluator(), cfg, np.random.default_rng(0)).run(GameState.new(2, 2))
    assert counts.sum() == 50
    with pytest.raises(ValueError):
        SearchSettings(simulations=0)


@pytest.mark.parametrize("noise", [False, True])
def test_node_statistics_stay_consistent(noise):
    # every expanded node keeps Q = W / N, U = P / (1 + N) and total = sum N after virtual loss is removed,
    # and a node evaluated but never walked through holds its priors unexpanded
    rng = random.Random(3)
    s = GameState.new("3x3")
    for _ in range(6):
        s = s.apply(realistic_move(s, rng))
    search = MCTS(RolloutEvaluator(seed=0), SearchSettings(simulations=300, batch_size=8, add_noise=noise),
                  np.random.default_rng(0))
    search.run(s)
    stack, expanded, pending = [search.root], 0, 0
    while stack:
        node = stack.pop()
        if node.expanded:
            expanded += 1
            N, W = np.array(node.N), np.array(node.W)
            assert (N >= 0).all() and node.total == pytest.approx(N.sum())
            assert node.Q == pytest.approx(np.where(N > 0, W / np.maximum(N, 1), 0.0))
            assert node.U == pytest.approx(node.P / (1 + N))
            assert node.P.sum() == pytest.approx(1.0) and node.pending is None
            stack.extend(node.children.values())
        elif node.pending is not None:
            pending += 1
    assert expanded > 1 and pending > 1
    assert search.root.total == pytest.approx(300)  # every simulation passes through the root once


def test_search_pauses_the_garbage_collector_and_restores_it():
    import gc

    class Spy(UniformEvaluator):
        seen = []

        def evaluate(self, states):
            self.seen.append(gc.isenabled())
            return super().evaluate(states)

    assert gc.isenabled()
    MCTS(Spy(), SearchSettings(simulations=20), np.random.default_rng(0)).run(GameState.new("2x2"))
    assert Spy.seen and not any(Spy.seen) and gc.isenabled()

    class Broken(UniformEvaluator):
        def evaluate(self, states):
            raise RuntimeError("evaluator failed")

    with pytest.raises(RuntimeError):
        MCTS(Broken(), SearchSettings(simulations=20)).run(GameState.new("2x2"))
    assert gc.isenabled()  # restored on error too
    gc.disable()
    try:
        MCTS(UniformEvaluator(), SearchSettings(simulations=20)).run(GameState.new("2x2"))
        assert not gc.isenabled()  # a caller's own pause is kept
    finally:
        gc.enable()


def test_one_settings_type_holds_every_search_default():
    """The search, training and the network agents read their defaults from agents.search.settings: the
    training section's are SearchSettings' under SELF_PLAY, the registry's options SearchSettings' under
    PLAY."""
    import inspect

    from agents.network_agent import make_network_agent
    from agents.search.settings import PLAY, SELF_PLAY, default, settings_for
    from agents.training.config import TrainConfig
    from registry.agents import _FACTORIES

    for A in (12, 60):
        assert TrainConfig().search.for_board(A) == settings_for(A, SELF_PLAY)
    params = inspect.signature(_FACTORIES["alphazero"]).parameters
    assert list(params)[2:] == ["checkpoint", "simulations", "c_puct", "prune", "device", "symmetrize", "search",
                                "solve_leaf", "solve_root", "solve_nodes", "nimstring_edges", "nimstring_order",
                                "nimstring_threads", "safe_phase"]
    for name in ("simulations", "c_puct", "prune", "solve_leaf", "solve_root", "solve_nodes"):
        assert params[name].default == default(name, PLAY)
    assert (default("simulations", PLAY), default("solve_nodes", PLAY), default("solve_leaf", PLAY)) == (200, 10**6, -1)
    with pytest.raises(TypeError, match="unknown search setting.*value"):
        make_network_agent("3x3", value="win")
