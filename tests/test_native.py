"""The C++ engine dnb_env._native: differential against GameState and OpenSpiel's C++ game, encoders equal
to the Python ones bit for bit, playouts, and bad input that raises and changes nothing."""

from __future__ import annotations

import copy
import random
import textwrap

import numpy as np
import pytest

from dnb_env import native
from dnb_env.analysis import realistic_move
from dnb_env.core import GameState, IllegalActionError, MutableState
from dnb_env.observations import encode_batch

pytestmark = pytest.mark.skipif(not native.available(), reason="the C++ extension is not built (no compiler?)")

SIZES = [(r, c) for r in range(1, 10) for c in range(1, 10)]
#: Boards of the wide build (dnb_env._native_wide): past 9x9 up to 12x12, square, long and thin.
WIDE = [(10, 10), (12, 12), (11, 3), (2, 12), (12, 1), (10, 9)] if native.MAX_SIZE >= 12 else []


def snapshot(boards):
    """Everything observable about a batch, to assert that a failed call changed nothing."""
    return [boards.edges(), boards.owners(), boards.current_player(), boards.scores(), boards.num_drawn()]


def assert_same(before, after):
    for x, y in zip(before, after):
        np.testing.assert_array_equal(x, y)


def played(rows, cols, rng, moves, realistic=False):
    s = GameState.new(rows, cols)
    for _ in range(min(moves, s.num_actions)):
        s = s.apply(realistic_move(s, rng) if realistic else rng.choice(s.legal_actions()))
    return s


# ---------------------------------------------------------------- rules
def test_differential_against_gamestate_on_every_size():
    """2,025 random games, 25 per size 1x1..9x9 stepped as one batch, and 6 per board of the wide build:
    masks, mover, scores, terminal, boxes gained and the full position (edges, owners) agree with GameState
    after every move."""
    rng = random.Random(20260707)
    games = 0
    for rows, cols in SIZES + WIDE:
        n = 25 if (rows, cols) in SIZES else 6
        boards = native.NativeBoards(rows, cols, n)
        states = [GameState.new(rows, cols) for _ in range(n)]
        mask = np.empty((n, states[0].num_actions), dtype=np.int8)
        while True:
            assert boards.legal_masks(mask) is mask
            np.testing.assert_array_equal(mask, np.stack([s.legal_mask() for s in states]))
            np.testing.assert_array_equal(boards.current_player(), [s.current_player for s in states])
            np.testing.assert_array_equal(boards.scores(), [s.scores for s in states])
            np.testing.assert_array_equal(boards.terminal(), [s.is_terminal() for s in states])
            assert native.states_from_native(boards) == states
            if states[0].is_terminal():  # every game on one board size lasts num_actions moves
                break
            actions = np.array([rng.choice(s.legal_actions()) for s in states])
            before = [sum(s.scores) for s in states]
            gained = boards.step(actions)
            states = [s.apply(int(a)) for s, a in zip(states, actions)]
            assert gained.dtype == np.int8
            assert gained.tolist() == [sum(s.scores) - b for s, b in zip(states, before)]
        assert all(s.is_terminal() for s in states)
        games += n
    assert games >= 2000


def test_differential_against_openspiel_cpp():
    """2,025 random games (25 per size 1x1..9x9) stepped as one batch against pyspiel's dots_and_boxes:
    legal masks, mover, terminal and margin returns after every move."""
    pyspiel = pytest.importorskip("pyspiel")
    rng = random.Random(7)
    games = 0
    for rows, cols in SIZES + WIDE:
        game = pyspiel.load_game("dots_and_boxes", {"num_rows": rows, "num_cols": cols, "utility_margin": True})
        n = 25 if (rows, cols) in SIZES else 3
        spiel = [game.new_initial_state() for _ in range(n)]
        boards = native.NativeBoards(rows, cols, n)
        while not spiel[0].is_terminal():
            np.testing.assert_array_equal(boards.legal_masks(), [ps.legal_actions_mask() for ps in spiel])
            np.testing.assert_array_equal(boards.current_player(), [ps.current_player() for ps in spiel])
            assert not boards.terminal().any()
            actions = [rng.choice(ps.legal_actions()) for ps in spiel]
            for ps, a in zip(spiel, actions):
                ps.apply_action(a)
            boards.step(np.array(actions))
        assert boards.terminal().all()
        s = boards.scores()
        assert (s[:, 0] - s[:, 1]).tolist() == [ps.returns()[0] for ps in spiel]
        games += len(spiel)
    assert games >= 2000


