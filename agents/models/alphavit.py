"""Family ``alphavit``: AlphaViT, AlphaViD and AlphaVDA (Fujita, section 3.1), one network for every board.

=======================  =====================================================================================
creation                 ``build_model(make_model_config("alphavit", preset="cpu", board="5x5"))``
input                    ``x [B, C, H, W]``, a grid encoder (default ``chainloop6``), H = 2R+1, W = 2C+1 for
                         *any* R x C board: the weights do not depend on the board
outputs                  ``policy_logits [B, A]`` over that board's A edges (OpenSpiel numbering), ``value [B]``;
                         with ``aux_heads``: ``initiative_logits [B, 3]``, ``move_class_logits [B, 4, H, W]``
variants                 ``variant="vit"`` (encoder only), ``"vid"`` (+ decoder over the encoder's outputs),
                         ``"vda"`` (+ decoder over learnable action embeddings)
presets                  ``paper``: vit 9,029,122, vid 6,138,882, vda 6,007,298 parameters; ``cpu``: vit
                         128,762, vid 88,382, vda 88,562 (the same counts on every board)
agent                    ``alphavit``: ``make_agent("alphavit", board="4x5", checkpoint=PATH)`` on any board
=======================  =====================================================================================

How the board reaches the network
---------------------------------
Only through the planes: the forward pass reads R and C from ``H = 2R+1`` and ``W = 2C+1`` and nothing else.
``config.board`` is the board the network was built (and first trained) for; it fixes no parameter shape.
A network trained on 3x3 plays 5x5 or 4x5 with the same weights; how well is a matter of training
(:meth:`AlphaViT.trained_boards` lists the boards it was trained on, and a checkpoint records them).

Network
-------
* Patch embedding (Eq. 1): a ``patch`` x ``patch`` convolution, stride 1, padding ``patch // 2``, from the C
  encoder planes to ``dim``: one token per grid cell, so L = H * W tokens (dots, edges and box centres).
* Position embedding (Eq. 2), added to the patch tokens only. ``pos_embedding="learned"`` (the paper's): a
  learnable table ``[dim, pos_size, pos_size]`` (truncated normal, std 0.02) resized to H x W by
  ``pos_interp`` (``"bilinear"``, the interpolation the paper names, or ``"bicubic"``) with
  ``align_corners=True``, so that the table's corners and borders stay the board's corner dots and border
  cells on every size; at H = W = ``pos_size`` (the 5x5 grid for the default 11) the table is used as it
  is. ``"sincos"``: fixed 2D sine-cosine embeddings of the integer grid coordinates (a quarter of ``dim``
  each for sin y, cos y, sin x, cos x), the same for a cell at the same offset on every board.
* Tokens: ``[value token, patch tokens]`` (Eq. 3 without the game token, one game here, and without the pass
  token: Dots-and-Boxes has no pass; the extra turn is the player to move, not an action).
* Encoder: ``layers`` pre-norm transformer encoder layers (``heads`` heads, GELU MLP of ``dim * mlp_ratio``,
  ``dropout``), then LayerNorm. ``layers=None`` is the paper's depth: 4 for vit (L4), 1 for vid and vda (L1).
* Value (Eq. 4): ``tanh(MLP_v(LN(z_0)))`` on the value token (LN: the encoder's final LayerNorm); MLP_v =
  Linear(dim, dim), GELU, Linear(dim, 1).
* Policy, ``vit`` (Eq. 5): one MLP shared by the tokens, ``MLP_p(LN(z_i))`` -> one logit per grid cell, read
  at the A edge cells in action order (:func:`agents.models.common.action_cells`, the map of the resnet and
  dotsformer policy heads), so action a's logit is the logit of its edge's token.
* Policy, ``vid`` (Eq. 7-8): the encoder's patch outputs through Linear(dim, decoder_dim), resized from L to A
  tokens by linear interpolation along the sequence (``decoder_input="resize"``: the paper's bilinear
  ``torch.nn.functional.interpolate`` on a sequence, ``align_corners=False``), or taken at the A edge cells
  in action order (``decoder_input="edges"``: no interpolation, token a is edge a's own encoder output).
  ``vda``: a learnable table ``[action_embeddings, decoder_dim]`` resized to A the same way. Then
  ``decoder_layers`` pre-norm transformer decoder layers (``decoder_heads`` heads, self-attention over the A
  tokens, cross-attention to the whole encoder output projected to decoder_dim), LayerNorm, and
  ``MLP_p`` -> one logit per decoder token: decoder token a is action a.
* Auxiliary heads (``aux_heads``, off by default: not in the paper): move-class logits from a linear layer on
  every (normalised) patch token ``[B, 4, H, W]``, initiative logits from a linear layer on the value token
  ``[B, 3]``.

Config
------
``AlphaViTConfig`` (frozen; ``__post_init__`` raises ``ValueError`` naming the field and value): ``board``,
``encoder`` (grid layout only), ``value`` (``"win"``/``"margin"``), ``variant``, ``dim``, ``heads``,
``layers``, ``mlp_ratio``, ``patch`` (odd), ``pos_embedding``, ``pos_size``, ``pos_interp``, ``decoder_dim``,
``decoder_heads``, ``decoder_layers``, ``decoder_input``, ``action_embeddings``, ``dropout``, ``aux_heads``.
Paper defaults (Table A1): dim 512, 8 heads, feed-forward 1024 (``mlp_ratio=2``), patch stride 1, decoder
1 layer of 512 with 8 heads, 256 action embeddings, dropout 0.1. The paper's patch size is 2k + 1 with k
not given in its text; 3 here (an edge cell, its end dots and the centres of the boxes beside it). Its
position table size is not given either; 11 here (the 5x5 grid).

Checkpoints
-----------
The network keeps a record of the boards its training steps used (a ``[MAX_SIZE, MAX_SIZE]`` boolean buffer
in the state dict, set by every forward pass in train mode with gradients on), so the record survives
``dnb train`` resumes, ``dnb fit`` and exports with no change to the training code;
:func:`agents.checkpoint.save_checkpoint` writes it as the file's ``boards`` list. Loading the file for a
board outside that list works and gives one :class:`agents.checkpoint.BoardOutsideTrainingWarning`.

Presets and sizes
-----------------
* ``paper`` (the defaults): vit L4 9,029,122 parameters, vid L1 6,138,882, vda L1 6,007,298 (Table 1 of the
  paper: 11.2M, 11.5M, 11.3M with the same widths; its boards, games and heads differ).
* ``cpu``: dim 60, 4 heads, feed-forward 120, decoder 60 wide with 4 heads, 64 action embeddings, no dropout
  (small nets on few self-play samples underfit rather than overfit), and ``pos_embedding="sincos"``: two
  runs on 2x2-4x4 that differed only there, scored on seven boards, put the sine-cosine embeddings ahead of
  the learned table on every board, trained or not (docs/research/alphavit.md). vit (4 layers) 128,762
  parameters (with the learned table of 11 x 11 x 60: 136,022), beside the dotsformer cpu preset's 129,999
  on 5x5 (resnet cpu: 79,451); vid 88,382 and vda 88,562 (1 encoder + 1 decoder layer, the paper's
  shallower pairing).

Size and latency beside the other families (``benchmarks/networks.py --threads 1``, one CPU thread on a
shared, loaded machine: single runs, read the ratios loosely), per forward pass in inference mode (the cpu
AlphaViT measured with the learned table it had then; the sine-cosine embeddings take its 7,260 parameters
away and add no arithmetic):

=============  ==========  =======  ==================  ==================  ==================
preset, board  network     GFLOPs   batch 1             batch 64            parameters
=============  ==========  =======  ==================  ==================  ==================
cpu, 3x3       alphavit    0.012    3.2 ms              60 ms               136,022
cpu, 3x3       dotsformer  0.012    3.0 ms              32 ms               124,631
cpu, 3x3       resnet      0.013    6.0 ms (noise)      26 ms               134,426 (4 x 32)
cpu, 5x5       alphavit    0.030    3.2 ms              233 ms              136,022
cpu, 5x5       dotsformer  0.031    2.9 ms              76 ms               129,999
cpu, 5x5       resnet      0.032    1.9 ms              54 ms               139,250 (4 x 32)
paper, 3x3     alphavit    0.868    28 ms               1.34 s              9,029,122
paper, 3x3     dotsformer  0.188    13 ms               296 ms              1,915,497
paper, 3x3     resnet      0.200    6.6 ms              297 ms              2,051,546
paper, 5x5     alphavit    2.118    54 ms               3.58 s              9,029,122
paper, 5x5     dotsformer  0.470    22 ms               691 ms              1,929,985
paper, 5x5     resnet      0.493    15 ms               646 ms              2,067,890
=============  ==========  =======  ==================  ==================  ==================

At equal FLOPs the cpu ViT is 3-4 times slower than the ResNet at batch 64 on 5x5: full attention over the
121 grid tokens in every one of its four layers (small heads of 15: batched matrix products and softmax
take half the time in a profile), where the dotsformer cpu preset has one transformer block of three.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import torch
from torch import nn
from torch.nn import functional as F

from agents.models import Family
from agents.models.common import SHARED_HELP, check_common
from dnb_env.core import DEFAULT_BOARD, MAX_SIZE, geometry
from dnb_env.observations import DEFAULT_ENCODER, encoder_shape

__all__ = ["AlphaViTConfig", "AlphaViT", "FAMILY", "VARIANTS", "PAPER_LAYERS", "sincos_embedding",
           "resize_sequence"]

VARIANTS = ("vit", "vid", "vda")
#: encoder layers when ``layers`` is None: the paper's baseline depths (AlphaViT L4, AlphaViD/VDA L1)
PAPER_LAYERS = {"vit": 4, "vid": 1, "vda": 1}
POS_EMBEDDINGS = ("learned", "sincos")
POS_INTERPOLATIONS = ("bilinear", "bicubic")
DECODER_INPUTS = ("resize", "edges")


def _positive_int(name: str, v) -> None:
    if not isinstance(v, int) or isinstance(v, bool) or v < 1:
        raise ValueError(f"{name} must be an integer >= 1, not {v!r}")


@dataclass(frozen=True)
class AlphaViTConfig:
    board: str = field(default=DEFAULT_BOARD, metadata={"help": SHARED_HELP["board"]})
    encoder: str = field(default=DEFAULT_ENCODER, metadata={"help": SHARED_HELP["encoder"]})
    value: str = field(default="win", metadata={"help": SHARED_HELP["value"]})
    variant: str = field(default="vit", metadata={
        "help": "alphavit: vit (encoder, a policy logit per edge token), vid (+ a decoder over the encoder's "
                "outputs) or vda (+ a decoder over learnable action embeddings)"})
    dim: int = field(default=512, metadata={"help": SHARED_HELP["dim"]})
    heads: int = field(default=8, metadata={"help": SHARED_HELP["heads"]})
    layers: int | None = field(default=None, metadata={"help": SHARED_HELP["layers"]})
    mlp_ratio: float = field(default=2.0, metadata={"help": SHARED_HELP["mlp_ratio"]})
    patch: int = field(default=3, metadata={
        "help": "alphavit: kernel of the patch-embedding convolution (odd; stride 1, one token per grid cell)"})
    pos_embedding: str = field(default="learned", metadata={
        "help": "alphavit: learned (a table resized to each board's grid) or sincos (fixed 2D sine-cosine of the "
                "grid coordinates)"})
    pos_size: int = field(default=11, metadata={
        "help": "alphavit: side of the learned position table (11: the 5x5 grid)"})
    pos_interp: str = field(default="bilinear", metadata={
        "help": "alphavit: how the learned position table is resized to the board: bilinear or bicubic"})
    decoder_dim: int = field(default=512, metadata={"help": "alphavit vid/vda: embedding width of the decoder"})
    decoder_heads: int = field(default=8, metadata={"help": "alphavit vid/vda: attention heads per decoder layer"})
    decoder_layers: int = field(default=1, metadata={"help": "alphavit vid/vda: transformer decoder layers"})
    decoder_input: str = field(default="resize", metadata={
        "help": "alphavit vid: decoder inputs resized from the encoder's outputs to the action count (resize) or "
                "taken at the edge cells (edges)"})
    action_embeddings: int = field(default=256, metadata={
        "help": "alphavit vda: learnable action embeddings, resized to the action count"})
    dropout: float = field(default=0.1, metadata={"help": "alphavit: dropout in the transformer layers"})
    aux_heads: bool = field(default=False, metadata={"help": SHARED_HELP["aux_heads"]})

    def __post_init__(self):
        check_common(self, grid_only=True)
        if self.variant not in VARIANTS:
            raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, not {self.variant!r}")
        for name in ("dim", "heads", "patch", "pos_size", "decoder_dim", "decoder_heads", "decoder_layers",
                     "action_embeddings"):
            _positive_int(name, getattr(self, name))
        if self.layers is not None:
            _positive_int("layers", self.layers)
        if self.patch % 2 == 0:
            raise ValueError(f"patch must be odd (one token per grid cell: stride 1, padding patch // 2), "
                             f"not {self.patch}")
        if self.dim % self.heads:
            raise ValueError(f"dim ({self.dim}) must be divisible by heads ({self.heads})")
        if self.decoder_dim % self.decoder_heads:
            raise ValueError(f"decoder_dim ({self.decoder_dim}) must be divisible by decoder_heads "
                             f"({self.decoder_heads})")
        if self.pos_embedding not in POS_EMBEDDINGS:
            raise ValueError(f"pos_embedding must be one of {', '.join(POS_EMBEDDINGS)}, not {self.pos_embedding!r}")
        if self.pos_embedding == "sincos" and self.dim % 4:
            raise ValueError(f"pos_embedding 'sincos' splits dim in four (sin y, cos y, sin x, cos x), so dim "
                             f"must be divisible by 4, not {self.dim}")
        if self.pos_interp not in POS_INTERPOLATIONS:
            raise ValueError(f"pos_interp must be one of {', '.join(POS_INTERPOLATIONS)}, not {self.pos_interp!r}")
        if self.decoder_input not in DECODER_INPUTS:
            raise ValueError(f"decoder_input must be one of {', '.join(DECODER_INPUTS)}, not {self.decoder_input!r}")
        if (not isinstance(self.mlp_ratio, (int, float)) or isinstance(self.mlp_ratio, bool)
                or not math.isfinite(self.mlp_ratio) or round(self.dim * self.mlp_ratio) < 1
                or round(self.decoder_dim * self.mlp_ratio) < 1):
            raise ValueError(f"mlp_ratio must be a positive number (dim * mlp_ratio >= 1), not {self.mlp_ratio!r}")
        if (not isinstance(self.dropout, (int, float)) or isinstance(self.dropout, bool)
                or not 0 <= self.dropout < 1):
            raise ValueError(f"dropout must be in [0, 1), not {self.dropout!r}")
        if not isinstance(self.aux_heads, bool):
            raise ValueError(f"aux_heads must be True or False, not {self.aux_heads!r}")

    @property
    def encoder_layers(self) -> int:
        """The encoder depth: ``layers``, or the paper's for the variant (4 for vit, 1 for vid and vda)."""
        return self.layers if self.layers is not None else PAPER_LAYERS[self.variant]


