"""The end of the safe phase (baselines.safe_phase) in prsboxes and the network agents' search (MCTSAgent
``safe_phase``, ExactRoot): with few safe moves left the safe-phase search picks among them, and a root without
a safe move is solved exactly however many edges are undrawn."""

from __future__ import annotations

import numpy as np
import pytest

from agents.search import MCTSAgent, SearchSettings
from agents.search.exact import ExactRoot
from baselines.nimstring import safe_moves
from baselines.prsboxes import PRsBoxesAgent
from baselines.safe_phase import SAFE_PHASE_MOVES, SafePhaseMove, safe_phase_zone
from dnb_env.core import GameState
from dnb_env.solver import Solver, native_available
from evaluators import FavouriteEvaluator

pytestmark = pytest.mark.skipif(not native_available(), reason="the safe-phase search is in the C++ extension")

# a game of greedy against itself on 6x6 (seed 18): after its first 36 moves player 0 has five safe moves
# (22, 25, 40, 70, 71) and 48 undrawn edges; 71 alone wins the safe phase (+14 against -18 for the others);
# after 40 moves no safe move is left, with 44 undrawn edges
GAME = [75, 33, 17, 60, 72, 23, 29, 5, 81, 79, 52, 43, 44, 50, 57, 45, 63, 36, 26, 11, 66, 21, 49, 56, 51, 78,
        53, 74, 58, 83, 38, 0, 41, 46, 10, 64, 70, 40, 22, 71]
CONTROL = GameState.from_actions(6, 6, GAME[:36])
ENDGAME = GameState.from_actions(6, 6, GAME)
ROOT_ZONE = 38  # the auto root zone on 6x6


def test_the_positions_are_what_the_comment_says():
    assert sorted(safe_moves(CONTROL)) == [22, 25, 40, 70, 71]
    values = Solver(max_undrawn=100).safe_phase_values(CONTROL, 100_000)
    assert values == {22: -18, 25: -18, 40: -18, 70: -18, 71: 14}
    for s, undrawn in ((CONTROL, 48), (ENDGAME, 44)):
        assert s.num_actions - s.edges.bit_count() == undrawn > ROOT_ZONE
    assert not safe_moves(ENDGAME) and not ENDGAME.is_terminal()


def _agent(favourite: int, safe_phase: int, backend: str = "python", solve_root: int = ROOT_ZONE) -> MCTSAgent:
    settings = SearchSettings(simulations=32, solve_leaf=0, solve_root=solve_root)
    return MCTSAgent(FavouriteEvaluator(favourite), settings, seed=0, board=(6, 6), backend=backend,
                     safe_phase=safe_phase)


# ---------------------------------------------------------------- the loony endgame at the root

def test_a_root_without_a_safe_move_is_solved_past_the_zone():
    root = ExactRoot(SearchSettings(solve_root=ROOT_ZONE, solve_leaf=0))
    found = root.policy(ENDGAME)
    assert found is not None
    best, moves = Solver(max_undrawn=100).best_moves(ENDGAME)
    policy, value = found
    assert set(np.flatnonzero(policy)) == set(moves) and value == float(np.sign(best))
    assert root.policy(CONTROL) is None  # a safe move left, 48 undrawn edges: outside the zone
    assert ExactRoot(SearchSettings(solve_root=0, solve_leaf=0)).policy(ENDGAME) is None  # the zone off


# ---------------------------------------------------------------- the safe-phase move

@pytest.mark.parametrize("backend", ["python", "native"])
def test_the_search_plays_the_safe_phase_winner_over_the_networks_favourite(backend):
    assert _agent(22, 0, backend).select_action(CONTROL) == 22  # off: the favourite
    for limit in (5, SAFE_PHASE_MOVES):
        agent = _agent(22, limit, backend)
        assert agent.select_action(CONTROL) == 71
        assert agent.search_info() == {"safe_phase": True, "value": 1.0, "unit": "win"}
    # fewer allowed than the position's five safe moves: the tree search plays, as without the option
    on, off = _agent(22, 4, backend), _agent(22, 0, backend)
    np.testing.assert_array_equal(on.action_probabilities(CONTROL), off.action_probabilities(CONTROL))
    assert "safe_phase" not in on.search_info()


def test_a_tie_goes_to_the_tree_search_among_the_best_moves(monkeypatch):
    # as if 40 and 70 were the best of the safe phase: the tree search picks between them, never the favourite
    monkeypatch.setattr(SafePhaseMove, "choose", lambda self, state, seconds=None: ([40, 70], -18))
    p = _agent(22, SAFE_PHASE_MOVES).action_probabilities(CONTROL)
    assert p.sum() == pytest.approx(1.0) and set(np.flatnonzero(p)) <= {40, 70}


