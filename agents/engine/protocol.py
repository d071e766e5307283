"""The engine protocol, version 1: the lines both sides write and read (``docs/engine-protocol.md``).

    format_go(movetime=0.5, left=None, inc=None)      -> "go movetime 500"
    parse_go(["movetime", "500"])                     -> GoLimits(movetime=0.5, left=None, inc=None)
    parse_move("move 17", num_actions=60)             -> 17 (ProtocolError for anything else)
    parse_info("info depth 3 value 0.5 pv 17 18")     -> {"depth": 3, "value": 0.5, "pv": [17, 18]}
    format_info(time=0.04, depth=3, value=1.0, unit="margin", pv=[17])
                                                      -> "info depth 3 time 40 value 1 unit margin pv 17"
    parse_boards(["3x3", "5x5"])                      -> ("3x3", "5x5")   (the words after 'id boards')

Times travel as whole milliseconds; this module turns them into seconds (floats) for both sides. Moves are
action ids of OpenSpiel's ``dots_and_boxes`` numbering (:mod:`dnb_env.core`), the numbering of every API
of the project, so a position is its OpenSpiel action history.
"""

from __future__ import annotations

from dataclasses import dataclass

from dnb_env.clock import MAX_MS, clock_move_time
from dnb_env.core import geometry

__all__ = ["VERSION", "HELLO", "MAX_LINE", "MAX_MS", "ProtocolError", "GoLimits",
           "format_go", "parse_go", "parse_move", "parse_info", "format_info", "parse_int", "parse_boards",
           "boards_text"]

#: The protocol version this project speaks.
VERSION = 1
#: The first word of the handshake: ``dnbp 1`` from the controller, ``dnbp ok 1`` from the engine.
HELLO = "dnbp"
#: Longest line either side must accept (bytes); a longer line is not a line of the protocol.
MAX_LINE = 65536


class ProtocolError(ValueError):
    """A line that is not what the protocol allows at that point."""


def parse_int(text: str, what: str, low: int = 0, high: int | None = None) -> int:
    """``text`` as an integer in ``low..high``; ProtocolError naming ``what`` otherwise."""
    shown = text if len(text) <= 24 else f"{text[:12]}...{text[-6:]} ({len(text)} characters)"
    try:
        value = int(text)
    except ValueError:
        raise ProtocolError(f"{what} must be an integer, got {shown!r}") from None
    if value < low or (high is not None and value > high):
        upper = f"..{high}" if high is not None else " or more"
        raise ProtocolError(f"{what} must be {low}{upper}, got {shown}")
    return value


@dataclass(frozen=True)
class GoLimits:
    """The clock of one ``go``, in seconds: ``movetime`` for this move, ``left`` on the mover's game clock
    (this move included), ``inc`` added to it after each move; None where the controller gives none."""

    movetime: float | None = None
    left: float | None = None
    inc: float | None = None

    def budget(self, free_edges: int = 0) -> float | None:
        """The seconds to think about this move: ``movetime``; else, on a game clock,
        :func:`clock_move_time` of ``left``, ``inc`` and the position's ``free_edges``; else None."""
        if self.movetime is not None:
            return self.movetime
        if self.left is None:
            return None
        return clock_move_time(self.left, self.inc or 0.0, free_edges)


def _ms(seconds: float) -> str:
    return str(max(0, int(round(seconds * 1000))))


def format_go(movetime: float | None = None, left: float | None = None, inc: float | None = None) -> str:
    """The ``go`` line for these limits (seconds; None: not sent)."""
    words = ["go"]
    for key, value in (("movetime", movetime), ("left", left), ("inc", inc)):
        if value is not None:
            words += [key, _ms(value)]
    return " ".join(words)


def parse_go(args: list[str]) -> GoLimits:
    """The words after ``go`` as :class:`GoLimits`; ProtocolError for an unknown key or a bad number (each
    value a whole number of milliseconds, 0..:data:`MAX_MS`)."""
    values: dict[str, float] = {}
    if len(args) % 2:
        raise ProtocolError(f"go takes key value pairs, got {' '.join(args)!r}")
    for key, value in zip(args[::2], args[1::2]):
        if key not in ("movetime", "left", "inc"):
            raise ProtocolError(f"go has no key {key!r}; its keys: movetime, left, inc (milliseconds)")
        values[key] = parse_int(value, f"go {key}", 0, MAX_MS) / 1000
    return GoLimits(**values)


