"""Nimstring values: the search's loony and capture rules against a plain search of the game with neither
(every position of 2x2 and 2x3 boards, late positions of 3x3), the C++ search against the Python reference,
symmetry, budgets and bad input."""

from __future__ import annotations

import functools
import random

import numpy as np
import pytest

from conftest import HARD_5X5
from dnb_env import features
from dnb_env.analysis import realistic_position
from dnb_env.core import GameState, geometry
from dnb_env.features import LOONY, nimstring_move_wins, nimstring_value
from dnb_env.solver import native_available
from dnb_env.symmetry import action_permutation, symmetries

needs_native = pytest.mark.skipif(not native_available(), reason="the C++ extension is not built")


@functools.lru_cache(maxsize=None)
def plain_game(rows: int, cols: int):
    """``wins(edges)``: whether the mover of the position with drawn ``edges`` wins Nimstring, by a search
    of every move with no rule: completing a box means moving again, a player who cannot move loses."""
    g = geometry(rows, cols)

    @functools.lru_cache(maxsize=None)
    def wins(edges: int) -> bool:
        for a in range(g.num_actions):
            if edges >> a & 1:
                continue
            child = edges | 1 << a
            again = any(all(child >> e & 1 for e in g.box_sides[b]) for b in g.action_boxes[a])
            if wins(child) == again:  # moving again: the child must be won; else lost for the other player
                return True
        return False

    return wins


def state_of(rows: int, cols: int, edges: int) -> GameState:
    return GameState.from_actions(rows, cols, [a for a in range(edges.bit_length()) if edges >> a & 1])


def move_wins_plain(rows: int, cols: int, edges: int) -> dict[int, bool]:
    g, wins = geometry(rows, cols), plain_game(rows, cols)
    out = {}
    for a in range(g.num_actions):
        if not edges >> a & 1:
            child = edges | 1 << a
            again = any(all(child >> e & 1 for e in g.box_sides[b]) for b in g.action_boxes[a])
            out[a] = wins(child) == again
    return out


def reference(rows: int, cols: int, positions: int = 10 ** 7):
    return features._NimstringReference(rows, cols, positions)


@pytest.mark.parametrize("board", [(2, 2), (1, 3), (2, 3)])
def test_reference_rules_agree_with_the_plain_game_on_every_position(board):
    rows, cols = board
    n = geometry(rows, cols).num_actions
    wins = plain_game(rows, cols)
    rng = random.Random(0)
    edges_list = range(1 << n) if n <= 12 else rng.sample(range(1 << n), 600)
    for edges in edges_list:
        v = reference(rows, cols).position(edges)
        assert (v != 0) == wins(edges), (board, edges, v)
    for edges in list(edges_list)[:200]:
        if edges != (1 << n) - 1:
            assert reference(rows, cols).move_wins(edges) == move_wins_plain(rows, cols, edges), (board, edges)


@needs_native
@pytest.mark.parametrize("board", [(2, 2), (1, 3), (2, 3)])
def test_native_agrees_with_the_plain_game_on_every_position(board):
    rows, cols = board
    n = geometry(rows, cols).num_actions
    wins = plain_game(rows, cols)
    nim = features._nimstring(rows, cols)
    for edges in range(1 << n):
        v = nim.value(edges, 10 ** 7)
        assert (v != 0) == wins(edges), (board, edges, v)
        if edges != (1 << n) - 1 and edges % 7 == 0:
            assert nim.move_wins(edges, 10 ** 7) == move_wins_plain(rows, cols, edges), (board, edges)


@needs_native
def test_native_agrees_with_the_plain_game_late_on_3x3():
    rng = random.Random(1)
    wins = plain_game(3, 3)
    for _ in range(150):
        s = realistic_position("3x3", rng.randint(4, 14), rng)
        if s.is_terminal():
            continue
        assert (nimstring_value(s) != 0) == wins(s.edges), s.edges
        got = nimstring_move_wins(s)
        plain = move_wins_plain(3, 3, s.edges)
        assert {a: bool(got[a]) for a in plain} == plain, s.edges


