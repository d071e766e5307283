"""A network as an MCTS evaluator: batched encoding, one forward pass, masked softmax.

Symmetry. The encoders are equivariant under the board's dihedral symmetries (tested in
tests/test_observations.py), but neither network family is: convolution kernels and the Dotsformer's
relative-position bias table are free parameters with no tied orientations, so a network gives a symmetric
position a symmetric policy only as far as training with symmetry augmentation taught it. With
``symmetrize=True`` the evaluator averages the network over the whole symmetry group (8 images on a square
board, 4 on a rectangle; each image's policy mapped back to the original actions), which makes the priors
and value exactly invariant: a position equal to its own image gets a policy that is equal on the moves
the symmetry swaps. It costs one forward pass per image.
"""

from __future__ import annotations

import numpy as np
import torch

from dnb_env.observations import encode_batch
from dnb_env.symmetry import action_permutation, symmetries, transform_planes


def masked_softmax(logits: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Row-wise softmax of ``logits [B, A]`` over the entries where ``masks [B, A]`` is true (0 elsewhere)."""
    z = np.where(masks, logits, -np.inf)
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(axis=1, keepdims=True)


class NetworkEvaluator:
    """``evaluate(states) -> (priors [B, A], values [B])`` with illegal moves given probability 0; values
    are in the network's units (``net.config.value``). ``symmetrize=True``: the mean over the board's
    symmetric images (module docstring)."""

    def __init__(self, net, device: str = "cpu", symmetrize: bool = False):
        self.net = net.to(device).eval()
        self.encoder = net.config.encoder
        self.device = device
        self.symmetrize = bool(symmetrize)
        self.calls = 0

    @torch.no_grad()
    def evaluate(self, states):
        planes = encode_batch(self.encoder, states)
        masks = np.stack([s.legal_mask() for s in states]).astype(bool)
        self.calls += 1
        if not self.symmetrize:
            out = self.net(torch.from_numpy(planes).to(self.device))
            return masked_softmax(out["policy_logits"].float().cpu().numpy(), masks), out["value"].float().cpu().numpy()
        g = states[0].geometry
        syms = symmetries(g.rows, g.cols)
        images = np.concatenate([transform_planes(sym, self.encoder, planes) for sym in syms])
        out = self.net(torch.from_numpy(images).to(self.device))
        n = len(states)
        logits = out["policy_logits"].float().cpu().numpy().reshape(len(syms), n, -1)
        priors = np.zeros(masks.shape)
        for k, sym in enumerate(syms):  # the image's move perm[a] is the original's move a
            priors += masked_softmax(logits[k][:, action_permutation(sym, g.rows, g.cols)], masks)
        values = out["value"].float().cpu().numpy().reshape(len(syms), n).mean(axis=0)
        return priors / len(syms), values
