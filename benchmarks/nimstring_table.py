"""Think time of the network agents' searches with and without one Nimstring table a move, side by side.

The ``chainloop6_nim*`` encoders search Nimstring at every leaf a search evaluates. The agents open their
evaluator's ``move_scope`` (:func:`dnb_env.features.nimstring_table`) around each move's search, so the
leaves' Nimstring searches share one table; without it each starts from an empty one. This plays one move in each position of a teacher
dataset at the chosen undrawn counts (at most ``--per-count`` each), for each agent, alternately without
and with the shared table, after a first pass that warms the process up and is not counted; every move
starts with the cache of Nimstring answers (``nimstring_move_wins``'s, kept across calls outside a block)
emptied, as for a position met for the first time. It prints the mean and longest think time by undrawn
count and how many of the moves the two ways agree on.

    python benchmarks/nimstring_table.py --held data/teach5-nfar-held --undrawn 39-40 --per-count 10 \
        --agents dotsformer,alphazero
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import time
from collections import defaultdict


def main(argv=None) -> dict:
    import agents.search.agent as search_agent
    from agents.training.dataset import TeacherData
    from dnb_env import features
    from registry import make_agent
    from registry.specs import parse_agent_spec, split_agents

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--held", required=True, metavar="DIR", help="teacher dataset whose positions are played")
    p.add_argument("--undrawn", default="39-40", help="MIN-MAX undrawn edges (default 39-40)")
    p.add_argument("--per-count", type=int, default=10, help="positions at most per undrawn count (default 10)")
    p.add_argument("--agents", default="dotsformer,alphazero", help="agent specs (default: the shipped two)")
    p.add_argument("--rounds", type=int, default=2, help="counted passes each way, alternating (default 2)")
    args = p.parse_args(argv)
    lo, _, hi = args.undrawn.partition("-")
    lo, hi = int(lo), int(hi or lo)
    if not 1 <= lo <= hi or args.per_count < 1 or args.rounds < 1:
        p.error("--undrawn MIN-MAX with 1 <= MIN <= MAX; --per-count and --rounds >= 1")
    positions = []
    counts: dict[int, int] = defaultdict(int)
    for s in TeacherData.load(args.held).samples.states():
        u = s.num_actions - bin(s.edges).count("1")
        if lo <= u <= hi and counts[u] < args.per_count and not s.is_terminal():
            positions.append((u, s))
            counts[u] += 1
    if not positions:
        p.error("no position of the dataset has that many undrawn edges")
    board = f"{positions[0][1].rows}x{positions[0][1].cols}"
    shared_table = search_agent.move_scope  # opens the evaluator's table around each move

    def play(spec: str, shared: bool):
        search_agent.move_scope = shared_table if shared else (lambda evaluator: contextlib.nullcontext())
        try:
            name, kw = parse_agent_spec(spec)
            agent = make_agent(name, board=board, seed=0, **kw)
            times, moves = defaultdict(list), []
            for u, s in positions:
                agent.reset()
                features._nim_moves.cache_clear()  # no answer kept from an earlier move or pass
                t = time.perf_counter()
                moves.append(agent.select_action(s))
                times[u].append(time.perf_counter() - t)
            return times, moves
        finally:
            search_agent.move_scope = shared_table

    out = {}
    print(f"{board}, {len(positions)} positions of {args.held}; think time in s a move, mean / longest")
    print("| agent | undrawn | positions | a table a search | one table a move | mean, without / with | same moves |")
    print("|---|---|---|---|---|---|---|")
    for spec in split_agents(args.agents):
        play(spec, False)  # warm-up, not counted
        got = {False: defaultdict(list), True: defaultdict(list)}
        moves = {}
        for _ in range(args.rounds):
            for shared in (False, True):
                times, moves[shared] = play(spec, shared)
                for u, v in times.items():
                    got[shared][u] += v
        same = sum(a == b for a, b in zip(moves[False], moves[True]))
        for u in sorted(counts):
            a, b = got[False][u], got[True][u]
            row = {"without": (statistics.fmean(a), max(a)), "with": (statistics.fmean(b), max(b)),
                   "ratio": statistics.fmean(a) / max(statistics.fmean(b), 1e-9), "same": same}
            out[(spec, u)] = row
            print(f"| {spec} | {u} | {counts[u]} | {row['without'][0]:.2f} / {row['without'][1]:.2f} | "
                  f"{row['with'][0]:.2f} / {row['with'][1]:.2f} | {row['ratio']:.2f} | {same} of {len(positions)} |")
    return out


if __name__ == "__main__":
    main()
