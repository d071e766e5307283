"""Columnar training samples: compact arrays, planes made only when a batch is drawn.

One row per searched position (or well-searched internal tree node):

=============  ===========================  ==================================================
column         dtype, shape                 meaning
=============  ===========================  ==================================================
edges          uint8 ``[N, ceil(A/8)]``     drawn edges, bit ``a`` of the packed bits = action ``a``
owners         uint8 ``[N, 2, ceil(B/8)]``  boxes of player 0 and of player 1, packed bits
mover          int8 ``[N]``                 player to move
move           int16 ``[N]``                the move played (internal nodes: their most visited move)
pi             float32 ``[N, A]``           root visit distribution (the policy target)
z              float32 ``[N]``              game result for the mover in the model's value units (nodes: Q)
q              float32 ``[N]``              the search's value of the position for the mover
step           int16 ``[N]``                moves played before the position
iteration      int32 ``[N]``                training iteration that produced it
initiative     int8 ``[N]``                 Dotsformer Definition 2 label of (position, move)
move_class     int8 ``[N, A]``              Definition 3 class of each action (forbidden/conceding/safe/scoring)
node           bool ``[N]``                 an internal tree node rather than a played position
=============  ===========================  ==================================================

``states()`` rebuilds the positions (their history is synthetic: the drawn edges in increasing order),
so any encoder or symmetry applies late, and a replay file of 5x5 holds about 150 bytes per sample
beside ``pi``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import numpy as np

from dnb_env.analysis import initiative_label, move_classes
from dnb_env.core import GameState, geometry

__all__ = ["Samples", "Record"]


@dataclass
class Record:
    """One sample before packing."""

    state: GameState
    move: int
    pi: np.ndarray
    q: float
    node: bool = False
    z: float | None = None  # filled in when the game ends (nodes: their Q)


def _pack(mask: int, nbits: int) -> np.ndarray:
    return np.unpackbits(np.frombuffer(mask.to_bytes((nbits + 7) // 8, "little"), dtype=np.uint8),
                         bitorder="little")[:nbits]


@dataclass
class Samples:
    board: str
    edges: np.ndarray
    owners: np.ndarray
    mover: np.ndarray
    move: np.ndarray
    pi: np.ndarray
    z: np.ndarray
    q: np.ndarray
    step: np.ndarray
    iteration: np.ndarray
    initiative: np.ndarray
    move_class: np.ndarray
    node: np.ndarray

    COLUMNS = ("edges", "owners", "mover", "move", "pi", "z", "q", "step", "iteration", "initiative",
               "move_class", "node")

    @classmethod
    def empty(cls, board: str) -> "Samples":
        g = geometry(board)
        A, B = g.num_actions, g.num_boxes
        return cls(board, np.zeros((0, (A + 7) // 8), np.uint8), np.zeros((0, 2, (B + 7) // 8), np.uint8),
                   np.zeros(0, np.int8), np.zeros(0, np.int16), np.zeros((0, A), np.float32),
                   np.zeros(0, np.float32), np.zeros(0, np.float32), np.zeros(0, np.int16), np.zeros(0, np.int32),
                   np.zeros(0, np.int8), np.zeros((0, A), np.int8), np.zeros(0, bool))

    @classmethod
    def from_records(cls, board: str, records: list[Record], iteration: int) -> "Samples":
        if not records:
            return cls.empty(board)
        g = records[0].state.geometry
        A, B = g.num_actions, g.num_boxes
        n = len(records)
        edge_bits = np.stack([_pack(r.state.edges, A) for r in records])
        owner_bits = np.stack([np.stack([_pack(r.state.owner0, B), _pack(r.state.owner1, B)]) for r in records])
        return cls(
            board,
            np.packbits(edge_bits, axis=1, bitorder="little"),
            np.packbits(owner_bits, axis=2, bitorder="little"),
            np.array([r.state.current_player for r in records], np.int8),
            np.array([r.move for r in records], np.int16),
            np.stack([r.pi for r in records]).astype(np.float32),
            np.array([r.z for r in records], np.float32),
            np.array([r.q for r in records], np.float32),
            np.array([len(r.state.history) for r in records], np.int16),
            np.full(n, iteration, np.int32),
            np.array([int(initiative_label(r.state, r.move)) for r in records], np.int8),
            np.stack([move_classes(r.state) for r in records]),
            np.array([r.node for r in records], bool),
        )

    def __len__(self) -> int:
        return len(self.mover)

    def take(self, idx) -> "Samples":
        return Samples(self.board, *(getattr(self, c)[idx] for c in self.COLUMNS))

    def concat(self, other: "Samples") -> "Samples":
        if other.board != self.board:
            raise ValueError(f"cannot join samples of {self.board} and {other.board}")
        return Samples(self.board, *(np.concatenate([getattr(self, c), getattr(other, c)]) for c in self.COLUMNS))

    def states(self, idx=None) -> list[GameState]:
        """The positions of rows ``idx`` (default all) as :class:`GameState`."""
        g = geometry(self.board)
        idx = range(len(self)) if idx is None else idx
        out = []
        for i in idx:  # the packed bytes are little-endian bitsets: bit a of the integer = action a
            row = self.edges[i]
            history = tuple(int(a) for a in np.flatnonzero(np.unpackbits(row, bitorder="little")))
            out.append(GameState._make(g, int.from_bytes(row.tobytes(), "little"),
                                       int.from_bytes(self.owners[i, 0].tobytes(), "little"),
                                       int.from_bytes(self.owners[i, 1].tobytes(), "little"), int(self.mover[i]), history))
        return out

    # ------------------------------------------------------------------ files
    def arrays(self) -> dict[str, np.ndarray]:
        return {"board": np.array(self.board), **{c: getattr(self, c) for c in self.COLUMNS}}

    @classmethod
    def from_arrays(cls, data, source: str = "samples") -> "Samples":
        """From the mapping written by :meth:`arrays` (e.g. an ``np.load`` of it); a missing or
        inconsistent column raises ``ValueError`` naming ``source``."""
        missing = [c for c in ("board", *cls.COLUMNS) if c not in data]
        if missing:
            raise ValueError(f"{source}: missing column(s) {', '.join(missing)}")
        out = cls(str(data["board"]), *(np.asarray(data[c]) for c in cls.COLUMNS))
        if len({len(getattr(out, c)) for c in cls.COLUMNS}) != 1:
            raise ValueError(f"{source}: columns of different lengths")
        ref = cls.empty(out.board)
        for c in cls.COLUMNS:
            a, b = getattr(out, c), getattr(ref, c)
            if a.dtype != b.dtype or a.shape[1:] != b.shape[1:]:
                raise ValueError(f"{source}: column {c} has {a.dtype}{list(a.shape[1:])}, expected {b.dtype}{list(b.shape[1:])}")
        return out


assert [f.name for f in fields(Samples)] == ["board", *Samples.COLUMNS]