def test_loaded_positions_play_on_like_gamestate():
    """Mid-game positions loaded in bulk (to_native) and played on in lockstep stay equal to GameState."""
    rng = random.Random(11)
    for rows, cols in [(1, 1), (2, 3), (5, 5), (9, 9), (7, 2)] + WIDE[:3]:
        A = 2 * rows * cols + rows + cols
        start = rng.randrange(A)
        states = [played(rows, cols, rng, start, realistic=k % 2 == 0) for k in range(12)]
        boards = native.to_native(states)
        assert len(boards) == 12 and (boards.rows, boards.cols) == (rows, cols)
        assert native.states_from_native(boards) == states
        hist = native.states_from_native(boards, histories=[s.history for s in states])
        assert [s.history for s in hist] == [s.history for s in states]
        while not states[0].is_terminal():
            actions = np.array([rng.choice(s.legal_actions()) for s in states])
            boards.step(actions)
            states = [s.apply(int(a)) for s, a in zip(states, actions)]
            assert native.states_from_native(boards) == states
        assert boards.terminal().all()


def test_capture_keeps_the_turn_on_a_drawn_position():
    s = GameState.from_text(textwrap.dedent(
        """
        +---+---+
        |
        +---+---+
        """
    ), current_player=1)  # box (0, 0) has three sides, box (0, 1) two
    boards = native.to_native([s])
    gained = boards.step(np.array([s.geometry.parse_action("v 0 1")]))
    assert gained.tolist() == [1] and boards.current_player().tolist() == [1]
    assert boards.scores().tolist() == [[0, 1]] and not boards.terminal()[0]
    boards.step(np.array([s.geometry.parse_action("v 0 2")]))
    assert boards.scores().tolist() == [[0, 2]] and boards.terminal()[0]


def test_reset_and_copy():
    boards = native.NativeBoards(3, 3, 3)
    boards.step(np.array([0, 1, 2]))
    other = copy.deepcopy(boards)
    boards.reset(np.array([True, False, True]))
    assert boards.num_drawn().tolist() == [0, 1, 0] and boards.current_player().tolist() == [0, 1, 0]
    assert other.num_drawn().tolist() == [1, 1, 1]
    boards.reset()
    assert boards.num_drawn().tolist() == [0, 0, 0]
    assert native.new_boards("2x4", 2).num_actions == 22


# ---------------------------------------------------------------- encoders
@pytest.fixture(scope="module")
def positions():
    """40 positions per size, at random move counts, half of them from plausible (chain-making) play."""
    rng = random.Random(5)
    out = {}
    for rows, cols in [(1, 1), (1, 5), (2, 2), (3, 3), (3, 5), (5, 5), (6, 4), (9, 9)]:
        A = 2 * rows * cols + rows + cols
        out[rows, cols] = [played(rows, cols, rng, rng.randrange(A + 1), realistic=k % 2 == 0) for k in range(40)]
    return out


def test_the_engine_implements_the_encoders_the_table_marks_native():
    from dnb_env import _native
    from dnb_env.observations import ENCODERS, native_encoders

    assert _native.ENCODERS == native_encoders() == native.ENCODERS
    assert [name for name, record in ENCODERS.items() if record.native] == list(_native.ENCODERS)
    with pytest.raises(ValueError, match="it has " + ", ".join(native_encoders())):
        native.to_native([GameState.new(2, 2)]).encode("edgequad4")


