"""One-file checkpoints: format name, version, model family and config, state dict, extra.

    {"format": "dnb-policy-value", "version": 2, "model": {"family": "resnet", **config fields},
     "board": "5x5", "encoder": "alphazero4", "state_dict": {...}, "extra": {...},
     "boards": ["3x3", "5x5"]}

Written atomically (temporary file, fsync, rename), read with ``torch.load(..., weights_only=True)``.
Version 1 files (the first AlphaZero checkpoints: ``arch`` holds the ResNet fields and
``extra["value_target"]`` the value unit) are read as version 2 by :func:`upgrade`. A wrong board,
encoder or family, an unknown format or version, or a corrupt file raises :class:`CheckpointError`
naming the file and the problem; so does a damaged payload: a field of another type, weights of other
names, shapes or types than its model's, or weights that are not finite (NaN or infinity), refused on
loading rather than when the network first plays.

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

from agents.models import build_model, config_to_dict, get_family
from dnb_env.core import geometry
from dnb_env.io import atomic_write

FORMAT = "dnb-policy-value"
VERSION = 2

__all__ = ["CheckpointError", "BoardOutsideTrainingWarning", "save_checkpoint", "load_checkpoint", "load_network",
           "restore_optimizer", "upgrade", "atomic_torch_save", "trained_boards"]


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
    except ValueError:  # an unknown family: _network names it
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
        if head.startswith(b"PK\x03\x04"):
            return f"a torch archive cut short or damaged: {size} bytes without the archive's index"
        return f"not a torch archive: {size} bytes starting {head!r}"
    lines = [ln.strip() for ln in str(exc).splitlines()
             if ln.strip() and "weights_only" not in ln and "Weights only load failed" not in ln]
    detail = lines[0].removeprefix("WeightsUnpickler error:").strip() if lines else ""
    if "Unpickl" in type(exc).__name__:
        return f"it holds objects other than tensors and plain data and was not unpickled ({detail})"
    return detail or f"{type(exc).__name__} while reading the archive (truncated?)"


def _changed_record(path: str) -> str | None:
    """The first record of the torch archive ``path`` whose bytes do not match the CRC-32 the archive keeps
    for them (bytes changed after the file was written: torch reads the weights without checking), or None
    (also for a file that is not a zip archive, which torch read as such)."""
    import zipfile

    try:
        with zipfile.ZipFile(path) as archive:
            return archive.testzip()
    except zipfile.BadZipFile:
        return None


def _corrupt(path: str, what: str) -> CheckpointError:
    return CheckpointError(f"{path} is corrupt: {what}")


def _shown(value) -> str:
    """``value`` as an error message shows it (a long one cut short)."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _check_version_1(path: str, payload: dict) -> None:
    """A version-1 payload has what :func:`upgrade` reads: ``arch`` and ``extra`` mappings."""
    for key in ("arch", "extra"):
        if not isinstance(payload.get(key, {}), dict):
            raise _corrupt(path, f"its {key} is {_shown(payload.get(key))}, not a mapping")


def _check_fields(path: str, payload: dict) -> None:
    """The fields of a (version 2) payload have their types: ``model`` a mapping with its family, ``board``
    and ``encoder`` strings, ``state_dict`` names to tensors, ``extra`` a mapping (``{}`` when missing)."""
    model = payload.get("model")
    if not isinstance(model, dict) or not isinstance(model.get("family"), str):
        raise _corrupt(path, f"its model is {_shown(model)}, not a model config with its family")
    for key in ("board", "encoder"):
        if not isinstance(payload.get(key), str):
            raise _corrupt(path, f"its {key} is {_shown(payload.get(key))}, not a name")
    state = payload.get("state_dict")
    if "state_dict" not in payload:
        raise _corrupt(path, "it has no state_dict (the network's weights)")
    if not isinstance(state, dict) or not all(isinstance(k, str) and isinstance(v, torch.Tensor)
                                              for k, v in state.items()):
        raise _corrupt(path, f"its state_dict is {_shown(state)}, not a mapping of names to tensors")
    if not isinstance(payload.setdefault("extra", {}), dict):
        raise _corrupt(path, f"its extra is {_shown(payload['extra'])}, not a mapping")
    boards = payload.get("boards")
    if boards is not None and (not isinstance(boards, list) or not all(isinstance(b, str) for b in boards)):
        raise _corrupt(path, f"its trained boards are {boards!r}, not a list of board names")


def _non_finite(tensors) -> str | None:
    """The name of the first floating-point tensor in ``tensors`` (nested mappings and lists of tensors)
    holding NaN or infinity, or None."""
    if isinstance(tensors, dict):
        items = tensors.items()
    else:
        items = enumerate(tensors) if isinstance(tensors, (list, tuple)) else ()
    for key, value in items:
        if isinstance(value, torch.Tensor):
            if value.is_floating_point() and not bool(torch.isfinite(value).all()):
                return str(key)
        elif isinstance(value, (dict, list, tuple)):
            inner = _non_finite(value)
            if inner is not None:
                return f"{key}.{inner}"
    return None


