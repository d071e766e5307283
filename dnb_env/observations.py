"""Observation encoders by name: float32, channels first ``(C, H, W)``, the player to move's view.

The encoders are the table :data:`ENCODERS`, one :class:`EncoderRecord` per name (function, channels,
plane layout, the encoder it extends, how the symmetries move its channels, whether C++ computes it); the
functions live in :mod:`dnb_env.encoders_paper` (the papers' encoders) and :mod:`dnb_env.encoders_features` (the
research encoders built on :mod:`dnb_env.features`), whose docstrings list each encoder's shape and
source (a record's ``description`` says it in a line). :data:`DEFAULT_ENCODER` is the package's default.

Use :func:`encode` for one state, :func:`encode_batch` for many (faster per state), :func:`encoder_shape`
for the shape and :func:`list_encoders` for the names; :func:`transform_planes` maps planes by a board
symmetry (:mod:`dnb_env.symmetry`). Each encoder's docstring has its channel table; the documentation's
Observations page (``docs/observations.md``) has every table and a picture of each encoder's planes.
With the native backend (:mod:`dnb_env.native`, boards up to 12x12) the records marked ``native``
(``baseline4``, ``chainloop6``, ``chainloop64`` and ``alphazero4``) are computed in C++, bit-identical to
the Python code.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from dnb_env import encoders_features as research
from dnb_env import encoders_paper as paper
from dnb_env import native
from dnb_env.core import GameState, geometry
from dnb_env.encoders_paper import SIDES
from dnb_env.symmetry import Symmetry

__all__ = ["encode", "encode_batch", "encoder_shape", "list_encoders", "encoder_layout", "transform_planes", "ENCODERS",
           "EXTENDS", "extends", "EncoderRecord", "encoder_record", "native_encoders", "DEFAULT_ENCODER", "SIDES"]

#: How :func:`transform_planes` moves an encoder's channels: ``"fixed"`` (none moves), ``"sides"`` (channels
#: 0-3 are a box's right, up, left and down sides), ``"side_groups"`` (11 channels per side, ``edgequad44``).
CHANNEL_MAPS = ("fixed", "sides", "side_groups")


@dataclass(frozen=True)
class EncoderRecord:
    """One encoder: ``function(states, g) -> [N, channels, H, W]`` float32 for states of one board of
    geometry ``g``; ``layout`` ``"grid"`` for (2R+1, 2C+1) planes, ``"box"`` for (R, C); ``extends`` the
    encoder whose channels are its first ones (None: none); ``channel_map`` one of :data:`CHANNEL_MAPS`;
    ``native`` whether the C++ engine computes it too (bit-identical); ``description`` one line; ``sizes`` how
    its cost grows with the board, and what it gives where its search stops (the Observations page's
    "Board sizes" has the measured cost by board)."""

    name: str
    function: Callable[..., np.ndarray]
    channels: int
    layout: str
    extends: str | None
    channel_map: str
    native: bool
    description: str
    sizes: str = "linear in the edges on every board"

    def __post_init__(self):
        if self.layout not in ("grid", "box") or self.channel_map not in CHANNEL_MAPS:
            raise ValueError(f"encoder {self.name!r}: layout must be grid or box and channel_map one of "
                             f"{', '.join(CHANNEL_MAPS)}, got {self.layout!r} and {self.channel_map!r}")


#: ``sizes`` of the encoders without a search.
LINEAR = EncoderRecord.sizes
#: ``sizes`` of the safe-phase encoders.
SAFE_PHASE_SIZES = ("bounded by the search's budgets on every board; values only where every end of the safe phase "
                    "it reaches has at most 40 undrawn edges (24 past 12x12): past 5x5 late in a game, else "
                    "the feature channels and flag 0")
#: ``sizes`` of the Nimstring encoders.
NIMSTRING_SIZES = ("bounded by the searches' budgets on every board; Nimstring values only at most {} undrawn "
                   "edges (past 5x5 late in a game; in Python past 64 edges), else channels 9-11 are 0")


def _record(name, function, channels, layout="grid", extends=None, channel_map="fixed", native=False,
            description="", sizes=LINEAR):
    return EncoderRecord(name, function, channels, layout, extends, channel_map, native, description, sizes)


#: Every encoder by name, in the order of the module docstring's table.
ENCODERS: dict[str, EncoderRecord] = {r.name: r for r in (
    _record("baseline4", paper.baseline4, 4, native=True,
            description='Dotsformer 4.1 "Baseline" (the four shared channels)'),
    _record("chainloop6", paper.chainloop6, 6, native=True, description="Dotsformer 4.1 ChainLoop6"),
    _record("chainloop64", paper.chainloop64, 64, native=True, description="Dotsformer 4.1 ChainLoop64"),
    _record("edgequad4", paper.edgequad4, 4, "box", channel_map="sides",
            description="Dotsformer Appendix A EdgeQuad4"),
    _record("edgequad9", paper.edgequad9, 9, "box", channel_map="sides",
            description="Dotsformer Appendix A EdgeQuad9"),
    _record("edgequad44", paper.edgequad44, 44, "box", channel_map="side_groups",
            description="Dotsformer Appendix A EdgeQuad44"),
    _record("alphazero4", paper.alphazero4, 4, native=True,
            description="AlphaZero Dots-and-Boxes report, Fig. 4 (L, P, O, B)"),
    _record("chainloop6_safe", research.chainloop6_safe, 9, extends="chainloop6",
            description="ChainLoop6 + each move's safe-phase value (dnb_env.features)",
            sizes=SAFE_PHASE_SIZES),
    _record("chainloop6_safevalue", research.chainloop6_safevalue, 8, extends="chainloop6",
            description="ChainLoop6 + the position's safe-phase value only",
            sizes=SAFE_PHASE_SIZES),
    _record("chainloop6_sac2", research.chainloop6_sac2, 12, extends="chainloop6_safe",
            description="chainloop6_safe + each move's value with two sacrifices allowed",
            sizes=SAFE_PHASE_SIZES),
    _record("chainloop6_sac2_deep", research.chainloop6_sac2_deep, 12, extends="chainloop6_safe",
            description="chainloop6_sac2 with ten times the search budget",
            sizes=SAFE_PHASE_SIZES),
    _record("chainloop6_sac4", research.chainloop6_sac4, 12, extends="chainloop6_safe",
            description="chainloop6_sac2's channels with four sacrifices allowed",
            sizes=SAFE_PHASE_SIZES),
    _record("chainloop6_lcr", research.chainloop6_lcr, 7, extends="chainloop6",
            description="ChainLoop6 + the long chain rule of each safe move",
            sizes="linear in the edges (the chains found once, each safe move's count from the boxes it touches)"),
    _record("chainloop6_nim", research.chainloop6_nim, 12, extends="chainloop6_safe",
            description="chainloop6_safe + each move's result in Nimstring",
            sizes=NIMSTRING_SIZES.format(42)),
    _record("chainloop6_nim38", research.chainloop6_nim38, 12, extends="chainloop6_safe",
            description="chainloop6_nim with Nimstring only at <= 38 undrawn edges",
            sizes=NIMSTRING_SIZES.format(38)),
)}

#: The encoder of every default in the package (environments, networks, agents).
DEFAULT_ENCODER = "chainloop6"

#: Encoders whose first channels are exactly another encoder's (``dnb fit --init`` can start a network of the
#: wider encoder from weights of the narrower one, the new input channels' weights zero): the records'
#: ``extends``.
EXTENDS: dict[str, str] = {r.name: r.extends for r in ENCODERS.values() if r.extends is not None}


def extends(wider: str, narrower: str) -> bool:
    """Whether the first channels of encoder ``wider`` are those of ``narrower`` (through :data:`EXTENDS`)."""
    while wider in EXTENDS:
        wider = EXTENDS[wider]
        if wider == narrower:
            return True
    return False


def native_encoders() -> tuple[str, ...]:
    """The names of the records marked ``native`` (what ``dnb_env._native.ENCODERS`` must list)."""
    return tuple(r.name for r in ENCODERS.values() if r.native)


def list_encoders() -> list[str]:
    return list(ENCODERS)


def encoder_record(name: str) -> EncoderRecord:
    """The record of encoder ``name``; ``ValueError`` naming the known encoders for any other name."""
    try:
        return ENCODERS[name]
    except (KeyError, TypeError):
        raise ValueError(f"unknown encoder {name!r}; known encoders: {', '.join(ENCODERS)}") from None


def encoder_layout(name: str) -> str:
    """``"grid"`` for (2R+1, 2C+1) planes, ``"box"`` for (R, C) planes."""
    return encoder_record(name).layout


def encoder_shape(name: str, rows: int, cols: int | None = None) -> tuple[int, int, int]:
    """``(C, H, W)`` of encoder ``name`` on a rows x cols board (``cols`` defaults to ``rows``)."""
    rec = encoder_record(name)
    g = geometry(rows, rows if cols is None else cols) if not isinstance(rows, str) else geometry(rows)
    if rec.layout == "grid":
        return rec.channels, g.height, g.width
    return rec.channels, g.rows, g.cols


def encode(name: str, state: GameState) -> np.ndarray:
    """``[C, H, W]`` float32 observation of ``state`` from the player to move's point of view."""
    rec = encoder_record(name)
    if native.handles(name, state.geometry):
        return native.encode_batch(name, (state,))[0]
    return rec.function((state,), state.geometry)[0]


