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

from dnb_env.core import geometry
from dnb_env.observations import encode_batch, encoder_shape
from dnb_env.symmetry import action_permutation, symmetries, transform_planes


def masked_softmax(logits: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Row-wise softmax of ``logits [B, A]`` over the entries where ``masks [B, A]`` is true (0 elsewhere)."""
    z = np.where(masks, logits, -np.inf)
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(axis=1, keepdims=True)


class NetworkEvaluator:
    """``evaluate(states) -> (priors [B, A], values [B])`` with illegal moves given probability 0; values
    are in the network's units (``net.config.value``). ``evaluate_planes(planes, masks)`` does the same
    from encoded positions (what the native search passes). ``symmetrize=True``: the mean over the board's
    symmetric images (module docstring)."""

    def __init__(self, net, device: str = "cpu", symmetrize: bool = False):
        self.net = net.to(device).eval()
        self.encoder = net.config.encoder
        self.device = device
        self.symmetrize = bool(symmetrize)
        self.calls = 0

    def evaluate(self, states):
        planes = encode_batch(self.encoder, states)
        masks = np.stack([s.legal_mask() for s in states]).astype(bool)
        g = states[0].geometry
        return self._forward(planes, masks, g.rows, g.cols)

    def evaluate_planes(self, planes: np.ndarray, masks: np.ndarray):
        """:meth:`evaluate` on positions already encoded: ``planes [B, C, H, W]`` float32 of this evaluator's
        ``encoder`` and legal ``masks [B, A]`` (the native search makes both in C++); same outputs as
        ``evaluate`` on the states they encode."""
        masks = np.asarray(masks).astype(bool)
        _, H, W = planes.shape[1:]
        rows, cols = (H - 1) // 2, (W - 1) // 2
        if rows < 1 or cols < 1 or encoder_shape(self.encoder, rows, cols)[1:] != (H, W):
            rows, cols = H, W  # an encoder with one cell per box
        shape = (len(planes), geometry(rows, cols).num_actions)
        if masks.shape != shape:
            raise ValueError(f"masks must have shape {shape} for planes of "
                             f"shape {planes.shape}, got {masks.shape}")
        return self._forward(np.ascontiguousarray(planes, dtype=np.float32), masks, rows, cols)

    @torch.no_grad()
    def _forward(self, planes, masks, rows, cols):
        self.calls += 1
        if not self.symmetrize:
            out = self.net(torch.from_numpy(planes).to(self.device))
            return masked_softmax(out["policy_logits"].float().cpu().numpy(), masks), out["value"].float().cpu().numpy()
        syms = symmetries(rows, cols)
        images = np.concatenate([transform_planes(sym, self.encoder, planes) for sym in syms])
        out = self.net(torch.from_numpy(images).to(self.device))
        n = len(planes)
        logits = out["policy_logits"].float().cpu().numpy().reshape(len(syms), n, -1)
        priors = np.zeros(masks.shape)
        for k, sym in enumerate(syms):  # the image's move perm[a] is the original's move a
            priors += masked_softmax(logits[k][:, action_permutation(sym, rows, cols)], masks)
        values = out["value"].float().cpu().numpy().reshape(len(syms), n).mean(axis=0)
        return priors / len(syms), values