def _network(path: str, payload: dict):
    """The network of a checked payload, built from its model config with its weights loaded; a config
    that builds no network, weights of other names, shapes or types than the network's, or weights that
    are not finite raise :class:`CheckpointError` naming ``path`` and the first such weight."""
    from agents.training.config import model_from_dict

    try:
        net = build_model(model_from_dict(payload["model"]))
    except (TypeError, ValueError, KeyError) as exc:
        raise _corrupt(path, f"its model config is not valid ({exc})") from None
    state, want = payload["state_dict"], net.state_dict()
    mismatch = f"{path}: model config and weights do not match"
    missing, unexpected = [k for k in want if k not in state], [k for k in state if k not in want]
    if missing or unexpected:
        what = (f"the file lacks {', '.join(missing[:3])}" if missing
                else f"the model has no {', '.join(unexpected[:3])}")
        raise CheckpointError(f"{mismatch}: {what}")
    for name, tensor in state.items():
        if tensor.shape != want[name].shape:
            raise CheckpointError(f"{mismatch}: {name} has shape {tuple(tensor.shape)} in the file, the model's is "
                                  f"{tuple(want[name].shape)}")
        if tensor.dtype != want[name].dtype:
            raise CheckpointError(f"{mismatch}: {name} is {tensor.dtype} in the file, the model's is "
                                  f"{want[name].dtype}")
    bad = _non_finite(state)
    if bad is not None:
        raise _corrupt(path, f"its weights are not finite ({bad} holds NaN or infinity)")
    try:
        net.load_state_dict(state)
    except (TypeError, RuntimeError, ValueError) as exc:
        raise CheckpointError(f"{mismatch}: {str(exc).splitlines()[0]}") from None
    return net


def _load(path: str, board: str | None, encoder: str | None, family: str | None):
    """``(payload, network)`` of the checkpoint ``path``, every field checked (:func:`load_checkpoint`)."""
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
    changed = _changed_record(path)
    if changed is not None:
        raise _corrupt(path, f"the bytes of its record {changed} do not match their checksum (CRC-32)")
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(f"{path} is not a {FORMAT} checkpoint")
    version = payload.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or version not in (1, VERSION):
        raise CheckpointError(f"{path} has format version {_shown(version)}, this code reads versions 1 and {VERSION}")
    if version == 1:
        _check_version_1(path, payload)
    payload = upgrade(payload)
    _check_fields(path, payload)
    any_board = _any_board(payload)
    if board is not None and not any_board and payload["board"] != board:
        raise CheckpointError(f"{path} is for board {payload['board']}, not {board}")
    if encoder is not None and payload["encoder"] != encoder:
        raise CheckpointError(f"{path} was trained on encoder {payload['encoder']}, not {encoder}")
    if family is not None and payload["model"].get("family") != family:
        raise CheckpointError(f"{path} holds a {payload['model'].get('family')} model, not a {family} model")
    net = _network(path, payload)
    if board is not None and any_board:
        name = geometry(board).name
        trained = trained_boards(payload)
        if name not in trained:
            warnings.warn(f"{path} was trained on {', '.join(trained) or 'no board'}, not {name}: playing {name} "
                          f"outside its training set", BoardOutsideTrainingWarning, stacklevel=3)
    return payload, net


def load_checkpoint(path: str, board: str | None = None, encoder: str | None = None,
                    family: str | None = None) -> dict:
    """The payload of the checkpoint ``path``, checked: its fields have their types, its weights build its
    model (names, shapes and types) and are finite, and it is for ``board``, ``encoder`` and ``family``
    where given; else :class:`CheckpointError` naming the file and the problem."""
    return _load(path, board, encoder, family)[0]


def load_network(path: str, board: str | None = None, encoder: str | None = None, device: str = "cpu",
                 family: str | None = None):
    """``(net in eval mode on device, payload)``; the config comes from the file (checked as
    :func:`load_checkpoint` does)."""
    payload, net = _load(path, board, encoder, family)
    return net.to(device).eval(), payload


def restore_optimizer(optimizer, payload: dict, path: str) -> None:
    """Load the optimiser state a training checkpoint records (``extra["optimizer"]``, of the network
    ``optimizer`` steps) into ``optimizer``; a missing one, one of other parameters or one that is not
    finite raises :class:`CheckpointError` naming ``path``."""
    state = payload["extra"].get("optimizer")
    if not isinstance(state, dict):
        raise _corrupt(path, f"its optimiser state (extra.optimizer) is {_shown(state)}, which resuming needs")
    bad = _non_finite(state)
    if bad is not None:
        raise _corrupt(path, f"its optimiser state is not finite ({bad} holds NaN or infinity)")
    try:
        optimizer.load_state_dict(state)
    except (KeyError, TypeError, ValueError, RuntimeError, IndexError, AttributeError) as exc:
        detail = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        raise _corrupt(path, f"its optimiser state does not fit the network ({detail})") from None
    for group in optimizer.param_groups:
        for p in group["params"]:
            for key, value in optimizer.state.get(p, {}).items():
                if isinstance(value, torch.Tensor) and value.dim() and value.shape != p.shape:
                    raise _corrupt(path, f"its optimiser state does not fit the network ({key} of shape "
                                         f"{tuple(value.shape)} for a weight of shape {tuple(p.shape)})")
