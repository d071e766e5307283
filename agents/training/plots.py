"""``training.png``: losses, exact-label accuracy, scores against the evaluation opponents, and the
backward-training start step per iteration (a multi-size run: per board, ``key@RxC``)."""

from __future__ import annotations

import math
import os

from dnb_env._extras import requires_extra

__all__ = ["plot_training", "plot_runs"]

#: an accuracy panel without data: runs that recorded no exact labels (boards beyond the native solver, or
#: runs of larger boards from before their late-game labels)
NO_LABELS = "no exact labels in these metrics"


def _panel(ax, metrics: list[dict], keys: tuple[str, ...], title: str, empty: str = "not measured yet",
           unit: bool = True, **style) -> None:
    """One line per metric in ``keys`` over the iterations that logged it (``empty`` is written in the
    panel when none did)."""
    from matplotlib.ticker import MaxNLocator

    for key in keys:
        rows = [m for m in metrics if isinstance(m.get(key), (int, float)) and math.isfinite(m[key])]
        if rows:
            ax.plot([m["iteration"] for m in rows], [m[key] for m in rows], label=key.replace("_", " "), **style)
    if unit:
        ax.set_ylim(0, 1)
    ax.set_xlabel("iteration")
    done = [m["iteration"] for m in metrics]
    if done:  # every panel over all the iterations, so that one with a single point still has whole ticks
        ax.set_xlim(min(done) - 0.5, max(done) + 0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))  # iterations are whole numbers
    ax.set_title(title)
    if ax.lines:
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, empty, ha="center", va="center", transform=ax.transAxes, color="grey")
    ax.grid(alpha=0.3)


def _save(fig, path: str) -> None:
    """Write the figure to ``path`` atomically (a temporary file, then a rename) and close it."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    tmp = f"{path}.tmp{os.getpid()}.png"  # per process; the run that next locks the folder sweeps a leftover
    fig.savefig(tmp, dpi=90)
    plt.close(fig)
    os.replace(tmp, path)


def plot_training(metrics: list[dict], path: str) -> None:
    with requires_extra("the training plot"):
        import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def per_board(keys: tuple[str, ...]) -> tuple[str, ...]:  # each key, then its "key@RxC" of a multi-size run
        boards = sorted({k.partition("@")[2] for m in metrics for k in m if "@" in k})
        return keys + tuple(f"{k}@{b}" for b in boards for k in keys)

    fig, axes = plt.subplots(1, 4, figsize=(20, 4))
    _panel(axes[0], metrics, ("policy_loss", "value_loss", "initiative_loss", "move_class_loss"), "losses", unit=False)
    _panel(axes[1], metrics, per_board(("raw_accuracy", "search_accuracy", "raw_accuracy_greedy_hard",
                                        "search_accuracy_greedy_hard")),
           "share of optimal moves (exact solver)", empty=NO_LABELS)
    keys = tuple(sorted({k for m in metrics for k in m if k.startswith("win_rate_vs_")}))
    _panel(axes[2], metrics, keys, "raw policy's score per game", marker="o")
    start = per_board(("start_step",))
    _panel(axes[3], metrics, start[1:] if len(start) > 1 else start, "backward training: first searched move S",
           unit=False, drawstyle="steps-post")
    _save(fig, path)


def plot_runs(curves: list[dict], path: str) -> bool:
    """Several runs' progress on one board against what they cost (:func:`agents.training.report.run_curves`):
    the first searched move S against self-play games and against positions, and the raw policy's share of
    optimal moves against games where it was measured. Returns False (with a note) without matplotlib."""
    try:
        import matplotlib
    except ImportError:
        print("no plot: it needs matplotlib: pip install 'dnb-env[plot]'")
        return False
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, axes = plt.subplots(1, 3, figsize=(16, 4.2))
    board = curves[0]["board"] if curves else ""
    for k, c in enumerate(curves):  # one colour per run in every panel, also where a run has no points
        label = c["name"] + (f" (after {c['pretraining']:,} games of pretraining)" if c["pretraining"] else "")
        colour = f"C{k % 10}"
        for ax, x in ((axes[0], "games"), (axes[1], "positions")):
            pts = [(a, s) for a, s in zip(c[x], c["start_step"]) if s is not None]
            if pts:
                ax.plot(*zip(*pts), drawstyle="steps-post", label=label, color=colour)
        pts = [(a, s) for a, s in zip(c["games"], c["raw_accuracy"]) if s is not None]
        if pts:
            axes[2].plot(*zip(*pts), marker="o", markersize=3, label=label, color=colour)
    titles = (f"first searched move S on {board}", f"first searched move S on {board}",
              f"raw policy: share of optimal moves on {board}")
    for ax, xlabel, title in zip(axes, ("self-play games", "self-play positions", "self-play games"), titles):
        ax.set_xlabel(xlabel)
        ax.set_title(title)
        ax.grid(alpha=0.3)
        if ax.lines:
            ax.legend(fontsize=7)
        else:
            ax.text(0.5, 0.5, NO_LABELS, ha="center",
                    va="center", transform=ax.transAxes, color="grey")
    for k, ax in enumerate(axes):  # games, positions and start steps are whole numbers
        if ax.lines:
            ax.xaxis.set_major_locator(MaxNLocator(integer=True))
            if k < 2:
                ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    axes[2].set_ylim(0, 1)
    _save(fig, path)
    return True
