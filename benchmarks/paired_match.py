"""Two tournaments of one schedule compared game by game: did changing an agent change its score?

Two runs of ``dnb tournament`` with the same board, seed, openings and games play the same openings with
the same colours game for game (every game's opening and seeds depend only on its id). When one agent is
swapped for another (say a network for its fine-tune) and the opponent is the same, the two runs can be
compared on the same games, which is much sharper than setting their two intervals side by side: the
games only one of the two versions wins, the paired difference of their scores with Newcombe's 95%
interval for paired rates, and the exact McNemar p-value.

    python benchmarks/paired_match.py runs/ship-eval/v35-df runs/ship-eval/h2h-search --agent dotsformer

``--agent`` picks the agent whose score is compared: the part of its spec before the first ``:`` (the
family), or the whole spec; it must name one of the two agents of each run. Only the games both runs have
played count, and a game whose opening differs between the runs is refused: the runs do not share a
schedule. Scores are wins (1) and losses (0); a draw (possible on boards with an even number of boxes)
counts as half a win on each side of the pair and is left out of the paired test.

``--opponent`` (named the same way) keeps only the games against that opponent, e.g. one opponent of a
gauntlet:

    python benchmarks/paired_match.py runs/ship-eval/v42-10000-s1600-base-df runs/ship-eval/base-df \
        --agent dotsformer --opponent prsboxes
"""

from __future__ import annotations

import argparse
import json
import os

from agents.arena.ratings import paired_difference, wilson_interval
from agents.arena.results import RESULTS, read_games


def _matches(spec: str, agent: str) -> bool:
    return spec == agent or spec.split(":", 1)[0] == agent


def agent_scores(games: list[dict], agent: str, opponent: str | None = None) -> dict[str, tuple[float, list]]:
    """{game id: (the agent's score, the opening)} for the games of ``games`` where ``agent`` plays (against
    ``opponent`` only, when given)."""
    out = {}
    for g in games:
        first, second = g.get("first"), g.get("second")
        if first is None or second is None:
            raise ValueError(f"game {g['id']} names no players: not a results file of dnb tournament")
        in_first, in_second = _matches(first, agent), _matches(second, agent)
        if in_first == in_second:
            raise ValueError(f"--agent {agent!r} must name exactly one of the two players of game {g['id']}: "
                             f"{first!r} and {second!r}")
        if opponent is not None and not _matches(second if in_first else first, opponent):
            continue
        r = float(g["result_first"])
        out[g["id"]] = (r if in_first else 1.0 - r, list(g.get("opening") or []))
    return out


def compare(games_a: list[dict], games_b: list[dict], agent: str, opponent: str | None = None) -> dict:
    """The agent's score in run A against run B over the games both have played (against ``opponent``)."""
    a, b = agent_scores(games_a, agent, opponent), agent_scores(games_b, agent, opponent)
    common = [i for i in a if i in b]
    if not common:
        raise ValueError("the two runs have no game in common: they do not share a schedule")
    for i in common:
        if a[i][1] != b[i][1]:
            raise ValueError(f"game {i} has another opening in each run: the runs do not share a schedule")
    xs = [a[i][0] for i in common]
    ys = [b[i][0] for i in common]
    decided = [(x, y) for x, y in zip(xs, ys) if x in (0.0, 1.0) and y in (0.0, 1.0)]
    pd = paired_difference([x for x, _ in decided], [y for _, y in decided])
    n = len(common)
    return {"games": n, "score_a": sum(xs) / n, "score_b": sum(ys) / n,
            "interval_a": wilson_interval(sum(xs), n), "interval_b": wilson_interval(sum(ys), n),
            "only_a": pd.only_first, "only_b": pd.only_second, "difference": pd.diff,
            "difference_interval": pd.ci, "p": pd.p, "draws_left_out": n - len(decided)}


def _games(folder: str) -> list[dict]:
    path = os.path.join(folder, RESULTS) if os.path.isdir(folder) else folder
    if not os.path.exists(path):
        raise SystemExit(f"no results at {path}")
    return read_games(path)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("a", help="the first run's folder (or its results.jsonl)")
    ap.add_argument("b", help="the second run's folder (or its results.jsonl)")
    ap.add_argument("--agent", required=True, help="the agent compared: its family or its whole spec")
    ap.add_argument("--opponent", help="only the games against this opponent: its family or its whole spec")
    ap.add_argument("--json", help="also write the figures to this file")
    args = ap.parse_args(argv)
    try:
        r = compare(_games(args.a), _games(args.b), args.agent, args.opponent)
    except ValueError as e:
        raise SystemExit(str(e))
    lo, hi = r["difference_interval"]
    print(f"{args.agent}: {r['games']} games in both runs" + (f" against {args.opponent}" if args.opponent else ""))
    print("| run | score | games only this run wins |\n|---|---|---|")
    for key, name in (("a", args.a), ("b", args.b)):
        il, ih = r[f"interval_{key}"]
        print(f"| {name} | {r[f'score_{key}']:.3f} [{il:.3f}, {ih:.3f}] | {r[f'only_{key}']} |")
    print(f"paired difference {r['difference']:+.3f} [{lo:+.3f}, {hi:+.3f}], McNemar p = {r['p']:.3g}"
          + (f" ({r['draws_left_out']} games with a draw left out of the test)" if r["draws_left_out"] else ""))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(r, f, indent=1)
    return r


if __name__ == "__main__":
    main()
