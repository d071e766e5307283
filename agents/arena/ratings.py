"""Ratings of a tournament's games: score rates with Wilson 95% intervals, and Elo by maximum likelihood
(Bradley-Terry, draws as half wins, one virtual draw per pair so that unbeaten agents stay finite, anchored
so that the mean is 0, or ``random`` = 0 when present) with bootstrap 95% intervals.

    report = summarise(labels, records, bootstrap=200, seed=0)
    report.elo, report.elo_ci, report.score(i, j), report.results_of(0)
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

__all__ = ["wilson_interval", "paired_difference", "bradley_terry_elo", "TournamentReport", "summarise"]


def wilson_interval(successes: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """Wilson score interval of a rate (draws may count as half successes)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


@dataclass(frozen=True)
class PairedDifference:
    """Two success rates measured on the same items: ``only_first`` / ``only_second`` count the items only
    one of them got right, ``diff`` the first rate minus the second, ``ci`` its 95% interval and ``p`` the
    exact two-sided McNemar test of equal rates."""

    n: int
    only_first: int
    only_second: int
    diff: float
    ci: tuple[float, float]
    p: float


def paired_difference(first, second, z: float = 1.96) -> PairedDifference:
    """The difference of two success rates on the same items (two 0/1 sequences of equal length), with
    Newcombe's hybrid score interval for paired data (his method 10: the two Wilson intervals combined with
    the correlation of the pairs) and the exact McNemar p-value. Paired, it is much narrower than the two
    separate intervals when both succeed on mostly the same items."""
    x = np.asarray(first, dtype=float)
    y = np.asarray(second, dtype=float)
    if x.shape != y.shape or x.ndim != 1:
        raise ValueError(f"paired_difference needs two 1-D sequences of one length, got {x.shape} and {y.shape}")
    if not np.isin(x, (0.0, 1.0)).all() or not np.isin(y, (0.0, 1.0)).all():
        raise ValueError("paired_difference needs 0/1 outcomes")
    n = len(x)
    if n == 0:
        return PairedDifference(0, 0, 0, 0.0, (-1.0, 1.0), 1.0)
    a = int(((x == 1) & (y == 1)).sum())
    b = int(((x == 1) & (y == 0)).sum())
    c = int(((x == 0) & (y == 1)).sum())
    d = n - a - b - c
    p1, p2 = (a + b) / n, (a + c) / n
    l1, u1 = wilson_interval(a + b, n, z)
    l2, u2 = wilson_interval(a + c, n, z)
    denom = (a + b) * (c + d) * (a + c) * (b + d)
    phi = (a * d - b * c) / math.sqrt(denom) if denom else 0.0
    lower = (p1 - l1) ** 2 - 2 * phi * (p1 - l1) * (u2 - p2) + (u2 - p2) ** 2
    upper = (u1 - p1) ** 2 - 2 * phi * (u1 - p1) * (p2 - l2) + (p2 - l2) ** 2
    diff = p1 - p2
    ci = (max(-1.0, diff - math.sqrt(max(lower, 0.0))), min(1.0, diff + math.sqrt(max(upper, 0.0))))
    m, k = b + c, min(b, c)
    p = min(1.0, 2 * sum(math.comb(m, i) for i in range(k + 1)) / 2 ** m) if m else 1.0
    return PairedDifference(n, b, c, diff, ci, p)


def bradley_terry_elo(n_agents: int, games: Sequence[tuple[int, int, float]], prior_draws: float = 1.0,
                      anchor: int | None = None, iters: int = 500) -> np.ndarray:
    """Maximum-likelihood Elo from (i, j, score of i) games; draws count half. ``prior_draws`` virtual draws
    per pair keep unbeaten agents finite. Anchored to mean 0, or ``anchor``'s rating = 0."""
    wins = np.zeros((n_agents, n_agents))
    for i, j, s in games:
        wins[i, j] += s
        wins[j, i] += 1 - s
    played = wins + wins.T
    pairs = played > 0
    wins = wins + prior_draws * 0.5 * pairs
    played = wins + wins.T
    gamma = np.ones(n_agents)
    total = wins.sum(axis=1)
    for _ in range(iters):  # minorisation-maximisation (Hunter 2004)
        denom = (played / (gamma[:, None] + gamma[None, :])).sum(axis=1)
        new = np.where(denom > 0, total / np.maximum(denom, 1e-300), gamma)
        new /= np.exp(np.mean(np.log(np.maximum(new, 1e-300))))
        if np.max(np.abs(new - gamma)) < 1e-10:
            gamma = new
            break
        gamma = new
    elo = 400 * np.log10(np.maximum(gamma, 1e-300))
    return elo - (elo[anchor] if anchor is not None else elo.mean())


