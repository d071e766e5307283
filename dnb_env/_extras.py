"""Which extra of ``pip install 'dnb-env[...]'`` brings which import, and the error that names it.

Documented, and re-exported, by :mod:`registry.extras`; it lives here so that the modules of ``dnb_env``
(which import nothing of ``registry``) can name the extra they need:

    with requires_extra("dnb_env.gym_env"):
        import gymnasium as gym    # without it: MissingExtra("dnb_env.gym_env needs Gymnasium: pip install 'dnb-env[gym]'")
"""

from __future__ import annotations

import contextlib
from typing import Iterator

__all__ = ["EXTRAS", "MissingExtra", "missing_extra", "extra_hint", "requires_extra"]

#: Top-level import name -> (the library's name, the extra that installs it).
EXTRAS: dict[str, tuple[str, str]] = {
    "torch": ("PyTorch", "torch"),
    "matplotlib": ("matplotlib", "plot"),
    "gymnasium": ("Gymnasium", "gym"),
    "pettingzoo": ("PettingZoo", "gym"),
    "pygame": ("pygame", "gym"),
    "pyspiel": ("OpenSpiel", "spiel"),
    "open_spiel": ("OpenSpiel", "spiel"),
    "stable_baselines3": ("Stable-Baselines3", "sb3"),
    "sb3_contrib": ("sb3-contrib", "sb3"),
    "fastapi": ("FastAPI", "web"),
    "uvicorn": ("uvicorn", "web"),
    "ray": ("Ray", "ray"),
    "tensorboardX": ("tensorboardX", "tensorboard"),
    "tensorboard": ("TensorBoard", "tensorboard"),
    "onnx": ("ONNX", "onnx"),
    "onnxruntime": ("ONNX Runtime", "onnx"),
    "mkdocs": ("MkDocs", "docs"),
}

#: Said after the torch extra's command: PyPI's default torch wheel on Linux is the CUDA build.
TORCH_CPU_NOTE = ("(on Linux this installs the CUDA build of torch; for the CPU build first run "
                  "pip install torch --index-url https://download.pytorch.org/whl/cpu)")


class MissingExtra(ModuleNotFoundError, ValueError):
    """A module, command or agent needs an optional dependency that is not installed; the message names the
    extra, ``name`` is the missing module. A ``ModuleNotFoundError`` (code that handles a missing module
    handles it) and a ``ValueError`` (the commands report it as a usage error)."""


def extra_hint(module: str) -> str | None:
    """``"Gymnasium: pip install 'dnb-env[gym]'"`` for an import name of an extra (``"gymnasium"``,
    ``"open_spiel.python"``), None for any other name. The torch hint also says how to get the CPU build."""
    entry = EXTRAS.get((module or "").partition(".")[0])
    if entry is None:
        return None
    label, extra = entry
    hint = f"{label}: pip install 'dnb-env[{extra}]'"
    return f"{hint} {TORCH_CPU_NOTE}" if extra == "torch" else hint


def missing_extra(exc: ModuleNotFoundError, what: str) -> MissingExtra | None:
    """``MissingExtra("{what} needs Gymnasium: pip install 'dnb-env[gym]'")`` when ``exc`` is the import of an
    extra's library failing (a :class:`MissingExtra` from deeper down too: the message then names ``what``,
    the outer thing asked for, e.g. the command); None when it is any other module (a real error, to be
    raised as it is)."""
    hint = extra_hint(exc.name or "")
    return None if hint is None else MissingExtra(f"{what} needs {hint}", name=exc.name)


@contextlib.contextmanager
def requires_extra(what: str) -> Iterator[None]:
    """Imports in this block that fail for a missing extra raise :func:`missing_extra`'s error naming ``what``
    (the failure chained as its cause); any other failing import is raised as it is."""
    try:
        yield
    except ModuleNotFoundError as exc:
        error = missing_extra(exc, what)
        if error is None:
            raise
        raise error from exc
