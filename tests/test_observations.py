"""Encoders: hand-checked channels on drawn positions, shapes, batch == single, symmetry equivariance."""

from __future__ import annotations

import random
import zlib
import textwrap

import numpy as np
import pytest

from dnb_env.core import GameState
from dnb_env.observations import encode, encode_batch, encoder_record, encoder_shape, list_encoders, transform_planes
from dnb_env.symmetry import action_permutation, symmetries, transform_policy, transform_state

from conftest import random_state
from test_analysis import CAPTURABLE, CHAIN3, LOOP4

ALL = list_encoders()

pytestmark = pytest.mark.usefixtures("each_backend")  # every test on the Python and the native encoders


def cells(plane: np.ndarray) -> dict[tuple[int, int], float]:
    return {(int(y), int(x)): float(plane[y, x]) for y, x in zip(*np.nonzero(plane))}


def test_names_and_shapes():
    assert set(ALL) == {"chainloop6", "chainloop64", "edgequad4", "edgequad9", "edgequad44", "baseline4", "alphazero4",
                        "chainloop6_safe", "chainloop6_safevalue", "chainloop6_lcr", "chainloop6_sac2",
                        "chainloop6_sac2_deep", "chainloop6_sac4", "chainloop6_nim", "chainloop6_nim38"}
    assert encoder_shape("chainloop6", 5, 5) == (6, 11, 11)
    assert encoder_shape("chainloop6_sac2", 5, 5) == (12, 11, 11)
    assert encoder_shape("chainloop64", 5, 5) == (64, 11, 11)
    assert encoder_shape("edgequad44", 3, 4) == (44, 3, 4)
    assert encoder_shape("alphazero4", "2x3") == (4, 5, 7)
    with pytest.raises(ValueError, match="known encoders"):
        encode("chainloop7", GameState.new(2, 2))


def test_every_encoder_is_one_record_of_the_table():
    from dnb_env.observations import DEFAULT_ENCODER, ENCODERS, EncoderRecord, encoder_layout, encoder_record

    assert DEFAULT_ENCODER == "chainloop6" and list(ENCODERS) == ALL
    for name, record in ENCODERS.items():
        assert record.name == name and encoder_record(name) is record and record.description
        assert encoder_shape(name, 2, 3)[0] == record.channels == encode(name, GameState.new(2, 3)).shape[0]
        assert encoder_layout(name) == record.layout
        assert (record.channel_map != "fixed") == (record.layout == "box")  # only the box encoders have sides
        assert record.extends is None or record.extends in ENCODERS
    with pytest.raises(ValueError, match="known encoders: " + ", ".join(ALL)):
        encoder_record("chainloop7")
    with pytest.raises(ValueError, match="channel_map"):
        EncoderRecord("x", encode, 4, "grid", None, "mirror", False, "no such map")


@pytest.mark.parametrize("name", ALL)
def test_dtype_shape_and_batch(name):
    rng = random.Random(1)
    first = 16 if name.startswith("chainloop6_nim") else 0  # the Python Nimstring search is slow early in a game
    states = [random_state(rng, 3, 4, rng.randrange(first, 31)) for _ in range(12)]
    batch = encode_batch(name, states)
    assert batch.dtype == np.float32 and batch.shape == (12,) + encoder_shape(name, 3, 4)
    for s, row in zip(states, batch):
        single = encode(name, s)
        assert single.dtype == np.float32 and np.array_equal(single, row)


def test_chainloop6_three_chain():
    obs = encode("chainloop6", GameState.from_text(CHAIN3))
    # the four vertical edges of the row form one structure of count 4
    assert cells(obs[5]) == {(1, 0): 4.0, (1, 2): 4.0, (1, 4): 4.0, (1, 6): 4.0}
    assert not obs[4].any()
    assert cells(obs[2]) == {(0, 1): 1, (0, 3): 1, (0, 5): 1, (2, 1): 1, (2, 3): 1, (2, 5): 1}
    assert obs[0][0, 0] == 1 and obs[0][1, 1] == 1 and obs[0][0, 1] == 0
    assert obs[1][0, 1] == 1 and obs[1][1, 0] == 1 and obs[1][1, 1] == 0
    assert not obs[3].any()