@pytest.mark.parametrize("name", native.ENCODERS)
def test_encoders_equal_the_python_encoders(name, positions):
    for (rows, cols), states in positions.items():
        want = encode_batch(name, states)
        got = native.to_native(states).encode(name)
        assert got.dtype == np.float32 and got.shape == want.shape
        assert got.tobytes() == want.tobytes(), f"{name} {rows}x{cols}"
        assert native.encode_batch(name, states).tobytes() == want.tobytes()


def test_encode_into_out():
    states = [played(4, 4, random.Random(k), 20, realistic=True) for k in range(5)]
    out = np.full((5, 6, 9, 9), 7.0, dtype=np.float32)
    res = native.to_native(states).encode("chainloop6", out=out)
    assert res is out and np.array_equal(out, encode_batch("chainloop6", states))


# ---------------------------------------------------------------- playouts
def test_random_playouts():
    boards = native.NativeBoards(3, 3, 2)
    boards.step(np.array([0, 5]))
    before = snapshot(boards)
    m = boards.random_playouts(seed=5, n=300)
    assert m.shape == (2, 300) and m.dtype == np.int16
    assert_same(before, snapshot(boards))
    assert np.array_equal(m, boards.random_playouts(5, 300))
    assert not np.array_equal(m, boards.random_playouts(6, 300))
    assert (np.abs(m) <= 9).all() and (m % 2 == 1).all()  # all 9 boxes claimed: the margin is odd
    assert len(set(m[0].tolist())) > 3
    assert (native.NativeBoards(1, 1, 1).random_playouts(0, 50) == -1).all()  # 1x1: player 1 always wins


def test_random_playouts_match_python_in_distribution():
    root = GameState.new(2, 2)
    rng = random.Random(0)
    py = np.mean([MutableState(root).random_playout(rng.random) for _ in range(3000)])
    ours = native.NativeBoards(2, 2, 1).random_playouts(1, 20000).mean()
    assert abs(py - ours) < 0.2, (py, ours)


def test_playout_from_a_finished_or_forced_position():
    rng = random.Random(3)
    done = played(3, 2, rng, 100)
    forced = played(3, 2, rng, 16)  # one edge left
    boards = native.to_native([done, forced])
    m = boards.random_playouts(9, 5)
    assert (m[0] == done.returns(margin=True)[0]).all()
    assert (m[1] == forced.apply(forced.legal_actions()[0]).returns(margin=True)[0]).all()


# ---------------------------------------------------------------- bad input
def test_illegal_actions_raise_naming_the_board_and_change_nothing():
    boards = native.NativeBoards(5, 5, 4)
    boards.step(np.array([0, 1, 2, 3]))
    before = snapshot(boards)
    cases = [
        ([5, 6, 2, 7], r"board 2: action 2 \(h 0 2\) is already drawn; no board was stepped"),
        ([5, 60, 6, 7], r"board 1: action 60 is out of range: a 5x5 board has actions 0\.\.59"),
        ([-1, 5, 6, 7], r"board 0: action -1 is out of range"),
    ]
    for actions, msg in cases:
        with pytest.raises(IllegalActionError, match=msg):
            boards.step(np.array(actions))
        assert_same(before, snapshot(boards))
    one = native.NativeBoards(1, 1, 2)
    for a in range(4):
        one.step(np.array([a, a]))
    with pytest.raises(ValueError, match="board 0: action 0 played after the game ended"):
        one.step(np.array([0, 0]))


