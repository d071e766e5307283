"""Does `prsboxes` lose anything in games by not playing a Nimstring-winning move that the solver's check showed
to lose on boxes (where every move its search found was shown to lose)?

The agent before that change is registered here as ``prsboxes_plays_refused`` (it plays the first such move, as
`prsboxes` did), and the arguments go to ``dnb`` (``registry.cli``), in this process (``--workers 1``):

    PYTHONPATH=. python research/frontier/refused_match.py tournament --board 5x5 \\
        --agents prsboxes,prsboxes_plays_refused --games 200 --openings 10:guided --time-per-move 1 \\
        --workers 1 --seed 3 --out runs/frontier-match-refused
"""

from __future__ import annotations

import dataclasses
import sys

from baselines.prsboxes import PRsBoxesAgent
from registry.agents import register_agent
from registry.cli import main as dnb


class PlaysRefused(PRsBoxesAgent):
    """`prsboxes` as it was: where every Nimstring-winning move found was shown to lose on boxes, the first."""

    name = "prsboxes_plays_refused"

    def _nimstring_choice(self, state, groups):
        choice = super()._nimstring_choice(state, groups)
        return dataclasses.replace(choice, kept=None) if choice.kept is False else choice


register_agent("prsboxes_plays_refused", lambda *, board, seed, **options: PlaysRefused(seed=seed, board=board,
                                                                                          **options))

if __name__ == "__main__":
    sys.exit(dnb(sys.argv[1:]))
