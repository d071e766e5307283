"""The optional extras of ``pip install 'dnb[...]'``: which extra brings which import, and the error that
names it.

``pip install dnb`` alone plays, analyses and rates games: ``dnb demo``, ``dnb agents`` and tournaments of
the agents that need no network (random, greedy, alphabeta, prsboxes, solver, mcts). Everything else takes
an extra (pyproject.toml ``[project.optional-dependencies]``; ``all`` holds every one):

========  ====================================================================
extra     what it brings
========  ====================================================================
torch     PyTorch: the network agents and what trains or reads networks (``dnb train``, ``fit``,
          ``export``, ``report``, ``plot``; ``dnb teach`` with its default players)
plot      matplotlib: tournament and training plots; tqdm progress bars
gym       Gymnasium, PettingZoo, pygame: the environments and their rendering
spiel     OpenSpiel: the pyspiel game and the ``openspiel_mcts`` agent
sb3       Stable-Baselines3 and sb3-contrib: the MaskablePPO examples
web       FastAPI and uvicorn: ``dnb serve``
ray       Ray: ``--backend ray`` and the RLlib example
tensorb.  tensorboardX and TensorBoard (extra ``tensorboard``): event files of training runs and fits
docs      MkDocs Material and mkdocstrings: the documentation site (``make docs``)
========  ====================================================================

    try:
        from agents.training.loop import train
    except ModuleNotFoundError as exc:
        raise missing_extra(exc, "dnb train") or exc   # dnb train needs PyTorch: pip install 'dnb[torch]'
"""

from __future__ import annotations

__all__ = ["EXTRAS", "MissingExtra", "missing_extra", "extra_hint"]

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
    "mkdocs": ("MkDocs", "docs"),
}


class MissingExtra(ValueError):
    """A command or agent needs an optional dependency that is not installed; the message names the extra."""


def extra_hint(module: str) -> str | None:
    """``"PyTorch: pip install 'dnb[torch]'"`` for an import name of an extra (``"torch"``,
    ``"open_spiel.python"``), None for any other name."""
    entry = EXTRAS.get((module or "").partition(".")[0])
    if entry is None:
        return None
    label, extra = entry
    return f"{label}: pip install 'dnb[{extra}]'"


def missing_extra(exc: ModuleNotFoundError, what: str) -> MissingExtra | None:
    """``MissingExtra("{what} needs PyTorch: pip install 'dnb[torch]'")`` when ``exc`` is the import of an
    extra's library failing; None when it is any other module (a real error, to be raised as it is)."""
    hint = extra_hint(exc.name or "")
    return None if hint is None else MissingExtra(f"{what} needs {hint}")