# ---------------------------------------------------------------------------------------------- pieces


def sincos_embedding(height: int, width: int, dim: int) -> torch.Tensor:
    """``[dim, H, W]`` fixed 2D sine-cosine embeddings of the integer grid coordinates (y, x): channels
    ``[sin(y w_k), cos(y w_k), sin(x w_k), cos(x w_k)]`` for ``w_k = 10000^(-k / (dim / 4))``, k < dim / 4."""
    quarter = dim // 4
    omega = 10000.0 ** (-torch.arange(quarter, dtype=torch.float32) / quarter)  # [dim/4]
    ys = torch.arange(height, dtype=torch.float32)[:, None] * omega  # [H, dim/4]
    xs = torch.arange(width, dtype=torch.float32)[:, None] * omega  # [W, dim/4]
    y_part = torch.cat([ys.sin(), ys.cos()], dim=1).T[:, :, None].expand(2 * quarter, height, width)
    x_part = torch.cat([xs.sin(), xs.cos()], dim=1).T[:, None, :].expand(2 * quarter, height, width)
    return torch.cat([y_part, x_part], dim=0).contiguous()


def resize_sequence(tokens: torch.Tensor, length: int) -> torch.Tensor:
    """``[B, N, D]`` -> ``[B, length, D]`` by linear interpolation along the sequence (what the paper's
    bilinear ``F.interpolate`` does to a sequence of embeddings: the feature axis is left as it is)."""
    if tokens.shape[1] == length:
        return tokens
    return F.interpolate(tokens.transpose(1, 2), size=length, mode="linear", align_corners=False).transpose(1, 2)


