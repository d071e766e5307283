"""One-file checkpoints: format name, version, board, encoder, architecture config and state dict.

Written atomically (temporary file, fsync, rename), read with ``torch.load(..., weights_only=True)``.
A wrong board or encoder, an unknown format or version, or a corrupt file raises
:class:`CheckpointError` naming the problem.
"""

from __future__ import annotations

import os

import torch

from agents.networks import NetConfig, build_network

FORMAT = "dnb-policy-value"
VERSION = 1

__all__ = ["CheckpointError", "save_checkpoint", "load_checkpoint", "load_network"]


class CheckpointError(ValueError):
    pass


def save_checkpoint(path: str, net, extra: dict | None = None) -> None:
    payload = {
        "format": FORMAT,
        "version": VERSION,
        "board": net.config.board,
        "encoder": net.config.encoder,
        "arch": net.config.to_dict(),
        "state_dict": net.state_dict(),
        "extra": extra or {},
    }
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        torch.save(payload, f)
        f.flush()
        os.fsync(f.fileno())
    os.replace(tmp, path)


def load_checkpoint(path: str, board: str | None = None, encoder: str | None = None) -> dict:
    if not os.path.exists(path):
        raise CheckpointError(f"checkpoint {path} does not exist")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as exc:  # truncated, not a torch file, or holding code
        raise CheckpointError(f"checkpoint {path} is corrupt or not a checkpoint: {exc}") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a {FORMAT} checkpoint")
    if payload.get("version") != VERSION:
        raise CheckpointError(f"{path} has format version {payload.get('version')}, this code reads version {VERSION}")
    if board is not None and payload["board"] != board:
        raise CheckpointError(f"{path} is for board {payload['board']}, not {board}")
    if encoder is not None and payload["encoder"] != encoder:
        raise CheckpointError(f"{path} was trained on encoder {payload['encoder']}, not {encoder}")
    return payload


def load_network(path: str, board: str | None = None, encoder: str | None = None, device: str = "cpu"):
    payload = load_checkpoint(path, board, encoder)
    try:
        config = NetConfig(**payload["arch"])
        net = build_network(config)
        net.load_state_dict(payload["state_dict"])
    except (TypeError, RuntimeError, ValueError) as exc:
        raise CheckpointError(f"{path}: architecture and weights do not match: {exc}") from None
    return net.to(device).eval(), payload
