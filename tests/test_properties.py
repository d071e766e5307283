"""Property tests (hypothesis) of the rules, and exact values by brute force."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from dnb_env.core import GameState
from dnb_env.symmetry import symmetries, transform_state

boards = st.sampled_from([(1, 1), (1, 3), (2, 2), (2, 3), (3, 3), (3, 5), (4, 4), (5, 5), (6, 2)])


@st.composite
def games(draw):
    rows, cols = draw(boards)
    n = rows * cols * 2 + rows + cols
    order = draw(st.permutations(range(n)))
    return rows, cols, order


@settings(max_examples=150, deadline=None)
@given(games())
def test_game_invariants(game):
    rows, cols, order = game
    s = GameState.new(rows, cols)
    for i, a in enumerate(order):
        assert not s.is_terminal()
        child = s.apply(a)
        claimed = child.owner0 | child.owner1
        assert sum(child.scores) == claimed.bit_count()
        completed = claimed != (s.owner0 | s.owner1)
        assert (child.current_player == s.current_player) == completed
        s = child
    assert s.is_terminal() and len(s.history) == s.num_actions == len(order)
    assert sum(s.scores) == rows * cols


@settings(max_examples=60, deadline=None)
@given(board=st.sampled_from([(2, 2), (1, 3), (2, 3)]), data=st.data())
def test_symmetric_states_have_equal_exact_value(board, data, brute):
    rows, cols = board
    s = GameState.new(rows, cols)
    for _ in range(data.draw(st.integers(min_value=s.num_actions // 3, max_value=s.num_actions))):
        s = s.apply(data.draw(st.sampled_from(s.legal_actions())))
    v = brute.value(s)
    for sym in symmetries(rows, cols):
        t = transform_state(sym, s)
        assert t.scores == s.scores and brute.value(t) == v


def test_exact_first_player_margins(brute):
    known = {(1, 1): -1, (1, 2): 0, (2, 2): 2, (2, 3): -2}
    for (rows, cols), margin in known.items():
        assert brute.value(GameState.new(rows, cols)) == margin, (rows, cols)