def encode_batch(name: str, states: Sequence[GameState]) -> np.ndarray:
    """``[N, C, H, W]`` float32 observations of states of one board size."""
    rec = encoder_record(name)
    states = list(states)
    if not states:
        raise ValueError("encode_batch needs at least one state (the board size comes from the states)")
    g = states[0].geometry
    if any(s.geometry is not g for s in states):
        raise ValueError("encode_batch needs states of one board size")
    if native.handles(name, g):
        return native.encode_batch(name, states)
    return rec.function(states, g)


# ---------------------------------------------------------------------------------------------- symmetries
_SIDE_DIRS = ((0, 1), (-1, 0), (0, -1), (1, 0))  # r, u, l, d
_OWN_FIRST = (True, False, False, True)  # is the box itself the "left/up" box of its side r, u, l, d?


@functools.lru_cache(maxsize=None)
def _channel_source(sym: Symmetry, rec: EncoderRecord, channels: int) -> np.ndarray:
    """``src`` with ``new[c] = old[src[c]]`` for the ``channels`` planes of encoder ``rec``."""
    src = np.arange(channels)
    if rec.channel_map == "fixed":
        return src
    side_perm = [_SIDE_DIRS.index(sym.map_direction(*d)) for d in _SIDE_DIRS]
    if rec.channel_map == "sides":
        for k, k2 in enumerate(side_perm):
            src[k2] = k
        return src
    for k, k2 in enumerate(side_perm):  # side_groups: groups of 11 = drawn, first box one-hot, second box
        src[11 * k2] = 11 * k
        first, second = np.arange(11 * k + 1, 11 * k + 6), np.arange(11 * k + 6, 11 * k + 11)
        if _OWN_FIRST[k] != _OWN_FIRST[k2]:
            first, second = second, first
        src[11 * k2 + 1: 11 * k2 + 6] = first
        src[11 * k2 + 6: 11 * k2 + 11] = second
    return src


def transform_planes(sym: Symmetry, name: str, planes: np.ndarray) -> np.ndarray:
    """Map observation planes ``[..., C, H, W]`` of encoder ``name`` by ``sym`` (returns a new array)."""
    rec = encoder_record(name)
    x = planes
    if sym.transpose:
        if x.shape[-1] != x.shape[-2]:
            raise ValueError("a transposing symmetry needs square planes")
        x = np.swapaxes(x, -1, -2)
    if sym.flip_y:
        x = x[..., ::-1, :]
    if sym.flip_x:
        x = x[..., ::-1]
    src = _channel_source(sym, rec, planes.shape[-3])
    return np.ascontiguousarray(np.take(x, src, axis=-3))
