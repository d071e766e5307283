"""Dihedral symmetries of the board: 8 on square boards, 4 on rectangles.

A :class:`Symmetry` maps grid cell (y, x) of the (2R+1) x (2C+1) grid by an optional transpose (square
boards only), then an optional vertical flip (y -> H-1-y), then an optional horizontal flip
(x -> W-1-x). It acts on

* actions: ``action_permutation(sym, rows, cols)[a]`` is the image of action ``a``;
* states: :func:`transform_state` (edges, box owners and history all mapped; the mover is unchanged);
* observation planes of any encoder: :func:`dnb_env.observations.transform_planes` (beside the encoders
  it follows; this module sits below them, so the features can use the symmetries);
* policies over actions: :func:`transform_policy`.

For every encoder ``encode(name, transform_state(sym, s)) == transform_planes(sym, name, encode(name, s))``
(``chainloop64`` up to the order of equally large structures, which is a tie-break by edge number).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from dnb_env.core import GameState, geometry

__all__ = [
    "Symmetry",
    "symmetries",
    "action_permutation",
    "box_permutation",
    "transform_state",
    "transform_policy",
]


@dataclass(frozen=True)
class Symmetry:
    transpose: bool = False
    flip_y: bool = False
    flip_x: bool = False

    def map_cell(self, y: int, x: int, height: int, width: int) -> tuple[int, int]:
        if self.transpose:
            y, x = x, y
            height, width = width, height
        if self.flip_y:
            y = height - 1 - y
        if self.flip_x:
            x = width - 1 - x
        return y, x

    def map_direction(self, dy: int, dx: int) -> tuple[int, int]:
        if self.transpose:
            dy, dx = dx, dy
        return (-dy if self.flip_y else dy), (-dx if self.flip_x else dx)

    def __str__(self) -> str:
        parts = [n for n, on in (("T", self.transpose), ("Fy", self.flip_y), ("Fx", self.flip_x)) if on]
        return "+".join(parts) or "id"


def symmetries(rows: int, cols: int) -> list[Symmetry]:
    """All symmetries of a rows x cols board, identity first (8 if square, else 4)."""
    transposes = (False, True) if rows == cols else (False,)
    return [Symmetry(t, fy, fx) for t in transposes for fy in (False, True) for fx in (False, True)]


def _check(sym: Symmetry, rows: int, cols: int) -> None:
    if sym.transpose and rows != cols:
        raise ValueError(f"a transposing symmetry needs a square board, got {rows}x{cols}")


@functools.lru_cache(maxsize=None)
def action_permutation(sym: Symmetry, rows: int, cols: int) -> np.ndarray:
    """``[num_actions]`` intp array: ``perm[a]`` is the action that ``a`` maps to."""
    _check(sym, rows, cols)
    g = geometry(rows, cols)
    perm = np.array([g.cell_action[sym.map_cell(y, x, g.height, g.width)] for y, x in g.action_cell], dtype=np.intp)
    perm.setflags(write=False)
    return perm


@functools.lru_cache(maxsize=None)
def box_permutation(sym: Symmetry, rows: int, cols: int) -> np.ndarray:
    """``[num_boxes]`` intp array: ``perm[b]`` is the box that ``b`` maps to."""
    _check(sym, rows, cols)
    g = geometry(rows, cols)
    out = []
    for b in range(g.num_boxes):
        r, c = divmod(b, cols)
        y, x = sym.map_cell(2 * r + 1, 2 * c + 1, g.height, g.width)
        out.append((y // 2) * cols + x // 2)
    perm = np.array(out, dtype=np.intp)
    perm.setflags(write=False)
    return perm


def _map_bits(mask: int, perm: np.ndarray) -> int:
    out = 0
    while mask:
        low = mask & -mask
        out |= 1 << int(perm[low.bit_length() - 1])
        mask ^= low
    return out


def transform_state(sym: Symmetry, state: GameState) -> GameState:
    """The image of ``state``: every drawn edge, claimed box and history entry mapped by ``sym``."""
    R, C = state.rows, state.cols
    ap = action_permutation(sym, R, C)
    bp = box_permutation(sym, R, C)
    return GameState._make(
        state.geometry,
        _map_bits(state.edges, ap),
        _map_bits(state.owner0, bp),
        _map_bits(state.owner1, bp),
        state.current_player,
        tuple(int(ap[a]) for a in state.history),
    )


def transform_policy(sym: Symmetry, policy: np.ndarray, rows: int, cols: int) -> np.ndarray:
    """Map a ``[..., num_actions]`` array over actions: ``out[..., perm[a]] = policy[..., a]``."""
    perm = action_permutation(sym, rows, cols)
    out = np.empty_like(policy)
    out[..., perm] = policy
    return out
