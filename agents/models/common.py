"""Pieces every model family shares: config checks, the residual block, the action -> grid-cell map."""

from __future__ import annotations

import torch
from torch import nn

from dnb_env.core import geometry
from dnb_env.observations import encoder_layout, encoder_shape

VALUE_UNITS = ("win", "margin")

#: The help of the config fields that several families share (one text for every family that has it).
SHARED_HELP = {
    "board": "the board the network is built for (RxC; --board)",
    "encoder": "input encoder (dnb_env.observations), e.g. alphazero4, chainloop6",
    "value": "unit of the value head: win (results +1/-1/0) or margin (final box margin / boxes)",
    "paper_heads": "Dotsformer Table 3's policy and value heads (resnet: instead of the AlphaZero heads, needs a "
                   "grid encoder; dotsformer: always)",
    "aux_heads": "the initiative and move-class heads (Dotsformer 4.3)",
    "future_head": "the head of an auxiliary target per move (model.future_target)",
    "future_target": "what the future head learns: safe_phase (each move's safe-phase value) or nimstring (whether "
                     "each move wins Nimstring, that is gets control)",
    "dim": "embedding width D (a multiple of heads; dotsformer: also of the qkv kernel count)",
    "heads": "attention heads per transformer block",
    "layers": "blocks of the trunk (dotsformer: a multiple of the order's unit; alphavit: encoder layers, None: 4 "
              "for vit, 1 for vid and vda)",
    "mlp_ratio": "hidden width of the transformer MLP, as a multiple of dim",
}


def check_common(config, *, grid_only: bool = False) -> None:
    """Validate ``board``, ``encoder`` and ``value`` of a family config (``ValueError`` naming the field).
    ``grid_only``: the family needs an encoder on the (2R+1) x (2C+1) grid."""
    g = geometry(config.board)
    if config.board is g:  # a Geometry given: the config (saved in checkpoints) keeps its name
        object.__setattr__(config, "board", g.name)
    encoder_shape(config.encoder, g.rows, g.cols)
    if grid_only and encoder_layout(config.encoder) != "grid":
        raise ValueError(f"{type(config).__name__} needs an encoder on the (2R+1) x (2C+1) grid; "
                         f"{config.encoder!r} is laid out per box")
    if config.value not in VALUE_UNITS:
        raise ValueError(f"value must be one of {VALUE_UNITS}, not {config.value!r}")


#: What a family's future head learns (``future_target``): each move's safe-phase value
#: (:func:`dnb_env.features.safe_phase_values`, over the boxes) or its Nimstring result
#: (:func:`dnb_env.features.nimstring_move_wins`, 1 or 0): who gets control.
FUTURE_TARGETS = ("safe_phase", "nimstring")


def check_future_target(config) -> None:
    if config.future_target not in FUTURE_TARGETS:
        raise ValueError(f"future_target must be one of {FUTURE_TARGETS}, not {config.future_target!r}")


def input_shape(config) -> tuple[int, int, int]:
    """``(C, H, W)`` of the network input."""
    g = geometry(config.board)
    return encoder_shape(config.encoder, g.rows, g.cols)


def num_actions(board: str) -> int:
    """``A``, the number of edges of ``board`` (:attr:`Geometry.num_actions`)."""
    return geometry(board).num_actions


def action_cells(board: str) -> torch.Tensor:
    """``[A]`` flat index into the (2R+1) x (2C+1) grid of each action's edge cell (OpenSpiel numbering)."""
    return torch.as_tensor(geometry(board).action_flat, dtype=torch.long)


class ResidualBlock(nn.Module):
    """conv3x3-BN-ReLU-conv3x3-BN + skip, ReLU (AlphaGo Zero)."""

    def __init__(self, width: int):
        super().__init__()
        self.c1 = nn.Conv2d(width, width, 3, padding=1, bias=False)
        self.b1 = nn.BatchNorm2d(width)
        self.c2 = nn.Conv2d(width, width, 3, padding=1, bias=False)
        self.b2 = nn.BatchNorm2d(width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = torch.relu(self.b1(self.c1(x)))
        return torch.relu(x + self.b2(self.c2(y)))
