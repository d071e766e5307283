"""Rules of Dots-and-Boxes: board geometry and the immutable :class:`GameState`.

This module knows nothing of Gymnasium, PettingZoo, OpenSpiel's Python layer or torch; the adapters in
this package are thin layers over it.

Actions use OpenSpiel's ``dots_and_boxes`` numbering on an ``R x C`` board (R rows and C columns of
boxes)::

    horizontal edge h(r, c) = r * C + c                     r in 0..R,   c in 0..C-1
    vertical edge   v(r, c) = (R + 1) * C + r * (C + 1) + c  r in 0..R-1, c in 0..C

so a 5x5 board has 60 actions. On the ``(2R+1) x (2C+1)`` grid, dot (r, c) sits at (2r, 2c), h(r, c) at
(2r, 2c+1), v(r, c) at (2r+1, 2c) and the centre of box (r, c) at (2r+1, 2c+1). Boxes are numbered
``r * C + c``.

Drawing the fourth side of a box scores it and the same player moves again (``current_player`` simply
does not change; there is no pass action). The game ends when every edge is drawn. Returns are +1/-1/0
for a win/loss/draw, or the final box margin with ``margin=True``.

A state is a handful of Python integers (bitmasks of drawn edges and of each player's boxes) over a
:class:`Geometry` whose lookup tables are built once per board size, so copying and applying moves is
cheap. ``apply`` returns a new state; searchers that want to avoid allocation can use the in-place
``play``/``undo`` pair of :class:`MutableState`.
"""

from __future__ import annotations

import bisect
import functools
import operator
import re
from typing import Iterable, Sequence

import numpy as np

__all__ = [
    "Geometry",
    "GameState",
    "MutableState",
    "IllegalActionError",
    "geometry",
    "parse_board",
    "MAX_SIZE",
    "DEFAULT_BOARD",
]

#: Largest number of box rows/columns accepted. Nothing in the rules limits it; the cap only keeps the
#: lookup tables and observation planes of a typo ("5x500") from exhausting memory.
MAX_SIZE = 32

#: The board played when none is given: the papers' 5x5 (``dnb train`` starts on its cpu preset's 3x3).
DEFAULT_BOARD = "5x5"

#: BoxesZero's middle game: its 5x5 test sets start at step 22 of the 60 edges, at steps
#: :data:`MIDGAME_STEPS` (Table 4); :attr:`Geometry.midgame_start` and :attr:`Geometry.midgame_steps` scale them.
MIDDLE_GAME = 22 / 60
MIDGAME_STEPS = (22, 24, 26, 28, 30)

_BOARD_RE = re.compile(r"^\s*([0-9]+)\s*[xX]\s*([0-9]+)\s*$", re.ASCII)  # ASCII digits only: not "３x３"


class IllegalActionError(ValueError):
    """An action that cannot be played in the given state; the state is left unchanged."""


def parse_board(board: "str | Sequence[int] | Geometry") -> tuple[int, int]:
    """``"5x5"``, ``(5, 5)`` or a :class:`Geometry` -> ``(rows, cols)`` of boxes, validated.

    Raises ``ValueError`` naming the accepted form for anything else ("5x", "0x3", "axb", ``(True, 2)``,
    ``(2.0, 2)``).
    """
    if isinstance(board, Geometry):
        return board.size
    if isinstance(board, str):
        m = _BOARD_RE.match(board)
        if not m:
            raise ValueError(
                f"malformed board name {board!r}: expected 'RxC' with R and C the numbers of box rows and "
                f"columns, 1..{MAX_SIZE}, e.g. '5x5' or '3x4'"
            )
        rows, cols = int(m.group(1)), int(m.group(2))
    else:
        try:
            rows, cols = board
            if isinstance(rows, bool) or isinstance(cols, bool):
                raise TypeError("a bool is not a board size")
            rows, cols = operator.index(rows), operator.index(cols)
        except (TypeError, ValueError):
            raise ValueError(f"board must be 'RxC' or a (rows, cols) pair of integers, got {board!r}") from None
    for name, v in (("rows", rows), ("cols", cols)):
        if not 1 <= v <= MAX_SIZE:
            raise ValueError(f"board {name} must be in 1..{MAX_SIZE} (board given as 'RxC', e.g. '5x5'), got {v}")
    return rows, cols


