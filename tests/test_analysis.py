"""Chains, loops, move classes, initiative labels and simple-endgame values."""

from __future__ import annotations

import random
import textwrap

import pytest

from dnb_env import analysis as A
from dnb_env.core import GameState

from conftest import random_state, realistic_move

pytestmark = pytest.mark.usefixtures("each_backend")  # every test on the Python reference and the native engine

CHAIN3 = textwrap.dedent(
    """
    +---+---+---+

    +---+---+---+
    """
)  # 1x3: a closed-off row of three boxes, open at both ends: one 3-chain

LOOP4 = textwrap.dedent(
    """
    +---+---+
    |       |
    +   +   +
    |       |
    +---+---+
    """
)  # 2x2 with the outside drawn: a 4-loop

CAPTURABLE = textwrap.dedent(
    """
    +---+   +
    |
    +---+   +
    """
)  # 1x2: box 0 has three sides drawn


def test_chain_components_and_values():
    s = GameState.from_text(CHAIN3)
    (c,) = A.components(s)
    assert c.kind == "chain" and c.length == 3 and not c.opened and c.boxes in ((0, 1, 2), (2, 1, 0))
    assert c.ends == ((6, -1), (9, -1))
    assert A.long_chain_count(s) == 1 and A.is_simple_endgame(s)
    assert A.endgame_value(s) == -3  # the mover must open it and the opponent takes all three
    assert A.endgame_move(s) in (6, 9)
    assert A.chain_loop_structures(s) == [(6, 7, 8, 9)]


def test_loop_components_and_values():
    s = GameState.from_text(LOOP4)
    (c,) = A.components(s)
    assert c.kind == "loop" and c.length == 4 and not c.opened
    assert A.long_chain_count(s) == 0
    assert A.endgame_value(s) == -4
    assert A.chain_loop_structures(s) == [(2, 3, 7, 10)]
    opened = s.apply(2)  # a line inside the loop: two capturable boxes, a chain opened at both ends
    comps = A.components(opened)
    assert len(comps) == 1 and comps[0].kind == "chain" and comps[0].opened and comps[0].length == 4
    assert A.endgame_value(opened) is None


def test_capturable_box_classes_and_initiative():
    s = GameState.from_text(CAPTURABLE)
    assert A.box_valences(s) == [1, 4] and A.capturable_boxes(s) == [0] and A.joints(s) == [1]
    classes = A.move_classes(s)
    F, C, S, K = A.MoveClass.FORBIDDEN, A.MoveClass.CONCEDING, A.MoveClass.SAFE, A.MoveClass.SCORING
    assert list(classes) == [F, S, F, S, F, K, S]
    assert A.scoring_moves(s) == [5] and A.safe_moves(s) == [1, 3, 6]
    grid = A.move_class_grid(s)
    assert grid.shape == (3, 5) and grid[1, 2] == K and grid[0, 3] == S and grid[1, 1] == F and grid[0, 0] == F
    assert A.initiative_label(s, 5) == A.Initiative.CAPTURE
    assert A.initiative_label(s, 1) == A.Initiative.SACRIFICE
    assert A.initiative_label(GameState.new(1, 2), 1) == A.Initiative.NEUTRAL
    with pytest.raises(ValueError):
        A.initiative_label(s, 0)


def test_conceding_moves():
    s = GameState.from_text(CHAIN3)
    assert all(A.move_class(s, a) == A.MoveClass.CONCEDING for a in (6, 7, 8, 9))
    assert A.move_class(s, 0) == A.MoveClass.FORBIDDEN and A.move_class(s, 99) == A.MoveClass.FORBIDDEN


def test_boxeszero_example_value():
    # 4-loop + 6-loop + chains 3, 2, 2, 1, 6: v = 0 for the player not to move
    key = tuple(sorted([("loop", 4), ("loop", 6), ("chain", 3), ("chain", 2), ("chain", 2), ("chain", 1), ("chain", 6)]))
    assert A.simple_endgame_value(key) == 0


def test_small_recursion_values():
    v = A.simple_endgame_value
    assert v((("chain", 1),)) == 1 and v((("chain", 2),)) == 2 and v((("chain", 3),)) == 3
    assert v((("chain", 3), ("chain", 3))) == 2  # open one: the controller takes 3 - 2 + |2 - 3|
    # opening the loop first is best: the controller gets 4 - v(3-chain) = 1 rather than 3 - 2 + |2 - 4|
    assert v((("chain", 3), ("loop", 4))) == 1


@pytest.mark.parametrize("rows, cols, games", [(2, 3, 300), (3, 3, 150)])
def test_endgame_value_and_move_match_brute_force(rows, cols, games, brute):
    rng = random.Random(rows * 10 + cols)
    checked = 0
    for _ in range(games):
        s = GameState.new(rows, cols)
        while not s.is_terminal():
            if A.is_simple_endgame(s):
                assert A.endgame_value(s) == brute.value(s), str(s)
                move = A.endgame_move(s)
                assert brute.move_values(s)[move] == brute.value(s), (str(s), move)
                checked += 1
            else:
                assert A.endgame_value(s) is None and A.endgame_move(s) is None
            s = s.apply(realistic_move(s, rng))
    assert checked > 100


def test_structures_partition_the_undrawn_edges():
    rng = random.Random(9)
    for _ in range(200):
        s = random_state(rng, 4, 5, rng.randrange(49))
        groups = A.chain_loop_structures(s)
        flat = sorted(a for grp in groups for a in grp)
        assert flat == s.legal_actions()
        # linked edges are exactly the undrawn pairs of boxes with two drawn sides
        for b, v in enumerate(A.box_valences(s)):
            if v == 2:
                pair = [e for e in s.geometry.box_sides[b] if not s.is_drawn(e)]
                assert any(set(pair) <= set(grp) for grp in groups)
