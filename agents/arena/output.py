"""A tournament report as text, CSV tables and a plot.

    print(table(report))                 # Elo with intervals, then score of row vs column
    write_csv(report, "results/5x5")     # pairs.csv, elo.csv (written atomically)
    plot(report, "results/5x5/tournament.png")
    print(format_results(report.results_of(0)))   # "vs NAME over N games: W/D/L, score [interval]" lines

``report`` is a :class:`agents.arena.ratings.TournamentReport`.
"""

from __future__ import annotations

import itertools
import os

import numpy as np

from dnb_env.io import atomic_write

__all__ = ["table", "write_csv", "plot", "format_results"]


def table(report) -> str:
    """Elo and its 95% interval per agent (best first), then each agent's score against each other one."""
    n = len(report.labels)
    width = max(len(x) for x in report.labels) + 2
    timed = report.think is not None and np.isfinite(report.think[:, 0]).any()
    clocked = timed and np.isfinite(report.think[:, 4]).any()
    head = (f" {'s/move':>8} {'max s':>8} {'lost':>5}" if timed else "") + (f" {'clock':>8}" if clocked else "")
    lines = [f"{'Elo':>6} {'95% CI':>15}" + head + "  agent"]
    for k in np.argsort(-report.elo):
        lo, hi = report.elo_ci[k]
        times = ""
        if timed:
            mean, most, _, lost, least = report.think[k]
            times = f" {mean:>8.3f} {most:>8.3f} {int(lost):>5}"
            if clocked:
                times += f" {least:>8.3f}"
        lines.append(f"{report.elo[k]:>6.0f} [{lo:>5.0f},{hi:>6.0f}]{times}  {report.labels[k]}")
    if timed:
        lines.append("s/move, max s: mean and longest think time of a move; lost: games lost by forfeit "
                     "(time, crash, illegal move, error)"
                     + ("; clock: the least seconds left on its game clock after a move" if clocked else ""))
    lines.append("")
    lines.append("score of row vs column (wins + draws/2, n games, Wilson 95% interval):")
    for i in range(n):
        cells = []
        for j in range(n):
            if i == j or report.wdl[i, j].sum() == 0:
                continue
            rate, games, (lo, hi) = report.score(i, j)
            cells.append(f"vs {report.labels[j]}: {rate:.3f} [{lo:.3f}, {hi:.3f}] (n={games})")
        lines.append(f"{report.labels[i]:<{width}}" + "; ".join(cells))
    return "\n".join(lines)


def _csv(text: str) -> str:
    """A CSV field: quoted (inner quotes doubled) where it holds a comma, a quote or a line break."""
    return '"' + text.replace('"', '""') + '"' if any(c in text for c in ',"\n\r') else text


def _num(x: float, fmt: str) -> str:
    return "" if not np.isfinite(x) else format(x, fmt)


def write_csv(report, out: str) -> None:
    """``pairs.csv`` (agent, opponent, wins, draws, losses, score, interval) and ``elo.csv`` (agent, Elo,
    interval, mean and max seconds a move, moves timed, games lost by forfeit, least seconds left on its game
    clock) in the folder ``out``."""
    rows = ["agent,opponent,wins,draws,losses,score,ci_low,ci_high"]
    for i, j in itertools.permutations(range(len(report.labels)), 2):
        if report.wdl[i, j].sum():
            rate, _, (lo, hi) = report.score(i, j)
            w, d, l_ = report.wdl[i, j]
            rows.append(f"{_csv(report.labels[i])},{_csv(report.labels[j])},{int(w)},{int(d)},{int(l_)},"
                        f"{rate:.4f},{lo:.4f},{hi:.4f}")
    atomic_write(os.path.join(out, "pairs.csv"), "\n".join(rows) + "\n")
    rows = ["agent,elo,ci_low,ci_high,mean_move_s,max_move_s,moves,forfeits,min_clock_s"]
    think = report.think if report.think is not None else np.full((len(report.labels), 5), np.nan)
    for k, label in enumerate(report.labels):
        mean, most, moves, lost, least = think[k]
        rows.append(f"{_csv(label)},{report.elo[k]:.1f},{report.elo_ci[k, 0]:.1f},{report.elo_ci[k, 1]:.1f},"
                    f"{_num(mean, '.4f')},{_num(most, '.4f')},{_num(moves, '.0f')},{_num(lost, '.0f')},"
                    f"{_num(least, '.4f')}")
    atomic_write(os.path.join(out, "elo.csv"), "\n".join(rows) + "\n")


def _tick(label: str, width: int = 32) -> str:
    """``label`` for an axis: a long spec (``checkpoint=`` paths) keeps its start and end around ``...``, so
    that the figure's margins can hold it (the CSV files and the table keep every label whole)."""
    if len(label) <= width:
        return label
    head = (width - 3) // 2
    return label[:head] + "..." + label[-(width - 3 - head):]


def plot(report, path: str) -> None:
    """Ratings with their intervals and the score matrix, side by side, as a PNG at ``path``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(report.labels)
    ticks = [_tick(label) for label in report.labels]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(6 + 1.2 * n, 4 + 0.3 * n))
    order = np.argsort(-report.elo)
    err = np.abs(report.elo_ci[order] - report.elo[order, None]).T
    ax1.errorbar(range(n), report.elo[order], yerr=err, fmt="o", capsize=4)
    ax1.set_xticks(range(n), [ticks[k] for k in order], rotation=30, ha="right")
    ax1.set_ylabel("Elo (bootstrap 95% interval)")
    ax1.set_title("Ratings")
    ax1.grid(alpha=0.3)
    rates = np.full((n, n), np.nan)
    for i, j in itertools.permutations(range(n), 2):
        if report.wdl[i, j].sum():
            rates[i, j] = report.score(i, j)[0]
    im = ax2.imshow(rates[np.ix_(order, order)], vmin=0, vmax=1, cmap="RdBu")
    for a, i in enumerate(order):
        for b, j in enumerate(order):
            if not np.isnan(rates[i, j]):
                # white on the dark ends of the colour map, black on its light middle
                colour = "white" if abs(rates[i, j] - 0.5) > 0.3 else "black"
                ax2.text(b, a, f"{rates[i, j]:.2f}", ha="center", va="center", fontsize=8, color=colour)
    ax2.set_xticks(range(n), [ticks[k] for k in order], rotation=30, ha="right")
    ax2.set_yticks(range(n), [ticks[k] for k in order])
    ax2.set_title("Score of row vs column")
    fig.colorbar(im, ax=ax2, fraction=0.046)
    fig.tight_layout()
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=110)
    plt.close(fig)
    os.replace(tmp, path)


def format_results(results: dict[str, dict]) -> str:
    """Lines "vs NAME over N games: W/D/L, score [Wilson 95% interval]" of
    :meth:`~agents.arena.ratings.TournamentReport.results_of`."""
    return "\n".join(
        f"vs {name} over {r['wins'] + r['draws'] + r['losses']} games: {r['wins']} W {r['draws']} D {r['losses']} L, "
        f"score {r['score']:.3f} (95% CI {r['ci95'][0]:.3f}-{r['ci95'][1]:.3f})" for name, r in results.items())
