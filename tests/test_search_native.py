"""The C++ search (agents.search.native) against the Python reference (agents.search.python): bit-identical visit
counts, root values and moves on the same evaluator outputs and seeds; tree reuse; lockstep games; bad input.

The evaluators give dyadic priors and values (k / 64) drawn from a hash of the position, so every float
sum is exact in any order and the two searches must agree exactly, not merely closely."""

from __future__ import annotations

import dataclasses
import itertools
import random

import numpy as np
import pytest

from agents.search import SearchSettings, UniformEvaluator, visits_to_policy
from agents.search.python import MCTS, run_many
from dnb_env import native
from dnb_env.analysis import realistic_move
from dnb_env.core import GameState

pytestmark = pytest.mark.skipif(not native.available(), reason="the C++ extension is not built")

if native.available():
    from agents.search import choose_backend, make_search
    from agents.search import run_many as run_many_any
    from agents.search.native import NativeMCTS, NativeRolloutEvaluator, run_many_native


class Dyadic:
    """Priors in {0, 1/64, ..., 63/64} over all actions (illegal ones too) and a value in [-1, 1] in steps of
    1/64, fixed by the position; counts its calls and leaves."""

    def __init__(self, salt: int = 0):
        self.salt, self.calls, self.leaves = salt, 0, 0

    def evaluate(self, states):
        self.calls += 1
        self.leaves += len(states)
        A = states[0].num_actions
        priors, values = np.empty((len(states), A)), np.empty(len(states))
        a = np.arange(A, dtype=np.uint64)
        for i, s in enumerate(states):
            h = np.uint64(hash((s.edges, s.owner0, s.owner1, s.current_player, self.salt)) & (2**61 - 1))
            with np.errstate(over="ignore"):
                mix = (h * np.uint64(0x9E3779B97F4A7C15) + a * np.uint64(0xBF58476D1CE4E5B9)) >> np.uint64(40)
            priors[i] = (mix % np.uint64(64)).astype(np.float64) / 64
            values[i] = (int(h >> np.uint64(7)) % 129 - 64) / 64
        return priors, values


@pytest.fixture
def one_torch_thread():
    """Tiny networks run fastest on one thread (and do not fight parallel test workers for the cores)."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(before)


def position(rows, cols, moves, seed):
    rng = random.Random(seed)
    s = GameState.new(rows, cols)
    for _ in range(moves):
        if s.is_terminal():
            break
        s = s.apply(realistic_move(s, rng))
    return s


def same_search(a, b):
    np.testing.assert_array_equal(a.counts(), b.counts())
    assert abs(a.root_value() - b.root_value()) <= 1e-12
    assert a.root_value() == b.root_value()  # dyadic inputs: exactly


def test_pairwise_sum_is_numpys():
    from dnb_env import _native

    rng = np.random.default_rng(0)
    for n in list(range(0, 140)) + [181, 255, 300]:
        x = rng.random(n) * 10.0 ** rng.integers(-8, 8, n)
        assert _native.pairwise_sum(x) == x.sum()


BOARDS = [(2, 2), (3, 3), (3, 4), (5, 5)]
SETTINGS = list(itertools.product([1.0, 0.0], [1, 8], [False, True]))  # virtual loss, batch size, noise


@pytest.mark.parametrize("board", BOARDS, ids=lambda b: f"{b[0]}x{b[1]}")
@pytest.mark.parametrize("prune", [True, False], ids=["prune", "noprune"])
@pytest.mark.parametrize("value", ["win", "margin"])
def test_parity_on_many_positions(board, prune, value):
    rows, cols = board
    checked = 0
    for k, (vl, batch, noise) in enumerate(SETTINGS):
        for moves in (0, rows * cols + 1, 2 * rows * cols + 2):
            s = position(rows, cols, moves, seed=100 * k + moves)
            if s.is_terminal():
                continue
            cfg = SearchSettings(simulations=96, prune=prune, value=value, virtual_loss=vl, batch_size=batch,
                                add_noise=noise)
            ev = Dyadic(k)
            py, nat = MCTS(ev, cfg, np.random.default_rng(k)), NativeMCTS(ev, cfg, np.random.default_rng(k))
            ca, cb = py.run(s), nat.run(s)
            same_search(py, nat)
            assert py.root_net_value == nat.root_net_value
            assert int(np.argmax(ca)) == int(np.argmax(cb))
            checked += 1
    assert checked >= 12


@pytest.mark.skipif(native.MAX_SIZE < 12, reason="the wide build dnb_env._native_wide is not built")
def test_one_search_moves_between_the_builds_with_the_board_and_matches_python():
    """Past 9x9 the tree lives in the wide build: one search object takes 5x5, 10x10, 12x11 and 5x5 again, and
    on each gives Python's visit counts."""
    cfg = SearchSettings(simulations=64, batch_size=4, value="margin")
    ev = Dyadic(3)
    nat = NativeMCTS(ev, cfg, np.random.default_rng(0))
    for k, (rows, cols) in enumerate([(5, 5), (10, 10), (12, 11), (5, 5)]):
        s = position(rows, cols, rows * cols, seed=k)
        py = MCTS(ev, cfg, np.random.default_rng(0))
        nat.rng = np.random.default_rng(0)
        np.testing.assert_array_equal(py.run(s), nat.run(s))
        same_search(py, nat)


