"""Does `prsboxes` gain in games from the solver's move where no Nimstring-winning move keeps the win?

Where no safe move that wins Nimstring keeps a won game won (none wins Nimstring, or the check refused every one
found), `prsboxes` now asks the exact solver's win test of the position itself for a move that keeps the win
(`NimstringChoice.solved`). The agent before that change is registered here as ``prsboxes_unsolved`` (no such
test: the rules after the Nimstring move decide, as before), and the arguments go to ``dnb`` (``registry.cli``),
in this process (``--workers 1``):

    PYTHONPATH=. python research/frontier/solved_match.py tournament --board 5x5 \\
        --agents prsboxes,prsboxes_unsolved --games 200 --openings 10:guided --time-per-move 1 \\
        --workers 1 --seed 3 --out runs/frontier-match-solved

On the frontier sets the same agent is scored with ``benchmarks/frontier.py`` through this module too:

    PYTHONPATH=. python research/frontier/solved_match.py score --sets research/frontier/sets/5x5-s20.json \\
        --agents prsboxes_unsolved --time-per-move 1 --seed 0
"""

from __future__ import annotations

import sys

from baselines.prsboxes import PRsBoxesAgent
from registry.agents import register_agent


class Unsolved(PRsBoxesAgent):
    """`prsboxes` as it was: no win test of the position where no Nimstring-winning move keeps the win."""

    name = "prsboxes_unsolved"

    def __init__(self, **options):
        super().__init__(**options)
        self.nimstring._solved = lambda state, until: None


register_agent("prsboxes_unsolved", lambda *, board, seed, **options: Unsolved(seed=seed, board=board, **options))

if __name__ == "__main__":
    if sys.argv[1:2] == ["score"]:
        from benchmarks.frontier import main as frontier
        sys.exit(frontier(sys.argv[1:]))
    from registry.cli import main as dnb
    sys.exit(dnb(sys.argv[1:]))
