"""The frontier move (baselines.nimstring): a safe move that wins Nimstring, checked by the exact solver, as
``prsboxes`` and the network agents' search (MCTSAgent ``nimstring_edges``) play it."""

from __future__ import annotations

import random
import textwrap
import time

import numpy as np
import pytest

from agents.search import MCTSAgent, SearchSettings
from baselines.nimstring import (NimstringChoice, NimstringMove, nimstring_zone, safe_groups, safe_moves)
from dnb_env.core import GameState
from dnb_env.solver import Solver, native_available
from evaluators import FavouriteEvaluator

pytestmark = pytest.mark.skipif(not native_available(), reason="the Nimstring search is in the C++ extension")

# 35 undrawn edges, player 1 to move and winning: the safe moves are 0, 13, 26, 30, 39 and 53; 0, 13, 26 and 30
# win Nimstring, but only 13 keeps the win on boxes (the long chain rule likes 53, which loses)
THREE_LOSE = textwrap.dedent("""
    +   +---+---+   +   +
            |       |   |
    +---+   +   +---+   +
        |   |           |
    +   +   +   +   +---+
    |       |           |
    +   +---+---+---+   +
        |       |
    +---+   +   +   +---+
            |   |   |
    +---+   +   +   +   +
    score 0:0 1:0  player 1 to move
    """)

# 35 undrawn edges, player 1 to move and winning: 8, 13, 39 and 41 win Nimstring, 8, 13 and 41 keep the win;
# 39 wins Nimstring and loses on boxes, and 26 (the long chain rule likes it, and 39) does neither
ONE_LOSES = textwrap.dedent("""
    +   +   +---+---+---+
    |   |   |           |
    +   +   +   +   +   +
        |           |
    +---+   +   +   +   +
            |       |
    +---+---+---+   +---+
                |
    +   +---+   +---+---+
    |           |
    +---+   +---+   +---+
    score 0:0 1:0  player 1 to move
    """)


def _nimstring_wins(state: GameState) -> set[int]:
    from dnb_env.features import nimstring_move_wins

    wins = nimstring_move_wins(state, 10 ** 6, max_undrawn=None)
    assert wins is not None
    return {int(a) for a in np.flatnonzero(wins == 1)}


# ---------------------------------------------------------------- the helper

def test_the_drawn_positions_are_what_their_comments_say():
    solver = Solver()
    for text, nim, keep in ((THREE_LOSE, {0, 13, 26, 30}, {13}), (ONE_LOSES, {8, 13, 39, 41}, {8, 13, 41})):
        s = GameState.from_text(text)
        safe = safe_moves(s)
        assert set(safe) & _nimstring_wins(s) == nim
        assert {a for a in safe if solver.keeps_win(s, a)} == keep


def test_the_check_passes_over_moves_that_win_nimstring_and_lose_on_boxes():
    s = GameState.from_text(THREE_LOSE)
    finder = NimstringMove()
    assert finder.applies(s)
    groups = safe_groups(s, safe_moves(s))
    assert groups[0] == [53]  # the long chain rule's move is tried first: it does not win Nimstring
    for seed in range(6):
        choice = finder.choose(s, groups, np.random.default_rng(seed))
        assert (choice.move, choice.kept) == (13, True)
        assert set(choice.losing) <= {0, 26, 30}  # the ones tried before 13, each shown to lose
    seen = {finder.choose(s, groups, np.random.default_rng(seed)).losing for seed in range(6)}
    assert any(seen)  # some orders met a losing move first
    # without the check: a move that wins Nimstring, whatever it does on boxes
    unchecked = NimstringMove(verify=0)
    for seed in range(6):
        choice = unchecked.choose(s, groups, np.random.default_rng(seed))
        assert choice.move in {0, 13, 26, 30} and choice.kept is None and choice.losing == ()


