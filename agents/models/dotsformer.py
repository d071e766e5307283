"""Family ``dotsformer``: the MS-Trans hybrid network of Dotsformer (sections 4.2 and 4.4, Table 3).

=======================  =====================================================================================
creation                 ``build_model(make_model_config("dotsformer", preset="paper", board="5x5"))``
input                    ``x [B, C, H, W]``, a grid encoder (default ``chainloop6``), H = 2R+1, W = 2C+1
outputs                  ``policy_logits [B, A]``, ``value [B]``; with ``aux_heads``: ``initiative_logits
                         [B, 3]``, ``move_class_logits [B, 4, H, W]`` (the same dict as ``resnet``)
attention readout        ``net.attention_maps(x)`` -> one ``[B, heads, L, L]`` per transformer block, L = H*W
presets (5x5 / 3x3)      ``paper``: 1,929,985 / 1,915,497 parameters; ``cpu``: 129,999 / 124,631
=======================  =====================================================================================

Network
-------
stem (3x3 conv, C -> D, BN, ReLU) -> ``layers`` blocks -> heads of :mod:`agents.models.heads` (Table 3:
policy 2 x Res + Fusion + BN, value Res + Fusion + BN + Linear + BN + tanh, optional auxiliary heads).

* ``order`` (Definition 1): ``baseline`` all residual blocks, ``TT`` all transformer blocks, ``RT`` the unit
  R R T repeated, ``TR`` the unit T R R repeated (the paper's choice; 6 layers = T R R T R R). ``layers``
  must be a multiple of the unit's length. Residual blocks work on maps ``[B, D, H, W]``, transformer
  blocks on tokens ``[B, L, D]`` (row-major cells); :func:`to_tokens` / :func:`to_map` convert between
  runs of blocks of different kinds.
* Transformer block (pre-norm): ``t + MSAttention(LN(t))``, then ``t + MLP(LN(t))`` with hidden width
  ``round(D * mlp_ratio)`` and GELU.
* MS attention: ``softmax(Q K^T / sqrt(d) + B_rel + B_topo) V`` per head (d = D / heads), then a linear
  output projection. ``qkv="multiscale4"`` / ``"multiscale2"``: for each kernel size (1, 3, 5, 7 / 1, 3;
  zero padding keeps H x W) one convolution of the LayerNorm'd map gives ``D / n_kernels`` channels of each
  of Q, K and V; a tensor's pieces are concatenated back to D channels and mixed by its own 1x1
  projection (an Inception-style split: with a full D-channel output per kernel, MultiScale4 alone would
  cost 264 D^2 parameters per block and the 1.94M budget would allow only D of about 54).
  ``qkv="linear"``: one ``Linear(D, 3D)`` (the No-MS-Trans ablation is ``qkv="linear", topo_bias=False``).
* ``B_rel`` (``rel_pos_bias``): Swin Transformer's table ``[(2H-1)(2W-1), heads]`` (truncated normal, std
  0.02) read at :func:`relative_position_index`, a fixed buffer.
* ``B_topo`` (``topo_bias``): ``w_strong[h] * [M == 2] + w_weak[h] * [M == 1]`` with learnable scalars per
  head, initialised to 1.0 and 0.5 so that the prior acts from the first step; M is :func:`topology_mask`.
* The normal forward calls ``torch.nn.functional.scaled_dot_product_attention`` with the biases as an
  additive float mask and keeps nothing. :meth:`Dotsformer.attention_maps` switches every attention
  module to an explicit softmax for one forward and returns its probabilities. Measured on 2 CPU
  threads (torch 2.13, 5x5, inference mode, medians of interleaved runs): at batch 64, ``paper``
  255-330 ms with SDPA vs 305-415 ms explicit (SDPA 15-20% faster in every run), ``cpu`` 25-32 vs
  27-36 ms; the attention op alone (64 x 4 heads x 121 tokens, d = 21) 21 vs 66 ms. At batch 1 the two
  paths are equal within noise.

The topology mask M
-------------------
The paper encodes "the four edges of a box are strongly correlated" without spelling M out. Here, over
the (2R+1) x (2C+1) grid (dot (2r, 2c), h(r, c) at (2r, 2c+1), v(r, c) at (2r+1, 2c), box centre
(2r+1, 2c+1)), the *cells of a box* are its centre and its four side cells (not its corner dots), and

* ``M[i, j] = 2`` (strong) when cells i and j are both cells of one box. This includes i == j for every
  edge cell and box centre; a dot belongs to no box, so ``M[dot, dot] = 0`` on the diagonal too.
* ``M[i, j] = 1`` (weak) when not strong and (a) i is a cell of box b1 and j a cell of box b2 where b1 and
  b2 are orthogonal neighbours, or (b) i and j are edge cells that share an end dot, or (c) one is a dot
  and the other an edge cell ending at it.
* ``M[i, j] = 0`` otherwise. M is symmetric.

Rule (b) adds nothing to rule (a): the edges meeting at a dot border the (up to four) boxes around that
dot, and any two of them touch one box or two neighbouring boxes (checked on every board up to 6x6). It
is kept in the code so that the code reads like the definition.

On a 2x2 board, relative to the top side h(0, 0) of box (0, 0) at grid cell (0, 1) (``Q``), the strong
(``S``) and weak (``w``) cells are::

      x: 0 1 2 3 4         grid of the 2x2 board       row of M for Q = (0, 1)
    y 0  o - o - o         o dot, - and | edges,          w Q w w .
      1  | b | b |         b box centre                   S S S w w
      2  o - o - o                                        . S . w .
      3  | b | b |                                        w w w . .
      4  o - o - o                                        . w . . .

Q's own box (0, 0) gives the five ``S`` cells; its neighbours (0, 1) and (1, 0) give the weak cells of
rule (a) ((0, 3), (1, 3), (1, 4), (2, 3) and (3, 0), (3, 1), (3, 2), (4, 1)); (0, 0) and (0, 2) are its
end dots (rule c). The centre dot (2, 2) is weak only to its four edges (1, 2), (2, 1), (2, 3), (3, 2).

Config
------
``DotsformerConfig`` (frozen; ``__post_init__`` raises ``ValueError`` naming the field and value):
``board``, ``encoder`` (grid layout only), ``value`` (``"win"``/``"margin"``), ``dim`` D, ``heads``,
``order``, ``layers``, ``qkv``, ``topo_bias``, ``rel_pos_bias``, ``mlp_ratio``, ``aux_heads``,
``paper_heads`` (always the Table 3 heads; kept so that the configs of both families read alike, and
``False`` is rejected), ``future_head`` (the safe-phase auxiliary target of
:class:`agents.models.heads.FutureHead`, off by default).

Presets and sizes
-----------------
* ``paper`` (the defaults): D = 84, 4 heads, TR, 6 layers, multiscale4, both biases, MLP ratio 2,
  auxiliary heads. 1,929,985 parameters on 5x5 (0.5% under the paper's 1.94M), 1,915,497 on 3x3.
  D = 128 cannot meet Table 3's budget with these heads: at D = 128 the stem, the heads (three
  residual blocks among them) and the four trunk residual blocks alone have 2.12M parameters (the full
  network 4.45M).
  On 5x5 for comparison: ``qkv="multiscale2"`` 1,252,609; No-MS-Trans (``qkv="linear",
  topo_bias=False``) 1,040,913; ``aux_heads=False`` 1,924,154; ``order="baseline"`` 1,177,329.
* ``cpu``: D = 32, 2 heads, 3 layers (T R R), multiscale2. 129,999 parameters on 5x5, 124,631 on 3x3.

Forward latency on 2 CPU threads, 5x5, inference mode (medians over runs on a shared machine, hence
the ranges): ``paper`` 12-16 ms at batch 1, 255-330 ms at batch 64; ``cpu`` 3.6-4.2 ms at batch 1,
25-32 ms at batch 64 (the ``resnet`` paper preset, same runs: 5.7-6.5 ms and 166-225 ms).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from agents.models import Family
from agents.models.common import SHARED_HELP, ResidualBlock, check_common, check_future_target, input_shape
from agents.models.heads import AuxHeads, FutureHead, PolicyHead, ValueHead
from dnb_env.core import DEFAULT_BOARD, geometry
from dnb_env.observations import DEFAULT_ENCODER

__all__ = ["DotsformerConfig", "Dotsformer", "FAMILY", "ORDERS", "QKV_KERNELS", "block_kinds", "topology_mask",
           "relative_position_index", "to_tokens", "to_map", "MultiScaleQKV", "MSAttention", "TransformerBlock"]

#: block order -> repeat unit ("R" residual block, "T" transformer block); Dotsformer Definition 1
ORDERS = {"baseline": "R", "TT": "T", "RT": "RRT", "TR": "TRR"}
#: QKV mode -> convolution kernel sizes (``None``: the plain linear projections of the ablation)
QKV_KERNELS = {"multiscale4": (1, 3, 5, 7), "multiscale2": (1, 3), "linear": None}


@dataclass(frozen=True)
class DotsformerConfig:
    board: str = field(default=DEFAULT_BOARD, metadata={"help": SHARED_HELP["board"]})
    encoder: str = field(default=DEFAULT_ENCODER, metadata={"help": SHARED_HELP["encoder"]})
    value: str = field(default="win", metadata={"help": SHARED_HELP["value"]})
    dim: int = field(default=84, metadata={"help": SHARED_HELP["dim"]})
    heads: int = field(default=4, metadata={"help": SHARED_HELP["heads"]})
    order: str = field(default="TR", metadata={
        "help": "block order: TR (T R R repeated), RT (R R T), TT (transformers only) or baseline (residual "
                "blocks only)"})
    layers: int = field(default=6, metadata={"help": SHARED_HELP["layers"]})
    qkv: str = field(default="multiscale4", metadata={
        "help": "Q, K, V projections: multiscale4 (kernels 1, 3, 5, 7), multiscale2 (1, 3) or linear"})
    topo_bias: bool = field(default=True, metadata={
        "help": "the topological attention bias (the four edges of a box are strongly related)"})
    rel_pos_bias: bool = field(default=True, metadata={"help": "Swin Transformer's relative position bias"})
    mlp_ratio: float = field(default=2.0, metadata={"help": SHARED_HELP["mlp_ratio"]})
    aux_heads: bool = field(default=True, metadata={"help": SHARED_HELP["aux_heads"]})
    paper_heads: bool = field(default=True, metadata={"help": SHARED_HELP["paper_heads"]})
    future_head: bool = field(default=False, metadata={"help": SHARED_HELP["future_head"]})
    future_target: str = field(default="safe_phase", metadata={"help": SHARED_HELP["future_target"]})

    def __post_init__(self):
        check_common(self, grid_only=True)
        check_future_target(self)
        for name in ("dim", "heads", "layers"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{name} must be an integer >= 1, not {v!r}")
        for name in ("topo_bias", "rel_pos_bias", "aux_heads", "paper_heads", "future_head"):
            if not isinstance(getattr(self, name), bool):
                raise ValueError(f"{name} must be True or False, not {getattr(self, name)!r}")
        if self.order not in ORDERS:
            raise ValueError(f"order must be one of {', '.join(ORDERS)}, not {self.order!r}")
        if self.qkv not in QKV_KERNELS:
            raise ValueError(f"qkv must be one of {', '.join(QKV_KERNELS)}, not {self.qkv!r}")
        unit = ORDERS[self.order]
        if self.layers % len(unit):
            raise ValueError(f"order {self.order!r} repeats the unit {' '.join(unit)}, so layers must be a multiple "
                             f"of {len(unit)}, not {self.layers}")
        if self.dim % self.heads:
            raise ValueError(f"dim ({self.dim}) must be divisible by heads ({self.heads})")
        kernels = QKV_KERNELS[self.qkv]
        if kernels is not None and self.dim % len(kernels):
            raise ValueError(f"qkv {self.qkv!r} splits dim over {len(kernels)} kernel sizes, so dim must be divisible "
                             f"by {len(kernels)}, not {self.dim}")
        if (not isinstance(self.mlp_ratio, (int, float)) or isinstance(self.mlp_ratio, bool)
                or not math.isfinite(self.mlp_ratio) or round(self.dim * self.mlp_ratio) < 1):
            raise ValueError(f"mlp_ratio must be a positive number (dim * mlp_ratio >= 1), not {self.mlp_ratio!r}")
        if not self.paper_heads:
            raise ValueError("paper_heads=False is not supported by dotsformer: it always uses the Dotsformer Table 3 "
                             "heads (the field exists so that resnet and dotsformer configs read alike)")


def block_kinds(order: str, layers: int) -> str:
    """The trunk as a string of ``R`` (residual) and ``T`` (transformer) blocks: ``("TR", 6) -> "TRRTRR"``."""
    unit = ORDERS[order]
    return unit * (layers // len(unit))


# ---------------------------------------------------------------------------------------------- geometry


def topology_mask(rows: int, cols: int) -> np.ndarray:
    """``M_topo [L, L]`` int8 over the L = (2R+1)(2C+1) grid cells (row-major): 2 strong, 1 weak, 0 none.

    See the module docstring for the definition and a drawn example.
    """
    g = geometry(rows, cols)
    H, W = g.height, g.width
    L = H * W
    # member[b, i]: cell i is the centre or one of the four sides of box b
    member = np.zeros((g.num_boxes, L), dtype=np.int32)
    for b in range(g.num_boxes):
        r, c = divmod(b, cols)
        y, x = 2 * r + 1, 2 * c + 1
        for dy, dx in ((0, 0), (-1, 0), (1, 0), (0, -1), (0, 1)):
            member[b, (y + dy) * W + x + dx] = 1
    # adjacent[b1, b2]: orthogonally neighbouring boxes
    adjacent = np.zeros((g.num_boxes, g.num_boxes), dtype=np.int32)
    for b in range(g.num_boxes):
        for _, other in g.box_neighbours[b]:
            if other >= 0:
                adjacent[b, other] = 1
    # incident[i, j]: cell i is a dot and cell j an edge ending at it
    incident = np.zeros((L, L), dtype=np.int32)
    for y, x in g.action_cell:
        ends = ((y, x - 1), (y, x + 1)) if y % 2 == 0 else ((y - 1, x), (y + 1, x))
        for dy, dx in ends:
            incident[dy * W + dx, y * W + x] = 1
    strong = member.T @ member > 0
    weak = (member.T @ adjacent @ member > 0) | (incident.T @ incident > 0) | (incident > 0) | (incident.T > 0)
    out = np.zeros((L, L), dtype=np.int8)
    out[weak] = 1
    out[strong] = 2
    return out


def relative_position_index(height: int, width: int) -> np.ndarray:
    """``[L, L]`` int64 row of the ``[(2H-1)(2W-1), heads]`` bias table for each (query i, key j) token pair:
    ``(y_i - y_j + H - 1) * (2W - 1) + (x_i - x_j + W - 1)`` (Swin Transformer's relative position index)."""
    ys, xs = np.divmod(np.arange(height * width), width)
    dy = ys[:, None] - ys[None, :] + height - 1
    dx = xs[:, None] - xs[None, :] + width - 1
    return (dy * (2 * width - 1) + dx).astype(np.int64)


def to_tokens(x: torch.Tensor) -> torch.Tensor:
    """Feature map ``[B, D, H, W]`` -> tokens ``[B, L, D]`` (L = H*W, row-major cells)."""
    return x.flatten(2).transpose(1, 2)


def to_map(t: torch.Tensor, height: int, width: int) -> torch.Tensor:
    """Tokens ``[B, L, D]`` -> feature map ``[B, D, H, W]``; the inverse of :func:`to_tokens`."""
    return t.transpose(1, 2).reshape(t.shape[0], t.shape[2], height, width)


# ---------------------------------------------------------------------------------------------- MS-Trans


class MultiScaleQKV(nn.Module):
    """Q, K, V ``[B, L, D]`` from a map ``[B, D, H, W]``: for each kernel size k a convolution (padding k//2)
    gives ``D / n_k`` channels of each of Q, K and V; the ``n_k`` pieces of a tensor are concatenated to D
    channels and mixed by a 1x1 projection per tensor (one grouped 1x1 convolution for the three)."""

    def __init__(self, dim: int, kernels: tuple[int, ...]):
        super().__init__()
        branch = dim // len(kernels)
        self.dim, self.branch = dim, branch
        self.convs = nn.ModuleList(nn.Conv2d(dim, 3 * branch, k, padding=k // 2, bias=False) for k in kernels)
        self.proj = nn.Conv2d(3 * dim, 3 * dim, 1, groups=3)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        pieces = [conv(x).split(self.branch, dim=1) for conv in self.convs]  # per kernel: (q_k, k_k, v_k)
        y = self.proj(torch.cat([p[i] for i in range(3) for p in pieces], dim=1))  # [B, 3D, H, W]: Q | K | V
        q, k, v = to_tokens(y).split(self.dim, dim=2)
        return q, k, v


class MSAttention(nn.Module):
    """Multi-head attention over the L grid cells with scores ``Q K^T / sqrt(d) + B_rel + B_topo``.

    ``kernels``: the multi-scale convolution sizes of Q/K/V, or ``None`` for linear Q/K/V. Set
    ``keep_attention`` to make the next forward store its probabilities ``[B, heads, L, L]`` in
    ``last_attention`` (computed by an explicit softmax); otherwise nothing is kept.
    """

    def __init__(self, dim: int, heads: int, kernels, rows: int, cols: int, *, rel_pos_bias: bool = True,
                 topo_bias: bool = True, strong_init: float = 1.0, weak_init: float = 0.5):
        super().__init__()
        g = geometry(rows, cols)
        self.height, self.width = g.height, g.width
        self.heads, self.head_dim = heads, dim // heads
        L = g.height * g.width
        self.qkv = MultiScaleQKV(dim, kernels) if kernels is not None else nn.Linear(dim, 3 * dim)
        self.out = nn.Linear(dim, dim)
        if rel_pos_bias:
            self.rel_table = nn.Parameter(torch.zeros((2 * g.height - 1) * (2 * g.width - 1), heads))
            nn.init.trunc_normal_(self.rel_table, std=0.02)
            index = torch.as_tensor(relative_position_index(g.height, g.width)).reshape(-1)
            self.register_buffer("rel_index", index, persistent=False)
        else:
            self.rel_table = None
        if topo_bias:
            self.w_strong = nn.Parameter(torch.full((heads,), float(strong_init)))
            self.w_weak = nn.Parameter(torch.full((heads,), float(weak_init)))
            m = torch.as_tensor(topology_mask(rows, cols))
            self.register_buffer("strong", (m == 2).float(), persistent=False)
            self.register_buffer("weak", (m == 1).float(), persistent=False)
        else:
            self.w_strong = self.w_weak = None
        self.L = L
        self.keep_attention = False
        self.last_attention: torch.Tensor | None = None

    def bias(self) -> torch.Tensor | None:
        """``B_rel + B_topo`` as ``[heads, L, L]``, or ``None`` when both are switched off."""
        bias = None
        if self.rel_table is not None:
            bias = self.rel_table[self.rel_index].reshape(self.L, self.L, self.heads).permute(2, 0, 1)
        if self.w_strong is not None:
            topo = self.w_strong[:, None, None] * self.strong + self.w_weak[:, None, None] * self.weak
            bias = topo if bias is None else bias + topo
        return bias

    def forward(self, t: torch.Tensor) -> torch.Tensor:
        """Normalised tokens ``[B, L, D]`` -> attention output ``[B, L, D]``."""
        B, L, D = t.shape
        if isinstance(self.qkv, MultiScaleQKV):
            q, k, v = self.qkv(to_map(t, self.height, self.width))
        else:
            q, k, v = self.qkv(t).split(D, dim=2)
        q, k, v = (z.reshape(B, L, self.heads, self.head_dim).transpose(1, 2) for z in (q, k, v))  # [B, h, L, d]
        bias = self.bias()
        if self.keep_attention:
            scores = q @ k.transpose(-2, -1) / math.sqrt(self.head_dim)
            if bias is not None:
                scores = scores + bias
            probs = scores.softmax(dim=-1)
            self.last_attention = probs
            y = probs @ v
        else:
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=None if bias is None else bias.unsqueeze(0))
        return self.out(y.transpose(1, 2).reshape(B, L, D))


class TransformerBlock(nn.Module):
    """Pre-norm block on tokens ``[B, L, D]``: ``t + MSAttention(LN(t))``, then ``t + MLP(LN(t))`` (GELU)."""

    def __init__(self, dim: int, heads: int, kernels, rows: int, cols: int, *, mlp_ratio: float = 2.0,
                 rel_pos_bias: bool = True, topo_bias: bool = True):
        super().__init__()
        hidden = round(dim * mlp_ratio)
        self.norm1 = nn.LayerNorm(dim)
        self.attn = MSAttention(dim, heads, kernels, rows, cols, rel_pos_bias=rel_pos_bias, topo_bias=topo_bias)
        self.norm2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.Linear(hidden, dim))

    def forward(self, t: torch.Tensor) -> torch.Tensor:
        t = t + self.attn(self.norm1(t))
        return t + self.mlp(self.norm2(t))


# ---------------------------------------------------------------------------------------------- network


class Dotsformer(nn.Module):
    def __init__(self, config: DotsformerConfig):
        super().__init__()
        self.config = config
        channels, h, w = input_shape(config)
        g = geometry(config.board)
        rows, cols = g.size
        self.height, self.width = h, w
        self.num_actions = g.num_actions
        self.kinds = block_kinds(config.order, config.layers)
        D = config.dim
        kernels = QKV_KERNELS[config.qkv]
        self.stem = nn.Sequential(nn.Conv2d(channels, D, 3, padding=1, bias=False), nn.BatchNorm2d(D), nn.ReLU())
        self.blocks = nn.ModuleList(
            ResidualBlock(D) if kind == "R" else
            TransformerBlock(D, config.heads, kernels, rows, cols, mlp_ratio=config.mlp_ratio,
                             rel_pos_bias=config.rel_pos_bias, topo_bias=config.topo_bias)
            for kind in self.kinds)
        self.policy = PolicyHead(D, h, w, config.board)
        self.value = ValueHead(D, h, w)
        self.aux = AuxHeads(D) if config.aux_heads else None
        self.future = FutureHead(D, config.board) if config.future_head else None

    @property
    def attention_modules(self) -> list[MSAttention]:
        """The :class:`MSAttention` of each transformer block, in trunk order."""
        return [blk.attn for blk in self.blocks if isinstance(blk, TransformerBlock)]

    def trunk(self, x: torch.Tensor) -> torch.Tensor:
        """``x [B, C, H, W]`` -> feature map ``[B, D, H, W]`` (stem and blocks; tokens only inside T runs)."""
        z, tokens = self.stem(x), False
        for kind, blk in zip(self.kinds, self.blocks):
            if (kind == "T") != tokens:
                z = to_map(z, self.height, self.width) if tokens else to_tokens(z)
                tokens = not tokens
            z = blk(z)
        return to_map(z, self.height, self.width) if tokens else z

    def forward(self, x: torch.Tensor) -> dict[str, torch.Tensor]:
        """``x [B, C, H, W]`` -> ``policy_logits [B, A]``, ``value [B]`` (+ ``initiative_logits [B, 3]``,
        ``move_class_logits [B, 4, H, W]`` with aux heads; ``safe_phase [B, A]`` with the future head)."""
        z = self.trunk(x)
        out = {"policy_logits": self.policy(z), "value": self.value(z).reshape(-1)}
        if self.aux is not None:
            out.update(self.aux(z))
        if self.future is not None:
            out.update(self.future(z))
        return out

    def forward_with_attention(self, x: torch.Tensor) -> tuple[dict[str, torch.Tensor], list[torch.Tensor]]:
        """:meth:`forward` plus the attention probabilities ``[B, heads, L, L]`` of every transformer block
        (row i: the distribution of query cell i over the key cells). Runs in the module's current mode
        (``build_model`` returns it in eval mode)."""
        mods = self.attention_modules
        try:
            for m in mods:
                m.keep_attention = True
            out = self(x)
            maps = [m.last_attention for m in mods]
        finally:
            for m in mods:
                m.keep_attention = False
                m.last_attention = None
        return out, maps

    def attention_maps(self, x: torch.Tensor) -> list[torch.Tensor]:
        """One ``[B, heads, L, L]`` tensor per transformer block; empty for ``order="baseline"``."""
        return self.forward_with_attention(x)[1]


FAMILY = Family(
    name="dotsformer", config=DotsformerConfig, build=Dotsformer,
    presets={"paper": {}, "cpu": dict(dim=32, heads=2, layers=3, qkv="multiscale2")}, agent="dotsformer",
)
