"""The weighted board list of multi-size training: parsing, errors, the split of an iteration's games."""

import numpy as np
import pytest

from agents.training.boards import BoardMix


def test_parse_and_print():
    mix = BoardMix.parse("2x2:1, 3x3:2,4x4:2,5x5:4")
    assert mix.boards == ("2x2", "3x3", "4x4", "5x5")
    assert str(mix) == "2x2:1,3x3:2,4x4:2,5x5:4" and BoardMix.parse(str(mix)) == mix
    assert BoardMix.parse("3x4").entries == (("3x4", 1.0),)
    assert BoardMix.parse("2x2:0.5,3x3:1.5").shares() == {"2x2": 0.25, "3x3": 0.75}


@pytest.mark.parametrize("text, match", [
    ("", "a board mix is"),
    ("2x2:1,,3x3:2", "board mix entry ''"),
    ("2x:1", "malformed board name '2x'"),
    ("0x3:1", "must be in 1"),
    ("2x2:many", "the weight 'many' is not a number"),
    ("2x2:0", "must be a positive number"),
    ("2x2:-1", "must be a positive number"),
    ("2x2:nan", "must be a positive number"),
    ("2x2:1,2x2:3", "appears twice"),
])
def test_bad_mixes_are_refused(text, match):
    with pytest.raises(ValueError, match=match):
        BoardMix.parse(text)


def test_split_gives_every_game_a_board_in_proportion():
    mix = BoardMix.parse("2x2:1,3x3:2,4x4:2,5x5:4")
    assert mix.split(9) == {"2x2": 1, "3x3": 2, "4x4": 2, "5x5": 4}
    assert mix.split(32) == {"2x2": 4, "3x3": 7, "4x4": 7, "5x5": 14}
    assert mix.split(0) == {"2x2": 0, "3x3": 0, "4x4": 0, "5x5": 0}
    for games in range(1, 40):
        counts = mix.split(games)
        assert sum(counts.values()) == games
        assert all(abs(counts[b] - games * s) < 1 for b, s in mix.shares().items())
    with pytest.raises(ValueError, match="games must be an integer >= 0"):
        mix.split(-1)


def test_draw_is_seeded_and_follows_the_weights():
    mix = BoardMix.parse("2x2:1,5x5:3")
    a, b = mix.draw(np.random.default_rng(0), 4000), mix.draw(np.random.default_rng(0), 4000)
    assert a == b and set(a) == {"2x2", "5x5"}
    assert abs(a.count("5x5") / 4000 - 0.75) < 0.03