def test_uniform_evaluator_runs_inside_cpp_with_the_same_counts():
    for (rows, cols), moves in [((5, 5), 0), ((5, 5), 25), ((3, 3), 6)]:
        s = position(rows, cols, moves, seed=moves)
        for prune in (False, True):
            cfg = SearchSettings(simulations=300, prune=prune)
            py = MCTS(UniformEvaluator(), cfg, np.random.default_rng(0))
            nat = NativeMCTS(UniformEvaluator(), cfg, np.random.default_rng(0))
            py.run(s), nat.run(s)
            same_search(py, nat)


def play_games(cls, runner, cfg, games, board, temperature=1.0):
    """Self-play-like games in lockstep with tree reuse (advance) and root noise; returns a log per move."""
    ev = Dyadic()
    rngs = [np.random.default_rng(g) for g in range(games)]
    searches = [cls(ev, cfg, rngs[g]) for g in range(games)]
    states = [GameState.new(*board) for _ in range(games)]
    log = []
    while True:
        active = [i for i in range(games) if not states[i].is_terminal()]
        if not active:
            break
        counts = runner([searches[i] for i in active], [states[i] for i in active], ev)
        for k, i in enumerate(active):
            p = visits_to_policy(counts[k], temperature)
            a = int(rngs[i].choice(len(p), p=p))
            log.append((i, counts[k].tolist(), searches[i].root_value(), searches[i].root_net_value, a))
            searches[i].advance(a)
            states[i] = states[i].apply(a)
    return log, ev.calls, ev.leaves, searches


@pytest.mark.parametrize("board,value", [((3, 3), "win"), ((2, 2), "margin"), ((3, 4), "margin")])
def test_lockstep_games_with_tree_reuse_and_noise(board, value):
    cfg = SearchSettings(simulations=64, add_noise=True, batch_size=8, value=value)
    py = play_games(MCTS, run_many, cfg, 4, board)
    nat = play_games(NativeMCTS, run_many_native, cfg, 4, board)
    assert py[0] == nat[0]
    assert py[1:3] == nat[1:3]  # the same evaluator calls with the same leaves
    assert len(py[0]) >= 4 * (2 * board[0] * board[1] + board[0] + board[1]) // 2


def tree_size(node):
    return 1 + sum(tree_size(c) for c in node.children.values())


def test_tree_memory_is_compacted_over_a_game():
    cfg = SearchSettings(simulations=150)
    ev = Dyadic()
    py, nat = MCTS(ev, cfg, np.random.default_rng(0)), NativeMCTS(ev, cfg, np.random.default_rng(0))
    s = GameState.new(4, 4)
    created, peak = 0, 0
    while not s.is_terminal():
        py.begin(s), nat.begin(s)
        kept = nat._tree.num_nodes
        assert kept == tree_size(py.root)  # the compacted pool holds exactly the kept subtree
        while nat.remaining() > 0:
            bp, bn = py.collect(8), nat.collect(8)
            priors, values = ev.evaluate(bn.states) if len(bn) else (np.zeros((0, s.num_actions)), np.zeros(0))
            py.complete(bp, priors, values), nat.complete(bn, priors, values)
        assert nat._tree.num_nodes == tree_size(py.root)
        created += nat._tree.num_nodes - kept
        peak = max(peak, nat._tree.num_nodes)
        same_search(py, nat)
        a = int(np.argmax(nat.counts()))
        py.advance(a), nat.advance(a)
        s = s.apply(a)
    assert peak < created / 3  # without compaction the pool would hold every node ever created