@needs_native
@pytest.mark.parametrize("board", [(2, 2), (1, 3), (2, 3), (5, 5)])
def test_the_reductions_change_no_answer(board):
    # move ordering, one border side a box searched and one table entry for border-equivalent parts: the same
    # Grundy numbers and move results as the plain search, on every position of the small boards and on
    # realistic 5x5 positions
    from dnb_env import native

    rows, cols = board
    n = geometry(rows, cols).num_actions
    fast = native._require().Nimstring(rows, cols, reductions=True, forms=False)
    plain = native._require().Nimstring(rows, cols, reductions=False, forms=False)
    assert fast.reductions and not plain.reductions and not fast.forms
    if n <= 12:
        positions = range(1 << n)
    elif n <= 24:
        positions = random.Random(4).sample(range(1 << n), 3000)
    else:
        rng = random.Random(5)
        positions = [realistic_position(f"{rows}x{cols}", rng.randint(20, 34), rng).edges for _ in range(40)]
    compared = 0
    for edges in positions:
        want = plain.value(edges, 10 ** 6)
        if want is None:
            continue
        assert fast.value(edges, 10 ** 6) == want, (board, edges)
        if edges != (1 << n) - 1:
            assert fast.move_wins(edges, 10 ** 6) == plain.move_wins(edges, 10 ** 6), (board, edges)
        compared += 1
    assert compared >= min(len(positions), 30)


@needs_native
@pytest.mark.parametrize("board", [(2, 3), (3, 4), (5, 5)])
def test_canonical_forms_change_no_answer(board):
    # a part keyed by its form (wherever it lies, whatever the lengths of its long chains) has the Grundy
    # numbers and move results of the search without the forms; every 2x3 position is also checked against
    # the plain game above (the default search has the forms)
    from dnb_env import native

    rows, cols = board
    n = geometry(rows, cols).num_actions
    forms = native._require().Nimstring(rows, cols, forms=True)
    edges_only = native._require().Nimstring(rows, cols, forms=False)
    assert forms.forms and not edges_only.forms
    rng = random.Random(7)
    if n <= 24:
        positions = rng.sample(range(1 << n), 4000)
    else:  # moves played: 3x4 from 8 of its 31, 5x5 from 24 of its 60
        lo, hi = (8, 24) if n < 60 else (24, 34)
        positions = [realistic_position(f"{rows}x{cols}", rng.randint(lo, hi), rng).edges for _ in range(40)]
    compared = 0
    for edges in positions:
        want = edges_only.value(edges, 10 ** 6)
        if want is None or edges == (1 << n) - 1:
            continue
        assert forms.value(edges, 10 ** 6) == want, (board, edges)
        assert forms.move_wins(edges, 10 ** 6) == edges_only.move_wins(edges, 10 ** 6), (board, edges)
        compared += 1
    assert compared >= min(len(positions), 30)


@needs_native
def test_a_part_joined_only_by_a_long_run_is_searched_as_a_sum():
    # two copies of a graph joined by a long run (three coins) are two games: each copy with a long run to the
    # ground. Once the search knows that game (searched alone), the joined part needs no position of its own:
    # it is split into the two games, each answered by its form, and their values cancel
    from dnb_env import _native

    alone = [[0, 1, 2, 9], [0, 3, 4, 6], [1, 3, 5, 7], [2, 4, 5, 8], [9, 10], [10, 11], [11, 12]]  # a run to the ground
    joined = [[13, 14, 15, 22], [13, 16, 17, 19], [14, 16, 18, 20], [15, 17, 18, 21],  # a copy, a-d
              [22, 23], [23, 24], [24, 25],  # the run
              [26, 27, 28, 25], [26, 29, 30, 32], [27, 29, 31, 33], [28, 30, 31, 34]]  # another copy
    coins = alone + joined
    only_alone = sum(1 << i for i in range(13, 35))  # the joined copies drawn
    only_joined = (1 << 13) - 1
    plain = _native.Nimstring.of_graph(coins, 35, reductions=False, forms=False)
    assert plain.value(only_joined, 10 ** 7) == 0
    nim = _native.Nimstring.of_graph(coins, 35)
    assert nim.value(only_alone, 10 ** 6) == plain.value(only_alone, 10 ** 7)
    assert nim.value(only_joined, 1, keep=True) == 0
    assert nim.move_wins(only_joined, 10 ** 6) == plain.move_wins(only_joined, 10 ** 7)


