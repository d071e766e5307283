"""The Nimstring search (``dnb_env._native.Nimstring.move_wins``, as the ``chainloop6_nim`` encoders and the
agents call it) in its variants, side by side on the same positions: by undrawn edges, how many positions each
finishes within the position budget, and its time per position (median and mean, finished or not). Where two
finish, their answers must agree (the variants change how much is searched, not what is found); a disagreement
stops the benchmark.

The variants (``--searches``): ``plain`` (no reduction), ``reduced`` (move ordering by earlier winning moves,
one border side a box) and ``forms`` (``reduced``, and every part keyed by its canonical form, so that the same
part met anywhere on the board, or with other lengths of its long chains, is searched once); ``first`` is
``forms`` asked for the first winning move in edge order only (``first_win``, as ``prsboxes`` asks, which stops
there instead of settling every move; its answer is checked against the others' first winning move). The ratio
column is the mean time of the first variant over the last.

Positions come from teacher datasets (``--held``, repeatable), taken in order, or from games (``--games N``:
``alphabeta:depth=2`` against ``greedy``, colours alternating, each opened by ``num_actions // 6`` guided random
moves as in ``benchmarks/midgame.py``, seeded by ``--seed``): at most ``--per-count`` a count of undrawn edges
within ``--undrawn``; each is searched in the board's canonical orientation, as the encoders do.

    python benchmarks/nimstring.py --held data/teach5-gfar-held --held data/teach5-nfar-held --undrawn 36-42
    python benchmarks/nimstring.py --games 12 --undrawn 40-46 --per-count 12 --positions 2000000
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections import defaultdict

SEARCHES = {"plain": dict(reductions=False, forms=False), "reduced": dict(reductions=True, forms=False),
            "forms": dict(reductions=True, forms=True), "first": dict(reductions=True, forms=True)}


def _held_positions(held: list[str], lo: int, hi: int, per_count: int) -> dict[int, list]:
    from agents.training.dataset import TeacherData

    chosen: dict[int, list] = defaultdict(list)
    for path in held:
        for s in TeacherData.load(path).samples.states():
            u = s.num_actions - bin(s.edges).count("1")
            if lo <= u <= hi and len(chosen[u]) < per_count and not s.is_terminal():
                chosen[u].append(s)
    return chosen


def _game_positions(board: str, games: int, seed: int, lo: int, hi: int, per_count: int) -> dict[int, list]:
    from agents.arena import make_opening
    from dnb_env.core import GameState
    from registry import make_agent

    players = [make_agent("alphabeta", board=board, seed=seed, depth=2), make_agent("greedy", board=board,
                                                                                     seed=seed + 1)]
    chosen: dict[int, list] = defaultdict(list)
    for game in range(games):
        first, second = players if game % 2 == 0 else players[::-1]
        s = GameState.from_actions(board, actions=make_opening(board, GameState.new(board).num_actions // 6,
                                                               "guided", seed * 100_003 + game))
        while not s.is_terminal():
            u = s.num_actions - s.edges.bit_count()
            if u < lo:
                break
            if u <= hi and len(chosen[u]) < per_count:
                chosen[u].append(s)
            s = s.apply((first, second)[s.current_player].select_action(s))
    return chosen


def main(argv=None) -> dict:
    from dnb_env import native
    from dnb_env.features import NIMSTRING_POSITIONS, _canonical_edges

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--held", action="append", default=[], metavar="DIR", help="teacher dataset (repeatable)")
    p.add_argument("--games", type=int, default=0, help="take positions from this many games instead")
    p.add_argument("--board", default="5x5", help="the games' board (default 5x5)")
    p.add_argument("--seed", type=int, default=7, help="the games' seed (default 7)")
    p.add_argument("--undrawn", default="36-42", help="MIN-MAX undrawn edges (default 36-42)")
    p.add_argument("--per-count", type=int, default=20, help="positions at most per undrawn count (default 20)")
    p.add_argument("--positions", type=int, default=NIMSTRING_POSITIONS,
                   help=f"the search's position budget (default {NIMSTRING_POSITIONS})")
    p.add_argument("--seconds", type=float, default=None,
                   help="also stop each search after this many seconds (default: the position budget only)")
    p.add_argument("--searches", default="plain,reduced",
                   help=f"comma-separated variants, of {', '.join(SEARCHES)} (default plain,reduced)")
    args = p.parse_args(argv)
    lo, _, hi = args.undrawn.partition("-")
    lo, hi = int(lo), int(hi or lo)
    names = args.searches.split(",")
    if not 1 <= lo <= hi or args.per_count < 1 or args.positions < 1 or args.games < 0 or not (
            args.seconds is None or args.seconds > 0):
        p.error("--undrawn MIN-MAX with 1 <= MIN <= MAX; --per-count and --positions >= 1; --games >= 0; "
                "--seconds > 0")
    if bool(args.held) == bool(args.games):
        p.error("give the positions' source: --held DIR (repeatable) or --games N")
    if not names or any(n not in SEARCHES for n in names) or len(set(names)) != len(names):
        p.error(f"--searches: distinct names of {', '.join(SEARCHES)}, got {args.searches!r}")

    if args.held:
        chosen = _held_positions(args.held, lo, hi, args.per_count)
    else:
        chosen = _game_positions(args.board, args.games, args.seed, lo, hi, args.per_count)
    if not chosen:
        p.error("no position has that many undrawn edges")
    rows, cols = next(iter(chosen.values()))[0].rows, next(iter(chosen.values()))[0].cols
    searches = {n: native._require().Nimstring(rows, cols, **SEARCHES[n]) for n in names}
    out = {}
    limit = f"{args.positions:,} positions" + ("" if args.seconds is None else f" or {args.seconds:g} s")
    print(f"{rows}x{cols}, budget {limit}; time per position in ms, finished or not")
    print("| undrawn | positions | " + " | ".join(f"{n}: finished | median | mean" for n in names)
          + f" | mean time, {names[0]} / {names[-1]} |")
    print("|---|---|" + "---|---|---|" * len(names) + "---|")
    for u in sorted(chosen):
        row = _compare(searches, chosen[u], args.positions, args.seconds, _canonical_edges)
        ratio = row[names[0]]["mean_ms"] / max(row[names[-1]]["mean_ms"], 1e-9)
        out[u] = row | {"positions": len(chosen[u]), "ratio": ratio}
        cells = " | ".join(f"{row[n]['finished']} | {row[n]['median_ms']:.1f} | {row[n]['mean_ms']:.1f}"
                           for n in names)
        print(f"| {u} | {len(chosen[u])} | {cells} | {ratio:.2f} |")
    return out


def _compare(searches: dict, states: list, positions: int, seconds: float | None, canonical_edges) -> dict:
    """Each search on each state: {name: {finished, median_ms, mean_ms}}; SystemExit where two disagree."""
    done = {k: 0 for k in searches}
    times = {k: [] for k in searches}
    for s in states:
        _, edges = canonical_edges(s.rows, s.cols, s.edges)
        answers = {}
        for name, nim in searches.items():
            t = time.perf_counter()
            if name == "first":
                moves = [a for a in range(s.num_actions) if not edges >> a & 1]
                answers[name] = nim.first_win(edges, moves, positions, seconds=seconds)
            else:
                answers[name] = nim.move_wins(edges, positions, seconds=seconds)
            times[name].append(1000 * (time.perf_counter() - t))
            done[name] += answers[name] is not None
        if not _agree(answers):
            raise SystemExit(f"the searches disagree on the position {s.edges:#x}")
    return {k: {"finished": done[k], "median_ms": statistics.median(times[k]),
                "mean_ms": statistics.fmean(times[k])} for k in searches}


def _agree(answers: dict) -> bool:
    """Whether the finished searches agree: the same move results, and ``first`` their first winning move."""
    settled = [a for n, a in answers.items() if a is not None and n != "first"]
    if any(a != settled[0] for a in settled):
        return False
    first = answers.get("first")
    return not settled or first is None or first == next((m for m in sorted(settled[0]) if settled[0][m]), -1)


if __name__ == "__main__":
    main()
