"""The agents reference: every agent and option documented once, `dnb agents [NAME]`, the generated page and
the strength data."""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import os
import shlex
from pathlib import Path

import pytest

import registry.agents
import registry.docs
from registry.agents import (NETWORK_AGENTS, agent_doc_problems, describe_agent, doc_entries, register_agent,
                             shipped_agents)
from registry.cli import main as cli
from registry.extras import extra_hint


@pytest.mark.parametrize("name", shipped_agents())
def test_every_agent_and_option_is_documented(name):
    assert agent_doc_problems(name) == []
    doc = describe_agent(name)
    assert doc.summary and len(doc.summary) <= 80 and doc.description.startswith(doc.summary)
    assert all(o.kind and o.meaning for o in doc.options)


def test_missing_or_stray_documentation_is_reported(monkeypatch):
    def bare(*, board, seed, depth: int = 2):
        return None

    def stray(*, board, seed, depth: int = 2):
        """An agent with a description.

        Options:
            depht: a misspelt option
        """

    monkeypatch.setitem(registry.agents._FACTORIES, "bare_doc_test", bare)
    monkeypatch.setitem(registry.agents._FACTORIES, "stray_doc_test", stray)
    assert agent_doc_problems("bare_doc_test") == [
        "agent 'bare_doc_test' has no description (its factory's docstring)",
        "agent 'bare_doc_test': option depth has no meaning (an Options: entry)"]
    assert agent_doc_problems("stray_doc_test") == [
        "agent 'stray_doc_test': option depth has no meaning (an Options: entry)",
        "agent 'stray_doc_test': documented option depht does not exist"]


def test_doc_entries_reads_the_first_paragraph_and_one_section():
    doc = """First sentence. Second
    line of the paragraph.

    More text.

    Options:
        alpha: the first
            continued here
        beta: the second

    Attributes:
        gamma: not an option
    """
    assert doc_entries(doc, "Options") == ("First sentence. Second line of the paragraph.",
                                           {"alpha": "the first continued here", "beta": "the second"})
    assert doc_entries(doc, "Attributes")[1] == {"gamma": "not an option"}
    assert doc_entries(None, "Options") == ("", {})


def test_search_settings_are_documented_where_they_are_defined():
    from agents.search.settings import SearchSettings
    from registry.agents import field_help

    documented = field_help(SearchSettings)
    assert set(documented) == {f.name for f in dataclasses.fields(SearchSettings)}
    assert all(documented.values())
    # the network agents read them from there
    options = {o.name: o for o in describe_agent("alphazero").options}
    assert options["c_puct"].meaning == documented["c_puct"] and options["simulations"].default == 200


def test_the_shipped_families_agents_are_described():
    pytest.importorskip("torch")
    import agents.models as models

    shipped = {models.get_family(f).agent for f, entry in models._MODULES.items() if isinstance(entry, str)}
    assert shipped - {None} == set(NETWORK_AGENTS)


# ---------------------------------------------------------------- dnb agents [NAME]

def _listing(capsys) -> dict[str, str]:
    assert cli(["agents"]) == 0
    lines = [line for line in capsys.readouterr().out.splitlines() if line and not line.startswith("`")]
    return {line.split()[0]: line for line in lines}


def test_dnb_agents_lists_summaries_and_marks_missing_extras(capsys, monkeypatch):
    listed = _listing(capsys)
    assert set(shipped_agents()) <= set(listed)
    assert describe_agent("prsboxes").summary in listed["prsboxes"]
    assert all("[needs" not in line for name, line in listed.items() if describe_agent(name).needs is None)

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "pyspiel" else real(name, *a))
    listed = _listing(capsys)
    assert listed["openspiel_mcts"].endswith(f"[needs {extra_hint('pyspiel')}]")
    assert "[needs" not in listed["mcts"]

    def no_torch():
        raise ModuleNotFoundError("No module named 'torch'", name="torch")

    monkeypatch.setattr(registry.agents, "family_agents", no_torch)
    listed = _listing(capsys)
    for name in NETWORK_AGENTS:
        assert listed[name].endswith(f"[needs {extra_hint('torch')}]")


