"""UCT as a selection rule of the one search (``SearchSettings(selection="uct")``), on both backends: every
move once before any twice, UCB1 as computed by hand, a won position found by visits, the registry's ``mcts``
agent replaying the moves of the standalone UCT it replaced, and the checks of the setting."""

from __future__ import annotations

import json
import os
import random
import textwrap

import numpy as np
import pytest

from agents.base import AgentInputError
from agents.search import MCTSAgent, RolloutEvaluator, SearchSettings, UniformEvaluator, make_search
from dnb_env import native
from dnb_env.core import GameState
from registry.agents import make_agent

BACKENDS = ["python", pytest.param("native", marks=pytest.mark.skipif(not native.available(),
                                                                       reason="the C++ extension is not built"))]


def uct(simulations: int, c: float = 2.0, **changes) -> SearchSettings:
    return SearchSettings(simulations=simulations, selection="uct", c_puct=c, batch_size=1, prune=False,
                          reuse_tree=False, **changes)


class AfterRoot:
    """Uniform priors; at the leaf one move ``a`` below ``root`` the value ``table[a]`` for the root's mover,
    0 at deeper leaves (read from the position alone, as native leaves have no move order); counts calls."""

    def __init__(self, root: GameState, table: dict[int, float]):
        self.root, self.table, self.calls = root, table, 0

    def value(self, s: GameState) -> float:
        new = s.edges & ~self.root.edges
        if new.bit_count() != 1:
            return 0.0
        return self.table[new.bit_length() - 1] * (1 if s.current_player == self.root.current_player else -1)

    def evaluate(self, states):
        self.calls += 1
        A = states[0].num_actions
        return np.full((len(states), A), 1.0 / A), np.array([self.value(s) for s in states], dtype=np.float64)


@pytest.mark.parametrize("backend", BACKENDS)
def test_every_root_move_once_before_any_twice(backend):
    """The leaf values make one move look best at once: PUCT goes back to it before trying the others,
    UCT tries all 24 once first, in an order drawn at random (another seed, another order), and the agent's
    move among equal visits is the one tried first."""
    s = GameState.new(3, 3)
    best = {a: (1.0 if a == 5 else -1.0) for a in s.legal_actions()}
    puct = make_search(AfterRoot(s, best), SearchSettings(simulations=24, batch_size=1, prune=False),
                       np.random.default_rng(0), backend=backend)
    assert puct.run(s).max() >= 2
    orders = []
    for seed in (0, 1):
        search = make_search(AfterRoot(s, best), uct(24), np.random.default_rng(seed), backend=backend)
        assert (search.run(s) == 1).all()
        orders.append(search.visit_order())
        assert sorted(orders[-1]) == s.legal_actions()
        agent = MCTSAgent(UniformEvaluator(), uct(24), seed=seed)
        agent.search = make_search(UniformEvaluator(), uct(24), agent.rng, backend=backend)
        p = agent.action_probabilities(s)
        assert p[agent.search.visit_order()[0]] == 1.0 and p.sum() == 1.0
    assert orders[0] != orders[1]
    search = make_search(AfterRoot(s, best), uct(48), np.random.default_rng(0), backend=backend)
    assert (search.run(s) >= 1).all()


@pytest.mark.parametrize("backend", BACKENDS)
def test_ucb1_picks_the_edge_of_a_hand_computation(backend):
    """1x1 box with its top drawn: moves a, b, c whose leaves are worth 1, 0, -1 to the mover, the leaves below
    them 0, so Q(a) = 1 / N(a), Q(b) = 0, Q(c) = -1 / N(c); c = 2. After each move once (N(s) = 3),
    UCB1 = Q + 2 sqrt(ln N(s) / N(s, a)):
    sim 4: 1 + 2.096 > 0 + 2.096 > -1 + 2.096                               -> N = (2, 1, 1)
    sim 5: 0.5 + 2 sqrt(ln 4 / 2) = 2.165 < 0 + 2 sqrt(ln 4) = 2.355          -> N = (2, 2, 1)
    sim 6: 0.5 + 2 sqrt(ln 5 / 2) = 2.294 > 0 + 1.794, -1 + 2 sqrt(ln 5) = 1.537 -> N = (3, 2, 1)
    sim 7: 1/3 + 2 sqrt(ln 6 / 3) = 1.879 < 0 + 2 sqrt(ln 6 / 2) = 1.893       -> N = (3, 3, 1)
    PUCT with the same values counts otherwise. The root is never evaluated: one evaluator call per leaf."""
    s = GameState.from_text("+---+\n\n+   +\n")
    a, b, c = s.legal_actions()
    table = {a: 1.0, b: 0.0, c: -1.0}
    for sims, want in [(3, (1, 1, 1)), (4, (2, 1, 1)), (5, (2, 2, 1)), (6, (3, 2, 1)), (7, (3, 3, 1))]:
        evaluator = AfterRoot(s, table)
        search = make_search(evaluator, uct(sims), np.random.default_rng(sims), backend=backend)
        counts = search.run(s)
        assert tuple(counts[[a, b, c]]) == want
        out = search.output()
        assert np.allclose(out.q_values[[a, b, c]], [1 / want[0], 0.0, -1 / want[2]])
        assert evaluator.calls == sims and out.net_value is None
    puct = make_search(AfterRoot(s, table), SearchSettings(simulations=7, c_puct=2.0, batch_size=1, prune=False),
                       np.random.default_rng(0), backend=backend)
    assert tuple(puct.run(s)[[a, b, c]]) != (3, 3, 1)


