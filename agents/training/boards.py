"""A weighted list of boards for multi-size training: ``"2x2:1,3x3:2,4x4:2,5x5:4"``.

    mix = BoardMix.parse("2x2:1,3x3:2,5x5:4")
    mix.boards                        # ("2x2", "3x3", "5x5")
    mix.shares()                      # {"2x2": 1/7, "3x3": 2/7, "5x5": 4/7}
    mix.split(32)                     # games of one iteration per board: {"2x2": 5, "3x3": 9, "5x5": 18}
    mix.draw(np.random.default_rng(0), 32)   # a board for each of 32 games, drawn by weight
    str(mix)                          # "2x2:1,3x3:2,5x5:4" (what a run's config records)

An entry is ``RxC:WEIGHT`` or ``RxC`` (weight 1); weights are positive finite numbers; a board appears
once. A network that plays every board (the ``alphavit`` family) can learn from such a mix with one set of
weights; the other families are built for one board.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from dnb_env.core import geometry

__all__ = ["BoardMix"]


@dataclass(frozen=True)
class BoardMix:
    """``entries``: ``(board, weight)`` pairs in the order given, boards as ``"RxC"``."""

    entries: tuple[tuple[str, float], ...]

    def __post_init__(self):
        if not self.entries:
            raise ValueError("a board mix needs at least one board, e.g. '2x2:1,3x3:2'")
        seen = set()
        for board, weight in self.entries:
            name = geometry(board).name
            if name != board:
                raise ValueError(f"board {board!r} of a board mix must be written {name!r}")
            if name in seen:
                raise ValueError(f"board {name} appears twice in the board mix")
            seen.add(name)
            if isinstance(weight, bool) or not isinstance(weight, (int, float)) or not math.isfinite(weight) \
                    or weight <= 0:
                raise ValueError(f"the weight of {name} in the board mix must be a positive number, not {weight!r}")

    @classmethod
    def parse(cls, text: str) -> "BoardMix":
        """``"2x2:1,3x3:2"`` (spaces allowed; a board without ``:WEIGHT`` weighs 1) -> a :class:`BoardMix`;
        ``ValueError`` naming the bad entry."""
        if not isinstance(text, str) or not text.strip():
            raise ValueError(f"a board mix is 'RxC:WEIGHT,...', e.g. '2x2:1,3x3:2', not {text!r}")
        entries = []
        for item in text.split(","):
            board, sep, weight = item.strip().partition(":")
            try:
                name = geometry(board.strip()).name
            except ValueError as exc:
                raise ValueError(f"board mix entry {item.strip()!r}: {exc}") from None
            try:
                value = float(weight) if sep else 1.0
            except ValueError:
                raise ValueError(f"board mix entry {item.strip()!r}: the weight {weight.strip()!r} is not a number") from None
            entries.append((name, value))
        return cls(tuple(entries))

    def __str__(self) -> str:
        return ",".join(f"{b}:{w:g}" for b, w in self.entries)

    @property
    def boards(self) -> tuple[str, ...]:
        return tuple(b for b, _ in self.entries)

    def shares(self) -> dict[str, float]:
        """Board -> its share of the games (the weights over their sum)."""
        total = sum(w for _, w in self.entries)
        return {b: w / total for b, w in self.entries}

    def split(self, games: int) -> dict[str, int]:
        """``games`` divided among the boards in proportion to the weights (largest remainders; ties to the
        board listed first): the same counts every iteration, so that a comparison at equal games is exact."""
        if isinstance(games, bool) or not isinstance(games, int) or games < 0:
            raise ValueError(f"games must be an integer >= 0, not {games!r}")
        quotas = [(b, games * s) for b, s in self.shares().items()]
        counts = {b: math.floor(q) for b, q in quotas}
        order = sorted(range(len(quotas)), key=lambda i: -(quotas[i][1] - counts[quotas[i][0]]))
        for i in order[:games - sum(counts.values())]:
            counts[quotas[i][0]] += 1
        return counts

    def draw(self, rng: np.random.Generator, games: int) -> list[str]:
        """A board for each of ``games`` games, drawn independently by weight with ``rng``."""
        if isinstance(games, bool) or not isinstance(games, int) or games < 0:
            raise ValueError(f"games must be an integer >= 0, not {games!r}")
        shares = self.shares()
        picks = rng.choice(len(shares), size=games, p=np.fromiter(shares.values(), float))
        return [self.boards[i] for i in picks]
