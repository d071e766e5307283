"""Attention heat maps of a Dotsformer network over a board (as in Dotsformer Figure 10 and Appendix D).

    from agents.models.attention_plot import plot_attention
    plot_attention(net, state, "att.png", block=0)          # query: the edge of the most probable move

One panel per head of transformer block ``block``: every cell of the (2R+1) x (2C+1) grid is coloured by
the attention weight that the query cell gives it (white 0, dark red the panel's largest weight; each
panel has its own colour bar), under a drawing of the position: dots, drawn edges (black), undrawn edges
(dotted grey), box owners (``0`` / ``1``); the query cell is outlined in blue. The PNG is written
atomically (a temporary file in the same folder, then ``os.replace``). matplotlib is imported on first
use, with an Agg canvas attached to the figure (no pyplot, no global backend switch).

Command line (a freshly initialised ``cpu``-preset network unless a network is passed to :func:`main`)::

    python -m agents.models.attention_plot --board 3x3 --moves 0,5,13 --out att.png [--block 0] [--query 7]
"""

from __future__ import annotations

import argparse
import os

import numpy as np
import torch

from dnb_env.core import GameState, geometry
from dnb_env.observations import encode

__all__ = ["plot_attention", "attention_rows", "main"]


def _query_cell(state: GameState, logits: torch.Tensor, query) -> tuple[int, int]:
    g = state.geometry
    if query is None:
        scores = logits.detach().clone()
        legal = torch.as_tensor(state.legal_mask(), dtype=torch.bool)
        if legal.any():
            scores[~legal] = -torch.inf
        return g.action_cell[int(scores.argmax())]
    if isinstance(query, (int, np.integer)) and not isinstance(query, bool):
        if not 0 <= query < g.num_actions:
            raise ValueError(f"query action {query} is not in 0..{g.num_actions - 1} on {g.name}")
        return g.action_cell[int(query)]
    try:
        y, x = (int(v) for v in query)
    except (TypeError, ValueError):
        raise ValueError(f"query must be None, an action number or a (y, x) grid cell, not {query!r}") from None
    if not (0 <= y < g.height and 0 <= x < g.width):
        raise ValueError(f"query cell {(y, x)} is outside the {g.height} x {g.width} grid")
    return y, x


def attention_rows(net, state: GameState, *, block: int = 0, query=None) -> tuple[np.ndarray, tuple[int, int]]:
    """``([heads, H, W] attention weights of the query cell over the grid, (y, x) of the query)``.

    ``query``: ``None`` (the edge cell of the most probable legal move under the network's policy), an
    action number, or a ``(y, x)`` grid cell. The network runs in eval mode (its mode is restored after).
    """
    cfg = net.config
    if geometry(cfg.board).size != (state.rows, state.cols):
        raise ValueError(f"the network is for {cfg.board}, the state is {state.geometry.name}")
    n_blocks = len(net.attention_modules)
    if not 0 <= block < n_blocks:
        raise ValueError(f"block must be in 0..{n_blocks - 1} (the network has {n_blocks} transformer blocks), "
                         f"not {block}")
    x = torch.as_tensor(encode(cfg.encoder, state)).unsqueeze(0)
    was_training = net.training
    try:
        net.eval()
        with torch.no_grad():
            out, maps = net.forward_with_attention(x)
    finally:
        net.train(was_training)
    g = state.geometry
    y, xq = _query_cell(state, out["policy_logits"][0], query)
    rows = maps[block][0, :, y * g.width + xq, :]  # [heads, L]
    return rows.reshape(-1, g.height, g.width).numpy(), (y, xq)


def _draw_board(ax, state: GameState) -> None:
    g = state.geometry
    for a, (y, x) in enumerate(g.action_cell):
        (y0, x0), (y1, x1) = ((y, x - 1), (y, x + 1)) if y % 2 == 0 else ((y - 1, x), (y + 1, x))
        if state.is_drawn(a):
            ax.plot([x0, x1], [y0, y1], color="black", lw=3, solid_capstyle="round", zorder=3)
        else:
            ax.plot([x0, x1], [y0, y1], color="0.6", lw=1, ls=":", zorder=2)
    dots = [(2 * r, 2 * c) for r in range(g.rows + 1) for c in range(g.cols + 1)]
    ax.scatter([c for _, c in dots], [r for r, _ in dots], s=18, color="black", zorder=4)
    for b in range(g.num_boxes):
        owner = state.box_owner(b)
        if owner is not None:
            r, c = divmod(b, g.cols)
            ax.text(2 * c + 1, 2 * r + 1, str(owner), ha="center", va="center", fontsize=11, weight="bold",
                    color="tab:blue" if owner == 0 else "tab:green", zorder=5)


def _save_atomic(fig, path: str) -> None:
    folder, name = os.path.split(os.path.abspath(path))
    tmp = os.path.join(folder, f".{name}.{os.getpid()}.tmp.png")  # same folder, so os.replace is atomic
    try:
        fig.savefig(tmp, format="png", dpi=110)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise


def plot_attention(net, state: GameState, path: str, *, block: int = 0, query=None) -> tuple[int, int]:
    """Write the PNG described in the module docstring; returns the ``(y, x)`` query cell."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    rows, (qy, qx) = attention_rows(net, state, block=block, query=query)
    heads, H, W = rows.shape
    g = state.geometry
    size = 1.2 + 0.28 * max(H, W)
    fig = Figure(figsize=(heads * (size + 0.7), size + 0.9))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, heads, squeeze=False)[0]
    for h, ax in enumerate(axes):
        top = float(rows[h].max())
        im = ax.imshow(rows[h], cmap="Reds", vmin=0.0, vmax=top if top > 0 else 1.0,
                       extent=(-0.5, W - 0.5, H - 0.5, -0.5), interpolation="nearest", zorder=1)
        _draw_board(ax, state)
        ax.add_patch(_rectangle(qx, qy))
        ax.set_xlim(-0.5, W - 0.5)
        ax.set_ylim(H - 0.5, -0.5)
        ax.set_aspect("equal")
        ax.set_xticks([])
        ax.set_yticks([])
        ax.set_title(f"head {h}  (max {top:.3f})", fontsize=10)
        fig.colorbar(im, ax=ax, fraction=0.046, pad=0.03)
    query_name = g.action_name(g.cell_action[(qy, qx)]) if (qy, qx) in g.cell_action else "not an edge"
    moves = ",".join(str(a) for a in state.history) or "none"
    fig.suptitle(f"{g.name}, moves {moves}, player {state.current_player} to move | transformer block "
                 f"{block}, query cell ({qy}, {qx}) = {query_name}", fontsize=10)
    fig.tight_layout()
    _save_atomic(fig, path)
    return qy, qx


def _rectangle(x: int, y: int):
    from matplotlib.patches import Rectangle

    return Rectangle((x - 0.5, y - 0.5), 1, 1, fill=False, edgecolor="tab:blue", lw=2.5, zorder=6)


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of the attention plot (``dnb plot attention`` and this module's :func:`main`)."""
    p.add_argument("--board", default=None, help="RxC (default: the network's board, else 3x3)")
    p.add_argument("--moves", default="", help="comma-separated moves from the empty board: action numbers or "
                                               "'h r c' / 'v r c'")
    p.add_argument("--out", required=True, help="PNG to write")
    p.add_argument("--block", type=int, default=0, help="transformer block (0 = the first)")
    p.add_argument("--query", default=None, help="query edge (default: the most probable move)")
    p.add_argument("--seed", type=int, default=0, help="initialisation seed of the fresh network")
    p.add_argument("--checkpoint", default=None, help="a dotsformer checkpoint (default: a fresh cpu-preset network)")


def run(args: argparse.Namespace, p: argparse.ArgumentParser, net=None) -> int:
    """Plot what ``args`` (from :func:`add_arguments`) asks; errors go through ``p.error``. ``net``: a loaded
    network to plot (its board wins over ``--board``); ``None`` loads ``--checkpoint`` or builds a freshly
    initialised ``cpu``-preset network (seeded by ``--seed``)."""
    if args.checkpoint is not None and net is None:
        from agents.checkpoint import CheckpointError, load_network

        try:
            net, _ = load_network(args.checkpoint, family="dotsformer")
        except CheckpointError as e:
            p.error(str(e))
    if net is None:
        from agents.models import build_model, make_model_config

        board = args.board or "3x3"
        with torch.random.fork_rng():
            torch.manual_seed(args.seed)
            net = build_model(make_model_config("dotsformer", preset="cpu", board=board))
    elif args.board is not None and geometry(args.board).size != geometry(net.config.board).size:
        p.error(f"--board {args.board} differs from the network's board {net.config.board}")
    g = geometry(net.config.board)
    try:
        moves = [g.parse_action(m) for m in args.moves.split(",") if m.strip()]
        state = GameState.from_actions(g.rows, g.cols, moves)
        query = None if args.query is None else g.parse_action(args.query)
        cell = plot_attention(net, state, args.out, block=args.block, query=query)
    except ValueError as e:
        p.error(str(e))
    print(f"wrote {args.out} (block {args.block}, query cell {cell})")
    return 0


def main(argv: list[str] | None = None, *, net=None, prog: str = "python -m agents.models.attention_plot") -> int:
    """Command line entry (``python -m agents.models.attention_plot``; ``dnb plot attention`` passes its own
    ``prog``, which usage and error lines name)."""
    p = argparse.ArgumentParser(prog=prog, description="Attention heat maps of a Dotsformer network over a board: one "
                                "panel per head of a transformer block (a freshly initialised cpu-preset network "
                                "unless --checkpoint)", formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    add_arguments(p)
    return run(p.parse_args(argv), p, net)


if __name__ == "__main__":
    raise SystemExit(main())