@dataclass
class TournamentReport:
    """The standings: ``wdl [n, n, 3]`` wins, draws and losses of row against column; ``elo [n]`` and its
    bootstrap interval ``elo_ci [n, 2]``; ``games`` played. Printed, written and drawn by
    :mod:`agents.arena.output` (:meth:`table`, :meth:`write_csv`, :meth:`plot`)."""

    labels: list[str]
    wdl: np.ndarray  # [n, n, 3] wins, draws, losses of row against column
    elo: np.ndarray
    elo_ci: np.ndarray  # [n, 2]
    games: int
    #: [n, 5] per agent: mean and max seconds a move, moves timed, games lost by forfeit, the least seconds
    #: left on its game clock after any of its moves (NaN times where no record has them: games played
    #: before moves were timed, or without a game clock)
    think: np.ndarray | None = None

    def score(self, i: int, j: int) -> tuple[float, int, tuple[float, float]]:
        w, d, l_ = self.wdl[i, j]
        n = int(w + d + l_)
        rate = (w + 0.5 * d) / n if n else float("nan")
        return rate, n, wilson_interval(w + 0.5 * d, n)

    def results_of(self, i: int) -> dict[str, dict]:
        """Agent ``i``'s record against each opponent it met: label -> wins, draws, losses, score (wins +
        draws/2 per game) and its Wilson 95% interval ``ci95``."""
        out = {}
        for j, label in enumerate(self.labels):
            if j != i and self.wdl[i, j].sum():
                score, _, (lo, hi) = self.score(i, j)
                w, d, l_ = (int(x) for x in self.wdl[i, j])
                out[label] = {"wins": w, "draws": d, "losses": l_, "score": score, "ci95": [lo, hi]}
        return out

    def table(self) -> str:
        """:func:`agents.arena.output.table`."""
        from agents.arena.output import table

        return table(self)

    def write_csv(self, out: str) -> None:
        """:func:`agents.arena.output.write_csv`: ``pairs.csv`` and ``elo.csv`` in the folder ``out``."""
        from agents.arena.output import write_csv

        write_csv(self, out)

    def plot(self, path: str) -> None:
        """:func:`agents.arena.output.plot`: ratings and score matrix as a PNG at ``path``."""
        from agents.arena.output import plot

        plot(self, path)


def summarise(labels: list[str], records: list[dict], bootstrap: int = 200, seed: int = 0) -> TournamentReport:
    """The report of ``records`` (game records with ``first``, ``second`` and ``result_first``) between the
    agents ``labels``; ``bootstrap`` resamples of the games (seeded by ``seed``) give the Elo intervals."""
    n = len(labels)
    index = {label: k for k, label in enumerate(labels)}
    wdl = np.zeros((n, n, 3))
    games = []
    total, most, moves, forfeits = np.zeros(n), np.full(n, np.nan), np.zeros(n), np.zeros(n)
    least = np.full(n, np.nan)
    for r in records:
        i, j = index[r["first"]], index[r["second"]]
        for seat, k in enumerate((i, j)):
            if "moves_by" in r and "max_s" in r:
                total[k] += r["think_s"][seat]
                moves[k] += r["moves_by"][seat]
                most[k] = np.fmax(most[k], r["max_s"][seat])
            clocks = r.get("clock_s")
            if isinstance(clocks, list) and clocks:
                least[k] = np.fmin(least[k], min(c[seat] for c in clocks))
        if isinstance(r.get("forfeit"), dict):
            forfeits[(i, j)[r["forfeit"]["player"]]] += 1
        s = r["result_first"]
        games.append((i, j, s))
        col = 0 if s == 1 else (1 if s == 0.5 else 2)
        wdl[i, j, col] += 1
        wdl[j, i, 2 - col] += 1
    anchor = index.get("random")
    elo = bradley_terry_elo(n, games, anchor=anchor)
    rng = np.random.default_rng(seed)
    samples = []
    if games and bootstrap > 0:
        arr = np.array(games)
        for _ in range(bootstrap):
            pick = arr[rng.integers(len(arr), size=len(arr))]
            samples.append(bradley_terry_elo(n, [(int(i), int(j), s) for i, j, s in pick], anchor=anchor, iters=200))
        ci = np.percentile(np.array(samples), [2.5, 97.5], axis=0).T
    else:
        ci = np.stack([elo, elo], axis=1)
    mean = np.where(moves > 0, total / np.maximum(moves, 1), np.nan)
    think = np.stack([mean, np.where(moves > 0, most, np.nan), moves, forfeits, least], axis=1)
    return TournamentReport(labels, wdl, elo, ci, len(records), think)
