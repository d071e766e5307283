"""Family ``resnet``: the AlphaGo Zero style residual policy-value network (the papers' AlphaZero baseline).

input ``[B, C, H, W]`` (any encoder of :mod:`dnb_env.observations`) -> 3x3 conv + BN + ReLU ->
``blocks`` residual blocks -> heads. Default heads (``paper_heads=False``): policy 1x1 conv to 2 planes,
BN, ReLU, linear to the ``A`` edges; value 1x1 conv to 1 plane, BN, ReLU, linear ``value_hidden``,
ReLU, linear 1, tanh. ``paper_heads=True`` uses Dotsformer Table 3's heads (:mod:`agents.models.heads`;
needs a grid encoder), the same as the ``dotsformer`` family, so that a comparison differs only in the
trunk. ``aux_heads=True`` adds the initiative and move-class heads, ``future_head=True`` the safe-phase
auxiliary target (:class:`agents.models.heads.FutureHead`).

Presets: ``paper`` (6 blocks x 112 channels, about 1.4M parameters on 5x5 with the default heads,
Dotsformer's 1.42M baseline) and ``cpu`` (3 x 32).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import nn

from agents.models import Family
from agents.models.common import SHARED_HELP, ResidualBlock, check_common, check_future_target, input_shape
from agents.models.heads import AuxHeads, FutureHead, PolicyHead, ValueHead
from dnb_env.core import DEFAULT_BOARD, geometry


@dataclass(frozen=True)
class ResNetConfig:
    board: str = field(default=DEFAULT_BOARD, metadata={"help": SHARED_HELP["board"]})
    encoder: str = field(default="alphazero4", metadata={"help": SHARED_HELP["encoder"]})
    value: str = field(default="win", metadata={"help": SHARED_HELP["value"]})
    blocks: int = field(default=6, metadata={"help": "residual blocks of the tower"})
    width: int = field(default=112, metadata={"help": "channels of the tower"})
    value_hidden: int = field(default=64, metadata={"help": "hidden units of the AlphaZero value head"})
    paper_heads: bool = field(default=False, metadata={"help": SHARED_HELP["paper_heads"]})
    aux_heads: bool = field(default=False, metadata={"help": SHARED_HELP["aux_heads"]})
    future_head: bool = field(default=False, metadata={"help": SHARED_HELP["future_head"]})
    future_target: str = field(default="safe_phase", metadata={"help": SHARED_HELP["future_target"]})

    def __post_init__(self):
        check_common(self, grid_only=self.paper_heads or self.aux_heads or self.future_head)
        check_future_target(self)
        if self.blocks < 0 or self.width < 1 or self.value_hidden < 1:
            raise ValueError("blocks must be >= 0, width and value_hidden >= 1")


class ResNet(nn.Module):
    def __init__(self, config: ResNetConfig):
        super().__init__()
        self.config = config
        channels, h, w = input_shape(config)
        self.num_actions = geometry(config.board).num_actions
        width = config.width
        self.stem = nn.Sequential(nn.Conv2d(channels, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU())
        self.tower = nn.Sequential(*[ResidualBlock(width) for _ in range(config.blocks)])
        if config.paper_heads:
            self.policy = PolicyHead(width, h, w, config.board)
            self.value = ValueHead(width, h, w)
        else:  # the names and shapes of the first AlphaZero checkpoints
            self.policy = nn.Sequential(nn.Conv2d(width, 2, 1, bias=False), nn.BatchNorm2d(2), nn.ReLU(),
                                        nn.Flatten(), nn.Linear(2 * h * w, self.num_actions))
            self.value = nn.Sequential(nn.Conv2d(width, 1, 1, bias=False), nn.BatchNorm2d(1), nn.ReLU(),
                                       nn.Flatten(), nn.Linear(h * w, config.value_hidden), nn.ReLU(),
                                       nn.Linear(config.value_hidden, 1), nn.Tanh())
        self.aux = AuxHeads(width) if config.aux_heads else None
        self.future = FutureHead(width, config.board) if config.future_head else None

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        """``x [B, C, H, W]`` -> ``policy_logits [B, A]``, ``value [B]`` (+ aux logits)."""
        z = self.tower(self.stem(x))
        out = {"policy_logits": self.policy(z), "value": self.value(z).reshape(-1)}
        if self.aux is not None:
            out.update(self.aux(z))
        if self.future is not None:
            out.update(self.future(z))
        return out


FAMILY = Family(
    name="resnet", config=ResNetConfig, build=ResNet,
    presets={"paper": {}, "cpu": dict(blocks=3, width=32)}, agent="alphazero",
)
