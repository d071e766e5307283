"""Model families: a name -> a frozen config dataclass and a builder.

    from agents.models import make_model_config, build_model, list_families
    cfg = make_model_config("dotsformer", preset="cpu", board="3x3")
    net = build_model(cfg)
    out = net(x)   # {"policy_logits": [B, A], "value": [B], optional "initiative_logits": [B, 3],
                   #  "move_class_logits": [B, 4, H, W]}

Each family lives in one module of this package with a module attribute ``FAMILY`` (a :class:`Family`);
adding a family is that file plus one line in ``_MODULES`` (or, at run time, :func:`register_family`). A
family that names the ``agent`` it plays under (``resnet``: ``alphazero``, ``dotsformer``: ``dotsformer``)
is then an agent of the registry (PUCT search or raw policy over its networks, shipped weights
``agents/checkpoints/{agent}-{board}.pt`` (``{agent}.pt`` for a family whose networks play ``any_board``) or
``checkpoint=PATH``), a model of ``dnb train`` / ``dnb fit``
(``--model NAME``, or the agent name as the algorithm), a tournament entrant and an opponent of the web app,
with no other edit. Every family config is a frozen dataclass
with at least ``board``, ``encoder`` and ``value`` (the unit of the value head: ``"win"`` for results
+1/-1/0, ``"margin"`` for the final box margin over the number of boxes) and ``aux_heads`` (the
initiative and move-class heads of Dotsformer section 4.3). ``config_to_dict`` / ``config_from_dict``
round-trip a config as ``{"family": name, **fields}``, the form checkpoints record.
"""

from __future__ import annotations

import dataclasses
import importlib
from dataclasses import dataclass
from typing import Any, Callable

__all__ = ["Family", "OUTPUTS", "list_families", "get_family", "make_model_config", "config_to_dict",
           "config_from_dict", "build_model", "family_of", "register_family", "family_agents", "family_for_agent"]

# family name -> module defining FAMILY (imported on first use, so torch loads only when a model is built), or
# the Family itself (register_family)
_MODULES = {
    "resnet": "agents.models.resnet",
    "dotsformer": "agents.models.dotsformer",
    "alphavit": "agents.models.alphavit",
}

OUTPUTS = ("policy_logits", "value", "initiative_logits", "move_class_logits")


@dataclass(frozen=True)
class Family:
    """``config``: the frozen config dataclass; ``build(config) -> nn.Module``; ``presets``: name -> field
    overrides of the config's defaults (the defaults are the paper's); ``agent``: the name its networks play
    under in the agent registry (None: not an agent); ``any_board``: one network plays every board (the
    forward pass reads the board from the planes' H x W; ``config.board`` is the board it was built for), so
    its checkpoints load for any board (with a warning for a board outside the ones it trained on)."""

    name: str
    config: type
    build: Callable[[Any], Any]
    presets: dict
    agent: str | None = None
    any_board: bool = False


def list_families() -> list[str]:
    return sorted(_MODULES)


def get_family(name: str) -> Family:
    if not isinstance(name, str) or name not in _MODULES:
        raise ValueError(f"unknown model family {name!r}; known families: {', '.join(list_families())}")
    entry = _MODULES[name]
    return entry if isinstance(entry, Family) else importlib.import_module(entry).FAMILY


def register_family(family: Family, *, override: bool = False) -> None:
    """Add ``family`` (a :class:`Family` defined outside this package) under ``family.name``: what one line in
    ``_MODULES`` does for a module of the package. Worker processes started afresh (spawned pools, Ray) know
    only the families of ``_MODULES`` and those their own imports register."""
    if not isinstance(family, Family):
        raise ValueError(f"register_family takes a Family, got {family!r}")
    if family.name in _MODULES and not override:
        raise ValueError(f"model family {family.name!r} is already registered")
    taken = family_agents()
    if family.agent is not None and taken.get(family.agent, family.name) != family.name:
        raise ValueError(f"agent name {family.agent!r} is already the family {taken[family.agent]!r}'s")
    _MODULES[family.name] = family


def family_agents() -> dict[str, str]:
    """Agent name -> model family, for every registered family that plays as an agent (in registration
    order). Imports the families' modules (and so torch)."""
    out = {}
    for name in _MODULES:
        agent = get_family(name).agent
        if agent is not None:
            out[agent] = name
    return out


def family_for_agent(agent: str) -> str:
    """The model family whose networks play as ``agent``; ``ValueError`` for a name no family plays under."""
    families = family_agents()
    if agent not in families:
        raise ValueError(f"no model family plays as {agent!r}; family agents: {', '.join(families) or 'none'}")
    return families[agent]


def family_of(config) -> str:
    """The family name of a config instance."""
    for name in _MODULES:
        if type(config) is get_family(name).config:
            return name
    raise ValueError(f"{type(config).__name__} is not the config of a registered model family")


def make_model_config(family: str, preset: str | None = None, **fields):
    """``family``'s config from its ``preset`` (default: the paper's defaults) with ``fields`` on top;
    an unknown preset or field raises ``ValueError`` naming it."""
    fam = get_family(family)
    base = {}
    if preset is not None:
        if preset not in fam.presets:
            raise ValueError(f"unknown {family} preset {preset!r}; presets: {', '.join(fam.presets)}")
        base = dict(fam.presets[preset])
    names = {f.name for f in dataclasses.fields(fam.config)}
    unknown = sorted(set(fields) - names)
    if unknown:
        raise ValueError(f"{family} models have no option(s) {', '.join(unknown)}; options: {', '.join(sorted(names))}")
    return fam.config(**{**base, **fields})


def config_to_dict(config) -> dict:
    return {"family": family_of(config), **dataclasses.asdict(config)}


def config_from_dict(data: dict):
    """Inverse of :func:`config_to_dict`; fields the family does not know raise ``ValueError``."""
    if not isinstance(data, dict) or "family" not in data:
        raise ValueError("a model config needs its 'family'")
    fields = {k: v for k, v in data.items() if k != "family"}
    return make_model_config(data["family"], **fields)


def build_model(config):
    """The network of ``config`` (any family's config instance), in eval mode on the CPU."""
    net = get_family(family_of(config)).build(config)
    return net.eval()