def test_dnb_agents_name_prints_the_reference_section(capsys):
    assert cli(["agents", "alphabeta"]) == 0
    out = capsys.readouterr().out
    assert out == registry.docs.render_agent("alphabeta")
    assert out.startswith("## alphabeta\n\nDepth-limited negamax")
    for option in ("depth", "time_limit", "chain_eval", "extend_captures", "solve_leaf"):
        assert f"| `{option}`" in out
    assert "| `depth`           | int" in out and "`4`" in out
    rr = registry.docs.load_strength()["round_robin"]
    rated = [r for r in (rr or {}).get("ratings", []) if r["agent"] == "alphabeta"]
    if rated:   # the published round robin's figures, as rounded on the page
        assert f"Strength: Elo {rated[0]['elo']:.0f} [{rated[0]['ci_low']:.0f}, {rated[0]['ci_high']:.0f}]" in out
    else:
        assert "Strength: not rated yet." in out


def test_dnb_agents_unknown_name_is_an_error(capsys):
    assert cli(["agents", "alphabet"]) == 2
    err = capsys.readouterr().err
    assert "unknown agent 'alphabet'; known agents: alphabeta" in err and "prsboxes" in err


# ---------------------------------------------------------------- the page

PAGE = Path(__file__).resolve().parents[1] / "docs" / "agents-reference.md"


def test_the_committed_page_is_up_to_date():
    assert PAGE.read_text(encoding="utf-8") == registry.docs.render_page(), \
        "docs/agents-reference.md is stale: run python -m registry.docs"


def test_check_fails_on_a_stale_page(tmp_path, capsys):
    page = tmp_path / "ref.md"
    assert registry.docs.main(["--out", str(page)]) == 0
    assert registry.docs.main(["--check", "--out", str(page)]) == 0
    page.write_text(page.read_text().replace("| `depth`", "| `depht`"))
    assert registry.docs.main(["--check", "--out", str(page)]) == 1
    assert "out of date" in capsys.readouterr().err


def test_page_lists_every_agent_with_its_section_and_the_external_results():
    page = registry.docs.render_page()
    for name in shipped_agents():
        assert f"\n### {name}\n" in page and f"[`{name}`](#{name})" in page
    assert ("At 1 s a move on 5x5, `prsboxes` beat MapuAlpha 10 of 10, Paradox 7 of 10 and Selflocking 9 of 10 "
            "(10 games each).") in page
    assert "--ratings" in page or "Measured" in page         # how the ratings get here, or where they came from


def test_the_round_robin_command_is_a_valid_tournament(tmp_path, monkeypatch, capsys):
    import registry.tournaments
    from registry.specs import check_agent_spec

    seen = {}
    monkeypatch.setattr(registry.tournaments, "run_tournament", lambda cfg, **kw: seen.update(cfg=cfg, **kw))
    words = shlex.split(registry.docs.ROUND_ROBIN_COMMAND)
    assert words[:2] == ["dnb", "tournament"]
    out = words.index("--out") + 1
    words[out] = str(tmp_path / "rr")
    assert cli(words[1:]) == 0
    cfg = seen["cfg"]
    torch = importlib.util.find_spec("torch") is not None
    for spec in cfg.agents:
        if torch or spec not in NETWORK_AGENTS:  # without PyTorch the registry does not build network agents
            check_agent_spec(spec)
    assert set(cfg.agents) == set(shipped_agents()) - {"engine"}
    assert cfg.board == "5x5" and cfg.time_per_move is None and cfg.mode == "round_robin"


# ---------------------------------------------------------------- strength from a round robin

@pytest.fixture(scope="module")
def round_robin(tmp_path_factory):
    from agents.arena import TournamentConfig
    from registry.tournaments import run_tournament

    out = tmp_path_factory.mktemp("rr") / "rr"
    run_tournament(TournamentConfig(board="2x2", agents=("random", "greedy", "alphabeta:depth=1"), games=2,
                                    bootstrap=20, workers=1, seed=0), out=str(out), progress=False, echo=None)
    return out