def test_reuse_keeps_the_subtree_and_matches_python():
    s = position(3, 3, 4, seed=3)
    cfg = SearchSettings(simulations=120)
    ev = Dyadic()
    py, nat = MCTS(ev, cfg, np.random.default_rng(0)), NativeMCTS(ev, cfg, np.random.default_rng(0))
    py.run(s), nat.run(s)
    a = int(np.argmax(py.counts()))
    b = s.apply(a)
    # begin from the history directly (no advance): the subtree of `a` is found from the old root
    assert py.needs_root_evaluation(b) == nat.needs_root_evaluation(b) is False
    py.run(b), nat.run(b)
    same_search(py, nat)
    assert nat.root_net_value is None  # the kept root was not evaluated again
    # an unrelated position starts a new tree
    c = position(3, 3, 5, seed=99)
    assert nat.needs_root_evaluation(c) and py.needs_root_evaluation(c)
    # the reset of MCTSAgent
    nat.root = None
    assert nat.root is None and nat.needs_root_evaluation(b)


def test_begin_collect_complete_by_hand():
    s = position(3, 3, 3, seed=1)
    cfg = SearchSettings(simulations=50, batch_size=8)
    ev = Dyadic()
    py, nat = MCTS(ev, cfg, np.random.default_rng(0)), NativeMCTS(ev, cfg, np.random.default_rng(0))
    py.begin(s), nat.begin(s)
    while py.remaining() > 0:
        bp, bn = py.collect(5), nat.collect(5)
        assert [leaf.state for _, leaf in bp] == bn.states
        assert [leaf.state for _, leaf in bn] == bn.states
        if len(bn):
            np.testing.assert_array_equal(bn.masks, np.stack([x.legal_mask() for x in bn.states]))
        if len(bp):
            priors, values = ev.evaluate(bn.states)
            py.complete(bp, priors, values)
            nat.complete(bn, priors.astype(np.float32), values)  # float32 priors widen exactly
        else:
            py.complete(bp, [], []), nat.complete(bn, np.zeros((0, s.num_actions)), np.zeros(0))
        assert py.remaining() == nat.remaining()
    same_search(py, nat)


def test_native_planes_are_the_encoders():
    from dnb_env.observations import encode_batch

    class Planes(Dyadic):
        encoder = "chainloop6"

        def evaluate_planes(self, planes, masks):
            raise AssertionError("not called here")

    ev = Planes()
    search = NativeMCTS(ev, SearchSettings(simulations=30), np.random.default_rng(0))
    search.begin(position(3, 3, 4, seed=2))
    batch = search.collect(8)
    np.testing.assert_array_equal(batch.planes, encode_batch("chainloop6", batch.states))
    np.testing.assert_array_equal(batch.masks, np.stack([x.legal_mask() for x in batch.states]))
    np.testing.assert_array_equal(batch.mover, [x.current_player for x in batch.states])


def test_run_many_dispatches_and_counts_evaluator_calls():
    states = [position(3, 3, m, seed=m) for m in (0, 3, 6)]
    cfg = SearchSettings(simulations=40)
    ev1, ev2 = Dyadic(), Dyadic()
    a = run_many_any([MCTS(ev1, cfg, np.random.default_rng(0)) for _ in states], states, ev1)
    b = run_many_any([NativeMCTS(ev2, cfg, np.random.default_rng(0)) for _ in states], states, ev2)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    assert ev1.calls == ev2.calls and ev1.leaves == ev2.leaves
    ev3 = Dyadic()  # the tree work of a round spread over two threads: the same searches
    c = run_many_native([NativeMCTS(ev3, cfg, np.random.default_rng(0)) for _ in states], states, ev3, threads=2)
    for x, y in zip(a, c):
        np.testing.assert_array_equal(x, y)
    assert ev3.leaves == ev1.leaves
    with pytest.raises(ValueError, match="one backend"):
        run_many_any([MCTS(ev1, cfg), NativeMCTS(ev1, cfg)], states[:2], ev1)