def test_when_no_nimstring_winner_keeps_the_win_the_solver_finds_a_move_that_does():
    """THREE_LOSE with 13, the one Nimstring-winning safe move that keeps the win, left out of the groups: the
    moves found (0, 26, 30) are all refused, or none is found at all, and the solver's win test of the position
    supplies a move that keeps the win (solved); in two threads on a clock too. Without the check, no such
    move."""
    s = GameState.from_text(THREE_LOSE)
    solver = Solver()
    for groups, refused in (([[53], [0, 26, 30, 39]], {0, 26, 30}), ([[53], [39]], set())):
        for finder, clock in ((NimstringMove(), False), (NimstringMove(threads=2), True)):
            until = dict(search_until=time.perf_counter() + 30, check_until=time.perf_counter() + 30) if clock else {}
            choice = finder.choose(s, groups, np.random.default_rng(0), **until)
            assert choice.solved and choice.kept is True and set(choice.losing) == refused
            assert solver.keeps_win(s, choice.move)
    choice = NimstringMove(verify=0).choose(s, [[53], [39]], np.random.default_rng(0))
    assert (choice.move, choice.solved) == (None, False)
    choice = NimstringMove().choose(s, [[53], [13, 39]], np.random.default_rng(0))
    assert (choice.move, choice.kept, choice.solved) == (13, True, False)  # a Nimstring move kept: no solving


def test_scores_order_the_search_so_the_highest_scoring_winner_is_found():
    s = GameState.from_text(ONE_LOSES)
    groups = safe_groups(s, safe_moves(s))
    unchecked, checked = NimstringMove(verify=0), NimstringMove()
    for top in (8, 13, 39, 41):  # the safe moves that win Nimstring
        scores = np.zeros(s.num_actions)
        scores[26] = 2.0  # the highest score of all, but it does not win Nimstring
        scores[top] = 1.0
        for seed in range(4):
            assert unchecked.choose(s, groups, np.random.default_rng(seed), scores=scores).move == top
            choice = checked.choose(s, groups, np.random.default_rng(seed), scores=scores)
            if top == 39:  # wins Nimstring, loses on boxes: refused, then the next one tried keeps the win
                assert choice.losing == (39,) and choice.move in {8, 13, 41} and choice.kept
            else:
                assert (choice.move, choice.kept, choice.losing) == (top, True, ())


def _checked_on_realistic_positions(finder: NimstringMove, seed: int, positions: int, clock: bool = False) -> int:
    """``finder``'s choices on realistic 5x5 positions at 32-36 undrawn edges (on a 30 s clock with ``clock``):
    each move it returns wins Nimstring (or, solved, keeps the win where no safe move that wins Nimstring does),
    each it refused loses on boxes, and its verdict is the solver's; returns how many of its moves were
    checked."""
    from dnb_env.analysis import realistic_position

    rng, solver = random.Random(seed), Solver()
    checked = 0
    for _ in range(positions):
        s = realistic_position("5x5", rng.randint(32, 36), rng)
        safe = safe_moves(s)
        if not safe:
            continue
        until = dict(search_until=time.perf_counter() + 30, check_until=time.perf_counter() + 30) if clock else {}
        choice = finder.choose(s, safe_groups(s, safe), np.random.default_rng(0), **until)
        wins = _nimstring_wins(s) & set(safe)
        if choice.solved:  # the solver's move: it keeps the win, and no Nimstring-winning safe move does
            assert choice.kept is True and solver.keeps_win(s, choice.move)
            assert not any(solver.keeps_win(s, a) for a in wins)
            checked += 1
            continue
        if choice.move is None:
            assert not wins  # the search finishes this late: None means no safe move wins Nimstring
            continue
        assert choice.move in wins and set(choice.losing) <= wins
        assert all(not solver.keeps_win(s, a) for a in choice.losing)
        if choice.kept is not None:
            assert solver.keeps_win(s, choice.move) == choice.kept
            checked += 1
    return checked


def test_every_move_it_returns_wins_nimstring_and_a_checked_one_keeps_the_win():
    assert _checked_on_realistic_positions(NimstringMove(), seed=7, positions=30) >= 5


def test_two_threads_return_a_checked_move_that_keeps_the_win():
    """On a clock, ``threads=2``: each thread searches every other move and checks what it finds; the move
    played is one shown to keep the win where the check finishes (which thread finishes first varies)."""
    for text, keep in ((THREE_LOSE, {13}), (ONE_LOSES, {8, 13, 41})):
        s = GameState.from_text(text)
        groups = safe_groups(s, safe_moves(s))
        finder = NimstringMove(threads=2)
        for seed in range(4):
            now = time.perf_counter()
            choice = finder.choose(s, groups, np.random.default_rng(seed), search_until=now + 30, check_until=now + 30)
            assert choice.move in keep and choice.kept is True
            assert not set(choice.losing) & keep  # a refused move was shown to lose
    assert _checked_on_realistic_positions(NimstringMove(threads=2), seed=3, positions=12, clock=True) >= 3


