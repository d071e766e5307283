"""The optional extras of ``pip install 'dnb-env[...]'``: which extra brings which import, and the error that
names it.

``pip install dnb-env`` alone (numpy, threadpoolctl, filelock) plays, analyses and rates games: ``dnb demo``,
``dnb agents``, ``dnb teach`` and tournaments of the agents that need no network (random, greedy, alphabeta,
prsboxes, solver, mcts). Everything else takes an extra (pyproject.toml ``[project.optional-dependencies]``;
``all`` holds every one):

========  ====================================================================
extra     what it brings
========  ====================================================================
torch     PyTorch: the network agents and what trains or reads networks (``dnb train``, ``fit``,
          ``export``, ``report``, ``plot``; the network players of ``dnb teach``'s default mix). On
          Linux PyPI's default torch wheel is the CUDA build; for the CPU build install torch first:
          ``pip install torch --index-url https://download.pytorch.org/whl/cpu``
plot      matplotlib: tournament and training plots; tqdm progress bars
gym       Gymnasium, PettingZoo, pygame: the environments (``dnb_env.gym_env``, ``pettingzoo_env``)
          and ``render_mode="human"``
spiel     OpenSpiel: the pyspiel game (``dnb_env.openspiel_game``) and the ``openspiel_mcts`` agent
sb3       Stable-Baselines3 and sb3-contrib: the MaskablePPO examples
web       FastAPI and uvicorn: ``dnb serve`` (``dnb_web``)
ray       Ray: ``--backend ray`` and the RLlib example
tensorb.  tensorboardX and TensorBoard (extra ``tensorboard``): event files of training runs and fits
onnx      ONNX and ONNX Runtime: ``runtime="onnx"`` of the network evaluator
docs      MkDocs Material and mkdocstrings: the documentation site (``make docs``)
========  ====================================================================

A module, command or agent whose extra is missing raises :class:`MissingExtra`, a ``ModuleNotFoundError``
(and a ``ValueError``) whose ``name`` is the missing module and whose message names the extra:

    import dnb_env.gym_env   # without Gymnasium: MissingExtra: dnb_env.gym_env needs Gymnasium: pip install 'dnb-env[gym]'

Code that imports an extra's library says what needs it with :func:`requires_extra`:

    with requires_extra("dnb train"):
        from agents.training.loop import train    # dnb train needs PyTorch: pip install 'dnb-env[torch]' (...)

The implementation lives in ``dnb_env._extras`` (``dnb_env`` imports nothing of ``registry``).
"""

from __future__ import annotations

from dnb_env._extras import EXTRAS, MissingExtra, extra_hint, missing_extra, requires_extra

__all__ = ["EXTRAS", "MissingExtra", "missing_extra", "extra_hint", "requires_extra"]