def test_internal_nodes_match_the_python_walk():
    from agents.training.selfplay import internal_nodes

    s = position(3, 3, 6, seed=5)
    cfg = SearchSettings(simulations=400)
    ev = Dyadic()
    py, nat = MCTS(ev, cfg, np.random.default_rng(0)), NativeMCTS(ev, cfg, np.random.default_rng(0))
    py.run(s), nat.run(s)
    played = int(np.argmax(py.counts()))
    ra = internal_nodes(py.root, played, 8, 0.05)
    rb = internal_nodes(nat, played, 8, 0.05)
    assert len(ra) == len(rb) > 3
    for x, y in zip(ra, rb):
        assert x.state == y.state and len(x.state.history) == len(y.state.history)
        assert x.move == y.move and x.q == y.q
        np.testing.assert_array_equal(x.pi, y.pi)


def test_real_network_gives_equal_counts(one_torch_thread):
    import torch

    from agents.models import build_model, make_model_config
    from agents.models.evaluator import NetworkEvaluator

    torch.manual_seed(0)
    net = build_model(make_model_config("resnet", "cpu", board="3x3", blocks=1, width=8))
    for symmetrize in (False, True):
        ev = NetworkEvaluator(net, symmetrize=symmetrize)
        states = [position(3, 3, m, seed=m) for m in (0, 4, 9)]
        p1, v1 = ev.evaluate(states)
        from dnb_env.observations import encode_batch

        p2, v2 = ev.evaluate_planes(encode_batch(ev.encoder, states), np.stack([x.legal_mask() for x in states]))
        np.testing.assert_array_equal(p1, p2)
        np.testing.assert_array_equal(v1, v2)
    ev = NetworkEvaluator(net)
    cfg = SearchSettings(simulations=60, add_noise=True)
    states = [position(3, 3, m, seed=m) for m in (0, 4, 9)]
    a = run_many([MCTS(ev, cfg, np.random.default_rng(i)) for i in range(3)], states, ev)
    b = run_many_native([NativeMCTS(ev, cfg, np.random.default_rng(i)) for i in range(3)], states, ev)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


def test_self_play_gives_the_same_samples_on_both_backends(one_torch_thread):
    import torch

    from agents.models import build_model
    from agents.training.config import make_train_config
    from agents.training.selfplay import self_play

    cfg = make_train_config("resnet", "cpu", board="2x2", games_per_iteration=3, simulations=32,
                            **{"model.width": 8, "curriculum.node_visits": 0.05})
    torch.manual_seed(0)
    net = build_model(cfg.model)
    a, sa = self_play(net, cfg, iteration=1, start=2, backend="python")
    b, sb = self_play(net, cfg, iteration=1, start=2, backend="native")
    for c in a.COLUMNS:
        np.testing.assert_array_equal(getattr(a, c), getattr(b, c))
    np.testing.assert_array_equal(sa["trace"], sb["trace"])
    assert sa["network_calls"] == sb["network_calls"]


def test_agents_choose_the_native_search_by_default(one_torch_thread):
    from registry import make_agent

    py = make_agent("alphazero", board="3x3", seed=0, simulations=40, search="python")
    nat = make_agent("alphazero", board="3x3", seed=0, simulations=40)
    assert isinstance(nat.search, NativeMCTS) and isinstance(py.search, MCTS)
    s = GameState.new(3, 3)
    for _ in range(6):
        a = py.select_action(s)
        assert nat.select_action(s) == a
        s = s.apply(a)
    uct = make_agent("mcts", board="3x3", seed=0, simulations=50, search="native")
    assert isinstance(uct.search, NativeMCTS) and uct.select_action(GameState.new(3, 3)) in range(24)


def test_backend_choice():
    cfg = SearchSettings(simulations=10)
    assert isinstance(make_search(UniformEvaluator(), cfg, backend="auto", board=(5, 5)), NativeMCTS)
    assert isinstance(make_search(UniformEvaluator(), cfg, backend="auto", board=(12, 12)), NativeMCTS)
    assert isinstance(make_search(UniformEvaluator(), cfg, backend="auto", board=(13, 10)), MCTS)
    assert isinstance(make_search(UniformEvaluator(), cfg, backend="python"), MCTS)
    assert choose_backend("auto", (9, 9)) == "native"
    with pytest.raises(ValueError, match="up to 12x12"):
        make_search(UniformEvaluator(), cfg, backend="native", board=(13, 9))
    with pytest.raises(ValueError, match="backend must be one of"):
        make_search(UniformEvaluator(), cfg, backend="cuda")
    from agents.search import MCTSAgent

    assert isinstance(MCTSAgent(UniformEvaluator(), cfg, backend="native").search, NativeMCTS)
    assert isinstance(MCTSAgent(UniformEvaluator(), cfg).search, MCTS)