@needs_native
def test_a_graph_of_more_than_64_coins_is_keyed_by_its_edges_only():
    # the forms take graphs of at most 64 coins: past that, two copies of one game are each searched (and the
    # answers are those of the search without forms)
    from dnb_env import _native

    def copy(o):  # a-d joined to each other and the ground, a run of three coins to the ground from a
        return [[o, o + 1, o + 2, o + 9], [o, o + 3, o + 4, o + 6], [o + 1, o + 3, o + 5, o + 7],
                [o + 2, o + 4, o + 5, o + 8], [o + 9, o + 10], [o + 10, o + 11], [o + 11, o + 12]]

    for dummies in (0, 70):  # 70: coins of one string each on strings 0..34 (drawn), then the two copies
        o = dummies // 2
        coins = [[i // 2] for i in range(dummies)] + copy(o) + copy(o + 13)
        drawn = (1 << o) - 1
        first = drawn | sum(1 << e for e in range(o + 13, o + 26))
        second = drawn | sum(1 << e for e in range(o, o + 13))
        assert (len(coins) > 64) == (dummies > 0)
        nim = _native.Nimstring.of_graph(coins, o + 26)
        plain = _native.Nimstring.of_graph(coins, o + 26, forms=False)
        want = plain.value(first, 10 ** 6)
        assert nim.value(first, 10 ** 6) == want == plain.value(second, 10 ** 6)
        again = nim.value(second, 1, keep=True)
        assert (again == want) if dummies == 0 else again is None
        assert nim.value(second, 10 ** 6) == want


@needs_native
@pytest.mark.parametrize("board, count, undrawn", [("3x4", 150, (6, 20)), ("4x4", 60, (12, 26))])
def test_forms_kept_from_position_to_position_change_no_answer(board, count, undrawn):
    # one table with the forms kept over many realistic positions (an agent keeps its table through a game), so
    # that a part is often answered by the form of another part met in another position: the same values and
    # move results as the search keyed by edges alone, from an empty table each time
    from dnb_env import native

    rows, cols = map(int, board.split("x"))
    kept = native._require().Nimstring(rows, cols)
    edges_only = native._require().Nimstring(rows, cols, forms=False)
    rng = random.Random(11)
    compared = 0
    for _ in range(count):
        s = realistic_position(board, rng.randint(*undrawn), rng)
        want = edges_only.value(s.edges, 10 ** 6)
        if want is None:
            continue
        assert kept.value(s.edges, 10 ** 8, keep=True) == want, (board, s.edges)
        assert kept.move_wins(s.edges, 10 ** 8, keep=True) == edges_only.move_wins(s.edges, 10 ** 7), (board, s.edges)
        compared += 1
    assert compared >= count * 2 // 3


@needs_native
def test_a_part_met_again_elsewhere_on_the_board_is_not_searched_again():
    # the boxes of the left column with every side undrawn, the rest of the board drawn; then the same in the
    # right column (the mirror image): with the forms the second search needs no position of its own
    from dnb_env import native

    g = geometry(5, 5)

    def column(c):
        undrawn = {e for r in range(5) for e in g.box_sides[r * 5 + c]}
        return sum(1 << a for a in range(g.num_actions) if a not in undrawn)

    for forms in (True, False):
        nim = native._require().Nimstring(5, 5, forms=forms)
        left = nim.value(column(0), 10 ** 6)
        assert left is not None
        again = nim.value(column(4), 1, keep=True)
        assert (again == left) if forms else again is None
        assert nim.value(column(4), 10 ** 6) == left


@needs_native
def test_a_joint_between_two_long_runs_is_keyed_as_the_ground():
    # two copies of one strings-and-coins graph, coins a-d joined to each other and to the ground: in the first
    # a's fourth string goes to the ground, in the second to a joint J whose other two strings open long chains
    # (three coins each) to the ground. J is never taken (a move in either chain is loony), so the two parts
    # are the same game: the same value, and with the forms the second needs no position of its own
    from dnb_env import _native

    coins = [[0, 1, 2, 9], [0, 3, 4, 6], [1, 3, 5, 7], [2, 4, 5, 8],  # a (9: to the ground), b, c, d
             [10, 11, 12, 19], [10, 13, 14, 16], [11, 13, 15, 17], [12, 14, 15, 18],  # a' (19: to J), b', c', d'
             [19, 20, 21], [20, 22], [22, 23], [23, 24], [21, 25], [25, 26], [26, 27]]  # J, then the two chains
    first = sum(1 << i for i in range(10, 28))  # the second copy drawn
    second = (1 << 10) - 1  # the first copy drawn
    plain = _native.Nimstring.of_graph(coins, 28, forms=False)
    want = plain.value(first, 10 ** 6)
    assert plain.value(second, 10 ** 6) == want
    nim = _native.Nimstring.of_graph(coins, 28)
    assert nim.value(first, 10 ** 6) == want
    assert nim.value(second, 1, keep=True) == want
    assert nim.value(0, 10 ** 6) == 0  # the sum of two equal games

    # a long run between the two copies joins nothing: the same as a long run from each to the ground, so the
    # whole is again the sum of two equal games
    joined = [[0, 1, 2, 9], [0, 3, 4, 6], [1, 3, 5, 7], [2, 4, 5, 8],
              [10, 11, 12, 19], [10, 13, 14, 16], [11, 13, 15, 17], [12, 14, 15, 18],
              [9, 20], [20, 21], [21, 19]]  # a - three coins - a'
    plain = _native.Nimstring.of_graph(joined, 22, reductions=False, forms=False)
    nim = _native.Nimstring.of_graph(joined, 22)
    assert plain.value(0, 10 ** 7) == nim.value(0, 10 ** 6) == 0
    assert nim.move_wins(0, 10 ** 6) == plain.move_wins(0, 10 ** 7)


@needs_native
def test_the_first_winning_move_is_the_first_of_the_moves_that_win():
    from dnb_env import native

    nim = native._require().Nimstring(5, 5)
    rng = random.Random(9)
    seen_some = 0
    for _ in range(20):
        s = realistic_position("5x5", rng.randint(26, 32), rng)
        wins = nim.move_wins(s.edges, 10 ** 6)
        if wins is None:
            continue
        moves = list(wins)
        rng.shuffle(moves)
        first = next((a for a in moves if wins[a]), -1)
        assert nim.first_win(s.edges, moves, 10 ** 6) == first
        losing = [a for a in moves if not wins[a]]
        assert nim.first_win(s.edges, losing, 10 ** 6) == -1
        seen_some += first != -1
    assert seen_some >= 3
    assert nim.first_win(s.edges, [], 10) == -1
    with pytest.raises(ValueError, match="undrawn"):
        nim.first_win(s.edges, [a for a in range(60) if s.edges >> a & 1][:1], 10)


@needs_native
def test_a_search_stops_at_its_deadline():
    from dnb_env import native

    nim = native._require().Nimstring(5, 5)
    s = realistic_position("5x5", 48, random.Random(8))  # undrawn edges: far beyond a tenth of a second
    assert nim.move_wins(s.edges, 10 ** 9, seconds=0.1) is None
    assert nim.value(s.edges, 10 ** 9, seconds=0.0) is None
    for bad in (-1.0, float("nan")):
        with pytest.raises(ValueError, match="seconds"):
            nim.value(s.edges, 10, seconds=bad)


def compare_with_the_reference(rng, boards, count: int, route: str | None = None) -> None:
    """``count`` realistic positions a board, ``(board, lo, hi)`` undrawn edges: the native answers (searched by
    ``route`` when given) must be the Python reference's, among both winners and losers."""
    seen = set()
    for board, lo, hi in boards:
        for _ in range(count):
            s = realistic_position(board, rng.randint(lo, hi), rng)
            assert route is None or features._nim_route(s) == route
            ref = reference(s.rows, s.cols, 400_000)
            want = ref.position(s.edges)
            if want is None:
                continue
            assert nimstring_value(s) == want, (board, s.edges)
            seen.add(want if want in (0, LOONY) else 1)
            moves = nimstring_move_wins(s)
            assert {a: bool(w) for a, w in enumerate(moves) if not np.isnan(w)} == ref.move_wins(s.edges)
    assert seen >= {0, 1}, seen  # both winners and losers among the positions compared


@needs_native
def test_native_search_matches_the_python_reference():
    compare_with_the_reference(random.Random(2), [("3x3", 6, 20), ("5x5", 14, 30)], 25, "board")


@needs_native
def test_larger_boards_search_the_graph_of_their_undrawn_edges_in_cpp_with_the_references_answers():
    # 6x6 and 7x7 have more than 64 edges: a position with at most 64 undrawn is searched natively as the
    # strings-and-coins graph of its undrawn edges
    compare_with_the_reference(random.Random(7), [("6x6", 28, 38), ("7x7", 28, 36)], 12, "graph")


@needs_native
def test_the_graph_of_a_5x5_position_gives_the_board_searchs_answers():
    from dnb_env import _native
    rng = random.Random(6)
    for _ in range(20):
        s = realistic_position("5x5", rng.randint(20, 34), rng)
        undrawn, coins = features._undrawn_graph(5, 5, s.edges)
        graph = _native.Nimstring.of_graph(coins, len(undrawn))
        board = _native.Nimstring(5, 5)
        assert graph.value(0, 10 ** 6) == board.value(s.edges, 10 ** 6)
        by_edge = {undrawn[i]: w for i, w in graph.move_wins(0, 10 ** 6).items()}
        assert by_edge == board.move_wins(s.edges, 10 ** 6)
        drawn = 1 << 0  # a drawn string is a drawn edge: the graph with string 0 drawn is the child
        assert graph.value(drawn, 10 ** 6) == board.value(s.edges | 1 << undrawn[0], 10 ** 6)


@needs_native
def test_a_bad_graph_is_refused():
    from dnb_env import _native
    for coins, n, match in [([[0, 1, 2, 3, 4]], 5, "1 to 4"), ([[]], 1, "1 to 4"), ([[0], [0], [0]], 1, "two coins"),
                            ([[0]], 2, "joins no coin"), ([[0, 0]], 1, "once"), ([[7]], 2, "once"),
                            ([[0]], 65, "1 to 64"), ([[0]], 0, "1 to 64")]:
        with pytest.raises(ValueError, match=match):
            _native.Nimstring.of_graph(coins, n)
    graph = _native.Nimstring.of_graph([[0, 1, 2, 3]], 4)  # one box alone: its first side wins Nimstring
    assert (graph.rows, graph.cols, graph.num_edges) == (None, None, 4)
    assert graph.value(0, 100) == 1 and graph.move_wins(0, 100) == {0: True, 1: True, 2: True, 3: True}
    with pytest.raises(ValueError, match="beyond the 4 strings"):
        graph.value(1 << 4, 100)


@needs_native
def test_values_are_the_same_in_every_orientation():
    rng = random.Random(3)
    for _ in range(10):
        s = realistic_position("5x5", rng.randint(24, 34), rng)
        base = nimstring_move_wins(s, 10 ** 6)
        if base is None:
            continue
        for sym in symmetries(5, 5):
            perm = action_permutation(sym, 5, 5)
            image = state_of(5, 5, sum(1 << int(perm[a]) for a in range(60) if s.edges >> a & 1))
            moved = nimstring_move_wins(image, 10 ** 6)
            np.testing.assert_array_equal(moved[perm], base)


@needs_native
def test_a_full_table_keeps_its_costliest_entries_and_changes_no_answer():
    # a 1 MB table holds at most 65,536 entries (its two tables half full): searches of 39-40 undrawn edges
    # fill it many times over; a full table drops its cheapest half and goes on, with the same answers as a
    # table that never fills
    from dnb_env import native

    rng = random.Random(9)
    states = [realistic_position("5x5", rng.randint(39, 40), rng) for _ in range(5)]
    small = native._require().Nimstring(5, 5, table_mb=1.0)
    filled = 0
    for s in states:
        large = native._require().Nimstring(5, 5, table_mb=256.0)
        want = large.move_wins(s.edges, 10 ** 8)
        assert want is not None
        filled += large.entries > 65_536
        assert small.move_wins(s.edges, 10 ** 8) == want
        assert small.entries <= 65_536
        moves = sorted(want)
        assert small.first_win(s.edges, moves, 10 ** 8, keep=True) == next((a for a in moves if want[a]), -1)
    assert filled >= 3  # the large table needed more than the small one holds, in most of the searches


@needs_native
def test_the_positions_a_search_counts_are_the_least_budget_that_finishes_it():
    from dnb_env import native

    s = realistic_position("5x5", 38, random.Random(5))  # 38 undrawn edges: about 10,000 positions
    nim = native._require().Nimstring(5, 5, table_mb=64.0)
    want = nim.move_wins(s.edges, 10 ** 8)
    n = nim.positions_searched
    assert want is not None and 1_000 < n < 10 ** 6
    assert nim.move_wins(s.edges, n) == want and nim.positions_searched == n
    assert nim.move_wins(s.edges, n - 1) is None and nim.positions_searched == n - 1  # one short: out of positions
    # in the table the first call left, the same call searches nothing again
    assert nim.move_wins(s.edges, n) == want
    assert nim.move_wins(s.edges, 10 ** 8, keep=True) == want and nim.positions_searched == 0
    moves = sorted(want)
    assert nim.first_win(s.edges, moves, 10 ** 8) == next((a for a in moves if want[a]), -1)
    assert 0 < nim.positions_searched <= n


@needs_native
def test_searches_in_one_table_give_the_same_answers_and_finish_more_often():
    rng = random.Random(6)
    states = [realistic_position("5x5", rng.randint(32, 34), rng) for _ in range(12)]  # undrawn edges
    cold = [nimstring_move_wins(s, 10 ** 6) for s in states]
    assert sum(c is not None for c in cold) >= 8
    hard = [i for i, s in enumerate(states) if cold[i] is not None and nimstring_move_wins(s, 100) is None]
    assert len(hard) >= 3  # positions that 100 positions of search from an empty table do not settle
    hard_value = [i for i in hard if nimstring_value(states[i], 100) is None]
    assert hard_value
    with features.nimstring_table():
        with features.nimstring_table():  # nested: the outer block's table goes on
            shared = [nimstring_move_wins(s, 10 ** 6) for s in states]
        assert features._TABLE.get() is not None
        for a, b in zip(cold, shared):
            if a is not None and b is not None:
                np.testing.assert_array_equal(a, b)
        # a budget too small for a search from an empty table suffices once the table holds the position's
        # positions: the same position asked again with 100 positions finishes, with the same answer
        for i in hard:
            np.testing.assert_array_equal(nimstring_move_wins(states[i], 100), shared[i])
        # the same for the position's value (a search of its own)
        values = {i: nimstring_value(states[i], 10 ** 6) for i in hard_value}
        for i in hard_value:
            assert values[i] is not None and nimstring_value(states[i], 100) == values[i]
    assert features._TABLE.get() is None
    # outside the block every search starts from an empty table again: 100 positions are too few
    features._nim_moves.cache_clear()
    assert all(nimstring_move_wins(states[i], 100) is None for i in hard)
    assert all(nimstring_value(states[i], 100) is None for i in hard_value)


def test_past_a_deadline_the_searches_answer_none_and_nothing_cut_short_is_kept():
    import time

    rng = random.Random(6)
    states = [realistic_position("5x5", rng.randint(32, 34), rng) for _ in range(6)]  # undrawn edges
    cold = [nimstring_move_wins(s, 10 ** 6) for s in states]
    assert sum(c is not None for c in cold) >= 4
    with features.nimstring_deadline(time.perf_counter() - 1.0):
        assert all(nimstring_move_wins(s, 10 ** 6) is None for s in states)
        with features.nimstring_table():
            assert all(nimstring_move_wins(s, 10 ** 6) is None for s in states)
    assert features._DEADLINE.get() is None
    for a, s in zip(cold, states):  # the answers after the block are the cold ones: no None was kept
        b = nimstring_move_wins(s, 10 ** 6)
        assert (a is None) == (b is None) and (a is None or np.array_equal(a, b, equal_nan=True))
    # a table's search cut short by its deadline keeps no answer; one cut short by its positions keeps None
    hard = GameState.from_actions("5x5", actions=HARD_5X5 + (2,))  # 38 undrawn: over 200,000 positions
    table = features.NimstringTable()
    _, edges = features._canonical_edges(5, 5, hard.edges)
    assert table.move_wins(5, 5, edges, 10 ** 9, deadline=time.perf_counter()) is None
    assert not table._answers
    assert table.move_wins(5, 5, edges, 2_000) is None
    assert table._answers == {(5, 5, edges, 2_000): None}
    with pytest.raises(ValueError, match="deadline"):
        with features.nimstring_deadline("soon"):
            pass


def test_a_table_that_gives_up_skips_positions_as_large_as_one_out_of_positions():
    rng = random.Random(6)
    states = [realistic_position("5x5", rng.randint(32, 34), rng) for _ in range(12)]  # undrawn edges
    undrawn = [s.num_actions - s.edges.bit_count() for s in states]
    cold = [nimstring_move_wins(s, 10 ** 6) for s in states]
    small = [nimstring_move_wins(s, 100) for s in states]  # 100 positions from an empty table
    first = min((i for i in range(len(states)) if cold[i] is not None and small[i] is None), key=undrawn.__getitem__)
    larger = [i for i in range(len(states)) if small[i] is not None and undrawn[i] >= undrawn[first]]
    smaller = [i for i in range(len(states)) if small[i] is not None and undrawn[i] < undrawn[first]]
    assert larger and smaller
    for give_up in (False, True):
        table = features.NimstringTable(give_up=give_up)
        with features.nimstring_table(table):
            assert nimstring_move_wins(states[first], 100) is None  # out of its positions
            assert table._gave_up == ({(5, 5, 100): undrawn[first]} if give_up else {})
            for i in larger:  # not searched at all where the table gives up
                found = nimstring_move_wins(states[i], 100)
                assert found is None if give_up else np.array_equal(found, small[i], equal_nan=True)
            for i in smaller:
                np.testing.assert_array_equal(nimstring_move_wins(states[i], 100), small[i])
            for i in larger:  # another budget is another search: not given up on
                np.testing.assert_array_equal(nimstring_move_wins(states[i], 10 ** 6), cold[i])
        table.clear()
        assert table._gave_up == {} and table._answers == {}


def test_a_timed_move_encodes_its_leaves_under_the_moves_deadline():
    import time

    from agents.search import MCTSAgent, SearchSettings, UniformEvaluator

    seen = []

    class Recorder(UniformEvaluator):
        def evaluate(self, states):
            seen.append(features._DEADLINE.get())
            return super().evaluate(states)

    agent = MCTSAgent(Recorder(), SearchSettings(simulations=4), seed=0)
    agent.select_action(GameState.new(2, 2))
    assert seen and all(d is None for d in seen)  # no clock: no deadline
    seen.clear()
    agent.set_move_time(0.1)
    start = time.perf_counter()
    agent.select_action(GameState.new(2, 2))
    assert seen and all(d is not None and start < d <= start + 0.1 + 1e-3 for d in seen)
    assert features._DEADLINE.get() is None  # lifted after the move


def test_an_agent_searches_each_move_in_its_evaluators_table():
    from agents.search import MCTSAgent, SearchSettings, UniformEvaluator
    from agents.search.cache import CachedEvaluator

    tables = []

    class Owner(UniformEvaluator):
        encoder = "chainloop6_nim"

        def __init__(self):
            self.nimstring = features.NimstringTable()

        def move_scope(self):
            return features.nimstring_table(self.nimstring)

        def evaluate(self, states):
            tables.append(features._TABLE.get())
            return super().evaluate(states)

        def evaluate_planes(self, planes, masks):  # what an evaluation cache calls after encoding
            tables.append(features._TABLE.get())
            return np.full(masks.shape, 1.0 / masks.shape[1]), np.zeros(len(masks))

    owner = Owner()
    for evaluator in (owner, CachedEvaluator(owner)):
        tables.clear()
        MCTSAgent(evaluator, SearchSettings(simulations=4), seed=0).select_action(GameState.new(2, 2))
        assert tables and all(t is owner.nimstring for t in tables)
        assert features._TABLE.get() is None  # closed after the move


def test_a_loony_position_is_won_by_its_mover():
    # 1x3, undrawn: box 0's top, the side between boxes 0 and 1, the side between 1 and 2. The mover can
    # take box 2, whose last side leads into box 1 with two undrawn sides: loony
    g = geometry(1, 3)
    undrawn = {g.box_sides[0][0], g.box_sides[0][3], g.box_sides[1][3]}
    edges = sum(1 << a for a in range(g.num_actions) if a not in undrawn)
    assert reference(1, 3).position(edges) == LOONY
    assert plain_game(1, 3)(edges)
    if native_available():
        assert nimstring_value(state_of(1, 3, edges)) == LOONY


def test_bad_input_and_budgets():
    s = GameState.new("5x5")
    for bad in (0, -1, True, 1.5):
        with pytest.raises(ValueError, match="positions"):
            nimstring_value(s, bad)
        with pytest.raises(ValueError, match="positions"):
            nimstring_move_wins(s, bad)
    assert nimstring_value(s, 5, max_undrawn=None) is None  # the empty 5x5 board is far beyond five positions
    assert nimstring_move_wins(s, 5, max_undrawn=None) is None
    # past NIMSTRING_MAX_UNDRAWN: no search, whatever the budget
    late = realistic_position("5x5", 30, random.Random(4))
    assert nimstring_move_wins(late, max_undrawn=29) is None and nimstring_move_wins(late) is not None
    assert nimstring_value(late, max_undrawn=29) is None and nimstring_value(late) is not None
    assert reference(6, 6, 50).position(0) is None  # past 64 edges: the Python search, with its budget
    done = s
    for a in range(s.num_actions):
        done = done.apply(a)
    assert nimstring_move_wins(done) is None


@needs_native
def test_native_rejects_boards_past_64_edges_and_bad_edges():
    from dnb_env import _native
    with pytest.raises(ValueError, match="64 edges"):
        _native.Nimstring(6, 6)
    nim = _native.Nimstring(3, 3)
    with pytest.raises(ValueError, match="beyond"):
        nim.value(1 << 24, 10)
    with pytest.raises(ValueError):
        nim.value(-1, 10)


def test_the_future_head_can_learn_each_moves_nimstring_result():
    from agents.models import make_model_config
    from agents.training.replay import Replay, future_targets, has_future_head
    from agents.training.samples import Samples

    rng = random.Random(5)
    states = [realistic_position("5x5", rng.randint(24, 34), rng) for _ in range(6)]
    values, mask = future_targets(states, "nimstring")
    for s, v, m in zip(states, values, mask):
        wins = nimstring_move_wins(s)
        np.testing.assert_array_equal(m, ~np.isnan(wins))
        np.testing.assert_array_equal(v[m > 0], wins[~np.isnan(wins)])
    assert set(np.unique(values[mask > 0])) == {0.0, 1.0}
    with pytest.raises(ValueError, match="future head's target"):
        future_targets(states, "control")
    for family in ("dotsformer", "resnet"):
        extra = {"paper_heads": True} if family == "resnet" else {}
        config = make_model_config(family, preset="cpu", board="5x5", encoder="chainloop6_safe", future_head=True,
                                   future_target="nimstring", **extra)
        assert has_future_head(config) == "nimstring"
        assert has_future_head(make_model_config(family, preset="cpu", board="5x5", encoder="chainloop6_safe",
                                                 future_head=True, **extra)) == "safe_phase"
        with pytest.raises(ValueError, match="future_target"):
            make_model_config(family, preset="cpu", board="5x5", encoder="chainloop6_safe", future_head=True,
                              future_target="control", **extra)
    # a replay's batch carries the targets of the kind asked for
    from agents.training.samples import Record

    records = [Record(s, s.legal_actions()[0], np.full(60, 1 / 60, np.float32), 0.0, z=0.0) for s in states]
    replay = Replay(Samples.from_records("5x5", records, 0))
    batch = replay.batch(np.arange(len(states)), "chainloop6", 0.0, future="nimstring")
    np.testing.assert_array_equal(batch["safe_phase"], values)
    np.testing.assert_array_equal(batch["safe_phase_mask"], mask)
    batch = replay.batch(np.arange(len(states)), "chainloop6", 0.0, future=True)  # True: the safe-phase target
    np.testing.assert_array_equal(batch["safe_phase"], future_targets(states)[0])