def _mlp(dim: int, out: int) -> nn.Sequential:
    """Linear(dim, dim), GELU, Linear(dim, out): a head's MLP on tokens already normalised."""
    return nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Linear(dim, out))


# ---------------------------------------------------------------------------------------------- network


class AlphaViT(nn.Module):
    """The ``alphavit`` family's network (module docstring); ``forward`` takes any board's grid planes."""

    def __init__(self, config: AlphaViTConfig):
        super().__init__()
        self.config = config
        D = config.dim
        self.channels = encoder_shape(config.encoder, 1, 1)[0]
        self.patch_embed = nn.Conv2d(self.channels, D, config.patch, stride=1, padding=config.patch // 2)
        if config.pos_embedding == "learned":
            self.pos_table = nn.Parameter(torch.zeros(D, config.pos_size, config.pos_size))
            nn.init.trunc_normal_(self.pos_table, std=0.02)
        else:
            self.pos_table = None
        self.value_token = nn.Parameter(torch.zeros(1, 1, D))
        nn.init.trunc_normal_(self.value_token, std=0.02)
        ff = round(D * config.mlp_ratio)
        self.encoder = nn.ModuleList(
            nn.TransformerEncoderLayer(D, config.heads, ff, config.dropout, activation="gelu", batch_first=True,
                                       norm_first=True)
            for _ in range(config.encoder_layers))
        self.encoder_norm = nn.LayerNorm(D)
        self.value_head = _mlp(D, 1)
        if config.variant == "vit":
            self.policy_head = _mlp(D, 1)
        else:
            Dd = config.decoder_dim
            if config.variant == "vid":
                self.decoder_in = nn.Linear(D, Dd)
                self.action_table = None
            else:
                self.decoder_in = None
                self.action_table = nn.Parameter(torch.zeros(1, config.action_embeddings, Dd))
                nn.init.trunc_normal_(self.action_table, std=0.02)
            self.memory_proj = nn.Linear(D, Dd) if Dd != D else nn.Identity()
            self.decoder = nn.ModuleList(
                nn.TransformerDecoderLayer(Dd, config.decoder_heads, round(Dd * config.mlp_ratio), config.dropout,
                                           activation="gelu", batch_first=True, norm_first=True)
                for _ in range(config.decoder_layers))
            self.decoder_norm = nn.LayerNorm(Dd)
            self.policy_head = _mlp(Dd, 1)
        if config.aux_heads:
            self.move_class_head = nn.Linear(D, 4)
            self.initiative_head = nn.Linear(D, 3)
        # trained[r - 1, c - 1]: a training step (train mode, gradients on) has seen an r x c board
        self.register_buffer("trained", torch.zeros(MAX_SIZE, MAX_SIZE, dtype=torch.bool))
        self._cells: dict = {}

    # -- the board, from the planes -----------------------------------------------------------------

    def board_of(self, x: torch.Tensor) -> tuple[int, int]:
        """``(R, C)`` of grid planes ``x [B, C, 2R+1, 2C+1]``; ``ValueError`` for anything else."""
        if x.dim() != 4 or x.shape[1] != self.channels:
            raise ValueError(f"alphavit takes planes [B, {self.channels}, 2R+1, 2C+1] of encoder "
                             f"{self.config.encoder!r}, got shape {tuple(x.shape)}")
        H, W = x.shape[2], x.shape[3]
        if H < 3 or W < 3 or H % 2 == 0 or W % 2 == 0 or H > 2 * MAX_SIZE + 1 or W > 2 * MAX_SIZE + 1:
            raise ValueError(f"alphavit takes the (2R+1) x (2C+1) grid of an R x C board (1 <= R, C <= {MAX_SIZE}), "
                             f"got planes of {H} x {W}")
        return (H - 1) // 2, (W - 1) // 2

    def action_cells(self, rows: int, cols: int, device) -> torch.Tensor:
        """``[A]`` flat grid index of each action's edge cell on a rows x cols board (cached per board)."""
        key = (rows, cols, str(device))
        cells = self._cells.get(key)
        if cells is None:
            cells = torch.as_tensor(geometry(rows, cols).action_flat, dtype=torch.long, device=device)
            self._cells[key] = cells
        return cells

    def trained_boards(self) -> list[str]:
        """The boards training steps have used, ``["2x2", "3x3", ...]`` (rows, then columns)."""
        return [f"{r + 1}x{c + 1}" for r, c in torch.nonzero(self.trained.cpu()).tolist()]

    def position_embedding(self, height: int, width: int) -> torch.Tensor:
        """``[H*W, dim]`` position embeddings of the grid cells (row-major)."""
        cfg = self.config
        if self.pos_table is None:
            pos = sincos_embedding(height, width, cfg.dim).to(self.value_token.device, self.value_token.dtype)
        elif (height, width) == self.pos_table.shape[1:]:
            pos = self.pos_table
        else:
            pos = F.interpolate(self.pos_table[None], size=(height, width), mode=cfg.pos_interp,
                                align_corners=True)[0]
        return pos.flatten(1).T

    # -- forward --------------------------------------------------------------------------------------

    def encode(self, x: torch.Tensor) -> torch.Tensor:
        """``x [B, C, H, W]`` -> encoder output ``[B, 1 + H*W, dim]`` (the value token first)."""
        H, W = x.shape[2], x.shape[3]
        t = self.patch_embed(x).flatten(2).transpose(1, 2) + self.position_embedding(H, W)  # [B, L, D]
        t = torch.cat([self.value_token.expand(x.shape[0], -1, -1), t], dim=1)
        for layer in self.encoder:
            t = layer(t)
        return self.encoder_norm(t)

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        """``x [B, C, 2R+1, 2C+1]`` for any R x C board -> ``policy_logits [B, A]`` (that board's edges),
        ``value [B]`` (+ ``initiative_logits [B, 3]``, ``move_class_logits [B, 4, H, W]`` with aux heads)."""
        rows, cols = self.board_of(x)
        if self.training and torch.is_grad_enabled():
            self.trained[rows - 1, cols - 1] = True
        H, W = x.shape[2], x.shape[3]
        z = self.encode(x)
        patches = z[:, 1:]  # [B, L, D]
        cells = self.action_cells(rows, cols, x.device)
        if self.config.variant == "vit":
            logits = self.policy_head(patches).squeeze(-1)[:, cells]  # [B, A]
        else:
            logits = self.decode(z, cells)
        out = {"policy_logits": logits, "value": torch.tanh(self.value_head(z[:, 0])).reshape(-1)}
        if self.config.aux_heads:
            out["initiative_logits"] = self.initiative_head(z[:, 0])
            out["move_class_logits"] = self.move_class_head(patches).transpose(1, 2).reshape(x.shape[0], 4, H, W)
        return out

    def decode(self, z: torch.Tensor, cells: torch.Tensor) -> torch.Tensor:
        """vid / vda: encoder output ``z [B, 1 + L, dim]`` -> policy logits ``[B, A]`` (A = ``len(cells)``)."""
        A = len(cells)
        if self.action_table is not None:  # vda: learnable action embeddings resized to A
            queries = resize_sequence(self.action_table, A).expand(z.shape[0], -1, -1)
        elif self.config.decoder_input == "edges":  # vid: the encoder output at each action's edge cell
            queries = self.decoder_in(z[:, 1:][:, cells])
        else:  # vid: the encoder's patch outputs resized to A
            queries = resize_sequence(self.decoder_in(z[:, 1:]), A)
        memory = self.memory_proj(z)
        for layer in self.decoder:
            queries = layer(queries, memory)
        return self.policy_head(self.decoder_norm(queries)).squeeze(-1)


#: sine-cosine position embeddings: they transferred to unseen boards better than the learned table
#: (docs/research/alphavit.md); the paper preset keeps the paper's learned table
CPU_PRESET = dict(dim=60, heads=4, mlp_ratio=2.0, decoder_dim=60, decoder_heads=4, action_embeddings=64, dropout=0.0,
                  pos_embedding="sincos")

FAMILY = Family(
    name="alphavit", config=AlphaViTConfig, build=AlphaViT,
    presets={"paper": {}, "cpu": CPU_PRESET}, agent="alphavit", any_board=True,
)