def test_the_search_encodes_in_cpp_for_native_encoders_only():
    from agents.search.native import planes_encoder

    class Planes(UniformEvaluator):
        def evaluate_planes(self, planes, masks):
            raise AssertionError("not called here")

    for encoder, want in (("chainloop6", "chainloop6"), ("alphazero4", "alphazero4"), ("edgequad4", ""),
                          ("chainloop6_nim", ""), ("no such encoder", ""), (None, "")):
        evaluator = Planes()
        evaluator.encoder = encoder
        assert planes_encoder(evaluator) == want
        plain = UniformEvaluator()
        plain.encoder = encoder
        assert planes_encoder(plain) == ""  # no evaluate_planes: the search hands it states


def test_rollout_evaluator_in_cpp():
    s = GameState.from_actions(1, 3, [0, 1, 2, 3, 4, 5, 7])  # 1x3 with the ends closed: take all three
    for value in ("win", "margin"):
        ev = NativeRolloutEvaluator(2, seed=0, value=value)
        counts = NativeMCTS(ev, SearchSettings(simulations=200, prune=False, value=value), np.random.default_rng(0)).run(s)
        py_counts = MCTS(ev, SearchSettings(simulations=200, prune=False, value=value), np.random.default_rng(0)).run(s)
        assert counts.sum() == py_counts.sum() == 200
    with pytest.raises(ValueError):
        NativeRolloutEvaluator(0)


def state_of(search):
    t = search._tree
    return (t.num_nodes, t.done, t.remaining, t.batch_open, t.root_edges()[1].tolist(), t.root_total)


def test_bad_input_raises_and_changes_nothing():
    s = position(3, 3, 2, seed=0)
    ev = Dyadic()
    search = NativeMCTS(ev, SearchSettings(simulations=40), np.random.default_rng(0))
    search.begin(s)
    with pytest.raises(ValueError, match="without a pending collect"):
        search.complete(None, np.zeros((0, 24)), np.zeros(0))
    batch = search.collect(8)
    n = len(batch)
    assert n > 0
    before = state_of(search)
    priors, values = ev.evaluate(batch.states)
    bad = [
        (ValueError, "shape", priors[:-1], values),
        (ValueError, "shape", priors, values[:, None]),
        (ValueError, "shape", priors[:, :-1], values),
        (TypeError, "real numbers", priors.astype(str), values),
        (TypeError, "real numbers", priors, values.astype(bool)),
        (ValueError, "finite", np.where(priors > 0.5, np.nan, priors), values),
        (ValueError, "finite", priors, np.full(n, np.inf)),
    ]
    for kind, words, p, v in bad:
        with pytest.raises(kind, match=words):
            search.complete(batch, p, v)
        assert state_of(search) == before
    with pytest.raises(ValueError, match="pending"):
        search.complete(object(), priors, values)  # not the batch of the last collect
    search.complete(batch, priors, values)  # still completes after the refusals
    with pytest.raises(ValueError, match="without a pending collect"):
        search.complete(batch, priors, values)  # twice
    after = state_of(search)
    end = GameState.from_actions(2, 2, range(12))
    assert end.is_terminal()
    with pytest.raises(ValueError, match="finished game"):
        search.begin(end)
    assert state_of(search) == after
    # a collect left open is reverted by the next begin (no stale virtual loss)
    search.collect(8)
    search.begin(s)
    ref = NativeMCTS(ev, SearchSettings(simulations=40), np.random.default_rng(0))
    ref.begin(s)
    ref.complete(ref.collect(8), *ev.evaluate(ref._batch.states))
    assert search._tree.root_edges()[1].sum() == ref._tree.root_edges()[1].sum()


def test_forest_checks():
    from dnb_env import _native

    a = NativeMCTS(Dyadic(), SearchSettings(simulations=10), np.random.default_rng(0))
    b = NativeMCTS(Dyadic(), SearchSettings(simulations=10), np.random.default_rng(0))
    a.begin(GameState.new(2, 2)), b.begin(GameState.new(3, 3))
    with pytest.raises(ValueError, match="twice"):
        _native.SearchForest([a._tree, a._tree])
    with pytest.raises(ValueError, match="one board size"):
        _native.SearchForest([a._tree, b._tree]).collect(np.array([4, 4]))
    from dnb_env.observations import native_encoders

    with pytest.raises(ValueError, match="no encoder") as refused:
        _native.SearchForest([a._tree], "edgequad4")
    assert f"it has {', '.join(native_encoders())} (or '' for none)" in str(refused.value)  # the records' names
    with pytest.raises(ValueError, match="one per tree"):
        _native.SearchForest([a._tree]).collect(np.array([1, 2]))
    forest = _native.SearchForest([a._tree])
    counts = forest.collect(np.array([4]))[0]
    with pytest.raises(TypeError, match="float64"):
        forest.complete(np.zeros((counts[0], 12), np.float32), np.zeros(counts[0]))
    forest.complete(np.full((counts[0], 12), 1 / 12), np.zeros(counts[0]))


