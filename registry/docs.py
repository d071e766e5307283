"""The agents reference: ``dnb agents NAME`` and docs/agents-reference.md, from one renderer.

    python -m registry.docs                     write docs/agents-reference.md
    python -m registry.docs --check             exit 1 when the committed page differs from what is rendered now
    python -m registry.docs --ratings FOLDER    registry/strength.json from a finished round robin's folder, then the page

Everything on the page is read from the code: each agent's description and options from its factory
(:func:`registry.agents.describe_agent`: the factory's docstring and signature, the search settings' fields'
``help``), its strength from :data:`STRENGTH`, ``registry/strength.json``. That file holds the
ratings of one published round robin (``round_robin``: the command, board, time control, and per entrant its
Elo, 95% interval and rank; null until one has been run, and every agent shows "not rated yet") and the
results measured against external engines (``external``). :func:`round_robin_ratings` builds the first from
a finished tournament folder (its ``config.json``, ``elo.csv`` and ``results.jsonl``).
"""

from __future__ import annotations

import argparse
import csv
import datetime
import json
import os
import re
import shlex
import sys
from pathlib import Path

from registry.agents import describe_agent, shipped_agents
from registry.extras import EXTRAS, extra_hint

__all__ = ["ROUND_ROBIN_COMMAND", "STRENGTH", "PAGE", "render_agent", "render_page", "load_strength",
           "round_robin_ratings", "main"]

#: The strength data shipped with the package.
STRENGTH = Path(__file__).with_name("strength.json")
#: The reference page of a source checkout.
PAGE = Path(__file__).resolve().parents[1] / "docs" / "agents-reference.md"

#: The round robin whose ratings the reference shows: every shipped agent with its default options (``engine``
#: needs a program of its own), each at its own budget (no clock: the ratings do not depend on how busy the
#: machine was), four guided opening moves shared by both colours. Its folder is packed in
#: research/runs/rating-5x5.tar.xz.
ROUND_ROBIN_COMMAND = (
    "dnb tournament --board 5x5 --agents random,greedy,alphabeta,mcts,prsboxes,solver,openspiel_mcts,alphazero,"
    "dotsformer,alphavit --games 8 --openings 4:guided --seed 0 --workers 2 --out runs/rating-5x5"
)


def _md(text: str) -> str:
    """Docstring markup as Markdown: ``code`` -> `code`."""
    return re.sub(r"``(.+?)``", r"`\1`", text)


def _cell(text: str) -> str:
    return _md(text).replace("|", "\\|")


def _default_text(value) -> str:
    if isinstance(value, str):
        return f'"{value}"' if value == "" else value
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) >= 10_000:
        return f"{value:_}"
    return repr(value)


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    """A Markdown table with its columns padded (as readable in a terminal as on the site)."""
    widths = [max(len(r[k]) for r in [header, *rows]) for k in range(len(header))]
    line = lambda cells: "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths)).rstrip() + " |"  # noqa: E731
    return [line(header), "|" + "|".join("-" * (w + 2) for w in widths) + "|", *map(line, rows)]


