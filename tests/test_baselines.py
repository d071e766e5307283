"""Baseline agents: exact solver against brute force and known values, alpha-beta, greedy."""

from __future__ import annotations

import random
import textwrap

import numpy as np
import pytest

from baselines.alphabeta import AlphaBetaAgent
from baselines.greedy import GreedyAgent, boxes_given_away
from baselines.prsboxes import PRsBoxesAgent
from baselines.random_agent import RandomAgent
from baselines.solver import SolverAgent
from dnb_env.analysis import MoveClass, double_deal_moves, move_classes, realistic_move
from dnb_env.core import GameState, MutableState
from dnb_env.solver import Solver, SolverTooLarge, native_available
from registry import make_agent


@pytest.mark.parametrize("board, margin", [("1x1", -1), ("1x2", 0), ("2x2", 2), ("2x3", -2), ("2x4", 2), ("3x3", -3)])
def test_solver_known_first_player_margins(board, margin):
    assert Solver().value(GameState.new(board)) == margin


def test_solver_matches_brute_force_on_random_positions(brute):
    rng = random.Random(2)
    solver = Solver()
    for rows, cols, moves in [(2, 3, 0), (2, 3, 5), (1, 4, 3), (3, 3, 12), (5, 5, 46)]:
        for _ in range(5):
            s = GameState.new(rows, cols)
            for _ in range(moves):
                s = s.apply(realistic_move(s, rng))
            assert solver.value(s) == brute.value(s), str(s)
            assert solver.move_values(s) == brute.move_values(s)


def test_solver_reuses_its_table_along_a_game():
    solver = Solver(engine="retrograde")
    s = GameState.new(3, 3)
    solver.value(s)
    table = solver._table
    rng = random.Random(0)
    while not s.is_terminal():
        s = s.apply(rng.choice(s.legal_actions()))
        solver.value(s)
        assert solver._table is table


def test_solver_refuses_large_positions():
    with pytest.raises(SolverTooLarge, match="60 undrawn"):
        Solver().value(GameState.new(5, 5))


def test_solver_agent_plays_optimally():
    agent = SolverAgent(seed=0)
    s = GameState.new(2, 2)
    while not s.is_terminal():
        mv = agent.move_values(s)
        a = agent.select_action(s)
        assert mv[a] == max(mv.values()) == agent.value(s)
        s = s.apply(a)


@pytest.mark.parametrize("options, cases", [
    (dict(extend_captures=False), (("3x3", 14),)),
    # with a box on offer only captures and all-but-two declines are searched: the value must not change
    (dict(decline_only_double_deal=True), (("2x3", 15), ("3x3", 13), ("2x4", 14))),
])
def test_alphabeta_to_full_depth_is_exact(options, cases):
    rng = random.Random(5)
    solver = Solver()
    for board, undrawn in cases:
        for _ in range(8):
            s = GameState.new(board)
            while len(s.legal_actions()) > undrawn:
                s = s.apply(realistic_move(s, rng))
            move, value = AlphaBetaAgent(depth=40, seed=0, **options).search_root(s, 40)
            assert value == solver.value(s)
            assert solver.move_values(s)[move] == value


def test_double_deal_moves_find_the_decline():
    # an opened 3-chain (boxes 0-1-2 of a 1x3 strip, box 0 capturable): declining = the far side of box 1
    s = GameState.from_text(textwrap.dedent(
        """
        +---+---+---+
        |
        +---+---+---+
        """
    ))
    g = s.geometry
    two, three = g.drawn_count_masks(s.edges)
    deals = double_deal_moves(g, s.edges, two, three)
    assert deals == {g.parse_action("v 0 2")}
    # the decline is searched with the pruning on, a random non-capture is not
    agent = AlphaBetaAgent(depth=3, seed=0, decline_only_double_deal=True)
    order = agent._ordered(MutableState(s), None)
    assert set(order) == {g.parse_action("v 0 1"), g.parse_action("v 0 2")}


def test_safe_only_and_node_limit():
    rng = random.Random(2)
    s = GameState.new(4, 4)
    for _ in range(14):
        s = s.apply(realistic_move(s, rng))
    safe = {int(a) for a in np.flatnonzero(move_classes(s) == MoveClass.SAFE)}
    assert safe and (move_classes(s) != MoveClass.SCORING).all()
    agent = AlphaBetaAgent(depth=3, seed=0, safe_only=True)
    assert set(agent._ordered(MutableState(s), None)) == safe
    limited = AlphaBetaAgent(depth=40, node_limit=2000, seed=0)
    assert s.is_legal(limited.select_action(s))
    assert limited.nodes < 2000 + 1024


