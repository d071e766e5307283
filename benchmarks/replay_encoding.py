"""Training steps with the replay's encoded rows kept, against encoding every batch again, side by side.

The replay is a teacher dataset's positions (``--data``, by default the held-out set in git) as samples.
Both arms run ``--steps`` gradient steps of ``--batch-size`` rows of the ``cpu`` preset network of
``--model`` under ``--encoder``, drawing the same rows with the same symmetries (one seed): "kept" is
:meth:`agents.training.replay.Replay.draw` (each row encoded once, at the first draw, which is timed with
it), "every batch" encodes the drawn rows at each step, as training did before. The safe-phase feature keeps
its own cache of searched positions (:func:`dnb_env.features.safe_phase_values`, 2^18 of them), so "every
batch" searches a position again only once that cache has let it go: ``--cold`` empties it before every
step, the case of a teacher set larger than the cache. Prints seconds a step, the ratio, and whether the
two arms saw the same batches.

    python benchmarks/replay_encoding.py [--steps 40] [--model dotsformer] [--encoder chainloop6_safe] [--cold]
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch

from agents.models import build_model, make_model_config
from agents.training.config import LossConfig
from agents.training.losses import total_loss
from agents.training.replay import Replay
from agents.training.dataset import TeacherData, to_samples
from dnb_env.core import geometry
from dnb_env.features import _values
from dnb_env.symmetry import symmetries


def run(replay: Replay, net, steps: int, batch: int, encoder: str, kept: bool, seed: int, cold: bool):
    rng = np.random.default_rng(seed)
    opt = torch.optim.Adam(net.parameters(), lr=1e-3)
    board = replay.samples.board
    seen = []
    t = time.perf_counter()
    for _ in range(steps):
        if cold:
            _values.cache_clear()
        if kept:
            arrays = replay.draw(rng, batch, 1, 1.0, encoder, 0.0, augment=True)
        else:  # the draw as Replay.draw makes it, the rows encoded afresh
            idx = rng.choice(len(replay), size=min(batch, len(replay)), p=replay.weights(1, 1.0))
            syms = symmetries(*geometry(board).size)
            arrays = replay.batch(idx, encoder, 0.0, syms[int(rng.integers(len(syms)))])
        seen.append(arrays["planes"].sum())
        tensors = {k: torch.from_numpy(v) for k, v in arrays.items()}
        loss, _ = total_loss(net(tensors["planes"]), tensors, LossConfig(), board)
        opt.zero_grad()
        loss.backward()
        opt.step()
    return (time.perf_counter() - t) / steps, seen


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--data", default="data/teach5-held", help="teacher dataset whose positions make the replay")
    p.add_argument("--positions", type=int, default=2000, help="its first N positions")
    p.add_argument("--model", default="dotsformer")
    p.add_argument("--encoder", default="chainloop6_safe")
    p.add_argument("--steps", type=int, default=40)
    p.add_argument("--batch-size", type=int, default=256)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--cold", action="store_true",
                   help="empty the safe-phase feature's own cache (2^18 positions) before every step, as a "
                        "dataset larger than that cache leaves it")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    data = TeacherData.load(args.data)
    samples, _ = to_samples(data.take(np.arange(min(args.positions, len(data)))))
    config = make_model_config(args.model, "cpu", board=samples.board, encoder=args.encoder)
    out = {}
    seen = {}
    for kept in (False, True):
        torch.manual_seed(args.seed)
        _values.cache_clear()  # the feature's own cache would hide the search in the second arm
        secs, seen[kept] = run(Replay(samples), build_model(config), args.steps, args.batch_size, args.encoder,
                               kept, args.seed, args.cold)
        out["kept" if kept else "every_batch"] = secs
    out["same_batches"] = bool(np.allclose(seen[True], seen[False]))
    print(f"{args.model} cpu preset, {args.encoder}, {len(samples)} positions of {args.data}, {args.steps} steps "
          f"of {args.batch_size}, one thread{', the feature cache emptied every step' if args.cold else ''}")
    print(f"encoded every batch: {out['every_batch']:.3f} s a step")
    print(f"encoded once, kept:  {out['kept']:.3f} s a step (the first draw's encoding included)")
    print(f"ratio {out['every_batch'] / out['kept']:.2f}x; same batches: {out['same_batches']}")
    return out


if __name__ == "__main__":
    main()
