"""One-file checkpoints: format name, version, model family and config, state dict, extra.

    {"format": "dnb-policy-value", "version": 2, "model": {"family": "resnet", **config fields},
     "board": "5x5", "encoder": "alphazero4", "state_dict": {...}, "extra": {...}}

Written atomically (temporary file, fsync, rename), read with ``torch.load(..., weights_only=True)``.
Version 1 files (the first AlphaZero checkpoints: ``arch`` holds the ResNet fields and
``extra["value_target"]`` the value unit) are read as version 2 by :func:`upgrade`. A wrong board,
encoder or family, an unknown format or version, or a corrupt file raises :class:`CheckpointError`
naming the file and the problem.
"""

from __future__ import annotations

import io
import os

import torch

from agents.models import build_model, config_from_dict, config_to_dict
from dnb_env.io import atomic_write

FORMAT = "dnb-policy-value"
VERSION = 2

__all__ = ["CheckpointError", "save_checkpoint", "load_checkpoint", "load_network", "upgrade", "atomic_torch_save"]


class CheckpointError(ValueError):
    pass


def atomic_torch_save(obj, path: str) -> None:
    """``torch.save`` of ``obj`` written to ``path`` atomically (:func:`dnb_env.io.atomic_write`)."""
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    buf = io.BytesIO()
    torch.save(obj, buf)
    atomic_write(path, buf.getvalue())


def save_checkpoint(path: str, net, extra: dict | None = None) -> None:
    model = config_to_dict(net.config)
    payload = {"format": FORMAT, "version": VERSION, "model": model, "board": model["board"],
               "encoder": model["encoder"], "state_dict": net.state_dict(), "extra": extra or {}}
    atomic_torch_save(payload, path)


def upgrade(payload: dict) -> dict:
    """A version-1 payload as version 2: the ``resnet`` family with the default (non-paper) heads and the
    value unit it recorded (``"win"`` if none)."""
    if payload.get("version") != 1:
        return payload
    extra = dict(payload.get("extra", {}))
    model = {"family": "resnet", **payload["arch"], "value": extra.pop("value_target", "win")}
    return {**{k: v for k, v in payload.items() if k != "arch"}, "version": VERSION, "model": model, "extra": extra}


def _why_unreadable(path: str, exc: Exception) -> str:
    """What is wrong with a file torch.load refused, in our words (torch's own message advises loading
    with weights_only=False, which would run whatever code the file holds: never pass that on)."""
    import zipfile

    size = os.path.getsize(path)
    if size == 0:
        return "the file is empty"
    if not zipfile.is_zipfile(path):
        with open(path, "rb") as f:
            head = f.read(16)
        return f"not a torch archive: {size} bytes starting {head!r}"
    lines = [ln.strip() for ln in str(exc).splitlines()
             if ln.strip() and "weights_only" not in ln and "Weights only load failed" not in ln]
    detail = lines[0].removeprefix("WeightsUnpickler error:").strip() if lines else ""
    if "Unpickl" in type(exc).__name__:
        return f"it holds objects other than tensors and plain data and was not unpickled ({detail})"
    return detail or f"{type(exc).__name__} while reading the archive (truncated?)"


def load_checkpoint(path: str, board: str | None = None, encoder: str | None = None,
                    family: str | None = None) -> dict:
    if not os.path.exists(path):
        raise CheckpointError(f"checkpoint {path} does not exist")
    if not os.path.isfile(path):  # a folder (IsADirectoryError), a pipe or a device (endless reads)
        what = "a folder" if os.path.isdir(path) else "not a regular file"
        raise CheckpointError(f"checkpoint {path} is {what}, not a checkpoint file")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except PermissionError as exc:
        raise CheckpointError(f"checkpoint {path} cannot be read: {exc.strerror or exc}") from None
    except Exception as exc:  # truncated, not a torch file, or holding code
        raise CheckpointError(f"checkpoint {path} is corrupt or not a checkpoint ({_why_unreadable(path, exc)})") from None
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a {FORMAT} checkpoint")
    if payload.get("version") not in (1, VERSION):
        raise CheckpointError(f"{path} has format version {payload.get('version')}, this code reads versions 1 and {VERSION}")
    payload = upgrade(payload)
    if board is not None and payload["board"] != board:
        raise CheckpointError(f"{path} is for board {payload['board']}, not {board}")
    if encoder is not None and payload["encoder"] != encoder:
        raise CheckpointError(f"{path} was trained on encoder {payload['encoder']}, not {encoder}")
    if family is not None and payload["model"].get("family") != family:
        raise CheckpointError(f"{path} holds a {payload['model'].get('family')} model, not a {family} model")
    return payload


def load_network(path: str, board: str | None = None, encoder: str | None = None, device: str = "cpu",
                 family: str | None = None):
    """``(net in eval mode on device, payload)``; the config comes from the file."""
    payload = load_checkpoint(path, board, encoder, family)
    try:
        net = build_model(config_from_dict(payload["model"]))
        net.load_state_dict(payload["state_dict"])
    except (TypeError, RuntimeError, ValueError) as exc:
        raise CheckpointError(f"{path}: model config and weights do not match: {exc}") from None
    return net.to(device).eval(), payload
