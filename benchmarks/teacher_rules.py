"""Hand-written move rules scored on a held-out teacher dataset, the way ``dnb fit`` scores networks.

Rows: greedy (its expected score, uniform over the moves it allows), the long chain rule (among
greedy's moves, the safe ones after which dots + long chains has the parity the mover wants), two
parity rules over the safe-move game, and the safe-phase search of
:func:`dnb_env.features.safe_phase_values` (the moves it rates best; greedy where the feature is empty).
The safe-move game is the impartial game of drawing safe edges only (edges that give no box its third
side) in which the last player able to move wins; it is solved exactly, with the captures on the board
ignored. "Safe parity" plays, among greedy's safe moves, those after which the opponent loses it. "Safe
parity + short chains" also counts the chains of one or two boxes after the move: each one sacrificed
hands the turn back, so it plays the safe moves after which the opponent is the one who must open the
first long chain. Each rule falls back to greedy's moves where no move qualifies, and scores the
expected result of a uniform pick among its moves. "keep" is the share of winning positions where the
rule keeps the win, "hard" the same on the greedy-hard ones, then "keep" by moves played.

"Nimstring" (``--rules ...,nimstring``) plays, among greedy's moves, those that win Nimstring for the mover
(:func:`dnb_env.features.nimstring_move_wins`: the game played for the last move, whose winner gets
control), within ``--nim-positions`` positions of search (greedy where the search gives up); its value
table row scores "the mover wins Nimstring" as a predictor of the exact result. Datasets of result-only
positions (no move labels) get the value table only.

``--sacrifices 0,1,2`` gives one safe-phase row per sacrifice budget (``safe_phase_values(state,
sacrifices=k)``), and a second table: each search's value of the position (the mover's lead plus its best
move's value) as a predictor of the exact result on the decided positions it has values for: the share
of signs right beside the share the mover wins there, the AUC, and the search's time per position.

    python benchmarks/teacher_rules.py --held data/teach5-held --positions 2000 --sacrifices 0,1,2
    python benchmarks/teacher_rules.py --held data/teach5-nfar-held --positions 0 --rules greedy,nimstring
"""

from __future__ import annotations

import argparse
import time

import numpy as np


def safe_game_won(state, memo: dict) -> bool:
    """Whether the player to move wins the safe-move game from ``state`` (the last safe move wins; a safe
    move never captures, so the turn passes after each)."""
    from dnb_env.analysis import safe_moves

    won = memo.get(state.edges)
    if won is None:
        won = any(not safe_game_won(state.apply(a), memo) for a in safe_moves(state))
        memo[state.edges] = won
    return won


def _short_chains(state) -> int:
    from dnb_env.analysis import components

    return sum(1 for c in components(state) if c.kind == "chain" and not c.opened and c.length <= 2)


def parity_rule_moves(state, short_chains: bool) -> list[int]:
    """The safe moves among greedy's after which the opponent loses the safe-move game (``short_chains``:
    after which the opponent must open the first long chain, each short chain handing the turn back)."""
    from baselines.greedy import GreedyAgent
    from dnb_env.analysis import safe_moves

    safe = set(safe_moves(state))
    memo: dict = {}
    out = []
    for a in GreedyAgent.candidates(state):
        if a not in safe:
            continue
        after = state.apply(a)
        opponent_stuck = not safe_game_won(after, memo)  # the opponent makes the first unsafe move
        if short_chains and _short_chains(after) % 2:
            opponent_stuck = not opponent_stuck
        if opponent_stuck:
            out.append(a)
    return out


