"""Board structure: valences, chains and loops, move classes, initiative labels, simple-endgame values.

Terms (Berlekamp's, as used by the BoxesZero and Dotsformer papers):

* **valence** of a box = its number of undrawn sides (0 = claimed). A box of valence 1 is
  **capturable**; valence >= 3 makes a **joint**.
* **components**: the boxes of valence 1 or 2 joined through their shared undrawn sides form paths
  (**chains**) and cycles (**loops**). A component is **opened** when one of its boxes is capturable
  (someone has drawn a line inside it); an opened loop shows as a chain whose two end boxes are
  capturable. A chain's ends lead to the border or to a joint.
* **chain-loop structures** (Dotsformer section 4.1): undrawn *edges* linked when they are the two
  undrawn sides of one box with exactly two drawn sides; each connected group of undrawn edges is a
  structure and its **count** is its number of edges. These feed the ChainLoop observation channels.
* **simple endgame**: every unclaimed box has valence 2, so the board is a set of isolated chains (both
  ends on the border) and loops, and every move opens one of them. Its value follows the
  opener/controller recursion of ``DESIGN.md``; :func:`endgame_value` returns it from the mover's side.

Move classes follow Dotsformer Definition 3 with the priority forbidden > scoring > conceding > safe;
initiative labels follow its Definition 2.

With the native backend (:mod:`dnb_env.native`, boards up to 12x12) ``move_classes``, ``endgame_value``,
``is_simple_endgame``, ``capture_or_decline_moves``, ``long_chain_count`` and ``initiative_label`` run in
C++ (``dnb_env/csrc/analysis.hpp``); the code here is the reference they are tested against.
"""

from __future__ import annotations

import enum
import functools
from dataclasses import dataclass

import numpy as np

from dnb_env import native
from dnb_env.core import GameState, Geometry

__all__ = [
    "realistic_position",
    "double_deal_moves",
    "capture_or_decline_moves",
    "MoveClass",
    "Initiative",
    "Component",
    "box_valences",
    "capturable_boxes",
    "joints",
    "components",
    "long_chain_count",
    "chain_loop_structures",
    "structure_masks",
    "move_class",
    "move_classes",
    "move_class_grid",
    "safe_moves",
    "scoring_moves",
    "initiative_label",
    "is_simple_endgame",
    "endgame_value",
    "endgame_move",
    "simple_endgame_value",
    "realistic_move",
]


class MoveClass(enum.IntEnum):
    """Dotsformer Definition 3 (four mutually exclusive classes)."""

    FORBIDDEN = 0  #: not an edge (dot, box centre) or an edge already drawn
    CONCEDING = 1  #: gives a neighbouring box its third side
    SAFE = 2  #: leaves every neighbouring box with at most two drawn sides
    SCORING = 3  #: completes a box


class Initiative(enum.IntEnum):
    """Dotsformer Definition 2, label of a (state, chosen action) pair."""

    CAPTURE = 0  #: a box could be completed and the action completes one
    SACRIFICE = 1  #: a box could be completed and the action does not
    NEUTRAL = 2  #: no box could be completed


@dataclass(frozen=True)
class Component:
    """A chain or loop of boxes of valence 1 or 2.

    Attributes:
        kind: ``"chain"`` or ``"loop"``
        boxes: box numbers in path order (for a loop, cyclic order)
        opened: True when a box of it is capturable (valence 1)
        ends: for a chain, the undrawn edges leading out of its two end boxes, with what they lead to
            (``(edge, box)``, box -1 for the border); empty for a loop
    """

    kind: str
    boxes: tuple[int, ...]
    opened: bool
    ends: tuple[tuple[int, int], ...] = ()

    @property
    def length(self) -> int:
        return len(self.boxes)


# ---------------------------------------------------------------- valences and boxes
def box_valences(state: GameState) -> list[int]:
    """``[num_boxes]`` undrawn sides per box (0 = claimed)."""
    e = state.edges
    return [4 - (e & m).bit_count() for m in state.geometry.box_mask]


def capturable_boxes(state: GameState) -> list[int]:
    return [b for b, v in enumerate(box_valences(state)) if v == 1]


def joints(state: GameState) -> list[int]:
    return [b for b, v in enumerate(box_valences(state)) if v >= 3]