def parse_move(line: str, num_actions: int) -> int:
    """The action of a ``move A`` line; ProtocolError unless it is one with ``A`` in ``0..num_actions-1``
    (whether the edge is still free is the caller's check)."""
    words = line.split()
    if len(words) != 2 or words[0] != "move":
        raise ProtocolError(f"expected 'move A', got {line!r}")
    return parse_int(words[1], "the move", 0, num_actions - 1)


def parse_info(line: str) -> dict:
    """The analysis of an ``info`` line: ``depth``, ``nodes`` (integers), ``time`` (ms -> seconds),
    ``value`` (a number for the player to move), ``unit`` (``win`` or ``margin``), ``pv`` (the rest of the
    line: actions) and ``string`` (the rest of the line: text). Keys it does not know, and values it cannot
    read, are skipped: analysis is optional and never costs a game."""
    words = line.split()[1:]
    out: dict = {}
    k = 0
    while k < len(words):
        key = words[k]
        if key == "pv":
            try:
                out["pv"] = [int(w) for w in words[k + 1:]]
            except ValueError:
                pass
            break
        if key == "string":
            out["string"] = " ".join(words[k + 1:])
            break
        if k + 1 < len(words):
            value = words[k + 1]
            try:
                if key in ("depth", "nodes"):
                    out[key] = int(value)
                elif key == "time":
                    out[key] = int(value) / 1000
                elif key == "value":
                    out[key] = float(value)
                elif key == "unit" and value in ("win", "margin"):
                    out[key] = value
            except ValueError:
                pass
        k += 2
    return out


#: The keys of an ``info`` line in the order :func:`format_info` writes them (``pv`` last: it takes the rest).
INFO_KEYS = ("depth", "nodes", "time", "value", "unit", "pv")


def _number(x: float) -> str:
    """A value as short as it reads exactly: ``1`` for 1.0, ``0.25``, at most 6 significant digits."""
    return format(float(x), ".6g")


def format_info(**analysis) -> str | None:
    """The ``info`` line of an analysis, the inverse of :func:`parse_info` for its keys: ``depth``,
    ``nodes`` (integers), ``time`` (seconds -> whole ms), ``value`` (a number), ``unit`` (``win`` or
    ``margin``; sent only with ``value``), ``pv`` (actions), ``string`` (text, last). Keys that are None
    are left out; None when nothing is left."""
    words = []
    for key in ("depth", "nodes"):
        if analysis.get(key) is not None:
            words += [key, str(int(analysis[key]))]
    if analysis.get("time") is not None:
        words += ["time", _ms(analysis["time"])]
    if analysis.get("value") is not None:
        words += ["value", _number(analysis["value"])]
        if analysis.get("unit") in ("win", "margin"):
            words += ["unit", analysis["unit"]]
    if analysis.get("pv"):
        words += ["pv", *(str(int(a)) for a in analysis["pv"])]
    elif analysis.get("string"):
        words += ["string", " ".join(str(analysis["string"]).split())]
    return "info " + " ".join(words) if words else None


def parse_boards(words: list[str]) -> tuple[str, ...]:
    """The boards of an ``id boards R1xC1 R2xC2 ...`` line (the words after ``id boards``), each as
    ``"RxC"``; ProtocolError for none, or for a word that is not a board."""
    if not words:
        raise ProtocolError("'id boards' lists at least one board, e.g. 'id boards 3x3 5x5'")
    boards = []
    for word in words:
        try:
            boards.append(geometry(word).name)
        except ValueError as exc:
            raise ProtocolError(f"'id boards' lists boards as RxC: {exc}") from None
    return tuple(dict.fromkeys(boards))


def boards_text(boards) -> str:
    """``("3x3", "5x5")`` -> ``"3x3 and 5x5"``; ``("3x3",)`` -> ``"3x3"``."""
    boards = list(boards)
    return boards[0] if len(boards) == 1 else ", ".join(boards[:-1]) + " and " + boards[-1]
