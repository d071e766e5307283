"""Output heads shared by the model families (Dotsformer Table 3 and section 4.3).

All heads read a feature map ``[B, D, H, W]`` on the (2R+1) x (2C+1) grid.

* :class:`FusionLayer` -- a learnable weighting of the ``D`` channels down to one plane. The paper says
  only "a learnable weight matrix"; here it is a weight per channel *and* grid cell, ``W [D, H, W]``
  plus a bias per cell, so ``out[h, w] = sum_d W[d, h, w] x[d, h, w] + b[h, w]``: the cell-specific
  weights play the part of the AlphaZero head's position-aware linear layer.
* :class:`PolicyHead` -- 2 residual blocks, fusion, BatchNorm; the logits of the ``A`` actions are the
  fused plane read at each action's edge cell (the softmax over edge cells happens in the loss and the
  evaluator, after masking illegal edges).
* :class:`ValueHead` -- residual block, fusion, BatchNorm, linear ``H*W -> 1``, BatchNorm, tanh: ``[B]``.
* :class:`AuxHeads` -- initiative logits ``[B, 3]`` (capture / sacrifice / neutral, Definition 2) from
  a 1x1 convolution, BatchNorm, ReLU, global average and max pooling and a linear layer; move-class
  logits ``[B, 4, H, W]`` (forbidden / conceding / safe / scoring, Definition 3) from a 1x1 convolution,
  BatchNorm, ReLU and a 1x1 convolution to 4 classes per cell.
* :class:`FutureHead` -- an auxiliary target of the chain structure still to come: for every move, the
  safe-phase value of :func:`dnb_env.features.safe_phase_values` over the number of boxes (``safe_phase
  [B, A]`` in [-1, 1]), from a 1x1 convolution, BatchNorm, ReLU, a 1x1 convolution to one plane read at
  the edge cells, and tanh. Training only: the move choice does not read it.
"""

from __future__ import annotations

import torch
from torch import nn

from agents.models.common import ResidualBlock, action_cells


class FusionLayer(nn.Module):
    def __init__(self, channels: int, height: int, width: int):
        super().__init__()
        self.weight = nn.Parameter(torch.full((channels, height, width), 1.0 / channels))
        self.bias = nn.Parameter(torch.zeros(height, width))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``[B, D, H, W]`` -> ``[B, 1, H, W]``."""
        return ((x * self.weight).sum(dim=1) + self.bias).unsqueeze(1)


class PolicyHead(nn.Module):
    def __init__(self, channels: int, height: int, width: int, board: str):
        super().__init__()
        self.blocks = nn.Sequential(ResidualBlock(channels), ResidualBlock(channels))
        self.fusion = FusionLayer(channels, height, width)
        self.bn = nn.BatchNorm2d(1)
        self.register_buffer("cells", action_cells(board), persistent=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``[B, D, H, W]`` -> policy logits ``[B, A]``."""
        plane = self.bn(self.fusion(self.blocks(x))).flatten(1)
        return plane[:, self.cells]


class ValueHead(nn.Module):
    def __init__(self, channels: int, height: int, width: int):
        super().__init__()
        self.block = ResidualBlock(channels)
        self.fusion = FusionLayer(channels, height, width)
        self.bn = nn.BatchNorm2d(1)
        self.linear = nn.Linear(height * width, 1)
        self.bn_out = nn.BatchNorm1d(1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``[B, D, H, W]`` -> value ``[B]`` in [-1, 1] for the player to move."""
        y = self.bn(self.fusion(self.block(x))).flatten(1)
        return torch.tanh(self.bn_out(self.linear(y))).squeeze(-1)


class AuxHeads(nn.Module):
    def __init__(self, channels: int, hidden: int = 32):
        super().__init__()
        self.init_conv = nn.Sequential(nn.Conv2d(channels, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.ReLU())
        self.init_out = nn.Linear(2 * hidden, 3)
        self.cls = nn.Sequential(nn.Conv2d(channels, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.ReLU(),
                                 nn.Conv2d(hidden, 4, 1))

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        y = self.init_conv(x)
        pooled = torch.cat([y.mean(dim=(2, 3)), y.amax(dim=(2, 3))], dim=1)
        return {"initiative_logits": self.init_out(pooled), "move_class_logits": self.cls(x)}


class FutureHead(nn.Module):
    def __init__(self, channels: int, board: str, hidden: int = 32):
        super().__init__()
        self.net = nn.Sequential(nn.Conv2d(channels, hidden, 1, bias=False), nn.BatchNorm2d(hidden), nn.ReLU(),
                                 nn.Conv2d(hidden, 1, 1))
        self.register_buffer("cells", action_cells(board), persistent=False)

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        """``[B, D, H, W]`` -> ``{"safe_phase": [B, A]}``, each move's predicted safe-phase value / boxes."""
        return {"safe_phase": torch.tanh(self.net(x).flatten(1)[:, self.cells])}