class Geometry:
    """Lookup tables of one ``rows x cols`` board; build through :func:`geometry` (cached).

    Attributes (A = num_actions, B = num_boxes):
        name: the board's name ``"RxC"`` (also ``str(g)``)
        rows, cols, num_h, num_actions, num_boxes, height (2R+1), width (2C+1)
        action_cell: ``[A]`` tuple of (y, x) grid coordinates of each edge
        cell_action: dict (y, x) -> action
        box_sides: ``[B]`` tuple of (top, bottom, left, right) actions of each box
        box_mask: ``[B]`` bitmask of the four sides of each box
        action_boxes: ``[A]`` tuple of the 1 or 2 boxes beside each edge
        box_neighbours: ``[B]`` tuple of ((edge, other box or -1 for outside), ...) for the 4 sides
        full: bitmask with every edge set

    Board-size-dependent defaults (one home, read by training, search and benchmarks): ``start_step``,
    ``margin_epsilon``, ``solver_zone(cap)``, ``midgame_start``, ``midgame_steps``, ``opening_range``.
    """

    __slots__ = (
        "name", "rows", "cols", "num_h", "num_actions", "num_boxes", "height", "width",
        "action_cell", "cell_action", "box_sides", "box_mask", "action_boxes", "box_neighbours",
        "full", "_completions", "all_actions", "action_flat", "box_flat", "_row_shifts", "_row_mask",
    )

    def __init__(self, rows: int, cols: int):
        R, C = rows, cols
        self.rows, self.cols = R, C
        self.name = f"{R}x{C}"
        self.num_h = (R + 1) * C
        self.num_actions = self.num_h + R * (C + 1)
        self.num_boxes = R * C
        self.height, self.width = 2 * R + 1, 2 * C + 1
        cells = []
        for a in range(self.num_actions):
            if a < self.num_h:
                r, c = divmod(a, C)
                cells.append((2 * r, 2 * c + 1))
            else:
                r, c = divmod(a - self.num_h, C + 1)
                cells.append((2 * r + 1, 2 * c))
        self.action_cell = tuple(cells)
        self.cell_action = {cell: a for a, cell in enumerate(cells)}
        self.action_flat = np.array([y * self.width + x for y, x in cells], dtype=np.intp)
        self.box_flat = np.array(
            [(2 * r + 1) * self.width + 2 * c + 1 for r in range(R) for c in range(C)], dtype=np.intp
        )
        sides, masks = [], []
        action_boxes: list[list[int]] = [[] for _ in range(self.num_actions)]
        for r in range(R):
            for c in range(C):
                b = r * C + c
                top, bottom = r * C + c, (r + 1) * C + c
                left = self.num_h + r * (C + 1) + c
                right = left + 1
                sides.append((top, bottom, left, right))
                masks.append((1 << top) | (1 << bottom) | (1 << left) | (1 << right))
                for e in (top, bottom, left, right):
                    action_boxes[e].append(b)
        self.box_sides = tuple(sides)
        self.box_mask = tuple(masks)
        self.action_boxes = tuple(tuple(bs) for bs in action_boxes)
        nbrs = []
        for b, (top, bottom, left, right) in enumerate(sides):
            row = []
            for e in (top, bottom, left, right):
                others = [o for o in self.action_boxes[e] if o != b]
                row.append((e, others[0] if others else -1))
            nbrs.append(tuple(row))
        self.box_neighbours = tuple(nbrs)
        self.full = (1 << self.num_actions) - 1
        # per action: ((box bit, box side mask), ...) for the completion test in apply/play
        self._completions = tuple(
            tuple((1 << b, masks[b]) for b in self.action_boxes[a]) for a in range(self.num_actions)
        )
        self.all_actions = tuple(range(self.num_actions))
        self._row_shifts = tuple((self.num_h + r * (C + 1), r * C) for r in range(R))
        self._row_mask = (1 << C) - 1

    def side_planes(self, edges: int) -> tuple[int, int, int, int]:
        """Box bitmasks (bit b = box b) of drawn (top, bottom, left, right) sides, computed word-parallel."""
        n = self.num_boxes
        boxes = (1 << n) - 1
        top = edges & boxes
        bottom = (edges >> self.cols) & boxes
        left = right = 0
        m = self._row_mask
        for src, dst in self._row_shifts:
            row = edges >> src
            left |= (row & m) << dst
            right |= ((row >> 1) & m) << dst
        return top, bottom, left, right

    def drawn_count_masks(self, edges: int) -> tuple[int, int]:
        """Box bitmasks of the boxes with exactly two and exactly three drawn sides."""
        t, b, l, r = self.side_planes(edges)
        # bit-sliced sum of four one-bit planes: s1 s0 = t + b, then add l + r
        a0, a1 = t ^ b, t & b
        c0, c1 = l ^ r, l & r
        s0 = a0 ^ c0
        carry = a0 & c0
        s1 = a1 ^ c1 ^ carry
        s2 = (a1 & c1) | (a1 & carry) | (c1 & carry)
        return s1 & ~s0 & ~s2, s1 & s0


    @property
    def size(self) -> tuple[int, int]:
        """``(rows, cols)`` of boxes, as :func:`parse_board` gives them."""
        return self.rows, self.cols

    # ------------------------------------------------------------------ board-size-dependent defaults
    # Every default that scales with the board lives here, so that callers ask the geometry rather than
    # re-deriving it from a board string (A = num_actions, B = num_boxes).

    @property
    def start_step(self) -> int:
        """Backward training's first searched move: 32/60 of the moves (Dotsformer's S = 32 on 5x5)."""
        return round(32 * self.num_actions / 60)

    @property
    def margin_epsilon(self) -> float:
        """Half a box in margin units (``0.5 / B``): the curriculum's rollback epsilon for margin values."""
        return 0.5 / self.num_boxes

    def solver_zone(self, cap: int, fraction: tuple[int, int] = (3, 5)) -> int:
        """The auto solver zone in undrawn edges: the last ``fraction`` of the game (default 60%), at most
        ``cap`` (see :meth:`auto_solver_zone`)."""
        return self.auto_solver_zone(self.num_actions, cap, fraction)

    @staticmethod
    def auto_solver_zone(num_actions: int, cap: int, fraction: tuple[int, int] = (3, 5)) -> int:
        """``min(cap, num_actions * p // q)`` for ``fraction = (p, q)``: the auto solver zone of a board of
        ``num_actions`` edges."""
        return min(cap, num_actions * fraction[0] // fraction[1])

    @property
    def midgame_start(self) -> int:
        """First move of the middle game: :data:`MIDDLE_GAME` of the moves (22 on 5x5, 9 on 3x3)."""
        return round(MIDDLE_GAME * self.num_actions)

    @property
    def midgame_steps(self) -> list[int]:
        """:data:`MIDGAME_STEPS` scaled from the 60 edges of 5x5 to this board (sorted, no repeats)."""
        a = self.num_actions
        return sorted({round(k * a / 60) for k in MIDGAME_STEPS})

    @property
    def opening_range(self) -> tuple[int, int]:
        """``(A // 6, A // 3)``: the auto range of random safe opening moves of the teacher's games."""
        return self.num_actions // 6, self.num_actions // 3

    def __repr__(self) -> str:
        return f"Geometry({self.name})"

    def __str__(self) -> str:
        return self.name

    def __reduce__(self):
        return (geometry, (self.rows, self.cols))

    def __deepcopy__(self, memo) -> "Geometry":
        return self

    def action_name(self, action: int) -> str:
        """``'h r c'`` or ``'v r c'`` (the notation of :meth:`parse_action`)."""
        if action < self.num_h:
            r, c = divmod(action, self.cols)
            return f"h {r} {c}"
        r, c = divmod(action - self.num_h, self.cols + 1)
        return f"v {r} {c}"

    def parse_action(self, text: str) -> int:
        """An action number (``"17"``) or ``"h r c"`` / ``"v r c"`` -> action; ``ValueError`` otherwise."""
        parts = text.replace(",", " ").split()
        try:
            if len(parts) == 1:
                a = int(parts[0])
                if 0 <= a < self.num_actions:
                    return a
            elif len(parts) == 3 and parts[0].lower() in ("h", "v"):
                r, c = int(parts[1]), int(parts[2])
                if parts[0].lower() == "h" and 0 <= r <= self.rows and 0 <= c < self.cols:
                    return r * self.cols + c
                if parts[0].lower() == "v" and 0 <= r < self.rows and 0 <= c <= self.cols:
                    return self.num_h + r * (self.cols + 1) + c
        except ValueError:
            pass
        raise ValueError(
            f"cannot read {text!r} as a move on {self.name}: give an action number "
            f"0..{self.num_actions - 1}, 'h r c' (r in 0..{self.rows}, c in 0..{self.cols - 1}) or "
            f"'v r c' (r in 0..{self.rows - 1}, c in 0..{self.cols})"
        )


@functools.lru_cache(maxsize=None)
def _geometry(rows: int, cols: int) -> Geometry:
    return Geometry(rows, cols)


@functools.lru_cache(maxsize=256)
def _named_geometry(board: str) -> Geometry:
    return _geometry(*parse_board(board))


def geometry(rows: "int | str | Sequence[int] | Geometry", cols: int | None = None) -> Geometry:
    """The cached :class:`Geometry` of a board: ``geometry(5, 5)``, ``geometry("5x5")``, ``geometry((5, 5))``
    or a :class:`Geometry` itself (a board name is parsed once: later calls with the same string are a cache
    lookup)."""
    if cols is None:
        if type(rows) is str:
            return _named_geometry(rows)
        if type(rows) is Geometry:
            return rows
    r, c = parse_board(rows if cols is None else (rows, cols))
    return _geometry(r, c)


def _check_action(state: "GameState | MutableState", action) -> int:
    """Validate ``action`` against ``state``; return it as a Python int or raise IllegalActionError."""
    if type(action) is not int:
        if isinstance(action, (bool, np.bool_)):
            raise IllegalActionError(f"action {action!r} is a bool, not an integer action number")
        try:
            action = operator.index(action)
        except TypeError:
            raise IllegalActionError(
                f"action {action!r} of type {type(action).__name__} is not an integer action number"
            ) from None
    g = state.geometry
    if not 0 <= action < g.num_actions:
        raise IllegalActionError(
            f"action {action} is out of range: a {g.name} board has actions 0..{g.num_actions - 1}"
        )
    if state.edges == g.full:
        raise IllegalActionError(f"action {action} played after the game ended")
    if state.edges >> action & 1:
        raise IllegalActionError(f"action {action} ({g.action_name(action)}) is already drawn")
    return action


class GameState:
    """An immutable Dots-and-Boxes position.

    Build with :meth:`new`, :meth:`from_actions`, :meth:`from_text` or :meth:`from_pyspiel`; play with
    :meth:`apply`, which returns a new state and raises :class:`IllegalActionError` (a ``ValueError``)
    for an illegal action, leaving this state as it was.

    Attributes:
        geometry: the board's :class:`Geometry`
        edges: bitmask of drawn edges (bit ``a`` = action ``a``)
        owners: (player 0's boxes, player 1's boxes) as bitmasks (bit ``b`` = box ``b``)
        current_player: 0 or 1, the player to move (unchanged after a move that completes a box)
        history: tuple of the actions played so far
    """

    __slots__ = ("geometry", "edges", "owner0", "owner1", "current_player", "history", "_legal")

    # ---------------------------------------------------------------- construction
    @classmethod
    def new(cls, rows: int | str, cols: int | None = None) -> "GameState":
        """The empty board: ``GameState.new(5, 5)`` or ``GameState.new("5x5")``."""
        g = geometry(rows, cols)
        return cls._make(g, 0, 0, 0, 0, (), g.all_actions)

    @classmethod
    def from_actions(cls, rows: int | str, cols: int | None = None, actions: Iterable[int] = ()) -> "GameState":
        """The state after ``actions`` from the empty board. ``from_actions("3x3", actions=[0, 5])`` or
        ``from_actions(3, 3, [0, 5])``."""
        if isinstance(rows, str) and cols is not None and not isinstance(cols, int):
            actions, cols = cols, None
        s = cls.new(rows, cols)
        for a in actions:
            s = s.apply(a)
        return s

    @classmethod
    def _make(cls, g, edges, owner0, owner1, player, history, legal=None) -> "GameState":
        s = object.__new__(cls)
        s.geometry = g
        s.edges = edges
        s.owner0 = owner0
        s.owner1 = owner1
        s.current_player = player
        s.history = history
        s._legal = legal
        return s

    @classmethod
    def from_text(cls, text: str, current_player: int | None = None) -> "GameState":
        """Read a board drawn as in ``str(state)`` (dots ``+``, lines ``---`` and ``|``, box owners ``0``/``1``).

        The status line ``str(state)`` prints under the drawing (``score 0:1 1:0  player 1 to move``, or
        ``score 0:2 1:2  game over, draw``) may be left out; when given it must match the drawing (scores,
        game over or not, winner) and it names the player to move. ``current_player`` must agree with it,
        and is the only source when the text names no mover (no status line, or a finished game); with
        neither, player 0 moves. So ``GameState.from_text(str(s)) == s`` for every unfinished state ``s``.
        Nothing else may follow the drawing.

        Owners must be given exactly for the boxes whose four sides are drawn. The history of such a
        state is synthetic (its drawn edges in increasing order): it fixes the edges, not the move order.
        Raises ``TypeError`` for a non-str ``text`` and ``ValueError`` for a drawing it cannot read.
        """
        if not isinstance(text, str):
            raise TypeError(f"from_text reads a board drawing as a str (see str(state)), got {type(text).__name__}")
        if current_player is not None and (current_player not in (0, 1) or isinstance(current_player, bool)):
            raise ValueError(f"current_player must be 0 or 1, got {current_player!r}")
        drawing, status, current_player = _split_status(text, current_player)
        drawing, g = _aligned_drawing(drawing)
        edges, owner0, owner1 = _read_drawing(drawing, g)
        _check_owners(g, edges, owner0, owner1)
        history = tuple(a for a in range(g.num_actions) if edges >> a & 1)
        state = cls._make(g, edges, owner0, owner1, current_player or 0, history)
        if status is not None:
            expected = render_text(state).splitlines()[-1]
            if status.split() != expected.split():
                raise ValueError(f"status line {status!r} does not match the drawing, which gives {expected!r}")
        return state

    # ---------------------------------------------------------------- queries
    @property
    def rows(self) -> int:
        return self.geometry.rows

    @property
    def cols(self) -> int:
        return self.geometry.cols

    @property
    def num_actions(self) -> int:
        return self.geometry.num_actions

    @property
    def owners(self) -> tuple[int, int]:
        return self.owner0, self.owner1

    @property
    def scores(self) -> tuple[int, int]:
        """Boxes claimed by (player 0, player 1)."""
        return self.owner0.bit_count(), self.owner1.bit_count()

    def legal_actions(self) -> list[int]:
        """Undrawn edges in increasing order (empty once the game is over)."""
        legal = self._legal
        if legal is None:
            e = self.edges
            legal = self._legal = tuple(a for a in self.geometry.all_actions if not e >> a & 1)
        return list(legal)

    def legal_mask(self) -> np.ndarray:
        """``[num_actions]`` int8 array, 1 on undrawn edges."""
        n = self.geometry.num_actions
        bits = np.unpackbits(
            np.frombuffer(self.edges.to_bytes((n + 7) // 8, "little"), dtype=np.uint8), bitorder="little"
        )[:n]
        return (1 - bits).astype(np.int8)

    def is_legal(self, action) -> bool:
        try:
            _check_action(self, action)
        except IllegalActionError:
            return False
        return True

    def is_terminal(self) -> bool:
        return self.edges == self.geometry.full

    def returns(self, margin: bool = False) -> tuple[float, float]:
        """(player 0, player 1): +1/-1/0 at the end (box margin with ``margin=True``); 0, 0 before."""
        if self.edges != self.geometry.full:
            return 0.0, 0.0
        d = self.owner0.bit_count() - self.owner1.bit_count()
        if not margin:
            d = (d > 0) - (d < 0)
        return float(d), float(-d)

    @property
    def winner(self) -> int | None:
        """0 or 1 once the game is over and won, else None (also for a draw)."""
        if self.edges != self.geometry.full:
            return None
        d = self.owner0.bit_count() - self.owner1.bit_count()
        return None if d == 0 else (0 if d > 0 else 1)

    def is_drawn(self, action: int) -> bool:
        return bool(self.edges >> action & 1)

    def box_owner(self, box: int) -> int | None:
        if self.owner0 >> box & 1:
            return 0
        if self.owner1 >> box & 1:
            return 1
        return None

    # ---------------------------------------------------------------- moves
    def apply(self, action) -> "GameState":
        """The state after ``action``; raises IllegalActionError (this state unchanged) if it is illegal."""
        g = self.geometry
        edges = self.edges
        if type(action) is not int or not 0 <= action < g.num_actions or edges >> action & 1 or edges == g.full:
            action = _check_action(self, action)  # raises for anything illegal; passes numpy ints
        edges |= 1 << action
        gained = 0
        for bit, mask in g._completions[action]:
            if edges & mask == mask:
                gained |= bit
        s = object.__new__(GameState)
        s.geometry = g
        s.edges = edges
        s.history = self.history + (action,)
        legal = self._legal
        if legal is not None:
            i = legal.index(action)
            legal = legal[:i] + legal[i + 1:]
        s._legal = legal
        if gained:
            s.current_player = self.current_player
            if self.current_player == 0:
                s.owner0, s.owner1 = self.owner0 | gained, self.owner1
            else:
                s.owner0, s.owner1 = self.owner0, self.owner1 | gained
        else:
            s.current_player = 1 - self.current_player
            s.owner0, s.owner1 = self.owner0, self.owner1
        return s

    def child(self, action) -> "GameState":
        """Alias of :meth:`apply` (OpenSpiel's name)."""
        return self.apply(action)

    def as_seen_by(self, player: int) -> "GameState":
        """The same position with ``current_player = player``: for observing it from the side of a player
        who is not to move (an opponent, or anyone once the game is over). Not a position to play on."""
        if player == self.current_player:
            return self
        return GameState._make(self.geometry, self.edges, self.owner0, self.owner1, player, self.history, self._legal)

    def __copy__(self) -> "GameState":
        return self  # immutable

    def __deepcopy__(self, memo) -> "GameState":
        return self

    def to_mutable(self) -> "MutableState":
        return MutableState(self)

    # ---------------------------------------------------------------- OpenSpiel
    @classmethod
    def from_pyspiel(cls, pyspiel_state) -> "GameState":
        """The same position as an OpenSpiel ``dots_and_boxes`` (or ``python_dots_and_boxes``) state."""
        params = pyspiel_state.get_game().get_parameters()
        return cls.from_actions(int(params["num_rows"]), int(params["num_cols"]), pyspiel_state.history())

    def to_pyspiel(self, utility_margin: bool = False, game_name: str = "dots_and_boxes"):
        """This position as a state of OpenSpiel's C++ ``dots_and_boxes`` game (replays the history)."""
        import pyspiel

        game = pyspiel.load_game(
            game_name, {"num_rows": self.rows, "num_cols": self.cols, "utility_margin": bool(utility_margin)}
        )
        st = game.new_initial_state()
        for a in self.history:
            st.apply_action(a)
        return st

    # ---------------------------------------------------------------- dunder
    def key(self) -> tuple:
        """Hashable identity of the position: (rows, cols, edges, owner0, owner1, current_player)."""
        g = self.geometry
        return (g.rows, g.cols, self.edges, self.owner0, self.owner1, self.current_player)

    def __eq__(self, other) -> bool:
        return isinstance(other, GameState) and self.key() == other.key()

    def __hash__(self) -> int:
        return hash(self.key())

    def __reduce__(self):
        return (_rebuild_state, (self.rows, self.cols, self.edges, self.owner0, self.owner1,
                                 self.current_player, self.history))

    def __repr__(self) -> str:
        return f"GameState({self.geometry.name}, history={list(self.history)})"

    def __str__(self) -> str:
        return render_text(self)


def _rebuild_state(rows, cols, edges, owner0, owner1, player, history):
    return GameState._make(geometry(rows, cols), edges, owner0, owner1, player, tuple(history))


def render_text(state: "GameState") -> str:
    """ASCII drawing of a state (the format :meth:`GameState.from_text` reads) plus scores and mover."""
    g = state.geometry
    R, C = g.rows, g.cols
    e = state.edges
    out = []
    for r in range(R + 1):
        out.append("+" + "+".join("---" if e >> (r * C + c) & 1 else "   " for c in range(C)) + "+")
        if r < R:
            row = []
            for c in range(C + 1):
                row.append("|" if e >> (g.num_h + r * (C + 1) + c) & 1 else " ")
                if c < C:
                    owner = state.box_owner(r * C + c)
                    row.append(f" {owner} " if owner is not None else "   ")
            out.append("".join(row).rstrip())
    out = [ln.rstrip() for ln in out]
    s0, s1 = state.scores
    if state.is_terminal():
        w = state.winner
        out.append(f"score 0:{s0} 1:{s1}  game over, " + ("draw" if w is None else f"player {w} wins"))
    else:
        out.append(f"score 0:{s0} 1:{s1}  player {state.current_player} to move")
    return "\n".join(out)


def _split_status(text: str, current_player: int | None) -> tuple[list[str], str | None, int | None]:
    """The lines of a drawing read by :meth:`GameState.from_text`, its status line (None if there is none)
    and the player to move (the status line's, which must agree with ``current_player``, else
    ``current_player``); ValueError for anything else after the drawing."""
    lines = text.strip("\n").splitlines()
    drawing = []
    for ln in lines:
        if not set(ln) <= set("+-| 01"):
            break  # the status line, or anything else after the drawing
        drawing.append(ln.rstrip())
    after = [ln.strip() for ln in lines[len(drawing):] if ln.strip()]
    status = after[0] if after else None
    if len(after) > 1 or (status is not None and not status.startswith("score ")):
        raise ValueError(
            f"cannot read {after[-1]!r} after the drawing: only the status line of str(state) "
            "('score 0:S0 1:S1  player P to move') may follow it"
        )
    mover = re.search(r"\bplayer ([01]) to move$", status or "")
    if mover:
        if current_player is not None and current_player != int(mover[1]):
            raise ValueError(f"current_player={current_player} disagrees with the status line {status!r}")
        current_player = int(mover[1])
    return drawing, status, current_player


def _aligned_drawing(drawing: list[str]) -> tuple[list[str], Geometry]:
    """A drawing's lines without their common indent and padded to the width of its rows of dots, with
    the geometry of its board; ValueError for a drawing of the wrong shape, misaligned or ragged."""
    while drawing and not drawing[-1].strip():
        drawing.pop()
    if len(drawing) < 3 or len(drawing) % 2 == 0 or "+" not in drawing[0]:
        raise ValueError(
            "a board drawing needs an odd number (>= 3) of lines, alternating rows of dots ('+') and rows "
            "of boxes, as printed by str(state)"
        )
    indent = min(len(ln) - len(ln.lstrip()) for ln in drawing[::2])
    if any(ln[:indent].strip() for ln in drawing):
        raise ValueError("a row of boxes starts left of the rows of dots: the drawing's lines are not aligned")
    drawing = [ln[indent:] for ln in drawing]
    rows = (len(drawing) - 1) // 2
    cols = drawing[0].count("+") - 1
    g = geometry(rows, cols)
    width = 4 * cols + 1
    for i, ln in enumerate(drawing):  # a ragged drawing is refused, not read as a smaller board
        if len(ln) > width:
            raise ValueError(f"line {i + 1} of the drawing, {ln!r}, is wider than its first row of dots "
                             f"({cols + 1} dots, {width} characters)")
        grid = [ch for j, ch in enumerate(ln) if j % 4 == 0]
        if i % 2 == 0 and (len(ln) != width or set(grid) != {"+"}):
            raise ValueError(f"row of dots {i // 2}, {ln!r}, does not have the {cols + 1} dots 4 characters "
                             f"apart of the first row: every row of dots of a drawing has the same dots")
        if i % 2 == 1 and not set(grid) <= {"|", " "}:
            raise ValueError(f"row of boxes {i // 2}, {ln!r}, has something other than '|' between its boxes")
    return [ln.ljust(width) for ln in drawing], g


def _read_drawing(drawing: list[str], g: Geometry) -> tuple[int, int, int]:
    """The edges and both players' boxes (bitmasks) of an aligned drawing; ValueError for a line or box
    mark it cannot read."""
    rows, cols = g.rows, g.cols
    edges = owner0 = owner1 = 0
    for r in range(rows + 1):
        ln = drawing[2 * r]
        for c in range(cols):
            seg = ln[4 * c + 1: 4 * c + 4]
            if seg == "---":
                edges |= 1 << (r * cols + c)
            elif seg.strip():
                raise ValueError(f"cannot read horizontal line {seg!r} at dot row {r}, column {c}")
    for r in range(rows):
        ln = drawing[2 * r + 1]
        for c in range(cols + 1):
            ch = ln[4 * c] if 4 * c < len(ln) else " "
            if ch == "|":
                edges |= 1 << (g.num_h + r * (cols + 1) + c)
        for c in range(cols):
            mark = ln[4 * c + 1: 4 * c + 4].strip()
            b = r * cols + c
            if mark == "0":
                owner0 |= 1 << b
            elif mark == "1":
                owner1 |= 1 << b
            elif mark:
                raise ValueError(f"cannot read box mark {mark!r} in box ({r}, {c})")
    return edges, owner0, owner1


def _check_owners(g: Geometry, edges: int, owner0: int, owner1: int) -> None:
    """ValueError unless exactly the boxes whose four sides are drawn have an owner."""
    cols = g.cols
    for b in range(g.num_boxes):
        complete = edges & g.box_mask[b] == g.box_mask[b]
        owned = (owner0 | owner1) >> b & 1
        if complete != bool(owned):
            raise ValueError(
                f"box ({b // cols}, {b % cols}) {'is complete but has no owner' if complete else 'has an owner but is not complete'}"
            )


class MutableState:
    """In-place ``play``/``undo`` over the same bitmasks as :class:`GameState`, for searchers.

    ``play(a)`` returns the bitmask of boxes the move completed (0 if none); ``undo()`` takes back the last
    move. The undo stack stores what each move changed, so undo is exact.
    """

    __slots__ = ("geometry", "edges", "owner0", "owner1", "current_player", "_stack", "_legal")

    def __init__(self, state: GameState):
        self.geometry = state.geometry
        self.edges = state.edges
        self.owner0, self.owner1 = state.owner0, state.owner1
        self.current_player = state.current_player
        self._stack: list[tuple[int, int, int]] = []
        self._legal = state.legal_actions()  # kept sorted: removed by play, re-inserted by undo

    def play(self, action: int) -> int:
        g = self.geometry
        edges = self.edges
        if type(action) is not int or not 0 <= action < g.num_actions or edges >> action & 1:
            action = _check_action(self, action)
        edges |= 1 << action
        self.edges = edges
        self._legal.remove(action)
        gained = 0
        for bit, mask in g._completions[action]:
            if edges & mask == mask:
                gained |= bit
        self._stack.append((action, gained, self.current_player))
        if gained:
            if self.current_player == 0:
                self.owner0 |= gained
            else:
                self.owner1 |= gained
        else:
            self.current_player ^= 1
        return gained

    def undo(self) -> None:
        if not self._stack:
            raise IndexError("undo with no move to take back")
        action, gained, player = self._stack.pop()
        self.edges &= ~(1 << action)
        bisect.insort(self._legal, action)
        if gained:
            if player == 0:
                self.owner0 &= ~gained
            else:
                self.owner1 &= ~gained
        self.current_player = player

    def legal_actions(self) -> list[int]:
        return list(self._legal)

    def random_playout(self, random) -> int:
        """Play uniformly random moves to the end, take them all back, and return the final box margin
        (player 0 minus player 1). ``random()`` returns floats in [0, 1) (``random.Random().random``)."""
        legal = self._legal
        played = 0
        while legal:
            self.play(legal[int(random() * len(legal))])
            played += 1
        margin = self.owner0.bit_count() - self.owner1.bit_count()
        for _ in range(played):
            self.undo()
        return margin

    def is_terminal(self) -> bool:
        return self.edges == self.geometry.full

    @property
    def margin(self) -> int:
        """Boxes of the player to move minus the opponent's."""
        d = self.owner0.bit_count() - self.owner1.bit_count()
        return d if self.current_player == 0 else -d

    def snapshot(self, history: tuple = ()) -> GameState:
        return GameState._make(self.geometry, self.edges, self.owner0, self.owner1, self.current_player, history)
