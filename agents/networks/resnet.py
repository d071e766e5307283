"""AlphaGo Zero style residual policy-value network over any encoder of :mod:`dnb_env.observations`.

input ``[B, C, H, W]`` (the encoder's planes) -> 3x3 conv + BN + ReLU -> ``blocks`` residual blocks
(conv-BN-ReLU-conv-BN + skip, ReLU) -> policy head (1x1 conv to 2 planes, BN, ReLU, linear to the
``num_actions`` edges: logits ``[B, A]``) and value head (1x1 conv to 1 plane, BN, ReLU, linear 64, ReLU,
linear 1, tanh: ``[B]``). Presets: ``paper`` (6 blocks x 112 channels, about 1.4M parameters on 5x5, the
AlphaZero baseline of Dotsformer Table 3) and ``cpu`` (3 x 32).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import torch
from torch import nn

from dnb_env.core import parse_board
from dnb_env.observations import encoder_shape


@dataclass(frozen=True)
class NetConfig:
    board: str = "5x5"
    encoder: str = "alphazero4"
    blocks: int = 6
    width: int = 112
    value_hidden: int = 64

    def __post_init__(self):
        parse_board(self.board)
        encoder_shape(self.encoder, *parse_board(self.board))
        if self.blocks < 0 or self.width < 1:
            raise ValueError("blocks must be >= 0 and width >= 1")

    @classmethod
    def preset(cls, name: str, board: str = "5x5", encoder: str = "alphazero4") -> "NetConfig":
        presets = {"paper": dict(blocks=6, width=112), "cpu": dict(blocks=3, width=32)}
        if name not in presets:
            raise ValueError(f"unknown network preset {name!r}; presets: {', '.join(presets)}")
        return cls(board=board, encoder=encoder, **presets[name])

    def to_dict(self) -> dict:
        return asdict(self)


class _Block(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        self.c1 = nn.Conv2d(width, width, 3, padding=1, bias=False)
        self.b1 = nn.BatchNorm2d(width)
        self.c2 = nn.Conv2d(width, width, 3, padding=1, bias=False)
        self.b2 = nn.BatchNorm2d(width)

    def forward(self, x):
        y = torch.relu(self.b1(self.c1(x)))
        return torch.relu(x + self.b2(self.c2(y)))


class PolicyValueResNet(nn.Module):
    def __init__(self, config: NetConfig):
        super().__init__()
        self.config = config
        rows, cols = parse_board(config.board)
        channels, h, w = encoder_shape(config.encoder, rows, cols)
        self.num_actions = (rows + 1) * cols + rows * (cols + 1)
        self.stem = nn.Sequential(nn.Conv2d(channels, config.width, 3, padding=1, bias=False),
                                  nn.BatchNorm2d(config.width), nn.ReLU())
        self.tower = nn.Sequential(*[_Block(config.width) for _ in range(config.blocks)])
        self.policy = nn.Sequential(nn.Conv2d(config.width, 2, 1, bias=False), nn.BatchNorm2d(2), nn.ReLU(),
                                    nn.Flatten(), nn.Linear(2 * h * w, self.num_actions))
        self.value = nn.Sequential(nn.Conv2d(config.width, 1, 1, bias=False), nn.BatchNorm2d(1), nn.ReLU(),
                                   nn.Flatten(), nn.Linear(h * w, config.value_hidden), nn.ReLU(),
                                   nn.Linear(config.value_hidden, 1), nn.Tanh())

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """``x [B, C, H, W]`` -> (policy logits ``[B, A]``, value ``[B]`` in [-1, 1] for the mover)."""
        z = self.tower(self.stem(x))
        return self.policy(z), self.value(z).squeeze(-1)


def build_network(config: NetConfig) -> PolicyValueResNet:
    return PolicyValueResNet(config)
