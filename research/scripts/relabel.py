"""A checkpoint's weights under another encoder name (one whose first channels, or whose meaning on the
positions the network trained on, are those it was trained with).

    python research/scripts/relabel.py SOURCE.pt ENCODER OUT.pt

The source is read and checked by :func:`agents.checkpoint.load_checkpoint` (weights only).
"""

import sys

from agents.checkpoint import atomic_torch_save, load_checkpoint

source, encoder, out = sys.argv[1:]
ck = load_checkpoint(source)
ck["encoder"] = ck["model"]["encoder"] = encoder
ck["extra"] = dict(ck.get("extra") or {}, derived_from=f"{source} (same weights, the encoder {encoder})")
atomic_torch_save(ck, out)