# ---------------------------------------------------------------------------------- exact solver leaves
@pytest.mark.parametrize("value", ["win", "margin"])
@pytest.mark.parametrize("board,moves,budget", [((3, 3), 6, 20_000), ((3, 3), 2, 300), ((5, 5), 30, 20_000),
                                                ((5, 5), 26, 200), ((4, 4), 14, 20_000)],
                         ids=["3x3", "3x3-tight", "5x5", "5x5-tight", "4x4"])
def test_solver_leaves_match_python_and_budgets_run_out_alike(board, moves, budget, value):
    """Both searches ask the solver the same queries in the same order, so they agree exactly, also where a
    small budget runs out and the zone shrinks ("tight" cases run out on purpose)."""
    rows, cols = board
    ran_out = 0
    for seed in range(3):
        s = position(rows, cols, moves + seed, seed)
        undrawn = s.num_actions - s.edges.bit_count()
        cfg = SearchSettings(simulations=120, value=value, batch_size=4, solve_leaf=undrawn - 1, solve_nodes=budget)
        ev = Dyadic(seed)
        py, nat = MCTS(ev, cfg, np.random.default_rng(seed)), NativeMCTS(ev, cfg, np.random.default_rng(seed))
        py.run(s), nat.run(s)
        same_search(py, nat)
        solved = [c.solved for c in py.root.children.values() if c.solved is not None]
        assert solved, "the root's children are leaves in the zone"
        ran_out += sum(x is False for x in solved)
        # with the search continued (tree reuse) the zone starts again from solve_leaf
        a = int(np.argmax(py.counts()))
        py.advance(a), nat.advance(a)
        t = s.apply(a)
        if not t.is_terminal():
            py.run(t), nat.run(t)
            same_search(py, nat)
    assert (ran_out > 0) if budget < 20_000 else (ran_out == 0)


@pytest.mark.parametrize("value", ["win", "margin"])
def test_a_solve_deadline_turns_leaf_solves_off_until_it_is_lifted(value):
    """A passed deadline stops every leaf solve, so both searches then search as without the solver zone
    (and the zone is not lowered for later searches); lifted, the leaves are solved again."""
    s = position(5, 5, 30, seed=1)
    undrawn = s.num_actions - s.edges.bit_count()
    cfg = SearchSettings(simulations=120, value=value, batch_size=4, solve_leaf=undrawn - 1, solve_nodes=10**6,
                        reuse_tree=False)
    off = dataclasses.replace(cfg, solve_leaf=0)

    def counts(config, deadline):
        py, nat = MCTS(Dyadic(0), config, np.random.default_rng(0)), NativeMCTS(Dyadic(0), config, np.random.default_rng(0))
        py.set_solve_deadline(deadline), nat.set_solve_deadline(deadline)
        first = (py.run(s), nat.run(s))
        py.set_solve_deadline(None), nat.set_solve_deadline(None)
        return first, (py.run(s), nat.run(s))

    (py_late, nat_late), (py_free, nat_free) = counts(cfg, 0.0)
    (py_off, nat_off), _ = counts(off, None)
    (py_on, nat_on), _ = counts(cfg, None)
    assert np.array_equal(py_late, py_off) and np.array_equal(nat_late, nat_off)
    assert np.array_equal(py_free, py_on) and np.array_equal(nat_free, nat_on)
    assert not np.array_equal(py_on, py_off)  # the zone matters for this position


