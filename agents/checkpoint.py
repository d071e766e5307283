"""One-file checkpoints: format name, version, model family and config, state dict, extra.

    {"format": "dnb-policy-value", "version": 2, "model": {"family": "resnet", **config fields},
     "board": "5x5", "encoder": "alphazero4", "state_dict": {...}, "extra": {...},
     "boards": ["3x3", "5x5"]}

Written atomically (temporary file, fsync, rename), read with ``torch.load(..., weights_only=True)``.
Version 1 files (the first AlphaZero checkpoints: ``arch`` holds the ResNet fields and
``extra["value_target"]`` the value unit) are read as version 2 by :func:`upgrade`. A wrong board,
encoder or family, an unknown format or version, or a corrupt file raises :class:`CheckpointError`
naming the file and the problem.

``boards`` (optional, added within version 2) lists the boards the network was trained on, for networks
that record them (``net.trained_boards()``: a family whose networks play ``any_board``); files without it
were trained on their ``board`` (:func:`trained_boards`). A checkpoint of such a family loads for any
board; for a board outside its trained set it says so once, as a :class:`BoardOutsideTrainingWarning`.
Every other family's checkpoint is for its ``board`` alone.
"""

from __future__ import annotations

import io
import os
import warnings

import torch

from agents.models import build_model, config_from_dict, config_to_dict, get_family
from dnb_env.core import geometry
from dnb_env.io import atomic_write

FORMAT = "dnb-policy-value"
VERSION = 2

__all__ = ["CheckpointError", "BoardOutsideTrainingWarning", "save_checkpoint", "load_checkpoint", "load_network",
           "upgrade", "atomic_torch_save", "trained_boards"]


class CheckpointError(ValueError):
    pass


class BoardOutsideTrainingWarning(UserWarning):
    """A network that plays every board was loaded for a board it was not trained on."""


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
    if callable(getattr(net, "trained_boards", None)):
        payload["boards"] = list(net.trained_boards())
    atomic_torch_save(payload, path)


def trained_boards(payload: dict) -> list[str]:
    """The boards the network of a loaded ``payload`` was trained on: its ``boards`` record, or (files
    without one) its ``board``."""
    boards = payload.get("boards")
    return list(boards) if boards is not None else [payload["board"]]


def _any_board(payload: dict) -> bool:
    try:
        return get_family(payload["model"].get("family")).any_board
    except ValueError:  # an unknown family: load_network names it
        return False


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
    any_board = _any_board(payload)
    if board is not None and not any_board and payload["board"] != board:
        raise CheckpointError(f"{path} is for board {payload['board']}, not {board}")
    if encoder is not None and payload["encoder"] != encoder:
        raise CheckpointError(f"{path} was trained on encoder {payload['encoder']}, not {encoder}")
    if family is not None and payload["model"].get("family") != family:
        raise CheckpointError(f"{path} holds a {payload['model'].get('family')} model, not a {family} model")
    boards = payload.get("boards")
    if boards is not None and (not isinstance(boards, list) or not all(isinstance(b, str) for b in boards)):
        raise CheckpointError(f"{path} is corrupt: its trained boards are {boards!r}, not a list of board names")
    if board is not None and any_board:
        name = "{}x{}".format(*geometry(board).size)
        trained = trained_boards(payload)
        if name not in trained:
            warnings.warn(f"{path} was trained on {', '.join(trained) or 'no board'}, not {name}: playing {name} "
                          f"outside its training set", BoardOutsideTrainingWarning, stacklevel=2)
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