def test_alphabeta_takes_the_box_and_respects_time():
    s = GameState.from_text(textwrap.dedent(
        """
        +---+   +
        |
        +---+   +
        """
    ))
    assert AlphaBetaAgent(depth=2, seed=0).select_action(s) == 5
    agent = AlphaBetaAgent(depth=50, time_limit=0.05, seed=0)
    assert GameState.new(5, 5).is_legal(agent.select_action(GameState.new(5, 5)))


def test_greedy_rules():
    rng = random.Random(3)
    agent = GreedyAgent(seed=0)
    for _ in range(100):
        s = GameState.new(4, 4)
        for _ in range(rng.randrange(40)):
            s = s.apply(realistic_move(s, rng))
        if s.is_terminal():
            continue
        cls = move_classes(s)
        a = agent.select_action(s)
        if (cls == MoveClass.SCORING).any():
            assert cls[a] == MoveClass.SCORING
        elif (cls == MoveClass.SAFE).any():
            assert cls[a] == MoveClass.SAFE
        else:
            assert boxes_given_away(s, a) == min(boxes_given_away(s, b) for b in s.legal_actions())


def test_boxes_given_away_counts_a_chain():
    s = GameState.from_text(textwrap.dedent(
        """
        +---+---+---+

        +---+---+---+
        """
    ))
    assert boxes_given_away(s, 6) == 3


def test_registry_builds_every_baseline():
    for name, kw in [("greedy", {}), ("alphabeta", {"depth": 2}), ("solver", {}), ("mcts", {"simulations": 20})]:
        agent = make_agent(name, board="2x2", seed=0, **kw)
        assert GameState.new(2, 2).is_legal(agent.select_action(GameState.new(2, 2)))


def test_prsboxes_is_exact_near_the_end_and_keeps_control():
    from baselines.prsboxes import PRsBoxesAgent

    agent = PRsBoxesAgent(seed=0)
    solver = Solver()
    rng = random.Random(4)
    for _ in range(5):
        s = GameState.new(4, 4)
        while s.num_actions - s.edges.bit_count() > 18:
            s = s.apply(realistic_move(s, rng))
        if s.is_terminal():
            continue
        a = agent.select_action(s)
        assert solver.move_values(s)[a] == solver.value(s)
    # an opened 3-chain and nothing else: take the first box (the solver's unique best move)
    s = GameState.from_text(textwrap.dedent(
        """
        +---+---+---+
        |
        +---+---+---+
        """
    ))
    assert agent.select_action(s) in (7,)  # takes the first box of the opened chain


@pytest.mark.skipif(not native_available(), reason="the Nimstring search is in the C++ extension")
def test_prsboxes_plays_a_safe_move_that_wins_nimstring_where_one_does():
    from dnb_env.analysis import realistic_position
    from dnb_env.features import nimstring_move_wins

    # positions with more safe moves than search_safe, searched by the rule (the solver zone off)
    rng = random.Random(5)
    agent = PRsBoxesAgent(seed=0, solver_edges=0)
    off = PRsBoxesAgent(seed=0, solver_edges=0, nimstring_edges=0)
    solver = Solver()
    used = differs = refused = 0
    for _ in range(40):
        s = realistic_position("5x5", rng.randint(30, 36), rng)
        cls = move_classes(s)
        safe = np.flatnonzero(cls == MoveClass.SAFE)
        if (cls == MoveClass.SCORING).any() or len(safe) <= agent.search_safe:
            continue
        wins = nimstring_move_wins(s, 10 ** 6, max_undrawn=None)
        winning_safe = {int(a) for a in safe if wins is not None and wins[a] == 1}
        if not winning_safe:
            continue
        used += 1
        move = agent.select_action(s)
        if move not in winning_safe:  # only where the solver's check showed the move found to lose on boxes
            assert move in safe and any(not solver.keeps_win(s, a) for a in winning_safe)
            refused += 1
        differs += any(off.select_action(s) not in winning_safe for _ in range(3))
    # the rule decided, and the parity rule alone would have played otherwise
    assert used - refused >= 5 and differs >= 1
    with pytest.raises(ValueError, match="nimstring"):
        PRsBoxesAgent(nimstring_edges=-1)
    with pytest.raises(ValueError, match="nimstring"):
        PRsBoxesAgent(nimstring_positions=0)


