"""A checkpoint's weights under another encoder name (one whose first channels, or whose meaning on the
positions the network trained on, are those it was trained with).

    python research/scripts/relabel.py SOURCE.pt ENCODER OUT.pt
"""

import sys

import torch

from agents.checkpoint import atomic_torch_save

source, encoder, out = sys.argv[1:]
ck = torch.load(source, map_location="cpu", weights_only=True)
ck["encoder"] = ck["model"]["encoder"] = encoder
ck["extra"] = dict(ck.get("extra") or {}, derived_from=f"{source} (same weights, the encoder {encoder})")
atomic_torch_save(ck, out)
