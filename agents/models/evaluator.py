"""A network as an MCTS evaluator: batched encoding, one forward pass, masked softmax."""

from __future__ import annotations

import numpy as np
import torch

from dnb_env.observations import encode_batch


def masked_softmax(logits: np.ndarray, masks: np.ndarray) -> np.ndarray:
    """Row-wise softmax of ``logits [B, A]`` over the entries where ``masks [B, A]`` is true (0 elsewhere)."""
    z = np.where(masks, logits, -np.inf)
    z -= z.max(axis=1, keepdims=True)
    p = np.exp(z)
    return p / p.sum(axis=1, keepdims=True)


class NetworkEvaluator:
    """``evaluate(states) -> (priors [B, A], values [B])`` with illegal moves given probability 0; values
    are in the network's units (``net.config.value``)."""

    def __init__(self, net, device: str = "cpu"):
        self.net = net.to(device).eval()
        self.encoder = net.config.encoder
        self.device = device
        self.calls = 0

    @torch.no_grad()
    def evaluate(self, states):
        x = torch.from_numpy(encode_batch(self.encoder, states)).to(self.device)
        out = self.net(x)
        masks = np.stack([s.legal_mask() for s in states]).astype(bool)
        self.calls += 1
        return masked_softmax(out["policy_logits"].float().cpu().numpy(), masks), out["value"].float().cpu().numpy()