def test_a_search_that_runs_out_is_not_asked_again_until_fewer_safe_moves_are_left(monkeypatch):
    asked = []

    def out_of_budget(self, state, positions, sacrifices=0):
        asked.append(len(safe_moves(state)))
        return None

    monkeypatch.setattr(Solver, "safe_phase_values", out_of_budget)
    agent = _agent(22, SAFE_PHASE_MOVES)
    fewer = CONTROL.apply(22)  # four safe moves left for the opponent
    assert len(safe_moves(fewer)) == 4
    agent.action_probabilities(CONTROL)
    agent.action_probabilities(CONTROL)  # five again: not asked
    agent.action_probabilities(fewer)  # four: asked
    assert asked == [5, 4]
    agent.reset()  # a new game asks again
    agent.action_probabilities(CONTROL)
    assert asked == [5, 4, 5]


def test_no_safe_phase_move_with_a_box_on_offer():
    sacrifice = next(a for a in CONTROL.legal_actions() if a not in safe_moves(CONTROL))
    boxes = CONTROL.apply(sacrifice)  # the opponent may take a box: captures decide, not the safe phase
    assert safe_moves(boxes) == []
    on, off = _agent(22, SAFE_PHASE_MOVES, solve_root=0), _agent(22, 0, solve_root=0)
    np.testing.assert_array_equal(on.action_probabilities(boxes), off.action_probabilities(boxes))


def test_a_timed_safe_phase_move_keeps_to_its_share():
    agent = _agent(22, SAFE_PHASE_MOVES)
    agent.set_move_time(0.5)
    assert agent.select_action(CONTROL) == 71  # settled in milliseconds: well within its share


def test_the_finder_answers_as_the_solver_and_refuses_bad_options():
    finder = SafePhaseMove(SAFE_PHASE_MOVES)
    assert finder.choose(CONTROL) == ([71], 14)
    assert finder.choose(ENDGAME) is None  # no safe move
    assert SafePhaseMove(4).choose(CONTROL) is None and SafePhaseMove(0).choose(CONTROL) is None
    assert SafePhaseMove(SAFE_PHASE_MOVES, positions=1).choose(CONTROL) is None  # out of its budget
    for bad in (dict(max_safe=-1), dict(max_safe=True), dict(max_safe=3, positions=0), dict(max_safe=3, node_limit=0)):
        with pytest.raises(ValueError):
            SafePhaseMove(**bad)


def test_prsboxes_plays_the_safe_phase_winner_with_more_safe_moves_than_it_searches():
    # five safe moves: above a search_safe of 4, within safe_phase; Nimstring does not take 6x6
    on = PRsBoxesAgent(seed=0, search_safe=4, search_full=0, safe_phase=SAFE_PHASE_MOVES)
    assert all(on.select_action(CONTROL) == 71 for _ in range(3))
    off = PRsBoxesAgent(seed=0, search_safe=4, search_full=0, safe_phase=0)  # the long chain rule's moves
    assert {off.select_action(CONTROL) for _ in range(12)} - {71}
    on.set_move_time(0.5)
    assert on.select_action(CONTROL) == 71
    with pytest.raises(ValueError, match="safe_phase"):
        PRsBoxesAgent(safe_phase=-2)
    auto = PRsBoxesAgent(seed=0, search_safe=4, search_full=0)  # the default: auto, 20 on 6x6
    assert auto.select_action(CONTROL) == 71 and auto._safe_phase_move(CONTROL).max_safe == SAFE_PHASE_MOVES
    assert auto._safe_phase_move(GameState.new(5, 5)).max_safe == 0  # 5x5: the Nimstring move's board


def test_the_option_and_its_auto_value():
    assert safe_phase_zone(-1, 84) == SAFE_PHASE_MOVES  # 6x6: beyond the Nimstring search's boards
    assert safe_phase_zone(-1, 60) == 0  # 5x5: the Nimstring move plays there
    assert safe_phase_zone(0, 84) == 0 and safe_phase_zone(7, 60) == 7
    for bad in (-2, True, 1.5, "20"):
        with pytest.raises(ValueError, match="safe_phase"):
            safe_phase_zone(bad, 84)
    for bad in (-1, True, 2.5):
        with pytest.raises(ValueError, match="safe_phase"):
            _agent(22, bad)


def test_the_network_agents_take_the_option():
    pytest.importorskip("torch")
    from registry import make_agent

    from registry.agents import describe_agent

    for name in ("alphazero", "dotsformer", "alphavit"):
        assert {o.name: o.default for o in describe_agent(name).options}["safe_phase"] == -1  # auto
    assert make_agent("alphazero", board="5x5", seed=0).safe_phase == 0  # auto: the Nimstring move's board
    assert make_agent("alphazero", board="5x5", seed=0, safe_phase=9).safe_phase == 9
    with pytest.raises(ValueError, match="safe_phase"):
        make_agent("alphazero", board="5x5", safe_phase=-2)
