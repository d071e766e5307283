"""Encoder cost on realistic 5x5 positions, and chainloop6 against pyspiel's observation_tensor().

Positions come from games of a plausible player (:func:`dnb_env.analysis.realistic_move`) cut at a
random move. For each encoder: microseconds per state through ``encode`` (one state per call) and through
``encode_batch`` (all states in one call), and for chainloop6 the ratio to OpenSpiel's C++
``observation_tensor()`` on the same positions, all measured in one run.

    python benchmarks/encoders.py [--states 500] [--rounds 3]
"""

from __future__ import annotations

import argparse
import random
import time

import pyspiel

from dnb_env.analysis import realistic_move
from dnb_env.core import GameState
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


def per_state_us(fn, items, rounds):
    best = float("inf")
    for _ in range(rounds):
        t = time.perf_counter()
        fn(items)
        best = min(best, time.perf_counter() - t)
    return best / len(items) * 1e6


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--states", type=int, default=500)
    p.add_argument("--rounds", type=int, default=3)
    args = p.parse_args(argv)
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