def test_a_folder_without_a_date_needs_the_day_it_was_measured(round_robin, tmp_path):
    import shutil

    copy = tmp_path / "unpacked"
    shutil.copytree(round_robin, copy)
    os.utime(copy / "elo.csv", (0, 0))                      # as research/data.py unpacks it: time 0
    with pytest.raises(ValueError, match="--measured"):
        registry.docs.round_robin_ratings(copy)
    assert registry.docs.round_robin_ratings(copy, "2026-11-29")["measured"] == "2026-11-29"
    with pytest.raises(ValueError, match="YYYY-MM-DD"):
        registry.docs.round_robin_ratings(copy, "29/11/2026")


def test_ratings_from_a_finished_round_robin(round_robin, tmp_path):
    rr = registry.docs.round_robin_ratings(round_robin)
    assert rr["board"] == "2x2" and rr["games"] == 2 and rr["time_control"] == "each agent's own budget (no clock)"
    assert rr["command"].startswith("dnb tournament --board 2x2 --agents random,greedy,alphabeta:depth=1 --games 2")
    assert [r["rank"] for r in rr["ratings"]] == [1, 2, 3]
    elos = [r["elo"] for r in rr["ratings"]]
    assert elos == sorted(elos, reverse=True)
    assert all(r["ci_low"] <= r["elo"] <= r["ci_high"] for r in rr["ratings"])

    strength, page = tmp_path / "strength.json", tmp_path / "page.md"
    strength.write_text(registry.docs.STRENGTH.read_text())
    assert registry.docs.main(["--ratings", str(round_robin), "--strength", str(strength), "--out", str(page)]) == 0
    data = json.loads(strength.read_text())
    assert data["round_robin"] == rr and data["external"] == registry.docs.load_strength()["external"]
    text = page.read_text()
    greedy = next(r for r in rr["ratings"] if r["agent"] == "greedy")
    assert (f"Strength: Elo {greedy['elo']:.0f} [{greedy['ci_low']:.0f}, {greedy['ci_high']:.0f}], rank "
            f"{greedy['rank']} of 3 in the round robin on 2x2") in text
    assert "rank" in registry.docs.render_agent("alphabeta", data) and "as `alphabeta:depth=1`" in text
    assert "Strength: not rated (not in the round robin)." in registry.docs.render_agent("prsboxes", data)


def test_bad_rating_folders_are_refused_and_change_nothing(round_robin, tmp_path, capsys):
    import shutil

    strength = tmp_path / "strength.json"
    strength.write_text(registry.docs.STRENGTH.read_text())
    before = strength.read_text()
    unfinished = tmp_path / "unfinished"
    shutil.copytree(round_robin, unfinished)
    lines = (unfinished / "results.jsonl").read_text().splitlines(keepends=True)
    (unfinished / "results.jsonl").write_text("".join(lines[:-1]))
    with pytest.raises(ValueError, match="not finished"):
        registry.docs.round_robin_ratings(unfinished)
    gauntlet = tmp_path / "gauntlet"
    shutil.copytree(round_robin, gauntlet)
    config = json.loads((gauntlet / "config.json").read_text())
    (gauntlet / "config.json").write_text(json.dumps({**config, "mode": "gauntlet"}))
    with pytest.raises(ValueError, match="come from a round robin"):
        registry.docs.round_robin_ratings(gauntlet)
    with pytest.raises(ValueError, match="not a finished tournament folder"):
        registry.docs.round_robin_ratings(tmp_path / "nowhere")
    assert registry.docs.main(["--ratings", str(unfinished), "--strength", str(strength),
                               "--out", str(tmp_path / "page.md")]) == 2
    assert "not finished (5 of 6 games)" in capsys.readouterr().err
    assert strength.read_text() == before and not (tmp_path / "page.md").exists()


def test_no_agent_is_rated_until_a_round_robin_is_published():
    data = {"round_robin": None, "external": []}
    for name in shipped_agents():
        assert registry.docs.render_agent(name, data).endswith("\nStrength: not rated yet.\n")
    assert "not rated yet" in registry.docs.render_page(data) and "--ratings" in registry.docs.render_page(data)