def _undrawn_sides(g: Geometry, edges: int, box: int) -> list[tuple[int, int]]:
    return [(e, o) for e, o in g.box_neighbours[box] if not edges >> e & 1]


def components(state: GameState) -> list[Component]:
    """Chains and loops of boxes of valence 1 or 2 (see the module docstring), in order of first box."""
    g = state.geometry
    edges = state.edges
    val = box_valences(state)
    member = [v in (1, 2) for v in val]
    seen = [False] * g.num_boxes
    out = []
    for start in range(g.num_boxes):
        if not member[start] or seen[start]:
            continue
        # walk to one end of the path (or around the cycle)
        prev, cur = -2, start
        is_loop = False
        while True:
            nxt = [o for e, o in _undrawn_sides(g, edges, cur) if o >= 0 and member[o] and o != prev]
            if not nxt:
                break
            prev, cur = cur, nxt[0]
            if cur == start:
                is_loop = True
                break
        # now walk from that end collecting boxes
        order = [cur]
        seen[cur] = True
        prev = -2
        while True:
            nxt = [o for e, o in _undrawn_sides(g, edges, order[-1])
                   if o >= 0 and member[o] and o != prev and not seen[o]]
            if not nxt:
                break
            prev = order[-1]
            order.append(nxt[0])
            seen[nxt[0]] = True
        opened = any(val[b] == 1 for b in order)
        if is_loop:
            out.append(Component("loop", tuple(order), opened))
        else:
            inner = set(order)
            ends = tuple(sorted({(e, o) for b in (order[0], order[-1])
                                 for e, o in _undrawn_sides(g, edges, b) if o not in inner}))
            out.append(Component("chain", tuple(order), opened, ends))
    return out


def long_chain_count(state: GameState) -> int:
    """Unopened chains of three or more boxes (the quantity of the long chain rule; loops excluded)."""
    if native.handles(None, state.geometry):
        return int(native.analysis("long_chain_counts", (state,))[0])
    return sum(1 for c in components(state) if c.kind == "chain" and not c.opened and c.length >= 3)


# ---------------------------------------------------------------- chain-loop structures (edges)
def structure_masks(g: Geometry, edges: int) -> tuple[list[int], int]:
    """Chain-Loop Detection on bitmasks: (masks of the structures with two or more edges, mask of the
    sides of boxes with exactly three drawn sides). Undrawn edges in no returned mask are count-1
    structures."""
    two, three_boxes = g.drawn_count_masks(edges)
    masks = g.box_mask
    groups: list[int] = []
    while two:
        low = two & -two
        two ^= low
        merged = masks[low.bit_length() - 1] & ~edges
        keep = []
        for gm in groups:
            if gm & merged:
                merged |= gm
            else:
                keep.append(gm)
        keep.append(merged)
        groups = keep
    three = 0
    while three_boxes:
        low = three_boxes & -three_boxes
        three_boxes ^= low
        three |= masks[low.bit_length() - 1]
    return groups, three


def chain_loop_structures(state: GameState) -> list[tuple[int, ...]]:
    """Dotsformer's Chain-Loop Detection: groups of linked undrawn edges, each sorted, in order of first edge.

    Two undrawn edges are linked when they are the two undrawn sides of a box with exactly two drawn
    sides. Every undrawn edge belongs to exactly one structure; the count of a structure is its length.
    """
    g = state.geometry
    edges = state.edges
    groups, _ = structure_masks(g, edges)
    paired = 0
    for gm in groups:
        paired |= gm
    out = [tuple(a for a in g.all_actions if gm >> a & 1) for gm in groups]
    out += [(a,) for a in g.all_actions if not (edges | paired) >> a & 1]
    out.sort()
    return out


# ---------------------------------------------------------------- move classes and initiative
def move_class(state: GameState, action: int) -> MoveClass:
    """Class of one action (Dotsformer Definition 3; priority forbidden > scoring > conceding > safe)."""
    g = state.geometry
    edges = state.edges
    if not 0 <= action < g.num_actions or edges >> action & 1:
        return MoveClass.FORBIDDEN
    drawn = [(edges & g.box_mask[b]).bit_count() for b in g.action_boxes[action]]
    if 3 in drawn:
        return MoveClass.SCORING
    if 2 in drawn:
        return MoveClass.CONCEDING
    return MoveClass.SAFE