@pytest.mark.skipif(not native_available(), reason="the Nimstring search is in the C++ extension")
def test_prsboxes_checks_its_nimstring_move_with_the_solver():
    from baselines.nimstring import NIMSTRING_CHECKS
    from dnb_env.analysis import realistic_position
    from dnb_env.features import nimstring_move_wins

    rng = random.Random(6)
    agent = PRsBoxesAgent(seed=0, solver_edges=0, nimstring_verify=10 ** 7)
    assert GameState.new(3, 3).is_legal(agent.select_action(GameState.new(3, 3)))  # a smaller board first
    solver = Solver()
    checked = mattered = 0
    for _ in range(60):
        s = realistic_position("5x5", rng.randint(34, 38), rng)  # undrawn edges
        cls = move_classes(s)
        safe = np.flatnonzero(cls == MoveClass.SAFE)
        if (cls == MoveClass.SCORING).any() or len(safe) <= agent.search_safe or not solver.can_win(s):
            continue
        wins = nimstring_move_wins(s, 10 ** 6, max_undrawn=None)
        nim_safe = {int(a) for a in safe if wins is not None and wins[a] == 1}
        keeping = {a for a in nim_safe if solver.keeps_win(s, a)}
        if not keeping or len(nim_safe - keeping) >= NIMSTRING_CHECKS:
            continue
        checked += 1
        mattered += bool(nim_safe - keeping)  # a move that wins Nimstring and loses on boxes was there
        assert agent.select_action(s) in keeping
    assert checked >= 5 and mattered >= 1
    with pytest.raises(ValueError, match="nimstring_verify"):
        PRsBoxesAgent(nimstring_verify=-1)


def test_prsboxes_searches_take_fewer_nodes_on_larger_boards():
    """The searches' node budget is search_nodes up to 60 edges and less in proportion beyond; a clock replaces
    it. The budget bounds the nodes a 10x10 search visits."""
    p = PRsBoxesAgent(seed=0, search_nodes=3000)
    rng = random.Random(3)
    for board, want in (("3x3", 3000), ("5x5", 3000), ("10x10", 3000 * 60 // 220)):
        s = GameState.new(board)
        p.select_action(s)
        assert p.searcher.node_limit == p.safe_searcher.node_limit == want, board
    s = GameState.new("10x10")
    while sum(move_classes(s) == MoveClass.SAFE) > p.search_safe:  # a position the safe search plays
        s = s.apply(realistic_move(s, rng))
    p.select_action(s)
    assert 3000 * 60 // 220 - 64 <= p.safe_searcher.nodes + p.searcher.nodes <= 3000 * 60 // 220 + 64
    p.set_move_time(0.2)
    p.select_action(GameState.new("10x10"))
    assert p.searcher.node_limit is None


def test_prsboxes_beats_greedy():
    from baselines.greedy import GreedyAgent
    from baselines.prsboxes import PRsBoxesAgent

    # 4x4, 8 games, seats alternating; a small search budget and no Nimstring search (tested above) keep the
    # test quick: the rules and searches alone beat greedy
    for solver_edges in (0, 20):
        p = PRsBoxesAgent(seed=0, solver_edges=solver_edges, search_nodes=20_000, nimstring_edges=0)
        g = GreedyAgent(seed=1)
        points = 0.0
        for i in range(8):
            s = GameState.new(4, 4)
            seats = (p, g) if i % 2 == 0 else (g, p)
            while not s.is_terminal():
                s = s.apply(seats[s.current_player].select_action(s))
            points += (s.returns()[i % 2] + 1) / 2
        assert points >= 6


# ---------------------------------------------------------------- input checks

@pytest.mark.parametrize("make", [
    lambda: RandomAgent(seed=0),
    lambda: GreedyAgent(seed=0),
    lambda: AlphaBetaAgent(depth=1, seed=0),
    lambda: PRsBoxesAgent(seed=0),
    lambda: SolverAgent(seed=0),
], ids=["random", "greedy", "alphabeta", "prsboxes", "solver"])
def test_baselines_built_directly_play_any_board_but_refuse_finished_games(make):
    from agents.base import AgentInputError

    agent = make()
    for s in (GameState.from_actions(1, 2, [0, 3]), GameState.from_actions(2, 2, [0, 5])):
        assert s.is_legal(agent.select_action(s))  # no board given: any board
    with pytest.raises(AgentInputError, match="finished game"):  # greedy was: min() arg is an empty sequence
        agent.select_action(GameState.from_actions(1, 1, [0, 1, 2, 3]))


def test_registry_prsboxes_defaults_are_the_agents_own():
    # the registry states prsboxes' options again for the CLI and the web app: its defaults must not drift
    import inspect

    from baselines.prsboxes import PRsBoxesAgent
    from registry.agents import _prsboxes

    agent = inspect.signature(PRsBoxesAgent.__init__).parameters
    for name, p in inspect.signature(_prsboxes).parameters.items():
        if name in ("board", "seed"):
            continue
        assert p.default == agent[name].default, name
