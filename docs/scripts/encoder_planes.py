"""Draw the planes of every observation encoder for one 5x5 midgame position: docs/img/encoders/<name>.png.

The position is reached from the empty 5x5 board with a fixed seed by a weak but plausible player
(:func:`dnb_env.analysis.realistic_move`: it takes boxes when it can and otherwise draws a random safe
move), which one move in ten instead draws any legal edge, so that both players own a box by the
middle game; play stops at 32 undrawn edges. Each channel is drawn as a small heat map titled with its
index, a short name and, for channels that are not 0/1, the range of values it holds in this position.
The pictures are written as palette PNGs of a few colours to keep them small.

    python docs/scripts/encoder_planes.py                    # every encoder, and position.png
    python docs/scripts/encoder_planes.py chainloop6         # only the ones named
    python docs/scripts/encoder_planes.py --out /tmp/planes  # elsewhere than docs/img/encoders

Needs matplotlib (``pip install 'dnb-env[plot]'``).
"""

from __future__ import annotations

import argparse
import io
import os
import random

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
from PIL import Image  # noqa: E402

from dnb_env.analysis import realistic_move  # noqa: E402
from dnb_env.core import GameState  # noqa: E402
from dnb_env.observations import encode, list_encoders  # noqa: E402
from dnb_env.render import render_rgb  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "img", "encoders")
SEED, BOARD, UNDRAWN, BLUNDER = 40, (5, 5), 32, 0.1
DPI, PANEL_INCHES, COLOURS = 80, 1.7, 32

BASE4 = ["dots + centres", "edge cells", "drawn edges", "score diff"]
CHAINLOOP6 = BASE4 + ["boxes to take", "structure count"]
SAFE = CHAINLOOP6 + ["safe-phase value", "best safe-phase", "values present"]
SIDES = ["right", "up", "left", "down"]


def position(seed: int = SEED) -> GameState:
    """The pictured position: see the module docstring."""
    rng = random.Random(seed)
    s = GameState.new(*BOARD)
    while s.num_actions - s.edges.bit_count() > UNDRAWN:
        s = s.apply(rng.choice(s.legal_actions()) if rng.random() < BLUNDER else realistic_move(s, rng))
    return s


def labels(name: str, channels: int) -> list[str]:
    """Short titles of the channels of encoder ``name`` (the tables of docs/observations.md in brief)."""
    if name == "baseline4":
        return BASE4
    if name == "chainloop6":
        return CHAINLOOP6
    if name == "chainloop64":
        return BASE4 + [f"structure {k}" for k in range(1, 61)]
    if name == "alphazero4":
        return ["L: lines", "P: mover's boxes", "O: opponent's", "B: dots"]
    if name.startswith("edgequad"):
        out = [f"{side} drawn" for side in SIDES]
        if name == "edgequad9":
            out += [f"{k} sides drawn" for k in range(5)]
        if name == "edgequad44":
            out = []
            for side in SIDES:
                first, second = ("left", "right") if side in ("right", "left") else ("above", "below")
                out += [f"{side} drawn"] + [f"{first} box: {k} sides" for k in range(5)]
                out += [f"{second} box: {k} sides" for k in range(5)]
        return out
    if name == "chainloop6_safevalue":
        return CHAINLOOP6 + ["safe-phase value", "value present"]
    if name == "chainloop6_lcr":
        return CHAINLOOP6 + ["long chain rule"]
    if name == "chainloop6_safe":
        return SAFE
    if name in ("chainloop6_sac2", "chainloop6_sac2_deep"):
        return SAFE + ["2-sacrifice value", "best of it", "values present"]
    if name == "chainloop6_sac4":
        return SAFE + ["4-sacrifice value", "best of it", "values present"]
    if name in ("chainloop6_nim", "chainloop6_nim38"):
        return SAFE + ["wins Nimstring", "mover wins it", "values present"]
    return [f"channel {k}" for k in range(channels)]


def title(k: int, label: str, plane: np.ndarray) -> str:
    lo, hi = float(plane.min()), float(plane.max())
    binary = set(np.unique(plane).tolist()) <= {0.0, 1.0}
    return f"{k}: {label}" if binary else f"{k}: {label}\n[{lo:.2g}, {hi:.2g}]"


def save_small(fig, path: str) -> None:
    """``fig`` as a palette PNG of :data:`COLOURS` colours."""
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI)
    plt.close(fig)
    buf.seek(0)
    img = Image.open(buf).convert("RGB").quantize(colors=COLOURS, method=Image.Quantize.MEDIANCUT)
    img.save(path, optimize=True)


def draw(name: str, state: GameState, path: str) -> None:
    planes = encode(name, state)
    c = planes.shape[0]
    cols = 8 if c > 16 else min(c, 6)
    rows = -(-c // cols)
    fig, axes = plt.subplots(rows, cols, figsize=(cols * PANEL_INCHES, rows * (PANEL_INCHES + 0.25)), squeeze=False,
                             layout="constrained")
    names = labels(name, c)
    for k, ax in enumerate(axes.flat):
        ax.set_xticks([])
        ax.set_yticks([])
        if k >= c:
            ax.axis("off")
            continue
        plane = planes[k]
        lo, hi = min(0.0, float(plane.min())), max(1.0, float(plane.max()))
        ax.imshow(plane, cmap="viridis", vmin=lo, vmax=hi, interpolation="nearest")
        ax.set_title(title(k, names[k], plane), fontsize=8)
    fig.suptitle(f"{name} {tuple(planes.shape)}, 5x5, player {state.current_player} to move", fontsize=10)
    save_small(fig, path)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description="Draw the planes of the observation encoders (docs/observations.md).")
    parser.add_argument("encoders", nargs="*", help="encoder names (default: every one of list_encoders())")
    parser.add_argument("--out", default=OUT, help="folder of the PNG files (default: docs/img/encoders)")
    args = parser.parse_args(argv)
    names = args.encoders or list_encoders()
    unknown = [n for n in names if n not in list_encoders()]
    if unknown:
        parser.error(f"unknown encoder(s) {', '.join(unknown)}; known: {', '.join(list_encoders())}")
    os.makedirs(args.out, exist_ok=True)
    state = position()
    picture = Image.fromarray(render_rgb(state, cell=36)).quantize(colors=COLOURS)
    picture.save(os.path.join(args.out, "position.png"), optimize=True)
    for name in names:
        path = os.path.join(args.out, f"{name}.png")
        draw(name, state, path)
        print(f"{path}: {os.path.getsize(path) // 1024} KB")


if __name__ == "__main__":
    main()