def test_two_threads_on_a_clock_only_and_a_worker_error_reaches_the_caller(monkeypatch):
    s = GameState.from_text(THREE_LOSE)
    groups = safe_groups(s, safe_moves(s))
    finder = NimstringMove(threads=2)
    # without a clock one thread searches in order: the same answers as threads=1
    for seed in range(3):
        one = NimstringMove().choose(s, groups, np.random.default_rng(seed))
        assert finder.choose(s, groups, np.random.default_rng(seed)) == one
    assert not any(k[2] == 1 for k in finder._tables)  # the second thread's table was never made

    def broken(self, state, thread=0):
        raise RuntimeError("broken table")

    monkeypatch.setattr(NimstringMove, "_table", broken)
    now = time.perf_counter()
    with pytest.raises(RuntimeError, match="broken table"):
        finder.choose(s, groups, np.random.default_rng(0), search_until=now + 5, check_until=now + 5)


def test_widening_finds_the_same_moves_and_its_open_moves_are_the_unsettled_ones():
    from dnb_env.analysis import realistic_position
    from dnb_env.features import nimstring_move_wins

    s = GameState.from_text(THREE_LOSE)
    groups = safe_groups(s, safe_moves(s))
    for seed in range(4):  # the check passes over the same moves as the search one move after the other
        choice = NimstringMove(widen=True).choose(s, groups, np.random.default_rng(seed))
        assert (choice.move, choice.kept) == (13, True) and set(choice.losing) <= {0, 26, 30}
    rng, opened, refuted = random.Random(3), 0, 0
    for _ in range(12):
        s = realistic_position("5x5", rng.randint(38, 41), rng)
        safe = safe_moves(s)
        if len(safe) < 2:
            continue
        wins = nimstring_move_wins(s, 10 ** 8, max_undrawn=None)
        assert wins is not None
        groups = safe_groups(s, safe)
        # a budget of a few thousand positions: the search settles some moves and leaves others open
        choice = NimstringMove(positions=6_000, verify=0, widen=True).choose(s, groups, np.random.default_rng(0))
        if choice.move is not None:
            assert wins[choice.move] == 1 and choice.open == ()
            continue
        assert set(choice.open) <= set(safe) and len(set(choice.open)) == len(choice.open)
        liked = [a in groups[0] for a in choice.open]
        assert liked == sorted(liked, reverse=True)  # in the search's order: the long chain rule's moves first
        shown_to_lose = set(safe) - set(choice.open)
        assert all(wins[a] == 0 for a in shown_to_lose)  # a move left out was shown to lose Nimstring
        opened += bool(choice.open)
        refuted += bool(shown_to_lose)
    assert opened >= 2 and refuted >= 2, (opened, refuted)
    with pytest.raises(ValueError, match="nimstring"):
        NimstringMove(positions=0, widen=True)


def test_prsboxes_plays_an_open_move_when_the_widening_search_does_not_finish(monkeypatch):
    from baselines.prsboxes import PRsBoxesAgent
    from registry.specs import agent_from_spec

    s = GameState.from_text(THREE_LOSE)
    agent = PRsBoxesAgent(seed=0, solver_edges=0, search_safe=2, search_full=1, nimstring_widen=True)
    assert agent.nimstring.widen and agent_from_spec("prsboxes:nimstring_widen=true", "5x5").nimstring.widen
    assert agent_from_spec("prsboxes:nimstring_threads=2", "5x5").nimstring.threads == 2
    groups = safe_groups(s, safe_moves(s))  # [[53], [0, 13, 26, 30, 39]]
    for open_moves, played in (((26, 39), 26), ((30, 53, 0), 53), ((), 53)):
        monkeypatch.setattr(agent.nimstring, "choose", lambda *a, o=open_moves, **k: NimstringChoice(None, open=o))
        assert agent.select_action(s) == played  # an open move the long chain rule likes, else the first open one
    assert groups[0] == [53]


