"""Do the Nimstring search's forms change an answer when one table is kept over many positions?

Realistic positions of BOARD with LO..HI undrawn edges (``dnb_env.analysis.realistic_position``, seed SEED): each
position's value and every move's result from the default search, its table kept from position to position (so
that parts are answered by the forms of parts met in other positions, and parts joined only by long runs are
split into the games they hold), against the search keyed by edges alone from an empty table. Stops at the
first difference (an AssertionError naming the position); prints how many positions it compared.

    PYTHONPATH=. python research/frontier/forms_check.py 5x5 28 38 120 8
"""

from __future__ import annotations

import random
import sys

from dnb_env import native
from dnb_env.analysis import realistic_position


def main(board: str, lo: int, hi: int, count: int, seed: int = 0) -> int:
    rows, cols = map(int, board.split("x"))
    kept = native._require().Nimstring(rows, cols)
    edges_only = native._require().Nimstring(rows, cols, forms=False)
    rng = random.Random(seed)
    compared = 0
    for _ in range(count):
        s = realistic_position(board, rng.randint(lo, hi), rng)
        want = edges_only.value(s.edges, 2 * 10 ** 6)
        if want is None:  # too large for the edge-keyed search's budget
            continue
        assert kept.value(s.edges, 10 ** 9, keep=True) == want, (board, s.edges)
        moves = edges_only.move_wins(s.edges, 4 * 10 ** 6)
        if moves is not None:
            assert kept.move_wins(s.edges, 10 ** 9, keep=True) == moves, (board, s.edges)
        compared += 1
    print(f"{board}, {lo}-{hi} undrawn edges, seed {seed}: {compared} of {count} positions compared, every answer "
          f"the same ({kept.entries:,} entries in the kept table)")
    return compared


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), *(int(a) for a in sys.argv[5:6]))
