"""Model families: a name -> a frozen config dataclass and a builder.

    from agents.models import make_model_config, build_model, list_families
    cfg = make_model_config("dotsformer", preset="cpu", board="3x3")
    net = build_model(cfg)
    out = net(x)   # {"policy_logits": [B, A], "value": [B], optional "initiative_logits": [B, 3],
                   #  "move_class_logits": [B, 4, H, W]}

Each family lives in one module of this package with a module attribute ``FAMILY`` (a :class:`Family`);
adding a family is that file plus one line in ``_MODULES``. Every family config is a frozen dataclass
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
           "config_from_dict", "build_model", "family_of"]

# family name -> module defining FAMILY (imported on first use, so torch loads only when a model is built)
_MODULES = {
    "resnet": "agents.models.resnet",
    "dotsformer": "agents.models.dotsformer",
}

OUTPUTS = ("policy_logits", "value", "initiative_logits", "move_class_logits")


@dataclass(frozen=True)
class Family:
    """``config``: the frozen config dataclass; ``build(config) -> nn.Module``; ``presets``: name -> field
    overrides of the config's defaults (the defaults are the paper's)."""

    name: str
    config: type
    build: Callable[[Any], Any]
    presets: dict


def list_families() -> list[str]:
    return sorted(_MODULES)


def get_family(name: str) -> Family:
    if not isinstance(name, str) or name not in _MODULES:
        raise ValueError(f"unknown model family {name!r}; known families: {', '.join(list_families())}")
    return importlib.import_module(_MODULES[name]).FAMILY


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
