"""Rules: differential test against OpenSpiel's C++ dots_and_boxes, bad input, text round trips."""

from __future__ import annotations

import random
import textwrap

import numpy as np
import pytest

from dnb_env.core import GameState, IllegalActionError, MutableState, geometry, parse_board

pyspiel = pytest.importorskip("pyspiel")

SIZES = [(r, c) for r in range(1, 10) for c in range(1, 10)]


def test_differential_against_openspiel_cpp():
    """2,000+ random games on every size 1x1..9x9: same legal actions, mover and margin returns."""
    rng = random.Random(20261122)
    games = {}
    played = 0
    for i in range(2025):
        rows, cols = SIZES[i % len(SIZES)]
        if (rows, cols) not in games:
            games[(rows, cols)] = pyspiel.load_game(
                "dots_and_boxes", {"num_rows": rows, "num_cols": cols, "utility_margin": True}
            )
        ps = games[(rows, cols)].new_initial_state()
        s = GameState.new(rows, cols)
        check_at = rng.randrange(s.num_actions)
        while not ps.is_terminal():
            assert not s.is_terminal()
            assert s.legal_actions() == ps.legal_actions()
            assert s.current_player == ps.current_player()
            assert np.array_equal(s.legal_mask(), np.array(ps.legal_actions_mask(), dtype=np.int8))
            if len(s.history) == check_at:  # round trip through pyspiel at one step of each game
                back = GameState.from_pyspiel(s.to_pyspiel())
                assert back == s and back.history == s.history
                assert GameState.from_pyspiel(ps) == s
            a = rng.choice(s.legal_actions())
            ps.apply_action(a)
            s = s.apply(a)
        assert s.is_terminal() and s.legal_actions() == []
        assert s.returns(margin=True) == tuple(ps.returns())
        played += 1
    assert played >= 2000


def test_win_returns_match_openspiel_without_margin():
    rng = random.Random(3)
    game = pyspiel.load_game("dots_and_boxes", {"num_rows": 2, "num_cols": 2})
    for _ in range(200):
        ps, s = game.new_initial_state(), GameState.new("2x2")
        while not s.is_terminal():
            a = rng.choice(s.legal_actions())
            ps.apply_action(a)
            s = s.apply(a)
        assert s.returns() == tuple(ps.returns())
        assert s.winner == (None if ps.returns()[0] == 0 else (0 if ps.returns()[0] > 0 else 1))


def test_numbering_follows_openspiel_layout():
    g = geometry(5, 5)
    assert g.num_actions == 60
    # h(r, c) = r*C + c ; v(r, c) = (R+1)*C + r*(C+1) + c
    assert g.parse_action("h 5 4") == 29 and g.parse_action("v 0 0") == 30 and g.parse_action("v 4 5") == 59
    assert g.action_cell[29] == (10, 9) and g.action_cell[30] == (1, 0)
    assert g.box_sides[0] == (0, 5, 30, 31)
    g = geometry(2, 3)
    assert g.num_actions == 17 and g.box_sides[5] == (5, 8, 15, 16)


def test_extra_turn_keeps_the_mover():
    # 1x1: three sides by alternating players, the fourth completes the box for player 1
    s = GameState.from_actions(1, 1, [0, 1, 2])
    assert s.current_player == 1
    s = s.apply(3)
    assert s.is_terminal() and s.scores == (0, 1) and s.winner == 1 and s.returns() == (-1.0, 1.0)


def test_new_accepts_names_and_numbers():
    assert GameState.new("3x4").num_actions == GameState.new(3, 4).num_actions == 31
    assert GameState.from_actions("2x2", actions=[0, 5]).history == (0, 5)
    assert parse_board(" 9X9 ") == (9, 9)


def test_a_geometry_is_its_board():
    g = geometry(" 3X4 ")
    assert g.name == str(g) == "3x4" and repr(g) == "Geometry(3x4)"
    assert geometry(g) is g and parse_board(g) == (3, 4) and GameState.new(g).geometry is g


@pytest.mark.parametrize("name", ["5x", "0x3", "axb", "3x0", "", "5x5x5", "-1x2", "3 by 3"])
def test_malformed_board_names(name):
    with pytest.raises(ValueError, match="RxC"):
        GameState.new(name)


