"""Multi-size AlphaViT training: batches of one board (grouped, what training does) against batches of
mixed boards padded to the largest grid with attention masks. Both give the same network outputs (checked
here on every board), so the choice is one of cost: a training step (forward, backward, Adam) on the cpu
preset, its time per sample for each board grouped and for a padded batch of the mix, drawn in the
proportion of samples that a run of the mix holds (each board's games times its moves, as the training
loop draws its batches).

    python benchmarks/alphavit_batches.py [--boards 2x2:1,3x3:2,4x4:2,5x5:4] [--batch 128] [--reps 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch
from torch.nn import functional as F

from agents.models import build_model, make_model_config
from agents.training.boards import BoardMix
from dnb_env.analysis import realistic_position
from dnb_env.core import geometry
from dnb_env.observations import encode_batch


def planes(net, board: str, n: int, rng) -> torch.Tensor:
    import random

    r = random.Random(int(rng.integers(1 << 30)))
    edges = geometry(board).num_actions
    states = [realistic_position(board, int(rng.integers(1, edges)), r) for _ in range(n)]
    return torch.from_numpy(encode_batch(net.config.encoder, states))


def padded_forward(net, groups: list[tuple[str, torch.Tensor]]) -> tuple[list[torch.Tensor], torch.Tensor]:
    """Every group's planes placed in the largest grid, pad cells masked out of attention: per group the
    policy logits over its board's edges, and the values of all samples in order."""
    H = max(x.shape[2] for _, x in groups)
    W = max(x.shape[3] for _, x in groups)
    B = sum(len(x) for _, x in groups)
    C, D = groups[0][1].shape[1], net.config.dim
    X = torch.zeros(B, C, H, W)
    pad = torch.ones(B, H, W, dtype=torch.bool)
    pos = torch.zeros(B, H, W, D)
    at = 0
    for _, x in groups:
        h, w = x.shape[2], x.shape[3]
        X[at:at + len(x), :, :h, :w] = x
        pad[at:at + len(x), :h, :w] = False
        pos[at:at + len(x), :h, :w] = net.position_embedding(h, w).reshape(h, w, D)
        at += len(x)
    t = net.patch_embed(X).flatten(2).transpose(1, 2) + pos.reshape(B, H * W, D)
    t = torch.cat([net.value_token.expand(B, -1, -1), t], dim=1)
    mask = torch.cat([torch.zeros(B, 1, dtype=torch.bool), pad.reshape(B, H * W)], dim=1)
    for layer in net.encoder:
        t = layer(t, src_key_padding_mask=mask)
    z = net.encoder_norm(t)
    token_logits = net.policy_head(z[:, 1:]).squeeze(-1)  # [B, H*W]
    logits, at = [], 0
    for board, x in groups:
        rows, cols = geometry(board).rows, geometry(board).cols
        cells = net.action_cells(rows, cols, "cpu")
        w = x.shape[3]
        flat = (cells // w) * W + cells % w  # the cell's index in the padded grid
        logits.append(token_logits[at:at + len(x)][:, flat])
        at += len(x)
    return logits, torch.tanh(net.value_head(z[:, 0])).reshape(-1)


def step_time(net, opt, forward, reps: int) -> float:
    times = []
    for _ in range(reps + 1):
        t0 = time.perf_counter()
        logits, values = forward()
        loss = sum(F.cross_entropy(lg, torch.zeros(len(lg), dtype=torch.long)) for lg in logits) + values.square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        times.append(time.perf_counter() - t0)
    return statistics.median(times[1:])


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--boards", default="2x2:1,3x3:2,4x4:2,5x5:4")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--reps", type=int, default=5)
    p.add_argument("--preset", default="cpu")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    torch.manual_seed(args.seed)
    torch.set_num_threads(1)
    rng = np.random.default_rng(args.seed)
    mix = BoardMix.parse(args.boards)
    net = build_model(make_model_config("alphavit", preset=args.preset, board=mix.boards[-1]))
    net.eval()
    # the same outputs either way (dropout off in eval mode)
    check = [(b, planes(net, b, 3, rng)) for b in mix.boards]
    with torch.no_grad():
        logits, values = padded_forward(net, check)
        grouped = [net(x) for _, x in check]
    err = max(max((a - g["policy_logits"]).abs().max().item() for a, g in zip(logits, grouped)),
              (values - torch.cat([g["value"] for g in grouped])).abs().max().item())
    net.train()
    opt = torch.optim.Adam(net.parameters(), lr=1e-4)
    samples = {b: s * geometry(b).num_actions for b, s in mix.shares().items()}
    share = {b: v / sum(samples.values()) for b, v in samples.items()}
    print(f"alphavit {args.preset}, batch {args.batch}, one thread; largest output difference padded vs "
          f"grouped: {err:.1e}")
    print("| batch | samples of the mix | ms per step | ms per sample |")
    print("|---|---:|---:|---:|")
    per_sample = {}
    for b in mix.boards:
        x = planes(net, b, args.batch, rng)
        ms = step_time(net, opt, lambda x=x: (lambda o: ([o["policy_logits"]], o["value"]))(net(x)), args.reps)
        per_sample[b] = ms / args.batch
        print(f"| {b} grouped | {share[b]:.1%} | {1000 * ms:.0f} | {1000 * per_sample[b]:.2f} |")
    grouped_cost = sum(share[b] * per_sample[b] for b in mix.boards)
    counts = rng.multinomial(args.batch, [share[b] for b in mix.boards])
    groups = [(b, planes(net, b, int(k), rng)) for b, k in zip(mix.boards, counts) if k]
    ms = step_time(net, opt, lambda: padded_forward(net, groups), args.reps)
    padded_cost = ms / args.batch
    print(f"| mixed, padded to {mix.boards[-1]} | 100% | {1000 * ms:.0f} | {1000 * padded_cost:.2f} |")
    print(f"grouped, the mix's average: {1000 * grouped_cost:.2f} ms per sample; padded costs "
          f"{padded_cost / grouped_cost:.2f}x as much")
    return {"max_difference": err, "grouped_ms_per_sample": {b: 1000 * v for b, v in per_sample.items()},
            "share": share, "grouped_mix_ms": 1000 * grouped_cost, "padded_mix_ms": 1000 * padded_cost}


if __name__ == "__main__":
    main()
