"""`prsboxes` with its Nimstring search ordered by AlphaViT's prior: `benchmarks/frontier.py score` with, when
``--alphavit-order`` is given, every `prsboxes` agent's safe moves tried by the shipped `alphavit.pt`'s prior at
the root (highest first; what the network agents' ``nimstring_order=prior`` does) instead of the long chain
rule's order. Not a `prsboxes` option: `prsboxes` needs no network, and the gain is within the noise (the
research page, "The network's prior as the search's order").

    PYTHONPATH=. python research/frontier/prsboxes_order.py score --sets research/frontier/sets/5x5-s20.json \
        research/frontier/sets/5x5-s18.json --agents prsboxes --time-per-move 1 --json research/frontier/scores/prsboxes-rule-1s.json
    PYTHONPATH=. python research/frontier/prsboxes_order.py --alphavit-order score --sets ... (the same) \
        --json research/frontier/scores/prsboxes-alphavit-order-1s.json
"""

from __future__ import annotations

import importlib.util
import pathlib
import sys
import time

import baselines.prsboxes as prsboxes

FRONTIER = pathlib.Path(__file__).resolve().parents[2] / "benchmarks" / "frontier.py"


def _frontier():
    """``benchmarks/frontier.py`` as a module (the benchmarks are scripts, not a package)."""
    spec = importlib.util.spec_from_file_location("bench_frontier", FRONTIER)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def ordered_by(evaluator):
    """A `PRsBoxesAgent._nimstring_choice` that passes ``evaluator``'s prior at the root as the search's scores."""

    def _nimstring_choice(self, state, groups):
        scores = evaluator.evaluate([state])[0][0]
        search_until = check_until = None
        if self._deadline is not None:
            search_until = time.perf_counter() + prsboxes.NIMSTRING_CLOCK * self._left()
            check_until = self._deadline
        return self.nimstring.choose(state, groups, self.rng, search_until=search_until, check_until=check_until,
                                     scores=scores)

    return _nimstring_choice


def main(argv: list[str]) -> None:
    if "--alphavit-order" in argv:
        from agents.checkpoint import load_network
        from agents.models.evaluator import NetworkEvaluator

        argv = [a for a in argv if a != "--alphavit-order"]
        net = load_network("agents/checkpoints/alphavit.pt", board="5x5")[0]
        prsboxes.PRsBoxesAgent._nimstring_choice = ordered_by(NetworkEvaluator(net))
    _frontier().main(argv)


if __name__ == "__main__":
    main(sys.argv[1:])
