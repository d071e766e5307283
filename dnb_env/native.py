"""The optional C++ engine ``dnb_env._native``: batched rules and encoders over numpy arrays.

==========================  ===================================================================
what                        call
==========================  ===================================================================
is it built?                ``available()`` (False: no C++17 compiler at install time)
n empty games               ``NativeBoards(rows, cols, n)`` or ``new_boards("5x5", n)`` (1..12 rows, cols)
positions in bulk           ``to_native(states)`` / ``NativeBoards.from_arrays(R, C, edges, owners, mover)``
back to ``GameState``       ``states_from_native(boards)``
one move per board          ``boards.step(actions)`` -> ``[n]`` int8 boxes completed
queries                     ``legal_masks(out=None)`` ``[n, A]`` int8, ``current_player()`` ``[n]`` int8,
                            ``scores()`` ``[n, 2]`` int16, ``terminal()`` ``[n]`` bool,
                            ``edges()`` ``[n, W]`` uint64, ``owners()`` ``[n, 2, B]`` uint64,
                            ``num_drawn()`` ``[n]`` int16
observations                ``boards.encode(name, out=None)`` ``[n, C, 2R+1, 2C+1]`` float32 for
                            baseline4, chainloop6, chainloop64, alphazero4; ``encode_batch(name, states)``
random playouts             ``boards.random_playouts(seed, n=1)`` ``[num_boards, n]`` int16 final margins
==========================  ===================================================================

Rules, numbering and encoders are those of :mod:`dnb_env.core` and :mod:`dnb_env.observations` (the tests
check both engines against each other and against OpenSpiel's C++ ``dots_and_boxes``). Bitsets: bit ``a``
of the little-endian words ``edges[i]`` is edge ``a``; ``owners[i, p]`` holds player ``p``'s boxes (bit ``b``
= box ``r * C + c``).

Two builds of one engine. Boards of up to 9x9 boxes run in ``dnb_env._native``, whose records are compact
(``W = 3`` edge words and ``B = 2`` box words: a board is 64 bytes, a solver table entry 32); boards of 10x10
to 12x12 (at most 312 edges) run in ``dnb_env._native_wide``, the same C++ compiled with ``W = 5``, ``B = 3``
and 16-bit edge indices. :func:`module` gives the one for a board, and every function here takes it from
the states' or boards' size. Objects of one build do not mix with the other's (a ``SearchTree`` of 10x10
takes 10x10 boards).

``step`` checks the whole batch before any board moves: an illegal action (out of range, already drawn, or
played on a finished board) raises :class:`~dnb_env.core.IllegalActionError` (a ``ValueError``) naming the
board index and the action, and every board stays as it was. Arrays of the wrong dtype raise ``TypeError``
(no silent casts, except that ``actions`` and ``mover`` take any integer dtype); of the wrong shape,
``ValueError``.

Backend. The package runs its batched work (observation encoders, ...) on this engine when it is built,
and on the pure-Python reference otherwise. The choice is a context, not a module setting:
``with use_backend("python"):`` (or :func:`set_backend`, for the rest of the calling context) chooses;
where nothing was chosen, the environment variable ``DNB_BACKEND`` (``auto``, the default; ``native``;
``python``) is read when the work is done (not at import). A thread starts from ``DNB_BACKEND``
(``contextvars`` semantics; ``contextvars.copy_context().run`` hands a choice on). :func:`backend` says
which is in use. ``native`` when the extension is not built is an ``ImportError``, a value of
``DNB_BACKEND`` that is none of the three a ``ValueError`` (when the backend is first needed). Both
backends give bit-identical results (the tests run each against the other).

:class:`~dnb_env.core.GameState` itself stays a handful of Python integers on either backend: one move is
about 2.5 us in Python, while one call into the extension costs 0.3 us before it does anything and a
state's bitsets must be converted on the way in and out, so the native engine pays where many states are
handled in one call (batched stepping, encoders, search, the solver), not per move.

Without the extension ``available()`` is False and the other names raise ``ImportError`` saying so.

Version history: 0.1 (issue #7, first milestone) rules, batched stepping, four grid encoders, playouts.
0.2 backend selection; the encoders of dnb_env.observations run here when the backend is native.
0.3 ``LearnerGames``: the games of the Gymnasium envs (learner move, random opponent's replies, observation,
mask, reward in one call; see dnb_env.gym_env).
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import os
from typing import Sequence

import numpy as np

from dnb_env.core import GameState, geometry, parse_board

try:
    from dnb_env import _native
except ImportError as e:  # not built: no compiler at install time
    _native = None
    _IMPORT_ERROR: ImportError | None = e
else:
    _IMPORT_ERROR = None
try:
    from dnb_env import _native_wide
except ImportError:  # not built (or built without the wide records): boards stop at 9x9
    _native_wide = None

#: The encoders the C++ engine implements (its own list; the records of :data:`dnb_env.observations.ENCODERS`
#: marked ``native`` must name the same, bit-identical to the Python code). Empty when it is not built.
ENCODERS: tuple[str, ...] = tuple(_native.ENCODERS) if _native is not None else ()

__all__ = ["available", "backend", "set_backend", "use_backend", "module", "NativeBoards", "new_boards", "to_native", "states_from_native", "encode_batch", "MAX_SIZE", "COMPACT_SIZE", "ENCODERS"]

#: Largest number of box rows/columns of the compact build ``dnb_env._native`` (180 edges in 3 x 64 bits).
COMPACT_SIZE = 9
#: Largest number of box rows/columns the native engine takes: 12 (312 edges in 5 x 64 bits) with the wide
#: build, 9 without it.
MAX_SIZE = _native_wide.MAX_SIZE if _native is not None and _native_wide is not None else COMPACT_SIZE


def available() -> bool:
    """Whether the C++ extension ``dnb_env._native`` was built and imports."""
    return _native is not None


BACKENDS = ("auto", "native", "python")


def _choose(name: str, source: str) -> str:
    want = str(name).strip().lower()
    if want not in BACKENDS:
        raise ValueError(f"{source} must be one of {', '.join(BACKENDS)}, got {name!r}")
    if want == "native":
        _require()
    return want if want != "auto" else ("native" if available() else "python")


#: The backend chosen in the current context (None: none chosen, ``DNB_BACKEND`` decides).
_CHOSEN: contextvars.ContextVar[str | None] = contextvars.ContextVar("dnb_env_native_backend", default=None)


@functools.lru_cache(maxsize=8)
def _from_environment(value: str) -> str:
    return _choose(value, "the environment variable DNB_BACKEND")


def backend() -> str:
    """``"native"`` or ``"python"``: the engine behind the package's batched work right now: the one
    chosen in this context (:func:`use_backend`, :func:`set_backend`), else ``DNB_BACKEND`` as it is now."""
    chosen = _CHOSEN.get()
    return chosen if chosen is not None else _from_environment(os.environ.get("DNB_BACKEND", "auto"))


def set_backend(name: str) -> str:
    """Select the backend for the rest of the current context (thread or task): ``"native"``
    (ImportError if the extension is not built), ``"python"``, or ``"auto"`` (native when built). Returns
    the backend now in use."""
    chosen = _choose(name, "backend")
    _CHOSEN.set(chosen)
    return chosen


@contextlib.contextmanager
def use_backend(name: str):
    """The backend ``name`` for the length of a ``with`` block, the previous choice (or none) restored
    after."""
    before = _CHOSEN.get()
    chosen = set_backend(name)
    try:
        yield chosen
    finally:
        _CHOSEN.set(before)


def _require(rows: int = 1, cols: int = 1):
    if _native is None:
        raise ImportError(
            "the C++ extension dnb_env._native is not built (no C++17 compiler when the package was "
            f"installed?); reinstall with a compiler, e.g. `pip install -e .` ({_IMPORT_ERROR})"
        )
    if rows <= COMPACT_SIZE and cols <= COMPACT_SIZE:
        return _native
    if rows > MAX_SIZE or cols > MAX_SIZE:
        raise ValueError(f"the native engine takes boards up to {MAX_SIZE}x{MAX_SIZE}, got {rows}x{cols}")
    return _native_wide


def module(rows: int, cols: int):
    """The C++ extension for boards of ``rows`` x ``cols`` boxes: ``dnb_env._native`` up to 9x9,
    ``dnb_env._native_wide`` up to :data:`MAX_SIZE`; ImportError when it is not built, ValueError for a
    larger board."""
    return _require(rows, cols)


def handles(name: str | None, g) -> bool:
    """Whether the native backend is selected and does the work ``name`` (an encoder, or None for the
    board analysis of :mod:`dnb_env.analysis`) on board geometry ``g``."""
    return (backend() == "native" and (name is None or name in ENCODERS)
            and g.rows <= MAX_SIZE and g.cols <= MAX_SIZE)


def analysis(function: str, states: Sequence[GameState], *args):
    """``dnb_env._native.<function>(rows, cols, states, *args)`` for analysis kernels (``move_classes``,
    ``endgame_values``, ``capture_or_decline``, ``long_chain_counts``, ``initiatives``) on states of one
    board size, at most MAX_SIZE."""
    g = states[0].geometry
    return getattr(_require(g.rows, g.cols), function)(g.rows, g.cols, states, *args)


class _BoardsFactory:
    """``NativeBoards``: the ``Boards`` class of the build for the board asked for."""

    def __call__(self, rows: int, cols: int, n: int):
        return _require(rows, cols).Boards(rows, cols, n)

    def from_arrays(self, rows: int, cols: int, edges, owners, mover):
        return _require(rows, cols).Boards.from_arrays(rows, cols, edges, owners, mover)

    def __instancecheck__(self, obj) -> bool:
        return any(m is not None and isinstance(obj, m.Boards) for m in (_native, _native_wide))

    def __repr__(self) -> str:
        return "dnb_env.native.NativeBoards"


def __getattr__(name):
    if name == "NativeBoards":
        _require()
        return _BoardsFactory()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _words(values: Sequence[int], nbytes: int) -> np.ndarray:
    """Python integer bitmasks -> ``[len, nbytes // 8]`` uint64 little-endian words."""
    buf = b"".join([v.to_bytes(nbytes, "little") for v in values])
    return np.frombuffer(buf, dtype="<u8").reshape(len(values), nbytes // 8).astype(np.uint64)


def _one_board(states: Sequence[GameState], caller: str):
    """``(states as a list or tuple, their geometry)``; ValueError unless they are one or more states of
    one board size of at most MAX_SIZE x MAX_SIZE."""
    states = states if isinstance(states, (list, tuple)) else list(states)
    if not states:
        raise ValueError(f"{caller} needs at least one state (the board size comes from the states)")
    g = states[0].geometry
    if any(s.geometry is not g for s in states):
        raise ValueError(f"{caller} needs states of one board size")
    if g.rows > MAX_SIZE or g.cols > MAX_SIZE:
        raise ValueError(f"the native engine takes boards up to {MAX_SIZE}x{MAX_SIZE}, got {g.name}")
    return states, g


def to_native(states: Sequence[GameState]):
    """``NativeBoards`` holding ``states`` (all of one board size, at most MAX_SIZE), in order.

    The move histories are not carried over (a native board is its edges, owners and mover)."""
    _require()
    states, g = _one_board(states, "to_native")
    mod = _require(g.rows, g.cols)
    edges = _words([s.edges for s in states], 8 * mod.EDGE_WORDS)
    owners = _words([o for s in states for o in (s.owner0, s.owner1)], 8 * mod.BOX_WORDS)
    owners = owners.reshape(len(states), 2, mod.BOX_WORDS)
    mover = np.fromiter((s.current_player for s in states), dtype=np.int8, count=len(states))
    return mod.Boards.from_arrays(g.rows, g.cols, edges, owners, mover)


def _ints(words: np.ndarray) -> list[int]:
    """``[n, k]`` uint64 words -> n Python integers."""
    raw = np.ascontiguousarray(words, dtype="<u8").tobytes()
    step = words.shape[1] * 8
    return [int.from_bytes(raw[i: i + step], "little") for i in range(0, len(raw), step)]


def states_from_native(boards, histories: Sequence[Sequence[int]] | None = None) -> list[GameState]:
    """The positions of ``boards`` as :class:`GameState` objects.

    ``histories`` (one action sequence per board) is recorded as given; without it each state gets the
    synthetic history of :meth:`GameState.from_text` (its drawn edges in increasing order), which fixes the
    edges, not the move order."""
    g = geometry(boards.rows, boards.cols)
    n = len(boards)
    if histories is not None and len(histories) != n:
        raise ValueError(f"histories must have one entry per board ({n}), got {len(histories)}")
    edges = _ints(boards.edges())
    owners = _ints(boards.owners().reshape(2 * n, -1))
    movers = boards.current_player().tolist()
    out = []
    for i in range(n):
        e = edges[i]
        history = tuple(histories[i]) if histories is not None else tuple(a for a in g.all_actions if e >> a & 1)
        out.append(GameState._make(g, e, owners[2 * i], owners[2 * i + 1], movers[i], history))
    return out


def encode_batch(name: str, states: Sequence[GameState]) -> np.ndarray:
    """``[N, C, H, W]`` float32, equal to :func:`dnb_env.observations.encode_batch` for the native
    encoders (``ENCODERS``); ``ValueError`` for any other name."""
    if name not in ENCODERS:
        raise ValueError(f"the native engine has no encoder {name!r}; it has {', '.join(ENCODERS)}")
    states, g = _one_board(states, "encode_batch")
    return _require(g.rows, g.cols).encode_states(name, g.rows, g.cols, states)


def new_boards(board, n: int):
    """``NativeBoards`` of ``n`` empty games on ``board`` (``"5x5"`` or ``(5, 5)``)."""
    rows, cols = parse_board(board)
    return _require(rows, cols).Boards(rows, cols, n)