@pytest.mark.parametrize(
    "action, why",
    [
        (0, "already drawn"),
        (60, "out of range"),
        (-1, "out of range"),
        (1.0, "not an integer"),
        ("3", "not an integer"),
        (None, "not an integer"),
        (True, "bool"),
        (np.bool_(True), "bool"),
        (np.float32(2), "not an integer"),
    ],
)
def test_illegal_actions_raise_and_change_nothing(action, why):
    s = GameState.from_actions(5, 5, [0])
    before = (s.edges, s.owners, s.current_player, s.history)
    with pytest.raises(IllegalActionError, match=why) as info:
        s.apply(action)
    assert isinstance(info.value, ValueError)
    assert (s.edges, s.owners, s.current_player, s.history) == before
    assert not s.is_legal(action)


def test_move_after_the_end_is_illegal():
    s = GameState.from_actions(1, 1, [0, 1, 2, 3])
    with pytest.raises(IllegalActionError, match="after the game ended"):
        s.apply(0)


def test_numpy_integers_are_actions():
    s = GameState.new(2, 2).apply(np.int64(3)).apply(np.int8(4))
    assert s.history == (3, 4) and all(type(a) is int for a in s.history)


def test_text_round_trip_and_drawing():
    s = GameState.from_actions(2, 2, [0, 2, 6, 7, 1, 3, 8])
    text = str(s)
    assert text.splitlines()[0] == "+---+---+"
    assert "player" in text.splitlines()[-1]
    back = GameState.from_text(text, current_player=s.current_player)
    assert back == s


def test_from_text_reads_owners_and_rejects_inconsistent_ones():
    board = textwrap.dedent(
        """
        +---+   +
        | 1 |
        +---+   +
        """
    )
    s = GameState.from_text(board)
    assert s.scores == (0, 1) and s.edges == 0b0110101 and s.box_owner(0) == 1
    with pytest.raises(ValueError, match="complete but has no owner"):
        GameState.from_text(board.replace("1", " "))
    with pytest.raises(ValueError, match="not complete"):
        GameState.from_text(board.replace("| 1 |", "| 1  "))


def test_mutable_play_undo_matches_apply():
    rng = random.Random(5)
    for rows, cols in [(2, 2), (3, 4), (5, 5)]:
        s = GameState.new(rows, cols)
        m = MutableState(s)
        trail = [s]
        while not s.is_terminal():
            a = rng.choice(s.legal_actions())
            s = s.apply(a)
            gained = m.play(a)
            assert gained == (s.owner0 | s.owner1) & ~(trail[-1].owner0 | trail[-1].owner1)
            assert (m.edges, m.owner0, m.owner1, m.current_player) == (s.edges, s.owner0, s.owner1, s.current_player)
            trail.append(s)
        for prev in reversed(trail[:-1]):
            m.undo()
            assert (m.edges, m.owner0, m.owner1, m.current_player) == (prev.edges, prev.owner0, prev.owner1, prev.current_player)
        with pytest.raises(IndexError):
            m.undo()
        with pytest.raises(IllegalActionError):
            m.play(10_000)


def test_states_pickle_and_hash():
    import pickle

    s = GameState.from_actions(3, 3, [0, 1, 2, 12])
    t = pickle.loads(pickle.dumps(s))
    assert t == s and hash(t) == hash(s) and t.history == s.history and t.legal_actions() == s.legal_actions()


def test_word_parallel_side_counts_match_per_box_counts():
    rng = random.Random(8)
    for rows, cols in [(1, 1), (2, 3), (5, 5), (4, 9), (9, 2)]:
        g = geometry(rows, cols)
        for _ in range(50):
            edges = rng.getrandbits(g.num_actions)
            two, three = g.drawn_count_masks(edges)
            counts = [(edges & m).bit_count() for m in g.box_mask]
            assert two == sum(1 << b for b, k in enumerate(counts) if k == 2)
            assert three == sum(1 << b for b, k in enumerate(counts) if k == 3)


def test_random_playout_restores_the_state():
    s = GameState.from_actions(3, 3, [0, 12, 3])
    m = MutableState(s)
    rng = random.Random(0)
    margins = {m.random_playout(rng.random) for _ in range(50)}
    assert (m.edges, m.owner0, m.owner1, m.current_player) == (s.edges, s.owner0, s.owner1, s.current_player)
    assert m.legal_actions() == s.legal_actions()
    assert all(abs(d) <= 9 and (d - 9) % 2 == 0 for d in margins) and len(margins) > 1