def test_prsboxes_plays_none_of_the_moves_the_check_showed_to_lose(monkeypatch):
    from baselines.prsboxes import PRsBoxesAgent

    s = GameState.from_text(THREE_LOSE)
    assert safe_groups(s, safe_moves(s)) == [[53], [0, 13, 26, 30, 39]]
    agent = PRsBoxesAgent(seed=0, solver_edges=0, search_safe=2, search_full=1)
    monkeypatch.setattr(agent.nimstring, "choose", lambda *a, **k: NimstringChoice(None))
    assert agent.select_action(s) == 53  # nothing found: the long chain rule's move
    for refused, allowed in (((53,), {0, 13, 26, 30, 39}), ((53, 0, 26, 30), {13, 39})):
        # every move found was shown to lose on boxes (the choice names the first of them as its move)
        monkeypatch.setattr(agent.nimstring, "choose", lambda *a, r=refused, **k: NimstringChoice(r[0], False, r))
        played = set()
        for seed in range(8):
            agent.seed(seed)
            played.add(agent.select_action(s))
        assert played <= allowed and played  # never a refused move
    refused = (53, 0, 13, 26, 30, 39)  # every safe move refused: one of them all the same
    monkeypatch.setattr(agent.nimstring, "choose", lambda *a, **k: NimstringChoice(53, False, refused))
    assert agent.select_action(s) in refused


def test_the_zone_and_bad_values():
    s5 = GameState.new(5, 5)
    assert not NimstringMove(edges=44).applies(s5)  # 60 undrawn edges
    assert not NimstringMove(edges=0).applies(GameState.from_text(THREE_LOSE))
    assert not NimstringMove(edges=80).applies(GameState.new(5, 6))  # 71 edges: past the search's 64
    assert nimstring_zone(-1, 60) == 44 and nimstring_zone(-1, 40) == 29 and nimstring_zone(-1, 71) == 0
    assert nimstring_zone(0, 60) == 0 and nimstring_zone(30, 60) == 30
    for bad in (-2, True, 1.5, "44"):
        with pytest.raises(ValueError, match="nimstring_edges"):
            nimstring_zone(bad, 60)
    for bad in (dict(edges=-1), dict(positions=0), dict(verify=-1), dict(checks=0), dict(threads=0),
                dict(threads=3), dict(threads=True)):
        with pytest.raises(ValueError, match="nimstring"):
            NimstringMove(**bad)


# ---------------------------------------------------------------- the network agents' search

def _agent(favourite: int, nimstring_edges: int, backend: str = "python") -> MCTSAgent:
    settings = SearchSettings(simulations=32, solve_leaf=0, solve_root=0)
    return MCTSAgent(FavouriteEvaluator(favourite), settings, seed=0, board=(5, 5), backend=backend,
                     nimstring_edges=nimstring_edges)


@pytest.mark.parametrize("backend", ["python", "native"])
def test_the_search_plays_the_checked_nimstring_move_over_the_networks_favourite(backend):
    s = GameState.from_text(ONE_LOSES)
    assert _agent(26, 0, backend).select_action(s) == 26  # off: the favourite, which loses
    for seed in range(4):
        agent = _agent(26, 44, backend)
        agent.seed(seed)
        assert agent.select_action(s) in {8, 13, 41}  # never 39, which wins Nimstring and loses on boxes
        assert agent.search_info() == {"nimstring": True, "value": 1.0, "unit": "win"}


def test_the_search_on_a_clock_in_two_threads_plays_a_checked_keeping_move():
    s = GameState.from_text(ONE_LOSES)
    settings = SearchSettings(simulations=32, solve_leaf=0, solve_root=0)
    for seed in range(3):
        agent = MCTSAgent(FavouriteEvaluator(39), settings, seed=seed, board=(5, 5), nimstring_edges=44,
                          nimstring_threads=2)
        agent.set_move_time(20.0)  # time enough for the checks: the answer does not depend on the clock
        assert agent.nimstring_threads == 2 and agent.select_action(s) in {8, 13, 41}  # not 39, the favourite
        assert agent.nimstring.threads == 2 and agent.search_info()["nimstring"]
    with pytest.raises(ValueError, match="nimstring_threads"):
        MCTSAgent(FavouriteEvaluator(39), settings, board=(5, 5), nimstring_edges=44, nimstring_threads=0)


