"""The safe-phase feature's cost by game phase, with and without its limit on safe moves, side by side.

Positions come from games of a plausible player (:func:`dnb_env.analysis.realistic_move`). Each position
is searched twice with an empty cache: with the default limit (:data:`dnb_env.features.SAFE_PHASE_MAX_SAFE`
safe moves; more: no values, no search) and without one. The table gives, by moves played, the mean
milliseconds of each, their ratio, how many positions get values, and how many answers differ (the limit
is meant to cut only searches that give up: 0 expected). ``--sacrifices K`` times the search with K
sacrifices allowed instead (its limit is :data:`dnb_env.features.SACRIFICE_MAX_SAFE` safe moves).

    python benchmarks/safe_feature.py [--games 20] [--board 5x5] [--sacrifices 2]
"""

from __future__ import annotations

import argparse
import random
import time

import numpy as np

from dnb_env.analysis import realistic_move
from dnb_env.core import GameState
from dnb_env.features import SAFE_PHASE_MAX_SAFE, _values, safe_phase_values


def game_positions(board: str, games: int, seed: int) -> list[GameState]:
    rng = random.Random(seed)
    out = []
    for _ in range(games):
        s = GameState.new(board)
        while not s.is_terminal():
            out.append(s)
            s = s.apply(realistic_move(s, rng))
    return out


def timed(state: GameState, max_safe: int | None, sacrifices: int = 0) -> tuple[float, np.ndarray | None]:
    _values.cache_clear()
    t = time.perf_counter()
    values = safe_phase_values(state, max_safe=max_safe, sacrifices=sacrifices)
    return time.perf_counter() - t, values


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--board", default="5x5")
    p.add_argument("--games", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--bucket", type=int, default=10, help="moves played per row of the table")
    p.add_argument("--sacrifices", type=int, default=0, help="sacrifices the search allows (default 0)")
    args = p.parse_args(argv)
    if args.sacrifices < 0:
        p.error("--sacrifices must be >= 0")
    rows: dict[int, list] = {}
    for s in game_positions(args.board, args.games, args.seed):
        (t_lim, v_lim), (t_free, v_free) = timed(s, SAFE_PHASE_MAX_SAFE, args.sacrifices), timed(s, None, args.sacrifices)
        same = (v_lim is None) == (v_free is None) and (v_lim is None or np.array_equal(v_lim, v_free, equal_nan=True))
        rows.setdefault(len(s.history) // args.bucket, []).append((t_lim, t_free, v_lim is not None, same))
    print(f"{args.board}: {sum(map(len, rows.values()))} positions of {args.games} games (seed {args.seed}), "
          f"each searched with an empty cache, {args.sacrifices} sacrifices allowed")
    print(f"{'moves played':<14}{'positions':>10}{'limited ms':>12}{'unlimited ms':>14}{'ratio':>8}"
          f"{'with values':>13}{'differ':>8}")
    out = {}
    for b in sorted(rows):
        r = np.array(rows[b], dtype=float)
        lim, free = 1000 * r[:, 0].mean(), 1000 * r[:, 1].mean()
        label = f"{b * args.bucket}-{(b + 1) * args.bucket - 1}"
        differ = int(len(r) - r[:, 3].sum())
        out[label] = {"limited_ms": lim, "unlimited_ms": free, "positions": len(r), "differ": differ}
        print(f"{label:<14}{len(r):>10}{lim:>12.2f}{free:>14.2f}{free / max(lim, 1e-9):>8.1f}"
              f"{int(r[:, 2].sum()):>13}{differ:>8}")
    return out


if __name__ == "__main__":
    main()