def test_chainloop6_loop():
    obs = encode("chainloop6", GameState.from_text(LOOP4))
    assert cells(obs[5]) == {(2, 1): 4.0, (2, 3): 4.0, (1, 2): 4.0, (3, 2): 4.0}
    assert not obs[4].any()


def test_chainloop6_capturable_box_and_count_one_structure():
    s = GameState.from_text(CAPTURABLE)
    obs = encode("chainloop6", s)
    # edge v(0,1) is a count-1 structure beside box 0, which has three drawn sides
    assert cells(obs[4]) == {(1, 2): 1.0}
    assert not obs[5].any()
    # a count-2 structure (a box with two drawn sides) is in neither channel
    two = GameState.from_text("+---+\n\n+---+\n")
    assert not encode("chainloop6", two)[4:].any()


def test_score_channel_is_from_the_movers_view():
    board = textwrap.dedent(
        """
        +---+   +
        | 1 |
        +---+   +
        """
    )
    mover0 = encode("chainloop6", GameState.from_text(board, current_player=0))
    mover1 = encode("chainloop6", GameState.from_text(board, current_player=1))
    assert np.all(mover0[3] == -0.5) and np.all(mover1[3] == 0.5)
    az0 = encode("alphazero4", GameState.from_text(board, current_player=0))
    az1 = encode("alphazero4", GameState.from_text(board, current_player=1))
    assert cells(az0[2]) == {(1, 1): 1.0} and not az0[1].any()
    assert cells(az1[1]) == {(1, 1): 1.0} and not az1[2].any()
    assert cells(az0[0]) == {(0, 1): 1, (2, 1): 1, (1, 0): 1, (1, 2): 1}
    assert cells(az0[3]) == {(0, 0): 1, (0, 2): 1, (0, 4): 1, (2, 0): 1, (2, 2): 1, (2, 4): 1}


def test_edgequad_channels():
    s = GameState.from_text(CAPTURABLE)
    q4 = encode("edgequad4", s)
    assert q4[:, 0, 0].tolist() == [0, 1, 1, 1] and q4[:, 0, 1].tolist() == [0, 0, 0, 0]  # r, u, l, d
    q9 = encode("edgequad9", s)
    assert q9[4:, 0, 0].tolist() == [0, 0, 0, 1, 0] and q9[4:, 0, 1].tolist() == [1, 0, 0, 0, 0]
    q44 = encode("edgequad44", s)
    box0 = q44[:, 0, 0]
    assert box0[0] == 0 and box0[1 + 3] == 1 and box0[6 + 0] == 1  # r side: undrawn, own box 3, right box 0
    assert box0[11] == 1 and box0[11 + 1 + 4] == 1 and box0[11 + 6 + 3] == 1  # u: drawn, outside 4, own 3
    assert box0.sum() == 3 + 4 * 2  # three drawn bits + two one-hots per side
    box1 = q44[:, 0, 1]
    assert box1[22] == 0 and box1[22 + 1 + 3] == 1 and box1[22 + 6 + 0] == 1  # l side: left box 0 has 3


def test_chainloop64_one_structure_per_channel():
    s = GameState.from_text(LOOP4)
    obs = encode("chainloop64", s)
    assert cells(obs[4]) == {(2, 1): 1.0, (2, 3): 1.0, (1, 2): 1.0, (3, 2): 1.0}
    assert not obs[5:].any()  # every edge of the 2x2 board besides the loop is drawn
    s = GameState.new(5, 5)
    obs = encode("chainloop64", s)
    assert obs[4:].sum() == 60 and all(obs[c].sum() == 1 for c in range(4, 64))


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("board", [(3, 3), (2, 4), (4, 4)])
def test_encoders_commute_with_symmetries(name, board):
    rows, cols = board
    rng = random.Random(zlib.crc32(f"{name} {board}".encode()))
    syms = symmetries(rows, cols)
    assert len(syms) == (8 if rows == cols else 4)
    # the feature encoders search every position (dnb_env.features, slow in Python): fewer positions
    count = 3 if name.startswith("chainloop6_") else 15
    # the four-sacrifice search takes minutes in the Python reference early in a 4x4 game: past two thirds
    # (and the Python Nimstring search)
    first = (2 * rows * cols + rows + cols) * 2 // 3 if name in ("chainloop6_sac4", "chainloop6_nim", "chainloop6_nim38") else 0
    for _ in range(count):
        s = random_state(rng, rows, cols, rng.randrange(first, 2 * rows * cols + rows + cols))
        base = encode(name, s)
        for sym in syms:
            got = encode(name, transform_state(sym, s))
            want = transform_planes(sym, name, base)
            if name == "chainloop64":  # equal up to the order of equally large structures
                got = np.concatenate([got[:4], np.array(sorted(got[4:], key=lambda p: p.tobytes()))])
                want = np.concatenate([want[:4], np.array(sorted(want[4:], key=lambda p: p.tobytes()))])
            np.testing.assert_array_equal(got, want, err_msg=f"{name} {sym}")