def test_wrong_arrays_raise_clear_errors_and_change_nothing():
    boards = native.NativeBoards(2, 2, 3)
    before = snapshot(boards)
    with pytest.raises(TypeError, match="actions must be an array of integers, got dtype float64"):
        boards.step(np.array([0.0, 1.0, 2.0]))
    with pytest.raises(TypeError, match="dtype bool"):
        boards.step(np.array([True, False, True]))
    with pytest.raises(ValueError, match=r"actions must have shape \(3,\), got \(2,\)"):
        boards.step(np.array([0, 1]))
    with pytest.raises(ValueError, match=r"shape \(3,\), got \(1, 3\)"):
        boards.step(np.array([[0, 1, 2]]))
    assert_same(before, snapshot(boards))
    boards.step([0, 1, np.int32(2)])  # a list of integers is fine, any integer dtype too
    boards.step(np.array([3, 4, 5], dtype=np.uint8))
    with pytest.raises(TypeError, match="out must have dtype int8, got int32"):
        boards.legal_masks(np.zeros((3, 12), dtype=np.int32))
    with pytest.raises(ValueError, match=r"out must have shape \(3, 12\)"):
        boards.legal_masks(np.zeros((3, 13), dtype=np.int8))
    with pytest.raises(ValueError, match="C-contiguous"):
        boards.legal_masks(np.zeros((3, 24), dtype=np.int8)[:, ::2])
    ro = np.zeros((3, 12), dtype=np.int8)
    ro.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        boards.legal_masks(ro)
    with pytest.raises(TypeError, match="float32"):
        boards.encode("chainloop6", out=np.zeros((3, 6, 5, 5)))
    with pytest.raises(ValueError, match="no encoder 'edgequad4'"):
        boards.encode("edgequad4")
    with pytest.raises(ValueError, match="no encoder"):
        native.encode_batch("chainloop7", [GameState.new(2, 2)])
    with pytest.raises(TypeError, match="which must have dtype bool"):
        boards.reset(np.array([1, 0, 1]))


@pytest.mark.parametrize("rows, cols, n", [(0, 3, 1), (3, 0, 1), (13, 2, 1), (2, 13, 1), (-1, 2, 1), (3, 3, -1)])
def test_bad_board_sizes(rows, cols, n):
    with pytest.raises(ValueError, match=r"1\.\.9|up to 12x12|>= 0"):
        native.NativeBoards(rows, cols, n)


@pytest.mark.skipif(not WIDE, reason="the wide build dnb_env._native_wide is not built")
def test_each_build_takes_its_boards_and_module_chooses():
    from dnb_env import _native, _native_wide

    assert (_native.MAX_SIZE, _native.EDGE_WORDS, _native.BOX_WORDS) == (9, 3, 2)
    assert (_native_wide.MAX_SIZE, _native_wide.EDGE_WORDS, _native_wide.BOX_WORDS) == (12, 5, 3)
    with pytest.raises(ValueError, match=r"1\.\.9 rows"):
        _native.Boards(10, 2, 1)
    with pytest.raises(ValueError, match=r"1\.\.12 rows"):
        _native_wide.Boards(13, 2, 1)
    assert native.module(9, 9) is _native and native.module(9, 10) is _native_wide
    assert native.module(12, 1) is _native_wide
    with pytest.raises(ValueError, match="up to 12x12, got 13x1"):
        native.module(13, 1)
    assert isinstance(native.NativeBoards(10, 10, 1), native.NativeBoards)
    assert isinstance(native.NativeBoards(3, 3, 1), native.NativeBoards)
    assert native.to_native([GameState.new(10, 11)]).edges().shape == (1, 5)


@pytest.mark.skipif(not WIDE, reason="the wide build dnb_env._native_wide is not built")
def test_the_wide_build_equals_the_compact_one_on_small_boards():
    """The same C++ in wider records: on 5x5 and 9x9 its rules, encoders and analysis give what the compact
    build gives, bit for bit."""
    from dnb_env import _native, _native_wide

    rng = random.Random(3)
    for rows, cols in [(5, 5), (9, 9), (3, 7)]:
        states = [played(rows, cols, rng, rng.randrange(2 * rows * (cols + 1)), realistic=True) for _ in range(10)]
        compact = native.to_native(states)
        e, o = compact.edges(), compact.owners()
        wide_e = np.zeros((len(states), 5), np.uint64)
        wide_o = np.zeros((len(states), 2, 3), np.uint64)
        wide_e[:, :3], wide_o[:, :, :2] = e, o
        wide = _native_wide.Boards.from_arrays(rows, cols, wide_e, wide_o, compact.current_player())
        for name in native.ENCODERS:
            assert wide.encode(name).tobytes() == compact.encode(name).tobytes(), name
        for fn in ("move_classes", "long_chain_counts"):
            np.testing.assert_array_equal(getattr(_native_wide, fn)(rows, cols, states), getattr(_native, fn)(rows, cols, states))
        np.testing.assert_array_equal(wide.random_playouts(9, 3), compact.random_playouts(9, 3))
        for _ in range(6):
            live = ~compact.terminal()
            if not live.all():
                break
            actions = np.array([rng.choice(st.legal_actions()) for st in native.states_from_native(compact)])
            assert wide.step(actions).tolist() == compact.step(actions).tolist()
            np.testing.assert_array_equal(wide.edges()[:, :3], compact.edges())
            np.testing.assert_array_equal(wide.scores(), compact.scores())