# ---------------------------------------------------------------- text status line, input types

def test_from_text_reads_the_mover_from_the_status_line():
    rng = random.Random(11)
    for _ in range(100):
        s = GameState.new(rng.randint(1, 4), rng.randint(1, 4))
        for _ in range(rng.randrange(s.num_actions)):  # never the last move
            s = s.apply(rng.choice(s.legal_actions()))
        assert GameState.from_text(str(s)) == s  # mover included: the round trip the README promises
    s = GameState.from_actions(2, 2, [0, 2, 6, 7, 1, 3, 8])
    text = str(s)
    assert text.endswith("score 0:0 1:2  player 1 to move")
    assert GameState.from_text(text).current_player == 1 == GameState.from_text(text, current_player=1).current_player
    with pytest.raises(ValueError, match="current_player=0 disagrees with the status line"):
        GameState.from_text(text, current_player=0)
    with pytest.raises(ValueError, match="does not match the drawing, which gives 'score 0:0 1:2  player 1 to move'"):
        GameState.from_text(text.replace("0:0 1:2", "0:2 1:0"))
    with pytest.raises(ValueError, match="does not match the drawing"):
        GameState.from_text(text.replace("player 1 to move", "game over, draw"))
    with pytest.raises(ValueError, match="cannot read 'hello' after the drawing"):
        GameState.from_text(text + "\nhello")
    drawing = "\n".join(text.splitlines()[:-1])  # without a status line: current_player says, default 0
    assert GameState.from_text(drawing).current_player == 0
    assert GameState.from_text(drawing, current_player=1) == s
    end = GameState.from_actions(1, 1, [0, 1, 2, 3])  # a finished game names no mover
    assert str(end).endswith("game over, player 1 wins") and GameState.from_text(str(end), current_player=1) == end
    with pytest.raises(ValueError, match="does not match the drawing"):
        GameState.from_text(str(end).replace("player 1 wins", "player 0 wins"))


@pytest.mark.parametrize("text", [
    "+---+   +\n|\n+   +",  # the last row of dots has 2 dots, the first 3: was read as 1x2
    "+---+---+\n|   |   |\n+---+---+   +",  # a row of dots longer than the first
    "+---+\n| 0 |   |\n+---+",  # a row of boxes longer than the rows of dots
    "+---+\n+---+\n+---+",  # a row of dots where a row of boxes belongs
    " +---+\n|   |\n +---+",  # a row of boxes left of the dots
])
def test_from_text_refuses_ragged_drawings(text):
    with pytest.raises(ValueError, match="row|aligned"):
        GameState.from_text(text)


@pytest.mark.parametrize("board", ["３x３", "3x٣", "²x2"])
def test_board_names_take_ascii_digits_only(board):
    with pytest.raises(ValueError, match="malformed board name"):
        parse_board(board)


@pytest.mark.parametrize("text", [12345, None, b"+---+\n\n+---+"])
def test_from_text_wants_a_str(text):
    with pytest.raises(TypeError, match="from_text reads a board drawing as a str"):
        GameState.from_text(text)


@pytest.mark.parametrize("board", [(True, 2), (2, False), (2.0, 2), (2, 2.5), ("2", 2), (np.bool_(True), 1), 5, None])
def test_boards_are_pairs_of_integers(board):
    with pytest.raises(ValueError, match="RxC"):
        GameState.new(board)
    with pytest.raises(ValueError, match="RxC"):
        parse_board(board)
    assert parse_board((np.int64(2), 3)) == (2, 3)


def test_native_extension_built_where_required():
    """CI sets DNB_REQUIRE_NATIVE=1: there the C++ engine must have built (else its tests would skip)."""
    import os

    from dnb_env import native

    if os.environ.get("DNB_REQUIRE_NATIVE") == "1":
        assert native.available(), "DNB_REQUIRE_NATIVE=1 but dnb_env._native did not build"
        assert native.MAX_SIZE == 12, "DNB_REQUIRE_NATIVE=1 but dnb_env._native_wide (boards past 9x9) did not build"
    else:
        assert native.available() == (native._native is not None)
