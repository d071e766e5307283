"""Give an AlphaViT checkpoint the input of an encoder that extends its own, playing exactly as before.

    python research/alphavit-distill/widen.py research/weights/avit-distill3.pt chainloop6_nim38 \
        runs/avit-nim/widened.pt

The new encoder's planes start with the old one's (``chainloop6_nim38`` is ``chainloop6`` followed by the
safe-phase and Nimstring channels; this is checked on positions of several boards). Every weight is copied;
the patch embedding gets the new channels with weight 0, so the widened network's outputs equal the old
one's on every position until training moves them. The checkpoint keeps the boards it was trained on.
"""

from __future__ import annotations

import argparse
import random
from dataclasses import replace

import numpy as np

CHECK_BOARDS = ("3x3", "5x5", "4x6")


def check_prefix(old: str, new: str, positions: int = 8, seed: int = 0) -> None:
    """ValueError unless ``new``'s planes begin with ``old``'s (same grid) on realistic positions of
    :data:`CHECK_BOARDS`."""
    from dnb_env.analysis import realistic_move
    from dnb_env.core import GameState
    from dnb_env.observations import ENCODERS, encode_batch

    for name in (old, new):
        if name not in ENCODERS:
            raise ValueError(f"unknown encoder {name!r}")
    if ENCODERS[new].channels <= ENCODERS[old].channels:
        raise ValueError(f"{new} has no more channels than {old}")
    rng = random.Random(seed)
    for board in CHECK_BOARDS:
        states = []
        for _ in range(positions):
            s = GameState.new(board)
            stop = rng.randrange(0, s.num_actions - 1)
            while len(s.history) < stop:
                s = s.apply(realistic_move(s, rng))
            states.append(s)
        a, b = encode_batch(old, states), encode_batch(new, states)
        if a.shape[2:] != b.shape[2:] or not np.array_equal(a, b[:, :a.shape[1]]):
            raise ValueError(f"the planes of {new} do not begin with those of {old} (board {board})")


def widen(net, encoder: str):
    """A copy of the AlphaViT ``net`` for input ``encoder``: the new input channels' weights are zero."""
    import torch

    from agents.models import build_model

    check_prefix(net.config.encoder, encoder)
    wide = build_model(replace(net.config, encoder=encoder))
    state = dict(net.state_dict())
    w = state["patch_embed.weight"]
    grown = torch.zeros(wide.state_dict()["patch_embed.weight"].shape, dtype=w.dtype)
    grown[:, :w.shape[1]] = w
    state["patch_embed.weight"] = grown
    wide.load_state_dict(state)
    return wide.eval()


def main(argv=None) -> int:
    from agents.checkpoint import load_network, save_checkpoint

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("checkpoint", help="an alphavit checkpoint")
    ap.add_argument("encoder", help="an encoder whose planes begin with the checkpoint's encoder's")
    ap.add_argument("out", help="the widened checkpoint")
    args = ap.parse_args(argv)
    net, payload = load_network(args.checkpoint, family="alphavit")
    try:
        wide = widen(net, args.encoder)
    except ValueError as exc:
        ap.error(str(exc))
    save_checkpoint(args.out, wide, extra={"widened_from": args.checkpoint, "from_encoder": net.config.encoder})
    print(f"{args.out}: {net.config.encoder} -> {args.encoder}, trained on {', '.join(wide.trained_boards())}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
