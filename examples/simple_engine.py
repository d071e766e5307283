#!/usr/bin/env python3
"""A complete Dots-and-Boxes engine in one file of standard-library Python: a template to copy out.

It speaks the project's engine protocol (docs/engine-protocol.md) on stdin/stdout and plays simply: it
completes a box when it can, else draws an edge that gives no box its third side, else any edge; ties are
broken by a random generator seeded by the controller's ``seed``.

    python examples/simple_engine.py                          # every board
    python examples/simple_engine.py --boards 3x3 5x5         # declares its boards: 'id boards 3x3 5x5'
    python examples/simple_engine.py --startup-delay 5        # waits 5 s before its first 'readyok'

In a tournament (``name=`` labels it in the tables and files)::

    dnb tournament --board 3x3 --agents 'engine:cmd="python examples/simple_engine.py",name=simple',greedy

Moves are OpenSpiel ``dots_and_boxes`` action ids: on R x C boxes the horizontal edges ``h(r, c) = r*C + c``
(r = 0..R, c = 0..C-1) come first, then the vertical ones ``v(r, c) = (R+1)*C + r*(C+1) + c`` (r = 0..R-1,
c = 0..C). Anything written to standard error goes to the controller's log file.
"""

from __future__ import annotations

import argparse
import random
import re
import sys
import time

VERSION = "1"


def box_sides(rows: int, cols: int) -> list[tuple[int, int, int, int]]:
    """The four edges of each box, row by row: top, bottom, left, right."""
    v0 = (rows + 1) * cols
    return [(r * cols + c, (r + 1) * cols + c, v0 + r * (cols + 1) + c, v0 + r * (cols + 1) + c + 1)
            for r in range(rows) for c in range(cols)]


def choose(rows: int, cols: int, drawn: set[int], rng: random.Random) -> int:
    """A move: one that completes a box, else one that gives no box its third side, else any free edge."""
    boxes = box_sides(rows, cols)
    free = [e for e in range((rows + 1) * cols + rows * (cols + 1)) if e not in drawn]
    count = [sum(e in drawn for e in sides) for sides in boxes]
    completing = [e for e in free if any(count[b] == 3 and e in boxes[b] for b in range(len(boxes)))]
    if completing:
        return rng.choice(completing)
    safe = [e for e in free if not any(count[b] == 2 and e in boxes[b] for b in range(len(boxes)))]
    return rng.choice(safe or free)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--name", default="simple", help="the name it gives in the handshake")
    parser.add_argument("--boards", nargs="+", metavar="RxC",
                        help="the boards it declares ('id boards'); default: none declared, every board played")
    parser.add_argument("--startup-delay", type=float, default=0.0, metavar="SECONDS",
                        help="seconds to wait before the first 'readyok' (an engine loading its tables)")
    args = parser.parse_args(argv)
    for board in args.boards or ():
        if not re.fullmatch(r"[1-9][0-9]*x[1-9][0-9]*", board):
            parser.error(f"--boards takes boards as RxC, e.g. 3x3, got {board!r}")
    if args.startup_delay < 0:
        parser.error(f"--startup-delay must be 0 or more seconds, got {args.startup_delay}")

    rows = cols = 0
    drawn: set[int] = set()
    rng = random.Random(0)
    loaded = False

    def say(line: str) -> None:
        sys.stdout.write(line + "\n")
        sys.stdout.flush()

    for line in sys.stdin:
        words = line.split()
        if not words:
            continue
        command, rest = words[0], words[1:]
        if command == "dnbp":
            if rest != [VERSION]:
                say(f"error this engine speaks protocol version {VERSION}")
                continue
            say(f"id name {args.name}")
            if args.boards:
                say("id boards " + " ".join(args.boards))
            say(f"dnbp ok {VERSION}")
        elif command == "newgame":
            board = rest[0] if len(rest) == 1 else ""
            if not re.fullmatch(r"[1-9][0-9]*x[1-9][0-9]*", board):
                say("error newgame takes the board as RxC, e.g. 'newgame 5x5'")
            elif args.boards and board not in args.boards:
                say(f"error cannot play {board}: this engine plays only {' '.join(args.boards)}")
            else:
                rows, cols = map(int, board.split("x"))
                drawn, rng = set(), random.Random(0)
        elif command == "seed" and len(rest) == 1 and rest[0].isdigit():
            rng = random.Random(int(rest[0]))
        elif command == "isready":
            if not loaded:
                time.sleep(args.startup_delay)  # where a real engine loads its networks or tables
                loaded = True
            say("readyok")
        elif command == "position":
            drawn = {int(a) for a in rest if a.isdigit()}
        elif command == "go":
            if not rows:
                say("error go before newgame")
                continue
            if len(drawn) >= (rows + 1) * cols + rows * (cols + 1):
                say("error the position is a finished game: there is no move to choose")
                continue
            start = time.perf_counter()
            move = choose(rows, cols, drawn, rng)
            say(f"info time {int((time.perf_counter() - start) * 1000)} string simple rules")
            say(f"move {move}")
        elif command == "quit":
            break
        else:
            say(f"error unknown command {command!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