def test_symmetry_maps_legal_masks_and_policies():
    rng = random.Random(4)
    for rows, cols in [(3, 3), (2, 5)]:
        for sym in symmetries(rows, cols):
            perm = action_permutation(sym, rows, cols)
            assert sorted(perm) == list(range(len(perm)))
            s = random_state(rng, rows, cols, 7)
            t = transform_state(sym, s)
            assert np.array_equal(t.legal_mask(), transform_policy(sym, s.legal_mask(), rows, cols))
            # replaying the mapped history gives the mapped state
            assert GameState.from_actions(rows, cols, t.history) == t


def test_extending_encoders_start_with_the_channels_of_the_one_they_extend():
    from dnb_env.observations import EXTENDS, extends

    rng = random.Random(7)
    states = [random_state(rng, 3, 3, rng.randrange(10, 24)) for _ in range(6)]
    for wide, narrow in EXTENDS.items():
        assert extends(wide, narrow) and not extends(narrow, wide)
        a, b = encode_batch(wide, states), encode_batch(narrow, states)
        np.testing.assert_array_equal(a[:, :b.shape[1]], b, err_msg=f"{wide} over {narrow}")
    assert extends("chainloop6_nim", "chainloop6") and not extends("chainloop6_nim", "chainloop6_lcr")


def test_chainloop6_nim_marks_the_moves_that_win_nimstring():
    from dnb_env.features import nimstring_move_wins

    rng = random.Random(8)
    seen = set()
    for _ in range(8):
        s = random_state(rng, 3, 3, rng.randrange(12, 22))
        if s.is_terminal():
            continue
        planes = encode("chainloop6_nim", s)
        wins = nimstring_move_wins(s)
        g = s.geometry
        assert planes[11].all() == (wins is not None)
        if wins is None:
            continue
        flat = planes[9].reshape(-1)
        assert [a for a in range(g.num_actions) if flat[g.action_flat[a]]] == [a for a in range(g.num_actions) if wins[a] == 1]
        assert planes[10].all() == (wins == 1).any() and planes[10].any() == planes[10].all()
        seen.add(bool(planes[10, 0, 0]))
    assert seen == {True, False}




def test_every_encoder_encodes_a_10x10_position():
    """Past the native engine's 9x9 every encoder still encodes (on the Python rules), in its shape: an opening
    (more safe moves than the searches take), a middle game whose safe phase ends beyond the exact solver's
    reach (the search features absent, their flags 0) and an end (Nimstring searched in Python)."""
    from dnb_env.analysis import MoveClass, move_classes, realistic_position

    opening, middle, end = (realistic_position("10x10", k, random.Random(k)) for k in (180, 116, 30))
    assert 0 < np.count_nonzero(move_classes(middle) == MoveClass.SAFE) <= 14  # the searches are tried there
    for name in ALL:
        assert encoder_record(name).sizes, f"{name}: the record says how its cost grows with the board"
        planes = encode_batch(name, [opening, middle, end])
        assert planes.shape == (3, *encoder_shape(name, 10, 10)) and planes.dtype == np.float32, name
        assert np.isfinite(planes).all(), name
    for name in ("chainloop6_safe", "chainloop6_sac2", "chainloop6_sac2_deep", "chainloop6_sac4", "chainloop6_nim"):
        assert not encode(name, middle)[6:].any(), name  # features and flags 0: no end of the safe phase in reach
    assert encode("chainloop6_nim", end)[11].all()  # Nimstring searched at 30 undrawn edges
