"""The training settings on the command line: ``--set KEY=VALUE`` strings read as typed settings
(:func:`parse_settings`) and the keys' text of ``dnb train --help`` (:func:`settings_help`).

A key is a dotted path of :class:`agents.training.config.TrainConfig` (``search.simulations``, ``epochs``) or
``model.FIELD`` for a field of a model family's config, or a bare name unique across them (``simulations``).
What a key means is its field's ``help`` (metadata): a setting added without one fails ``tests/test_cli.py``.
"""

from __future__ import annotations

import dataclasses
import textwrap

from agents.models import get_family, list_families
from agents.training.config import resolve_key, make_train_config, setting_fields, setting_types, to_dict

__all__ = ["parse_settings", "settings_help", "describe"]


def describe(field: dataclasses.Field, indent: str = "    ", width: int = 100) -> str:
    """The ``help`` of ``field`` (its metadata) wrapped to ``width`` columns, each line after ``indent``;
    ``""`` for a field without one (e.g. of a model family registered at run time)."""
    text = field.metadata.get("help")
    if not text:
        return ""
    return "\n".join(textwrap.wrap(text, width, initial_indent=indent, subsequent_indent=indent))


def _flat(model: str, preset: str) -> dict:
    """The settings of ``model``'s family under training ``preset``, by key (the model's board aside)."""
    d = to_dict(make_train_config(model, preset))
    out = {f"model.{k}": v for k, v in d.pop("model").items() if k not in ("family", "board")}
    for key, value in d.items():
        out.update({f"{key}.{k}": v for k, v in value.items()} if isinstance(value, dict) else {key: value})
    return out


def settings_help() -> str:
    """The ``--set`` keys for ``dnb train --help``: each with its type, its default under the cpu and
    paper presets (model fields per family) and its description (the field's ``help``)."""
    lines = []
    cpu, paper = _flat("resnet", "cpu"), _flat("resnet", "paper")
    for key, field in setting_fields().items():
        lines.append(f"{key} ({getattr(field.type, '__name__', field.type)}): cpu {cpu[key]!r}, paper {paper[key]!r}")
        lines.append(describe(field))
    for family in list_families():
        cpu, paper = _flat(family, "cpu"), _flat(family, "paper")
        fields = {f.name: f for f in dataclasses.fields(get_family(family).config)}
        for k in (k for k in cpu if k.startswith("model.")):
            lines += [f"model.{k[6:]} [{family}]: cpu {cpu[k]!r}, paper {paper[k]!r}", describe(fields[k[6:]])]
    return "\n".join(line for line in lines if line)


def _convert(kind: str, key: str, text: str):
    """``text`` as the field type ``kind`` (a type annotation string: bool, int, float, str, X | None)."""
    kind = str(kind).replace("typing.", "")
    parts = [p.strip() for p in kind.split("|")]
    if "None" in parts and text.lower() in ("none", "null"):
        return None
    base = next(p for p in parts if p != "None")
    if base == "bool":
        if text.lower() not in ("true", "false", "1", "0"):
            raise ValueError(f"--set {key}: expected true or false, got {text!r}")
        return text.lower() in ("true", "1")
    if base in ("int", "float"):
        try:
            return int(text) if base == "int" else float(text)
        except ValueError:
            raise ValueError(f"--set {key}: expected {'an integer' if base == 'int' else 'a number'}, got {text!r}") from None
    return text


def parse_settings(model: str, items: list[str]) -> dict:
    """``KEY=VALUE`` strings (dotted paths or unique bare names) -> ``{path: typed value}``."""
    fam = get_family(model)
    model_types = {f.name: f.type for f in dataclasses.fields(fam.config)}
    types = setting_types() | {f"model.{k}": v for k, v in model_types.items()}
    out = {}
    for item in items or []:
        key, sep, text = item.partition("=")
        if not sep:
            raise ValueError(f"--set takes KEY=VALUE, got {item!r}")
        path = resolve_key(key.strip(), set(model_types))
        out[path] = _convert(types[path], path, text.strip())
    return out
