"""Agent spec strings: the one place that parses, splits, checks and builds them.

A spec is ``name[:key=value,...]``, e.g. ``"alphabeta:depth=3,time_limit=0.5"``; values are read as
booleans (``true``/``false``), ``none``, integers, floats, else strings, and then checked against the
agent's factory (:mod:`registry.agents`: option names and types). A value in double quotes is a string as
it stands and may hold commas, colons and spaces: ``engine:cmd="./my_engine --hash 64",name=mine``.

    parse_agent_spec("alphabeta:depth=3,chain_eval=true")  -> ("alphabeta", {"depth": 3, "chain_eval": True})
    split_agents("random,alphabeta:depth=3,time_limit=1,prsboxes")
                                        -> ("random", "alphabeta:depth=3,time_limit=1", "prsboxes")
    check_spec("alphabeta", {"depth": 3})  -> the factory (ValueError for an unknown name, option or type)
    check_agent_spec("alphabeta:depth=3")  -> ("alphabeta", {"depth": 3}), parsed and checked
    agent_from_spec("alphabeta:depth=3", board="5x5", seed=0)  -> the Agent
    describe_spec('engine:cmd="./eng",name=mine,log=/tmp/e.log')  -> ("mine", 'engine:cmd="./eng",name=mine')
    agent_boards("alphazero")              -> the boards of its shipped weights, e.g. ("3x3", "5x5"); None: any

:func:`describe_spec` gives a spec's label in a tournament's tables, records and files (the value of the
factory's ``label_option``: an engine's ``name=``; else the spec) and its identity, what a resumed
tournament compares (the spec without the factory's ``neutral_options``, which do not change play: an
engine's ``log=``).

:func:`agent_from_spec` is a module-level function, so the arena's worker processes and Ray tasks can be
handed it as the builder of spec entries (:func:`registry.tournaments.run_tournament` does).
"""

from __future__ import annotations

from typing import Callable

from registry.agents import _FACTORIES, _resolve, make_agent

__all__ = ["parse_agent_spec", "split_agents", "check_spec", "check_agent_spec", "agent_from_spec",
           "describe_spec", "agent_boards"]


def parse_agent_spec(spec: str) -> tuple[str, dict]:
    """``"alphabeta:depth=3,time_limit=0.5"`` -> ``("alphabeta", {"depth": 3, "time_limit": 0.5})``."""
    name, _, rest = spec.partition(":")
    name = name.strip()
    if not name:
        raise ValueError(f"empty agent name in spec {spec!r}")
    kwargs = {}
    for part in filter(None, (p.strip() for p in _split_commas(rest, spec))):
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"bad option {part!r} in agent spec {spec!r}: expected key=value")
        kwargs[key.strip()] = _parse_value(value.strip())
    return name, kwargs


def _split_commas(text: str, where: str) -> list[str]:
    """``text`` split at the commas outside double quotes; ValueError for a quote left open."""
    parts, start, quoted = [], 0, False
    for k, ch in enumerate(text):
        if ch == '"':
            quoted = not quoted
        elif ch == "," and not quoted:
            parts.append(text[start:k])
            start = k + 1
    if quoted:
        raise ValueError(f"a double quote is left open in {where!r}")
    parts.append(text[start:])
    return parts


def _parse_value(text: str):
    if len(text) >= 2 and text[0] == text[-1] == '"':
        return text[1:-1]
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    if low == "none":
        return None
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text


def split_agents(text: str) -> tuple[str, ...]:
    """Split "a,b:x=1,y=2,c" into specs: a comma followed by key=value stays inside the spec (so does one
    inside double quotes)."""
    specs: list[str] = []
    for part in _split_commas(text, text):
        part = part.strip()
        if not part:
            continue
        if specs and "=" in part and ":" not in part.partition("=")[0] and ":" in specs[-1]:
            specs[-1] += "," + part
        else:
            specs.append(part)
    return tuple(specs)


def check_spec(name: str, kwargs: dict) -> Callable:
    """The factory of ``name`` after checking that it exists and takes every option in ``kwargs`` with a
    value of the option's type."""
    return _resolve(name, kwargs)[0]


def check_agent_spec(spec: str) -> tuple[str, dict]:
    """``spec`` parsed and checked (:func:`parse_agent_spec`, :func:`check_spec`): ``(name, kwargs)``."""
    name, kwargs = parse_agent_spec(spec)
    check_spec(name, kwargs)
    return name, kwargs


def agent_from_spec(spec: str, board, seed: int | None = None):
    """The agent of the spec string ``spec`` (``"alphabeta:depth=2"``) for ``board``."""
    name, kwargs = parse_agent_spec(spec)
    return make_agent(name, board=board, seed=seed, **kwargs)


def describe_spec(spec: str) -> tuple[str, str]:
    """``(label, identity)`` of the spec string ``spec`` (module docstring): the label names the agent in a
    tournament (an engine's ``name=``, else the identity); the identity is the spec without the options
    that do not change play (an engine's ``log=``), the spec as it stands where it has none. A spec that
    cannot be read is its own label and identity."""
    try:
        name, kwargs = parse_agent_spec(spec)
        factory = _FACTORIES[name]  # not checked: a spec on file may name a program that is gone
    except (ValueError, KeyError):
        return spec, spec
    neutral = set(getattr(factory, "neutral_options", ()))
    identity = spec
    if neutral & set(kwargs):
        head, _, rest = spec.partition(":")
        kept = [p for p in _split_commas(rest, spec) if p.strip() and p.partition("=")[0].strip() not in neutral]
        identity = head + (":" + ",".join(kept) if kept else "")
    option = getattr(factory, "label_option", None)
    name_given = kwargs.get(option) if option else None
    return (str(name_given) if name_given not in (None, "") else identity), identity


def agent_boards(spec: str) -> tuple[str, ...] | None:
    """The boards the agent of ``spec`` plays, where that is known (``dnb engine`` declares them): a network
    agent's boards are those of its weights (the shipped ``{agent}-RxC.pt`` files, or the board of
    ``checkpoint=``; None for a family whose networks play any board); every other agent plays any board
    (None). Weights that cannot be read give None: building the agent says what is wrong."""
    name, kwargs = check_agent_spec(spec)
    if name in _FACTORIES and getattr(_FACTORIES[name], "needs", None) != "torch":
        return None  # a registered agent that needs no network: known without importing the families (torch)
    try:
        from agents.models import family_agents, get_family
    except ImportError:  # no PyTorch: no network agents
        return None
    family = family_agents().get(name)
    if family is None or get_family(family).any_board:
        return None
    try:
        if kwargs.get("checkpoint"):
            from agents.checkpoint import load_checkpoint

            return (str(load_checkpoint(str(kwargs["checkpoint"]))["board"]),)
        from agents.network_agent import shipped_boards

        return shipped_boards(name) or None
    except (OSError, ValueError, KeyError):
        return None