def test_solver_leaves_are_exact_values():
    """Every solved leaf holds the solver's exact result in the search's units; with every leaf solved a
    uniform search at a won position puts its visits on winning moves."""
    from dnb_env.solver import Solver

    exact = Solver()
    s = position(4, 4, 20, seed=2)
    undrawn = s.num_actions - s.edges.bit_count()
    for value in ("win", "margin"):
        cfg = SearchSettings(simulations=400, value=value, solve_leaf=undrawn, solve_nodes=10**7, prune=False)
        py = MCTS(UniformEvaluator(), cfg, np.random.default_rng(0))
        py.run(s)
        checked = 0
        for a, child in py.root.children.items():
            if child.terminal or child.solved is None:
                continue
            m = exact.game_value(child.state)
            want = m / 16 if value == "margin" else float(np.sign(m))
            assert child.solved == want
            checked += 1
        assert checked >= (10 if value == "margin" else 2)  # "win": the search stays on the winning moves
        mv = exact.move_values(s)
        best = max(mv.values())
        top = int(np.argmax(py.counts()))
        assert mv[top] == best or np.sign(mv[top]) == np.sign(best)


def test_solver_options_are_checked():
    with pytest.raises(ValueError, match="solve_leaf and solve_root"):
        SearchSettings(solve_leaf=-2)
    with pytest.raises(ValueError, match="for_board"):  # auto (-1) is resolved for the board before a search
        MCTS(UniformEvaluator(), SearchSettings(solve_root=-1))
    with pytest.raises(ValueError, match="solve_nodes"):
        SearchSettings(solve_nodes=0)
    from dnb_env import _native

    with pytest.raises(ValueError, match="solve_undrawn"):
        _native.SearchTree(1.0, 1.0, False, "win", "puct", -2, 1000, 16.0)


def test_network_agents_use_the_solver_at_the_root_and_leaves(one_torch_thread):
    """Agents built by the registry solve by default (auto zones); in the root zone the policy is uniform
    over the moves of best margin; solve_root=0 / solve_leaf=0 turn it off."""
    from dnb_env.solver import Solver
    from registry import make_agent

    big = make_agent("alphazero", board=(5, 5), seed=0)
    assert (big.search.config.solve_root, big.search.config.solve_leaf) == (38, 36)
    agent = make_agent("alphazero", board=(3, 3), seed=0, simulations=32)
    assert (agent.search.config.solve_root, agent.search.config.solve_leaf) == (16, 14)
    exact = Solver()
    for seed in range(4):
        s = position(3, 3, 13 + seed, seed)
        if s.is_terminal():
            continue
        mv = exact.move_values(s)
        best = max(mv.values())
        p = agent.action_probabilities(s)
        assert set(np.flatnonzero(p)) == {a for a, v in mv.items() if v == best}
        assert mv[agent.select_action(s)] == best
    off = make_agent("alphazero", board=(3, 3), seed=0, simulations=32, solve_root=0, solve_leaf=0)
    assert (off.search.config.solve_root, off.search.config.solve_leaf) == (0, 0)
    assert off.search.exact_root.policy(position(3, 3, 14, 0)) is None
    with pytest.raises(ValueError, match="solver zone"):
        make_agent("alphazero", board=(3, 3), solve_root=-5)


def test_both_backends_give_the_same_search_output():
    """``output()`` (SearchOutput: visit counts, Q and priors per action, root value, network value) is the
    same on both backends, noise and pruning included; Q matches the root value."""
    from agents.search import SearchOutput, SearchSettings

    for k, (noise, prune, value) in enumerate([(False, True, "win"), (True, False, "margin"), (True, True, "win")]):
        s = position(3, 3, 4 + k, seed=k)
        ev = Dyadic(salt=k)
        cfg = SearchSettings(simulations=150, add_noise=noise, prune=prune, value=value)
        py = make_search(ev, cfg, np.random.default_rng(k), backend="python")
        nat = make_search(ev, cfg, np.random.default_rng(k), backend="native")
        assert (py.backend, nat.backend) == ("python", "native")
        py.run(s), nat.run(s)
        a, b = py.output(), nat.output()
        assert isinstance(a, SearchOutput) and isinstance(b, SearchOutput)
        for name in ("visit_counts", "q_values", "priors"):
            assert getattr(a, name).shape == (s.num_actions,)
            np.testing.assert_array_equal(getattr(a, name), getattr(b, name))
        assert a.value == b.value == py.root_value() and a.net_value == b.net_value == py.root_net_value
        np.testing.assert_array_equal(a.visit_counts, py.counts())
        assert a.priors.sum() == pytest.approx(1.0) and set(np.flatnonzero(a.priors)) <= set(s.legal_actions())
        assert (a.visit_counts * a.q_values).sum() / a.visit_counts.sum() == pytest.approx(a.value)