def test_from_arrays_rejects_impossible_positions():
    s = played(2, 2, random.Random(1), 12)  # finished: every box owned
    good = native.to_native([GameState.new(2, 2), s])
    edges, owners, mover = good.edges(), good.owners(), good.current_player()
    native.NativeBoards.from_arrays(2, 2, edges, owners, mover)

    def bad(match, exc=ValueError, e=None, o=None, m=None):
        with pytest.raises(exc, match=match):
            native.NativeBoards.from_arrays(2, 2, edges if e is None else e, owners if o is None else o,
                                            mover if m is None else m)

    native.NativeBoards.from_arrays(2, 2, edges.astype(np.ulonglong), owners, mover)  # the same dtype
    bad("edges must have dtype uint64, got int64", TypeError, e=edges.astype(np.int64))
    bad("owners must have dtype uint64, got >u8", TypeError, o=owners.astype(">u8"))
    bad(r"owners must have shape \(2, 2, 2\)", o=owners[:, 0])
    bad("mover must be an array of integers", TypeError, m=np.array([0.0, 1.0]))
    e = edges.copy()
    e[0, 0] |= np.uint64(1 << 12)
    bad("board 0: edges has bits set beyond the 12 edges of a 2x2 board", e=e)
    o = owners.copy()
    o[1] = 0
    bad(r"board 1: box \(0, 0\) is complete but has no owner", o=o)
    o = owners.copy()
    o[0, 0, 0] = 1
    bad(r"board 0: box \(0, 0\) has an owner but is not complete", o=o)
    o = owners.copy()
    o[1, :, 0] = 1
    bad("board 1: a box is owned by both players", o=o)
    bad("board 0: mover must be 0 or 1, got 2", m=np.array([2, 0]))
    with pytest.raises(ValueError, match=f"up to {native.MAX_SIZE}x{native.MAX_SIZE}"):
        native.to_native([GameState.new(native.MAX_SIZE + 1, 3)])
    with pytest.raises(ValueError, match="one board size"):
        native.to_native([GameState.new(2, 2), GameState.new(2, 3)])


def test_without_the_extension_the_wrapper_says_so(monkeypatch):
    monkeypatch.setattr(native, "_native", None)
    assert not native.available()
    with pytest.raises(ImportError, match="not built"):
        native.NativeBoards
    with pytest.raises(ImportError, match="not built"):
        native.to_native([GameState.new(2, 2)])


# ---------------------------------------------------------------- backend selection
def test_backend_selection_and_errors(monkeypatch):
    import subprocess
    import sys

    assert native.backend() == "native"  # auto picks the built engine
    with native.use_backend("python"):
        assert native.backend() == "python"
        assert not native.handles("chainloop6", GameState.new(3, 3).geometry)
    assert native.backend() == "native" and native.handles("chainloop6", GameState.new(3, 3).geometry)
    assert not native.handles("edgequad9", GameState.new(3, 3).geometry)  # not native: Python
    with pytest.raises(ValueError, match="backend must be one of auto, native, python"):
        native.set_backend("fast")
    assert native.backend() == "native"
    code = "from dnb_env import native; print(native.backend())"
    env = {k: v for k, v in __import__("os").environ.items()}
    for value, want in (("python", "python"), ("auto", "native"), ("native", "native")):
        env["DNB_BACKEND"] = value
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
        assert out.stdout.strip() == want, out.stderr
    env["DNB_BACKEND"] = "gpu"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.returncode != 0 and "DNB_BACKEND must be one of auto, native, python, got 'gpu'" in out.stderr