def test_the_search_is_unchanged_off_the_zone():
    s = GameState.from_text(ONE_LOSES)
    for edges in (0, 34):  # off, and a zone that ends below the position's 35 undrawn edges
        on, off = _agent(26, edges), _agent(26, 0)
        np.testing.assert_array_equal(on.action_probabilities(s), off.action_probabilities(s))
        assert on.search_info() == off.search_info() and "nimstring" not in on.search_info()
    sacrifice = next(a for a in s.legal_actions() if a not in safe_moves(s))
    boxes = s.apply(sacrifice)  # a box on offer: the search decides, not Nimstring
    assert not safe_moves(boxes) and boxes.num_actions - boxes.edges.bit_count() <= 44
    on, off = _agent(26, 44), _agent(26, 0)
    np.testing.assert_array_equal(on.action_probabilities(boxes), off.action_probabilities(boxes))


def test_the_search_does_not_play_a_move_the_check_showed_to_lose(monkeypatch):
    s = GameState.from_text(ONE_LOSES)
    # the check refused the favourite (and found nothing else): the tree search plays, without it
    monkeypatch.setattr(NimstringMove, "choose", lambda self, *a, **k: NimstringChoice(26, False, (26,)))
    agent = _agent(26, 44)
    p = agent.action_probabilities(s)
    assert p[26] == 0 and p.sum() == pytest.approx(1.0)
    assert _agent(26, 0).action_probabilities(s)[26] == 1.0


def test_the_prior_order_plays_the_networks_likeliest_checked_winner():
    s = GameState.from_text(ONE_LOSES)
    settings = SearchSettings(simulations=32, solve_leaf=0, solve_root=0)
    for favourite, allowed in ((41, {41}), (8, {8}), (39, {8, 13, 41})):
        for seed in range(3):
            agent = MCTSAgent(FavouriteEvaluator(favourite), settings, seed=seed, board=(5, 5), nimstring_edges=44,
                              nimstring_order="prior")
            assert agent.select_action(s) in allowed  # 39 wins Nimstring and loses on boxes: passed over
    rule = {MCTSAgent(FavouriteEvaluator(41), settings, seed=seed, board=(5, 5), nimstring_edges=44).select_action(s)
            for seed in range(8)}
    assert rule <= {8, 13, 41} and len(rule) > 1  # the rule's order: any of them, by the seed
    with pytest.raises(ValueError, match="nimstring_order"):
        MCTSAgent(FavouriteEvaluator(41), settings, board=(5, 5), nimstring_edges=44, nimstring_order="network")


def test_bad_nimstring_edges_are_refused():
    for bad in (-1, True, 2.5):
        with pytest.raises(ValueError, match="nimstring_edges"):
            _agent(26, bad)


def test_the_network_agents_take_the_option():
    pytest.importorskip("torch")
    from registry import make_agent

    assert make_agent("alphazero", board="5x5", seed=0).nimstring_edges == 44  # auto
    assert make_agent("alphazero", board="5x5", seed=0, nimstring_edges=0).nimstring_edges == 0
    with pytest.raises(ValueError, match="nimstring_edges"):
        make_agent("alphazero", board="5x5", nimstring_edges=-2)
    with pytest.raises(ValueError, match="nimstring_edges"):
        make_agent("dotsformer", board="5x5", nimstring_edges="many")
    assert make_agent("alphazero", board="5x5", seed=0).nimstring_order == "rule"
    assert make_agent("alphavit", board="5x5", seed=0, nimstring_order="prior").nimstring_order == "prior"
    with pytest.raises(ValueError, match="nimstring_order"):
        make_agent("dotsformer", board="5x5", nimstring_order="value")
    assert make_agent("alphavit", board="5x5", seed=0, nimstring_threads=2).nimstring_threads == 2
    with pytest.raises(ValueError, match="nimstring_threads"):
        make_agent("alphazero", board="5x5", nimstring_threads=3)