def move_classes(state: GameState) -> np.ndarray:
    """``[num_actions]`` int8 array of :class:`MoveClass` values, one per action."""
    g = state.geometry
    if native.handles(None, g):
        return native.analysis("move_classes", (state,))[0]
    edges = state.edges
    drawn = [(edges & m).bit_count() for m in g.box_mask]
    out = np.empty(g.num_actions, dtype=np.int8)
    for a, boxes in enumerate(g.action_boxes):
        if edges >> a & 1:
            out[a] = MoveClass.FORBIDDEN
            continue
        best = MoveClass.SAFE
        for b in boxes:
            d = drawn[b]
            if d == 3:
                best = MoveClass.SCORING
                break
            if d == 2:
                best = MoveClass.CONCEDING
        out[a] = best
    return out


def move_class_grid(state: GameState) -> np.ndarray:
    """``[2R+1, 2C+1]`` int8 grid of :class:`MoveClass` values; dots and box centres are FORBIDDEN."""
    g = state.geometry
    grid = np.zeros((g.height, g.width), dtype=np.int8)
    grid.flat[g.action_flat] = move_classes(state)
    return grid


def safe_moves(state: GameState) -> list[int]:
    return [int(a) for a in np.flatnonzero(move_classes(state) == MoveClass.SAFE)]


def scoring_moves(state: GameState) -> list[int]:
    return [int(a) for a in np.flatnonzero(move_classes(state) == MoveClass.SCORING)]


def initiative_label(state: GameState, action: int) -> Initiative:
    """Dotsformer Definition 2 for the pair (state, action); ``action`` must be legal."""
    if state.edges >> action & 1 or not 0 <= action < state.num_actions:
        raise ValueError(f"initiative_label needs a legal action, got {action}")
    g = state.geometry
    if native.handles(None, g):
        return Initiative(int(native.analysis("initiatives", (state,), np.array([action]))[0]))
    edges = state.edges
    can_score = any((edges & m).bit_count() == 3 for m in g.box_mask)
    if not can_score:
        return Initiative.NEUTRAL
    completes = any((edges & g.box_mask[b]).bit_count() == 3 for b in g.action_boxes[action])
    return Initiative.CAPTURE if completes else Initiative.SACRIFICE


# ---------------------------------------------------------------- simple endgames
def is_simple_endgame(state: GameState) -> bool:
    """Every unclaimed box has exactly two undrawn sides (vacuously true at the end of the game)."""
    if native.handles(None, state.geometry):
        return bool(native.analysis("endgame_values", (state,))[1][0])
    return all(v in (0, 2) for v in box_valences(state))


@functools.lru_cache(maxsize=1 << 16)
def simple_endgame_value(key: tuple[tuple[str, int], ...]) -> int:
    """v(G): the margin the player NOT to move (the controller) gets from the rest of a simple endgame.

    ``key`` is the sorted multiset of components, e.g. ``(("chain", 3), ("loop", 4))``. Recursion of
    DESIGN.md: v(empty) = 0 and v(G) = min over components C of
      chain n = 1: 1 - v(G-C);  n = 2: 2 - v(G-C);  n >= 3: n - 2 + |2 - v(G-C)|;
      loop n: n - 4 + |4 - v(G-C)|.
    """
    if not key:
        return 0
    best = None
    for i, comp in enumerate(key):
        if i and comp == key[i - 1]:
            continue
        rest = simple_endgame_value(key[:i] + key[i + 1:])
        best_c = _option_value(comp, rest)
        if best is None or best_c < best:
            best = best_c
    return best


def _option_value(comp: tuple[str, int], rest: int) -> int:
    kind, n = comp
    if kind == "loop":
        return n - 4 + abs(4 - rest)
    if n == 1:
        return 1 - rest
    if n == 2:
        return 2 - rest
    return n - 2 + abs(2 - rest)


def _component_key(comps: list[Component]) -> tuple[tuple[str, int], ...]:
    return tuple(sorted((c.kind, c.length) for c in comps))