def test_backend_is_read_when_used_and_chosen_per_context(monkeypatch):
    """No backend is fixed at import: DNB_BACKEND is read when the work is done, a use_backend block wins
    over it, and a new thread starts from DNB_BACKEND, not from another thread's choice."""
    import threading

    monkeypatch.setenv("DNB_BACKEND", "python")
    assert native.backend() == "python" and not native.handles("chainloop6", GameState.new(3, 3).geometry)
    with native.use_backend("native"):
        assert native.backend() == "native"
        seen = []
        t = threading.Thread(target=lambda: seen.append(native.backend()))
        t.start(), t.join()
        assert seen == ["python"]
    monkeypatch.setenv("DNB_BACKEND", "auto")
    assert native.backend() == "native"
    monkeypatch.setenv("DNB_BACKEND", "gpu")
    with pytest.raises(ValueError, match="DNB_BACKEND must be one of"):
        native.backend()
    with native.use_backend("python"):  # an explicit choice does not read the variable
        assert native.backend() == "python"

def test_encode_states_reads_gamestates_of_every_size():
    rng = random.Random(5)
    for rows, cols in [(1, 1), (2, 7), (5, 5), (6, 6), (9, 9), (8, 3)] + WIDE[:2]:  # 6x6 and up: edges beyond 64 bits
        states = [played(rows, cols, rng, rng.randrange(2 * rows * (cols + 1))) for _ in range(6)]
        for name in native.ENCODERS:
            with native.use_backend("python"):
                want = encode_batch(name, states)
            np.testing.assert_array_equal(native.encode_batch(name, states), want)


# ---------------------------------------------------------------- analysis
def _analysis_of(s):
    from dnb_env import analysis as an

    legal = s.legal_actions()
    return (an.move_classes(s).tolist(), an.endgame_value(s), an.is_simple_endgame(s),
            an.capture_or_decline_moves(s), an.long_chain_count(s),
            [an.initiative_label(s, a) for a in legal[:6]])


def test_analysis_equals_the_python_reference_on_every_size():
    rng = random.Random(11)
    n = 0
    for rows, cols in SIZES[::4] + [(3, 3), (5, 5), (9, 9)] + WIDE[:2]:
        for k in range(12):
            realistic = k % 2 == 0
            s = played(rows, cols, rng, rng.randrange(2 * rows * (cols + 1) + 1), realistic=realistic)
            if s.is_terminal():
                continue
            with native.use_backend("python"):
                want = _analysis_of(s)
            assert _analysis_of(s) == want, (rows, cols, s.history)
            n += 1
    assert n > 150


def test_batched_analysis_on_boards():
    from dnb_env import analysis as an

    rng = random.Random(2)
    states = [played(4, 5, rng, rng.randrange(30, 49), realistic=True) for _ in range(40)]
    boards = native.to_native(states)
    with native.use_backend("python"):
        np.testing.assert_array_equal(boards.move_classes(), np.stack([an.move_classes(s) for s in states]))
        values, simple = boards.endgame_values()
        want = [an.endgame_value(s) for s in states]
        assert [int(v) if ok else None for v, ok in zip(values, simple)] == want and any(simple)
        masks, offered = boards.capture_or_decline()
        assert [np.flatnonzero(m).tolist() if o else None for m, o in zip(masks, offered)] == \
            [an.capture_or_decline_moves(s) for s in states]
        assert boards.long_chain_counts().tolist() == [an.long_chain_count(s) for s in states]
        actions = np.array([s.legal_actions()[0] for s in states])
        assert boards.initiatives(actions).tolist() == [an.initiative_label(s, int(a)) for s, a in zip(states, actions)]
    drawn = np.array([s.history[0] for s in states])
    with pytest.raises(ValueError, match="legal actions: board 0"):
        boards.initiatives(drawn)
