"""What supervised fits (:mod:`agents.training.supervised`) and self-play training (:mod:`agents.training.loop`)
share: a run's starting weights (``init``), its device, and its data encoded once.
"""

from __future__ import annotations

import numpy as np

from dnb_env._extras import requires_extra

with requires_extra("agents.training.common"):
    import torch

from agents.checkpoint import load_checkpoint
from agents.models import build_model, config_from_dict, config_to_dict, family_of, get_family
from agents.training.replay import future_targets
from dnb_env.observations import encode_batch

__all__ = ["initial_weights", "resolve_device", "encode_all"]


def initial_weights(config) -> dict:
    """The state dict of ``config.init`` (a checkpoint of any run or fit), checked to be of the run's model:
    the same family and config (but for the board, for a family whose networks play every board; and but
    for the encoder where the run's encoder extends the checkpoint's, :data:`dnb_env.observations.EXTENDS`:
    the input weights of the new channels then start at zero, so the network computes what it did), else a
    ValueError naming what differs."""
    from dnb_env.observations import extends

    payload = load_checkpoint(config.init)
    mine = config_to_dict(config.model)
    theirs = config_to_dict(config_from_dict(payload["model"]))  # options newer than the checkpoint: defaults
    differs = sorted(k for k in set(mine) | set(theirs) if mine.get(k) != theirs.get(k))
    if family_of(config.model) == theirs.get("family") and get_family(theirs["family"]).any_board:
        differs = [k for k in differs if k != "board"]  # one network for every board: pretrained on another
    widen = "encoder" in differs and extends(mine.get("encoder"), theirs.get("encoder"))
    if widen:
        differs.remove("encoder")
    if differs:
        raise ValueError(f"init checkpoint {config.init} is another model than the run's (differs in "
                         + ", ".join(f"{k}: {theirs.get(k)!r} there, {mine.get(k)!r} here" for k in differs) + ")")
    state = payload["state_dict"]
    if widen:
        state = _widened(state, build_model(config.model).state_dict(), config.init)
    return state


def _widened(state: dict, target: dict, source: str) -> dict:
    """``state`` with each tensor that reads the input channels (its dimension 1 smaller than ``target``'s,
    the rest equal) padded with zeros up to ``target``'s shape."""
    out = dict(state)
    for k, want in target.items():
        have = state.get(k)
        if have is None or have.shape == want.shape:
            continue
        if (have.dim() < 2 or have.shape[0] != want.shape[0] or have.shape[2:] != want.shape[2:]
                or have.shape[1] >= want.shape[1]):
            raise ValueError(f"init checkpoint {source}: {k} has shape {tuple(have.shape)}, the run's model "
                             f"{tuple(want.shape)}; only the input channels may grow")
        pad = torch.zeros(want.shape, dtype=have.dtype)
        pad[:, :have.shape[1]] = have
        out[k] = pad
    return out


def resolve_device(device: str) -> str:
    """``"auto"`` (CUDA when torch sees a GPU, else the CPU), ``"cpu"``, ``"cuda"`` or ``"cuda:N"``; a GPU
    asked for but not there is an error."""
    if device == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cpu":
        return device
    if device == "cuda" or device.startswith("cuda:"):
        if not torch.cuda.is_available():
            raise ValueError(f"device {device!r} asked for, but torch sees no CUDA GPU (use --device cpu)")
        return device
    raise ValueError(f"device must be auto, cpu, cuda or cuda:N, not {device!r}")


def _encode_chunk(task):
    encoder, states, future = task
    if encoder is None:  # the future head's targets
        return future_targets(states, future)
    return encode_batch(encoder, states)


def encode_all(samples, encoder: str | None, workers: int = 1, chunk: int = 2000, progress: bool = False,
               future: str = "safe_phase"):
    """Every row of ``samples`` encoded by ``encoder`` (``[N, C, H, W]`` float32), over ``workers``
    processes in chunks of ``chunk`` positions: a fit encodes its data once instead of every batch (the
    computed-feature encoders spend about half a millisecond a position in the exact safe-phase search).
    ``encoder=None``: the future head's targets of every row instead, ``(values [N, A], mask [N, A])``
    (:func:`agents.training.replay.future_targets` of kind ``future``), which run the same searches."""
    from agents.processes import spawn_pool

    if workers < 1 or chunk < 1:
        raise ValueError("workers and chunk must be >= 1")
    n = len(samples)
    tasks = ((encoder, samples.states(np.arange(i, min(i + chunk, n))), future) for i in range(0, n, chunk))
    bar = None
    if progress:
        try:
            from tqdm import tqdm

            bar = tqdm(total=n, unit="pos", desc=f"encode {encoder or 'future targets'}")
        except ImportError:
            pass
    parts = []
    pool = spawn_pool(workers, 1) if workers > 1 else None
    try:
        results = pool.imap(_encode_chunk, tasks) if pool is not None else map(_encode_chunk, tasks)
        for part in results:
            parts.append(part)
            if bar is not None:
                bar.update(len(part[0]) if encoder is None else len(part))
    finally:
        if pool is not None:
            pool.close()
            pool.join()
        if bar is not None:
            bar.close()
    if encoder is None:
        return np.concatenate([p[0] for p in parts]), np.concatenate([p[1] for p in parts])
    return np.concatenate(parts)