def load_strength(path: str | os.PathLike = STRENGTH) -> dict:
    """The strength data (:data:`STRENGTH`): ``{"round_robin": {...} or None, "external": [...]}``."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, dict) or set(data) != {"round_robin", "external"}:
        raise ValueError(f"{path}: expected an object with the keys round_robin and external")
    return data


def _agent_of(label: str) -> str:
    return label.partition(":")[0].strip()


def _strength_lines(name: str, strength: dict) -> list[str]:
    rr = strength["round_robin"]
    entries = [r for r in (rr or {}).get("ratings", ()) if _agent_of(r["agent"]) == name]
    if rr is None:
        lines = ["Strength: not rated yet."]
    elif not entries:
        lines = ["Strength: not rated (not in the round robin)."]
    else:
        n = len(rr["ratings"])
        lines = [f"Strength: Elo {r['elo']:.0f} [{r['ci_low']:.0f}, {r['ci_high']:.0f}], rank {r['rank']} of {n}"
                 + (f" as `{r['agent']}`" if r["agent"] != name else "")
                 + f" in the round robin on {rr['board']} at {rr['time_control']} ({rr['games']} games a pair)."
                 for r in entries]
    external = [e for e in strength["external"] if e["agent"] == name]
    if external:
        lines.append("")
        lines.append("Against external engines: " + "; ".join(
            f"{e['wins']} wins of {e['games']} against {e['engine']} ({e['board']}, {e['time_control']})"
            for e in external) + ".")
    return lines


def render_agent(name: str, strength: dict | None = None) -> str:
    """The reference section of agent ``name``: description, the extra it needs, its options (name, type,
    default, meaning) and its strength; ``dnb agents NAME`` prints it, the page holds one per agent."""
    doc = describe_agent(name)
    strength = load_strength() if strength is None else strength
    lines = [f"## {name}", "", _md(doc.description) or "(no description)", ""]
    if doc.needs:
        lines += [f"Needs {extra_hint(doc.needs) or doc.needs}.", ""]
    if doc.options:
        rows = [[f"`{o.name}`", _cell(o.kind), _cell(f"`{_default_text(o.default)}`"), _cell(o.meaning)]
                for o in doc.options]
        lines += _table(["option", "type", "default", "meaning"], rows)
    else:
        lines += ["No options."]
    lines += ["", *_strength_lines(name, strength)]
    return "\n".join(lines) + "\n"


def _external_sentence(strength: dict) -> str:
    groups: dict[tuple, list] = {}
    for e in strength["external"]:
        groups.setdefault((e["agent"], e["board"], e["time_control"]), []).append(e)
    sentences = []
    for (agent, board, clock), entries in groups.items():
        scores = [f"{e['engine']} {e['wins']} of {e['games']}" for e in entries]
        each = {e["games"] for e in entries}
        tail = f" ({each.pop()} games each)" if len(each) == 1 and len(entries) > 1 else ""
        sentences.append(f"At {clock} on {board}, `{agent}` beat "
                         + (", ".join(scores[:-1]) + " and " + scores[-1] if len(scores) > 1 else scores[0])
                         + tail + ".")
    if sentences:
        sentences.append("Those engines were built from their public sources and played over the engine protocol; "
                         "they are not shipped here, and those games' records are not kept in the repository.")
    return " ".join(sentences)


def render_page(strength: dict | None = None) -> str:
    """docs/agents-reference.md: an introduction, the table of agents, then :func:`render_agent` of each."""
    strength = load_strength() if strength is None else strength
    rr = strength["round_robin"]
    names = shipped_agents()
    out = [
        "# Agents reference",
        "",
        "Every agent of `make_agent(NAME, board=..., seed=..., **options)` and of spec strings",
        "`NAME:option=value,...` (`dnb tournament --agents`, `dnb engine`, the environments' `opponent=`,",
        "the web app), with its options and its strength. `dnb agents` lists them and `dnb agents NAME` prints",
        "an agent's section of this page. The page is generated from the agents' factories in `registry/agents.py`",
        "(the search settings of the network agents from `agents/search/settings.py`) by",
        "`python -m registry.docs`; a test fails when it is out of date. How to build agents and run tournaments:",
        "[Agents and tournaments](agents.md).",
        "",
        "## Strength",
        "",
    ]
    if rr is None:
        out += [
            "Strength is one scale for every agent: the Bradley-Terry Elo of one round robin on 5x5 (random at 0,",
            "95% bootstrap interval) and the agent's rank in it. That round robin has not been run yet, so every agent",
            "is \"not rated yet\". It is this command, then the second one to copy its ratings here:",
            "",
            *_wrapped_command(ROUND_ROBIN_COMMAND),
            "    python -m registry.docs --ratings runs/rating-5x5",
        ]
    else:
        out += [
            f"Strength is one scale for every agent: the Bradley-Terry Elo of one round robin on {rr['board']} at",
            f"{rr['time_control']}, {rr['games']} games a pair (random at 0, 95% bootstrap interval), and the agent's",
            f"rank among its {len(rr['ratings'])} entrants. *Measured {rr['measured']}* with:",
            "",
            *_wrapped_command(rr["command"]),
        ]
    if strength["external"]:
        out += ["", _external_sentence(strength)]
    rated = {_agent_of(r["agent"]): r for r in (rr or {}).get("ratings", ()) if _agent_of(r["agent"]) == r["agent"]}
    rows = []
    for name in names:
        doc = describe_agent(name)
        r = rated.get(name)
        rows.append([f"[`{name}`](#{name})", _cell(doc.summary),
                     f"{r['elo']:.0f} [{r['ci_low']:.0f}, {r['ci_high']:.0f}]" if r else
                     "not rated yet" if rr is None else "not rated",
                     f"`{EXTRAS[doc.needs][1]}`" if doc.needs in EXTRAS else ""])
    out += ["", "## Agents", "", "The extra column names the `pip install 'dnb-env[EXTRA]'` an agent needs.", "",
            *_table(["agent", "summary", "Elo", "extra"], rows)]
    for name in names:
        out += ["", render_agent(name, strength).replace(f"## {name}", f"### {name}", 1).rstrip("\n")]
    return "\n".join(out) + "\n"


def _wrapped_command(command: str, width: int = 110) -> list[str]:
    """A shell command as an indented code block, continued with backslashes before ``width``."""
    words, lines, line = shlex.split(command), [], ""
    for word in map(shlex.quote, words):
        if line and len(line) + 1 + len(word) > width - 6:
            lines.append(line + " \\")
            line = "    " + word
        else:
            line = f"{line} {word}" if line else word
    return ["    " + x for x in [*lines, line]]


# ---------------------------------------------------------------- ratings from a tournament folder

def _time_control(config: dict) -> str:
    if config.get("time_per_move") is not None:
        return f"{config['time_per_move']:g} s a move"
    if config.get("time_per_game") is not None:
        inc = config.get("increment") or 0.0
        return f"{config['time_per_game']:g} s a game" + (f" + {inc:g} s a move" if inc else "")
    return "each agent's own budget (no clock)"


def _command(config: dict, folder: str) -> str:
    words = ["dnb", "tournament", "--board", config["board"], "--agents", ",".join(config["agents"]),
             "--games", str(config["games"])]
    if config.get("time_per_move") is not None:
        words += ["--time-per-move", f"{config['time_per_move']:g}"]
    if config.get("time_per_game") is not None:
        words += ["--time-per-game", f"{config['time_per_game']:g}", "--increment", f"{config.get('increment') or 0:g}"]
    if config.get("time_margin") not in (None, 0.25):
        words += ["--time-margin", f"{config['time_margin']:g}"]
    if config.get("overrun") not in (None, "lose"):
        words += ["--overrun", config["overrun"]]
    words += ["--openings", f"{config.get('openings', 0)}:{config.get('opening_mode', 'guided')}",
              "--seed", str(config.get("seed", 0)), "--workers", str(config.get("workers", 1)), "--out", folder]
    return " ".join(map(shlex.quote, words))


def round_robin_ratings(folder: str | os.PathLike, measured: str | None = None) -> dict:
    """The ``round_robin`` entry of the strength data from a finished round robin's ``folder``: the command
    that ran it, its board, time control, games a pair, the day it was measured (``measured``, YYYY-MM-DD, or
    the date of its ``elo.csv``) and per entrant the Elo, interval and rank (1: the highest Elo). ValueError
    when the folder is not a finished round robin of the shipped agents, or when its ``elo.csv`` carries no
    date (a folder unpacked from an archive) and none is given."""
    from agents.arena.results import read_config

    folder = os.fspath(folder)
    if not os.path.isfile(os.path.join(folder, "config.json")):
        raise ValueError(f"{folder} is not a finished tournament folder (config.json and elo.csv): no config.json")
    config = read_config(os.path.join(folder, "config.json"))  # checked: ValueError naming the file
    try:
        with open(os.path.join(folder, "elo.csv"), encoding="utf-8", newline="") as f:
            rows = list(csv.DictReader(f))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{folder} is not a finished tournament folder (config.json and elo.csv): {exc}") from None
    if config.get("mode") != "round_robin":
        raise ValueError(f"{folder}: a {config.get('mode')!r} tournament; the ratings come from a round robin")
    labels = list(config.get("agents", ()))
    if sorted(r.get("agent") for r in rows) != sorted(labels):
        raise ValueError(f"{folder}: elo.csv rates {', '.join(r.get('agent', '?') for r in rows)}, the tournament "
                         f"plays {', '.join(labels)}")
    known = shipped_agents()
    other = [label for label in labels if _agent_of(label) not in known]
    if other:
        raise ValueError(f"{folder}: {', '.join(other)} are no agents of this package ({', '.join(known)})")
    from agents.arena.results import read_games

    played, expected = len(read_games(os.path.join(folder, "results.jsonl"))), \
        len(labels) * (len(labels) - 1) // 2 * config["games"]
    if played < expected:
        raise ValueError(f"{folder}: the round robin is not finished ({played} of {expected} games)")
    try:
        ratings = [{"agent": r["agent"], "elo": round(float(r["elo"]), 1), "ci_low": round(float(r["ci_low"]), 1),
                    "ci_high": round(float(r["ci_high"]), 1)} for r in rows]
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"{folder}/elo.csv: a rating that is not a number ({exc})") from None
    ratings.sort(key=lambda r: -r["elo"])
    for rank, r in enumerate(ratings, 1):
        r["rank"] = rank
    if measured is None:
        stamp = datetime.datetime.fromtimestamp(os.path.getmtime(os.path.join(folder, "elo.csv")), datetime.timezone.utc)
        if stamp.year < 2000:
            raise ValueError(f"{folder}/elo.csv carries no date (unpacked from an archive?): give the day it was "
                             "measured with --measured YYYY-MM-DD")
        measured = stamp.date().isoformat()
    else:
        try:
            measured = datetime.date.fromisoformat(measured).isoformat()
        except (TypeError, ValueError):
            raise ValueError(f"--measured takes a day as YYYY-MM-DD, got {measured!r}") from None
    return {"command": _command(config, folder), "board": config["board"], "time_control": _time_control(config),
            "games": config["games"], "measured": measured, "ratings": ratings}


def _write(path: str | os.PathLike, text: str) -> None:
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8", newline="\n") as f:
        f.write(text)
    os.replace(tmp, path)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m registry.docs",
                                     description="Write (or check) the agents reference page.")
    parser.add_argument("--out", default=str(PAGE), help="the page (default: docs/agents-reference.md)")
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 when the page differs from what would be written")
    parser.add_argument("--ratings", metavar="FOLDER",
                        help="first take the ratings of this finished round robin's folder into the strength data")
    parser.add_argument("--measured", metavar="YYYY-MM-DD", help="with --ratings: the day the round robin was "
                        "played (default: the date of its elo.csv)")
    parser.add_argument("--strength", default=str(STRENGTH), help="the strength data (default: registry/strength.json)")
    args = parser.parse_args(argv)
    if args.check and args.ratings:
        parser.error("--check writes nothing: it cannot take --ratings")
    try:
        strength = load_strength(args.strength)
        if args.ratings:
            strength = {**strength, "round_robin": round_robin_ratings(args.ratings, args.measured)}
        page = render_page(strength)
    except (OSError, ValueError) as exc:
        print(f"registry.docs: error: {exc}", file=sys.stderr)
        return 2
    if args.check:
        try:
            current = Path(args.out).read_text(encoding="utf-8")
        except OSError:
            current = None
        if current != page:
            print(f"{args.out} is out of date: run python -m registry.docs", file=sys.stderr)
            return 1
        print(f"{args.out} is up to date")
        return 0
    if args.ratings:
        _write(args.strength, json.dumps(strength, indent=2) + "\n")
    _write(args.out, page)
    print(f"wrote {args.out}" + (f" and {args.strength}" if args.ratings else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
