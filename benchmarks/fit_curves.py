"""Held-out accuracy of supervised fits against gradient steps, one line per run (``dnb fit`` folders).

Reads each run's ``metrics.jsonl`` and plots, against the training positions seen (steps x batch size, on
a log scale, so that runs with other batch sizes share the axis), the share of winning held-out
positions whose top move keeps the win on the greedy-hard positions (solid) and on all of them (dotted),
with greedy's level as a grey line. The legend names each run by its folder, its training positions and
its network's size. ``--scaling FILE`` also draws each run's last greedy-hard score (Wilson 95%) against
the number of positions it trained on, one line per family, size and input, with the steps it ran beside
each point.

    python benchmarks/fit_curves.py runs/fit/df-10k runs/fit/df-10k-safe --out docs/research/teacher-fits.png
"""

from __future__ import annotations

import argparse
import json
import os


def read_run(folder: str) -> tuple[dict, list[dict]]:
    """``(config, rows)`` of a fit run folder (its metrics read as a resume reads them,
    :func:`agents.training.store.read_metrics`); ValueError naming the folder when it is not one."""
    from agents.training.store import read_metrics

    try:
        with open(os.path.join(folder, "config.json")) as f:
            config = json.load(f)
        rows = read_metrics(os.path.join(folder, "metrics.jsonl"), key="step")
    except (OSError, ValueError) as e:
        raise ValueError(f"{folder} is not a fit run folder with config.json and metrics.jsonl ({e})") from None
    return config, rows


def dataset_positions(config: dict, folder: str | None = None) -> int | None:
    """The positions a fit trained on: as its checkpoint records them, else its ``positions`` limit, else
    the sum of its datasets' manifests as they are now (None when they are not on this machine)."""
    ckpt = os.path.join(folder, "checkpoint.pt") if folder else None
    if ckpt and os.path.exists(ckpt):
        from agents.checkpoint import CheckpointError, load_checkpoint

        try:
            recorded = load_checkpoint(ckpt)["extra"].get("positions")
        except (CheckpointError, OSError, KeyError):
            recorded = None
        if recorded:
            return int(recorded)
    if config.get("positions"):
        return int(config["positions"])
    total = 0
    for data in config.get("data", []):
        try:
            with open(os.path.join(data, "manifest.json")) as f:
                total += int(json.load(f)["positions"])
        except (OSError, ValueError, KeyError):
            return None
    return total or None


def network_size(model: dict) -> str:
    """A fit's network size as the legends write it: ``D 32x3`` (width x layers) or ``4x32`` (blocks x width)."""
    if "dim" in model:
        return f"D {model['dim']}x{model.get('layers')}"
    if "blocks" in model:
        return f"{model['blocks']}x{model.get('width')}"
    return ""


def network_label(config: dict) -> str:
    """Family, size and input of a fit's network: the runs of one scaling line share all three."""
    model = config.get("model", {})
    parts = [" ".join(p for p in (model.get("family", "?"), network_size(model)) if p), model.get("encoder")]
    return ", ".join(p for p in parts if p)


def plot_scaling(runs: dict, out: str, plt) -> dict:
    """One line per network: last greedy-hard score against training positions. ``runs``: folder ->
    (config, last network row)."""
    from agents.arena import wilson_interval

    series: dict[str, list] = {}
    for folder, (config, row) in runs.items():
        n = dataset_positions(config, folder)
        if n is None:
            print(f"{folder}: its datasets are not here, left out of the scaling plot")
            continue
        hits = round(row["keep_hard"] * row["n_hard"])
        lo, hi = wilson_interval(hits, row["n_hard"])
        series.setdefault(network_label(config), []).append((n, row["keep_hard"], lo, hi, row["step"], folder))
    fig, ax = plt.subplots(figsize=(8, 5))
    for label, points in sorted(series.items()):
        points.sort()
        xs = [p[0] for p in points]
        ys = [p[1] for p in points]
        err = [[p[1] - p[2] for p in points], [p[3] - p[1] for p in points]]
        ax.errorbar(xs, ys, yerr=err, marker="o", capsize=3, label=label)
        for x, y, _, _, step, _ in points:
            ax.annotate(f"{step:,} steps", (x, y), textcoords="offset points", xytext=(6, -12), fontsize=7)
    ax.set_xscale("log")
    ax.set_xlabel("training positions (exact-labelled)")
    ax.set_ylabel("greedy-hard held-out positions: keeps the win")
    ax.set_title("Scaling the teacher data (last held-out score of each fit, Wilson 95%)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    tmp = out + ".tmp.png"
    fig.savefig(tmp, dpi=110)
    os.replace(tmp, out)
    print(f"wrote {out} ({sum(map(len, series.values()))} runs)")
    return series


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("runs", nargs="+", help="fit run folders")
    p.add_argument("--out", default="fit-curves.png", help="image to write (default: fit-curves.png)")
    p.add_argument("--scaling", default=None, metavar="FILE",
                   help="also write the last greedy-hard score of each run against its training positions")
    args = p.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(11, 5))
    curves, last = {}, {}
    greedy = None
    colours = plt.cm.tab20.colors if len(args.runs) > 10 else plt.cm.tab10.colors
    for i, folder in enumerate(args.runs):
        config, rows = read_run(folder)
        net = [r for r in rows if r.get("agent") == "network"]
        base = [r for r in rows if r.get("agent") == "greedy"]
        if base:
            greedy = base[0]
        if not net:
            continue
        steps = [r["step"] for r in net]
        seen = [s * int(config.get("batch_size", 128)) for s in steps]
        size = network_size(config.get("model", {}))
        label = (f"{os.path.basename(os.path.normpath(folder))} ({config.get('positions') or 'all'} positions"
                 f"{', ' + size if size else ''})")
        line, = ax.plot(seen, [r["keep_hard"] for r in net], marker="o", label=label, color=colours[i % len(colours)])
        ax.plot(seen, [r["keep"] for r in net], linestyle=":", color=line.get_color())
        last[folder] = (config, net[-1])
        curves[folder] = {"steps": steps, "seen": seen, "keep_hard": [r["keep_hard"] for r in net],
                          "keep": [r["keep"] for r in net]}
    if greedy is not None:
        ax.axhline(greedy["keep_hard"], color="grey", linewidth=1)
        ax.axhline(greedy["keep"], color="grey", linewidth=1, linestyle=":")
        ax.text(ax.get_xlim()[0], greedy["keep_hard"] + 0.005, " greedy", color="grey", va="bottom")
    ax.set_xscale("log")
    ax.set_xlabel("training positions seen (gradient steps x batch size)")
    ax.set_ylabel("keeps the win (solid: greedy-hard, dotted: all winning)")
    ax.set_title("Held-out 5x5 positions, 26-35 undrawn edges")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    tmp = args.out + ".tmp.png"
    fig.savefig(tmp, dpi=110)
    os.replace(tmp, args.out)
    print(f"wrote {args.out} ({len(curves)} runs)")
    if args.scaling:
        plot_scaling(last, args.scaling, plt)
    return curves


if __name__ == "__main__":
    main()