def main(argv=None) -> dict:
    from agents.training.heldout import HeldOut, value_auc
    from agents.training.dataset import TeacherData
    from baselines.greedy import GreedyAgent
    from dnb_env.features import NIMSTRING_POSITIONS, long_chain_rule_moves, nimstring_move_wins, safe_phase_values

    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--held", required=True, help="teacher dataset folder (dnb teach)")
    p.add_argument("--positions", type=int, default=2000, help="its first N positions (0: all)")
    p.add_argument("--sacrifices", default="0", help="comma-separated sacrifice budgets of the safe-phase "
                   "search, one row each (0: safe moves and captures only)")
    p.add_argument("--nodes", type=int, default=None, help="positions a safe-phase search may visit "
                   "(default: the feature's budget)")
    p.add_argument("--rules", default="greedy,chain,parity,safe", help="comma-separated rows among greedy, "
                   "chain (the long chain rule), parity (the two safe-move-game rules), safe (the safe-phase "
                   "searches) and nimstring (default: all but nimstring)")
    p.add_argument("--nim-positions", type=int, default=NIMSTRING_POSITIONS, help="new positions a Nimstring "
                   f"search may evaluate (default {NIMSTRING_POSITIONS})")
    args = p.parse_args(argv)
    rules = set(args.rules.split(","))
    if not rules or rules - {"greedy", "chain", "parity", "safe", "nimstring"}:
        p.error(f"--rules takes greedy, chain, parity, safe and nimstring, got {args.rules!r}")
    if args.nim_positions < 1:
        p.error(f"--nim-positions must be >= 1, got {args.nim_positions}")
    budgets = [int(k) for k in args.sacrifices.split(",")] if "safe" in rules else []
    if any(k < 0 for k in budgets):
        p.error("--sacrifices takes budgets >= 0")
    data = TeacherData.load(args.held)
    if args.positions:
        data = data.take(np.arange(min(args.positions, len(data))))
    held = HeldOut.of(data)
    win, hard = held.winning & held.labelled, held.winning & held.hard
    nim = held.greedy_keep.copy()
    nim_won = np.full(len(data), np.nan)  # 1: the mover wins Nimstring, 0: loses, NaN: past the budget
    nim_s = []
    safe = {k: held.greedy_keep.copy() for k in budgets}
    best = {k: np.full(len(held.winning), np.nan) for k in budgets}  # the position's value by the search
    search_s = {k: [] for k in budgets}
    chain = held.greedy_keep.copy()
    parity = held.greedy_keep.copy()
    parity_short = held.greedy_keep.copy()
    nodes = {} if args.nodes is None else {"nodes": args.nodes}
    t0 = time.perf_counter()
    for i, state in enumerate(data.samples.states()):
        if "nimstring" in rules:
            t = time.perf_counter()
            wins = nimstring_move_wins(state, args.nim_positions)
            nim_s.append(time.perf_counter() - t)
            if wins is not None:
                nim_won[i] = float(np.nanmax(wins) > 0)
                moves = [a for a in GreedyAgent.candidates(state) if wins[a] > 0]
                if moves and held.labelled[i]:
                    nim[i] = held.keeps[i, moves].mean()
        if not held.labelled[i]:
            continue
        for k in budgets:
            t = time.perf_counter()
            values = safe_phase_values(state, sacrifices=k, **nodes)
            search_s[k].append(time.perf_counter() - t)
            if values is not None:
                best[k][i] = np.nanmax(values)
                safe[k][i] = held.keeps[i, np.flatnonzero(values == best[k][i])].mean()
        if "chain" in rules:
            good = set(np.flatnonzero(long_chain_rule_moves(state)).tolist())
            moves = [a for a in GreedyAgent.candidates(state) if a in good]
            if moves:
                chain[i] = held.keeps[i, moves].mean()
        for column, short in ((parity, False), (parity_short, True)) if "parity" in rules else ():
            moves = parity_rule_moves(state, short)
            if moves:
                column[i] = held.keeps[i, moves].mean()
    seconds = time.perf_counter() - t0
    steps = sorted(set(held.step.tolist()))
    found = {k: int((~np.isnan(best[k])).sum()) for k in budgets}
    print(f"{len(data)} positions ({int(held.labelled.sum())} with move labels, {int(win.sum())} of them winning, "
          f"{int(hard.sum())} greedy-hard); the safe-phase feature on {found} (by sacrifices allowed)"
          + (f", Nimstring on {int((~np.isnan(nim_won)).sum())}" if "nimstring" in rules else "")
          + f"; {seconds:.1f} s")
    out = {}
    rows = ((("greedy", held.greedy_keep),) if "greedy" in rules else ()) + (
        (("long chain rule", chain),) if "chain" in rules else ()) + (
        (("safe parity", parity), ("safe parity + short chains", parity_short)) if "parity" in rules else ()) + tuple(
        ("safe-phase search" + (f", {k} sacrifice{'s' if k > 1 else ''}" if k else ""), safe[k]) for k in budgets) + (
        (("Nimstring", nim),) if "nimstring" in rules else ())
    if win.any():
        print(f"{'rule':<34}{'keep':>7}{'hard':>7}  " + " ".join(f"{k:>5}" for k in steps))
    for name, keep in rows if win.any() else ():
        by_step = [float(keep[win & (held.step == k)].mean()) if (win & (held.step == k)).any() else float("nan")
                   for k in steps]
        out[name] = {"keep": float(keep[win].mean()), "keep_hard": float(keep[hard].mean()) if hard.any() else float("nan"),
                     "by_step": dict(zip(steps, by_step))}
        print(f"{name:<34}{out[name]['keep']:>7.3f}{out[name]['keep_hard']:>7.3f}  "
              + " ".join(f"{v:>5.2f}" for v in by_step))
    # the search's value of the position as a predictor of the exact result (decided positions with values)
    outcome = np.asarray(data.samples.z)
    print(f"\n{'search':<34}{'values':>7}{'sign':>7}{'base':>7}{'AUC':>7}{'median ms':>11}{'p90 ms':>8}")
    for k in budgets:
        have = ~np.isnan(best[k]) & (outcome != 0)
        pred = np.sign(data.lead + best[k])
        sign = float((pred[have] == outcome[have]).mean()) if have.any() else float("nan")
        base = float((outcome[have] > 0).mean()) if have.any() else float("nan")
        auc = value_auc(data.lead[have] + best[k][have], outcome[have])
        ms = 1000 * np.array(search_s[k])
        out[f"value, {k} sacrifices"] = {"positions": int(have.sum()), "sign": sign, "base_rate": base, "auc": auc,
                                         "median_ms": float(np.median(ms)), "p90_ms": float(np.percentile(ms, 90))}
        print(f"{f'{k} sacrifices':<34}{int(have.sum()):>7}{sign:>7.3f}{base:>7.3f}{auc:>7.3f}"
              f"{np.median(ms):>11.2f}{np.percentile(ms, 90):>8.1f}")
    if "nimstring" in rules:
        have = ~np.isnan(nim_won) & (outcome != 0)
        pred = 2 * nim_won - 1
        sign = float((pred[have] == outcome[have]).mean()) if have.any() else float("nan")
        base = float((outcome[have] > 0).mean()) if have.any() else float("nan")
        auc = value_auc(pred[have], outcome[have])
        ms = 1000 * np.array(nim_s)
        out["value, Nimstring"] = {"positions": int(have.sum()), "sign": sign, "base_rate": base, "auc": auc,
                                   "median_ms": float(np.median(ms)), "p90_ms": float(np.percentile(ms, 90))}
        print(f"{'Nimstring':<34}{int(have.sum()):>7}{sign:>7.3f}{base:>7.3f}{auc:>7.3f}"
              f"{np.median(ms):>11.2f}{np.percentile(ms, 90):>8.1f}")
        for k in steps:
            at = have & (held.step == k)
            if at.any():
                print(f"{f'  at move {k} ({data.samples.pi.shape[1] - k} undrawn)':<34}{int(at.sum()):>7}"
                      f"{float((pred[at] == outcome[at]).mean()):>7.3f}{float((outcome[at] > 0).mean()):>7.3f}"
                      f"{value_auc(pred[at], outcome[at]):>7.3f}  of {int((held.step == k).sum())}")
                out[f"value, Nimstring, move {k}"] = {"positions": int(at.sum()), "of": int((held.step == k).sum()),
                                                      "auc": value_auc(pred[at], outcome[at])}
    return out


if __name__ == "__main__":
    main()
