"""Encoder cost on realistic positions: 5x5 against pyspiel's observation_tensor(), and a table by board.

Positions come from games of a plausible player (:func:`dnb_env.analysis.realistic_move`) cut at a
random move. For each encoder: microseconds per state through ``encode`` (one state per call) and through
``encode_batch`` (all states in one call), and for chainloop6 the ratio to OpenSpiel's C++
``observation_tensor()`` on the same positions, all measured in one run.

With ``--boards`` it measures instead, for every encoder and each board, microseconds per state through
``encode_batch`` on positions spread over the whole game (``--board-states`` of them, each game cut at an
even share of its moves, so that every phase of the game is met), and that cost over the board's edges,
which stays flat where the cost grows linearly with the edges. The feature caches of
:mod:`dnb_env.features` are emptied before each encoder, so that each one pays its own searches. Boards up
to :data:`dnb_env.native.MAX_SIZE` boxes a side run on the native engine when it is built; larger ones on
the Python rules (the table says which).

    python benchmarks/encoders.py [--states 500] [--rounds 3]
    python benchmarks/encoders.py --boards 3x3,5x5,6x6,7x7,8x8,9x9,10x10 [--board-states 12] [--rounds 1]
"""

from __future__ import annotations

import argparse
import random
import time

from dnb_env import native
from dnb_env.analysis import realistic_move
from dnb_env.core import GameState, geometry
from dnb_env.features import clear_caches
from dnb_env.observations import encode, encode_batch, list_encoders


def positions(n, seed=0, rows=5, cols=5):
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        s = GameState.new(rows, cols)
        stop = rng.randrange(5, s.num_actions - 3)
        while len(s.history) < stop:
            s = s.apply(realistic_move(s, rng))
        out.append(s)
    return out


def spread_positions(board, n, seed=0):
    """``n`` positions of ``board``, game ``i`` cut after a share ``(i + 0.5) / n`` of its edges (at least one
    move played, at least one left)."""
    rng = random.Random(seed)
    g = geometry(board)
    out = []
    for i in range(n):
        stop = min(g.num_actions - 1, max(1, round((i + 0.5) / n * g.num_actions)))
        s = GameState.new(board)
        while len(s.history) < stop:
            s = s.apply(realistic_move(s, rng))
        out.append(s)
    return out


def per_state_us(fn, items, rounds, before=None):
    best = float("inf")
    for _ in range(rounds):
        if before is not None:
            before()
        t = time.perf_counter()
        fn(items)
        best = min(best, time.perf_counter() - t)
    return best / len(items) * 1e6


def board_backend(board) -> str:
    """Which rules the board's encoders and searches run on: ``"native"`` or ``"python"``."""
    return "native" if native.handles(None, geometry(board)) else "python"


def by_board(boards, n, rounds=1, seed=0, out=print):
    """``{(encoder, board): (us per state, us per state per edge)}`` through ``encode_batch``, and the table."""
    results = {}
    sets = {b: spread_positions(b, n, seed) for b in boards}
    warm = {b: spread_positions(b, 1, seed + 1) for b in boards}  # a solver made, a module imported: not timed
    names = list_encoders()
    out(f"{n} positions a board spread over the game, best of {rounds} round(s), the feature caches emptied before "
        "each encoder: us per state through encode_batch, and in brackets us per state and edge")
    out("")
    out("| encoder | " + " | ".join(f"{b} ({geometry(b).num_actions} edges, {board_backend(b)})" for b in boards) + " |")
    out("|---|" + "---:|" * len(boards))
    for name in names:
        cells = []
        for b in boards:
            encode_batch(name, warm[b])
            us = per_state_us(lambda items: encode_batch(name, items), sets[b], rounds, before=clear_caches)
            per_edge = us / geometry(b).num_actions
            results[(name, b)] = (us, per_edge)
            cells.append(f"{us:.1f} ({per_edge:.2f})" if us < 1e4 else f"{us:.0f} ({per_edge:.1f})")
        out(f"| `{name}` | " + " | ".join(cells) + " |")
    return results


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--states", type=int, default=500)
    p.add_argument("--rounds", type=int, default=None, help="best of so many rounds (3; 1 with --boards)")
    p.add_argument("--boards", default=None,
                   help="comma-separated boards (e.g. 3x3,5x5,10x10): the cost table by board instead")
    p.add_argument("--board-states", type=int, default=12, help="positions a board for --boards")
    args = p.parse_args(argv)
    if args.boards:
        boards = [b.strip() for b in args.boards.split(",") if b.strip()]
        for b in boards:
            geometry(b)  # a malformed name fails before anything is measured
        return by_board(boards, args.board_states, rounds=args.rounds or 1)

    args.rounds = args.rounds or 3
    states = positions(args.states)
    spiel_states = [s.to_pyspiel() for s in states]

    def spiel(items):
        for ps in items:
            ps.observation_tensor()

    base = per_state_us(spiel, spiel_states, args.rounds)
    print(f"{len(states)} realistic 5x5 positions, best of {args.rounds} rounds (the chainloop6_* feature "
          "encoders cache their search per position: past the first round they time the cache)")
    print(f"{'encoder':<14}{'single us':>11}{'batch us':>10}{'batch/single':>14}{'single/pyspiel':>16}")
    print(f"{'pyspiel obs':<14}{base:>11.1f}{'':>10}{'':>14}{1.0:>16.2f}")
    results = {"pyspiel": base}
    for name in list_encoders():
        single = per_state_us(lambda items: [encode(name, s) for s in items], states, args.rounds)
        batch = per_state_us(lambda items: encode_batch(name, items), states, args.rounds)
        results[name] = (single, batch)
        print(f"{name:<14}{single:>11.1f}{batch:>10.1f}{batch / single:>14.2f}{single / base:>16.2f}")
    return results


if __name__ == "__main__":
    main()
