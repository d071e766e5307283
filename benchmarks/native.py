"""The C++ engine (dnb_env._native) against pyspiel and the Python engine: playouts and chainloop6.

Measured side by side in one run, rounds interleaved (best round kept), on one board (5x5 by default):

* random-playout steps/s through (a) OpenSpiel's C++ ``dots_and_boxes`` driven from Python
  (``legal_actions`` + ``apply_action``), (b) our Python ``GameState`` (``legal_actions`` + ``apply``),
  (c) the native batched ``step`` driven from Python, a batch of 256 boards, each move a uniformly random
  legal edge picked with numpy from ``legal_masks``, and (d) playouts entirely in C++
  (``random_playouts``);
* chainloop6 microseconds per state on positions of plausible play cut at a random move: pyspiel's
  ``observation_tensor()`` (its own, different planes: the cost of an observation in OpenSpiel), our
  Python ``encode_batch``, the native ``encode`` on boards already in native form, and the native path
  from a list of ``GameState`` (``to_native`` + ``encode``).

Ratios are against pyspiel (higher is faster).

    python benchmarks/native.py [--board 5x5] [--games 300] [--batch 256] [--states 500] [--rounds 3]
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np
import pyspiel

from dnb_env import native
from dnb_env.analysis import realistic_move
from dnb_env.core import GameState, parse_board
from dnb_env.observations import encode_batch


def timed(fn):
    t = time.perf_counter()
    work = fn()
    return work / (time.perf_counter() - t)


def spiel_playouts(rows, cols, games, seed):
    game = pyspiel.load_game("dots_and_boxes", {"num_rows": rows, "num_cols": cols})
    rng = random.Random(seed)

    def run():
        steps = 0
        for _ in range(games):
            s = game.new_initial_state()
            while not s.is_terminal():
                s.apply_action(rng.choice(s.legal_actions()))
                steps += 1
        return steps

    return timed(run)


def python_playouts(rows, cols, games, seed):
    rng = random.Random(seed)

    def run():
        steps = 0
        for _ in range(games):
            s = GameState.new(rows, cols)
            while not s.is_terminal():
                s = s.apply(rng.choice(s.legal_actions()))
                steps += 1
        return steps

    return timed(run)


def batched_steps(rows, cols, games, batch, seed):
    """About ``games`` games' worth of moves on ``batch`` boards, finished boards reset as they end."""
    rng = np.random.default_rng(seed)
    boards = native.NativeBoards(rows, cols, batch)
    A = boards.num_actions
    mask = np.empty((batch, A), dtype=np.int8)
    moves = max(1, games * A // batch)

    def run():
        for _ in range(moves):
            boards.legal_masks(mask)
            boards.step((rng.random((batch, A)) * mask).argmax(axis=1))
            done = boards.terminal()
            if done.any():
                boards.reset(done)
        return moves * batch

    return timed(run)


def native_playouts(rows, cols, games, seed):
    boards = native.NativeBoards(rows, cols, 1)
    return timed(lambda: int(boards.random_playouts(seed, games).size) * boards.num_actions)


def positions(n, rows, cols, seed=0):
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        s = GameState.new(rows, cols)
        stop = rng.randrange(min(5, s.num_actions - 1), max(6, s.num_actions - 3))
        while len(s.history) < stop and not s.is_terminal():
            s = s.apply(realistic_move(s, rng))
        out.append(s)
    return out


def per_state_us(fn, n):
    t = time.perf_counter()
    fn()
    return (time.perf_counter() - t) / n * 1e6


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--board", default="5x5")
    p.add_argument("--games", type=int, default=300, help="games per round for the Python-driven loops")
    p.add_argument("--native-games", type=int, default=100_000, help="games per round of C++ playouts")
    p.add_argument("--batch", type=int, default=256)
    p.add_argument("--states", type=int, default=500)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args(argv)
    if not native.available():
        raise SystemExit("the C++ extension dnb_env._native is not built (no compiler?): nothing to compare")
    rows, cols = parse_board(args.board)

    play = {"pyspiel": 0.0, "python": 0.0, "batched": 0.0, "cpp": 0.0}
    for r in range(args.rounds):  # interleaved so that machine noise hits all alike
        play["pyspiel"] = max(play["pyspiel"], spiel_playouts(rows, cols, args.games, r))
        play["python"] = max(play["python"], python_playouts(rows, cols, args.games, r))
        play["batched"] = max(play["batched"], batched_steps(rows, cols, args.games, args.batch, r))
        play["cpp"] = max(play["cpp"], native_playouts(rows, cols, args.native_games, r))

    states = positions(args.states, rows, cols)
    spiel_states = [s.to_pyspiel() for s in states]
    boards = native.to_native(states)
    assert np.array_equal(boards.encode("chainloop6"), encode_batch("chainloop6", states))
    n = len(states)
    enc = {"pyspiel": float("inf"), "python": float("inf"), "native": float("inf"), "native_from_states": float("inf")}
    for _ in range(args.rounds):
        enc["pyspiel"] = min(enc["pyspiel"], per_state_us(lambda: [ps.observation_tensor() for ps in spiel_states], n))
        enc["python"] = min(enc["python"], per_state_us(lambda: encode_batch("chainloop6", states), n))
        enc["native"] = min(enc["native"], per_state_us(lambda: boards.encode("chainloop6"), n))
        enc["native_from_states"] = min(
            enc["native_from_states"], per_state_us(lambda: native.to_native(states).encode("chainloop6"), n)
        )

    base = play["pyspiel"]
    print(f"random playouts on {rows}x{cols}, best of {args.rounds} rounds")
    print(f"{'engine':<52}{'steps/s':>14}{'vs pyspiel':>12}")
    rows_out = [
        ("(a) pyspiel C++ (legal_actions + apply_action)", "pyspiel"),
        ("(b) GameState (legal_actions + apply)", "python"),
        (f"(c) native batched step, {args.batch} boards, numpy picks", "batched"),
        ("(d) native C++ playouts (random_playouts)", "cpp"),
    ]
    for label, key in rows_out:
        print(f"{label:<52}{play[key]:>14,.0f}{play[key] / base:>12.2f}")
    print(f"\nchainloop6 on {n} {rows}x{cols} positions of plausible play, best of {args.rounds} rounds")
    print(f"{'encoder':<52}{'us/state':>14}{'vs pyspiel':>12}")
    for label, key in [
        ("pyspiel observation_tensor() (its own planes)", "pyspiel"),
        ("Python encode_batch('chainloop6', states)", "python"),
        ("native boards.encode('chainloop6')", "native"),
        ("native to_native(states).encode('chainloop6')", "native_from_states"),
    ]:
        print(f"{label:<52}{enc[key]:>14.2f}{enc['pyspiel'] / enc[key]:>12.2f}")
    return {"playout_steps_per_s": play, "chainloop6_us": enc}


if __name__ == "__main__":
    main()