@pytest.mark.parametrize("backend", BACKENDS)
def test_uct_solves_a_won_position_by_visits(backend):
    """Player 0 to move; only the right side of the lower-left box (10) wins (by 2), every other move loses
    by 2. With value 0 at every unfinished leaf, UCT's visits find it from the game ends alone."""
    s = GameState.from_text(textwrap.dedent(
        """
        +   +   +
            |
        +---+---+
                |
        +---+---+
        """
    ))
    assert s.current_player == 0 and s.legal_actions() == [0, 1, 6, 8, 9, 10]
    for seed in (0, 1):
        search = make_search(UniformEvaluator(), uct(3000), np.random.default_rng(seed), backend=backend)
        counts = search.run(s)
        assert int(np.argmax(counts)) == 10 and counts.sum() == 3000


def test_uct_finds_a_winning_capture():
    # 1x2, box 0 capturable; taking it and then the last box wins
    s = GameState.from_text("+---+   +\n|\n+---+   +\n")
    assert make_agent("mcts", board="1x2", seed=0, simulations=300).select_action(s) == 5


def _replay(board, options, seeds):
    return (make_agent("mcts", board=board, seed=seeds[0], **options),
            make_agent("mcts", board=board, seed=seeds[1], **options))


def _play(board, agents):
    s = GameState.new(board)
    while not s.is_terminal():
        s = s.apply(agents[s.current_player].select_action(s))
    return list(s.history)


def test_mcts_agent_replays_the_standalone_uct():
    """tests/fixtures/uct_moves.json was recorded from the previous standalone UCT implementation
    (baselines/uct.py, the registry's ``mcts`` agent until UCT became this selection rule): whole games
    of two seeded agents (default options, and 200 simulations), again after ``seed()`` as a tournament
    reseeds them, and the move and root visits of single positions. The agent must play the same moves
    and count the same visits."""
    with open(os.path.join(os.path.dirname(__file__), "fixtures", "uct_moves.json")) as f:
        recorded = json.load(f)
    agents = None
    for game in recorded["games"]:
        if game["reseeds"] is None:
            agents = _replay(game["board"], game["options"], game["seeds"])
        else:
            for agent, seed in zip(agents, game["reseeds"]):
                agent.seed(seed)
        assert _play(game["board"], agents) == game["moves"]
    for pos in recorded["positions"]:
        s = GameState.from_actions(pos["board"], pos["history"])
        agent = make_agent("mcts", board=pos["board"], seed=pos["seed"], **pos["options"])
        assert agent.select_action(s) == pos["move"]
        view = make_agent("mcts", board=pos["board"], seed=pos["seed"], **pos["options"]).analyse(s)
        assert view["kind"] == "visits"
        legal = set(s.legal_actions())
        assert [int(v) if a in legal else None for a, v in enumerate(view["values"])] == pos["visits"]


@pytest.mark.skipif(not native.available(), reason="the C++ extension is not built")
def test_native_uct_agent():
    """``mcts:search=native,selection=uct``: the C++ search with the uct rule and playouts in C++; the same
    root statistics as the Python search (shapes, every simulation counted), the same moves for the same
    seed, the most visited move played."""
    from agents.search.native import NativeMCTS

    s = GameState.new(3, 3)
    agent = make_agent("mcts", board="3x3", seed=0, simulations=400, search="native", selection="uct")
    assert isinstance(agent.search, NativeMCTS) and agent.search.config.selection == "uct"
    move = int(np.argmax(agent.action_probabilities(s)))
    counts = agent.search.counts()
    out = agent.search.output()
    assert counts.shape == out.q_values.shape == out.priors.shape == (24,) and counts.sum() == 400
    assert counts[move] == counts.max() and sorted(agent.search.visit_order()) == list(range(24))
    again = make_agent("mcts", board="3x3", seed=0, simulations=400, search="native", selection="uct")
    assert again.select_action(s) == move
    view = again.analyse(s)
    assert view["kind"] == "visits" and sum(view["values"]) == 400
    python = make_agent("mcts", board="3x3", seed=0, simulations=400, search="python", selection="uct")
    assert type(python.search).__name__ == "MCTS" and python.search.config == agent.search.config
    with pytest.raises(ValueError, match="search='uct'"):
        make_agent("mcts", board="3x3", seed=0, selection="puct")


def test_uct_agent_built_directly_plays_any_board_but_refuses_finished_games():
    rng = random.Random(0)
    agent = MCTSAgent(RolloutEvaluator(rng=rng), uct(5), seed=0, shared_rng=rng)
    for s in (GameState.from_actions(1, 2, [0, 3]), GameState.from_actions(2, 2, [0, 5])):
        assert s.is_legal(agent.select_action(s))
    with pytest.raises(AgentInputError):
        agent.select_action(GameState.from_actions(1, 1, [0, 1, 2, 3]))


def test_the_selection_setting_is_checked():
    with pytest.raises(ValueError, match="selection must be 'puct' or 'uct'"):
        SearchSettings(selection="ucb")
    with pytest.raises(ValueError, match="add_noise"):
        SearchSettings(selection="uct", add_noise=True)
    if native.available():
        from dnb_env import _native

        with pytest.raises(ValueError, match="selection must be"):
            _native.SearchTree(1.0, 1.0, False, "win", "ucb", 0, 1000, 16.0)
        with pytest.raises(TypeError):  # no defaults of its own: SearchSettings is their one home
            _native.SearchTree()
