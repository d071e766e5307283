"""The network as an MCTS evaluator: batched encoding, one forward pass, masked softmax."""

from __future__ import annotations

import numpy as np
import torch

from dnb_env.observations import encode_batch


class NetworkEvaluator:
    """``evaluate(states) -> (priors [B, A], values [B])`` with illegal moves given probability 0."""

    def __init__(self, net, device: str = "cpu"):
        self.net = net.to(device).eval()
        self.encoder = net.config.encoder
        self.device = device
        self.calls = 0

    @torch.no_grad()
    def evaluate(self, states):
        x = torch.from_numpy(encode_batch(self.encoder, states)).to(self.device)
        logits, values = self.net(x)
        masks = np.stack([s.legal_mask() for s in states]).astype(bool)
        logits = logits.float().cpu().numpy()
        logits = np.where(masks, logits, -np.inf)
        logits -= logits.max(axis=1, keepdims=True)
        p = np.exp(logits)
        p /= p.sum(axis=1, keepdims=True)
        self.calls += 1
        return p, values.float().cpu().numpy()