def endgame_value(state: GameState) -> int | None:
    """Exact box margin the player to move gets over the opponent from the remaining boxes, in a simple
    endgame (``-v(G)``); ``None`` when the position is not a simple endgame."""
    if native.handles(None, state.geometry):
        values, simple = native.analysis("endgame_values", (state,))
        return int(values[0]) if simple[0] else None
    if not is_simple_endgame(state):
        return None
    return -simple_endgame_value(_component_key(components(state)))


def endgame_move(state: GameState) -> int | None:
    """An optimal move in a simple endgame (``None`` otherwise, or when the game is over).

    Opens the component whose opening value is least for the controller; a 2-chain is opened in the
    middle (the hard-hearted handout), longer chains at an end, loops anywhere.
    """
    if state.is_terminal() or not is_simple_endgame(state):
        return None
    comps = components(state)
    key = _component_key(comps)
    best, best_comp = None, None
    for comp in comps:
        rest_key = list(key)
        rest_key.remove((comp.kind, comp.length))
        val = _option_value((comp.kind, comp.length), simple_endgame_value(tuple(rest_key)))
        if best is None or val < best:
            best, best_comp = val, comp
    g = state.geometry
    edges = state.edges
    comp = best_comp
    if comp.kind == "chain" and comp.length == 2:
        a, b = comp.boxes
        return next(e for e, o in _undrawn_sides(g, edges, a) if o == b)
    if comp.kind == "chain":
        return min(e for e, _ in comp.ends)
    return min(e for e, _ in _undrawn_sides(g, edges, comp.boxes[0]))


def double_deal_moves(g: Geometry, edges: int, two: int, three: int) -> set[int]:
    """Non-scoring moves that decline boxes on offer to keep control (Berlekamp's all-but-two trick):
    the far undrawn side of a two-sided box beside a capturable one. It leaves a domino of two boxes
    (the last two of an opened chain, or two pairs in an opened loop) for the opponent. ``two`` and
    ``three`` are the masks of boxes with two and three drawn sides (:meth:`Geometry.drawn_count_masks`)."""
    out = set()
    for b1 in range(g.num_boxes):
        if not three >> b1 & 1:
            continue
        for e, b2 in g.box_neighbours[b1]:
            if b2 < 0 or edges >> e & 1 or not two >> b2 & 1:
                continue
            for f, _ in g.box_neighbours[b2]:
                if f != e and not edges >> f & 1:
                    out.add(f)
    return out


def capture_or_decline_moves(state: GameState) -> list[int] | None:
    """With a box on offer: the captures and the all-but-two declines, the only moves worth searching
    (any other move leaves boxes to the opponent for nothing; BoxesZero's forced moves in opened chains,
    checked against the exact solver in the tests). ``None`` when no box can be taken."""
    g = state.geometry
    if native.handles(None, g):
        masks, offered = native.analysis("capture_or_decline", (state,))
        return np.flatnonzero(masks[0]).tolist() if offered[0] else None
    two, three = g.drawn_count_masks(state.edges)
    if not three:
        return None
    deals = double_deal_moves(g, state.edges, two, three)
    out = []
    for a in state.legal_actions():
        if a in deals or any(three >> b & 1 for b in g.action_boxes[a]):
            out.append(a)
    return out


def realistic_move(state: GameState, rng, capture_prob: float = 0.85) -> int:
    """A move of a weak but plausible player, for sampling realistic positions: takes a box with
    probability ``capture_prob`` when it can, otherwise plays a random safe move while one exists, else
    any move. ``rng`` is a ``random.Random``."""
    classes = move_classes(state)
    legal = state.legal_actions()
    scoring = [a for a in legal if classes[a] == MoveClass.SCORING]
    if scoring and rng.random() < capture_prob:
        return rng.choice(scoring)
    safe = [a for a in legal if classes[a] == MoveClass.SAFE]
    return rng.choice(safe or legal)


def realistic_position(board, undrawn: int, rng) -> GameState:
    """A position with exactly ``undrawn`` undrawn edges reached by :func:`realistic_move` from the empty
    ``board`` (a game that ends first is played again). ``rng`` is a ``random.Random``."""
    while True:
        s = GameState.new(board)
        while s.num_actions - s.edges.bit_count() > undrawn and not s.is_terminal():
            s = s.apply(realistic_move(s, rng))
        if s.num_actions - s.edges.bit_count() == undrawn:
            return s
