"""The documentation site builds without a warning, and the Python snippets of its pages run.

Every ```python block of the README and of a page under docs/ (API reference pages aside) is run in
order, the blocks of one page sharing one namespace, in a fresh interpreter started in a temporary folder:
a snippet that stops working fails here instead of rotting on the site. Every table of a research page
(the site's Research section) says the day it was measured, and every page under docs/research/ (its index
aside) opens with a summary of at most one screen."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
import textwrap

import pytest
import yaml

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)
MEASURED = re.compile(r"^\*?Measured (\d{4}-\d{2}-\d{2})(?: to (\d{4}-\d{2}-\d{2}))?\b")
TABLE_RULE = re.compile(r"^\s*\|?\s*:?-{3,}:?\s*(\|\s*:?-{3,}:?\s*)*\|?\s*$")


def pages() -> list[str]:
    """The site's pages (paths under docs/), and the README as ``../README.md``. The tutorials are left to
    tests/test_tutorials.py, which runs their blocks at cut-down budgets."""
    out = ["../README.md"]
    for folder, _, files in os.walk(DOCS):
        if os.path.relpath(folder, DOCS).startswith(("reference", "tutorials")):
            continue
        out += [os.path.relpath(os.path.join(folder, f), DOCS) for f in files if f.endswith(".md")]
    return sorted(out)


def snippets(page: str) -> list[str]:
    with open(os.path.join(DOCS, page)) as f:
        return [textwrap.dedent(block) for block in FENCE.findall(f.read())]


RESEARCH = os.path.join(DOCS, "research")
RESEARCH_ASIDE = ("research/index.md", "research/runs.md")  # the section's index and the runs page hold no results
SUMMARY_LINES = 45  # one screen
HEADING = re.compile(r"^#{1,6} ")


def research_section() -> list[str] | None:
    """The pages of mkdocs.yml's Research section (paths under docs/), or None when the nav has no such section."""
    class Loader(yaml.SafeLoader):
        pass
    Loader.add_multi_constructor("", lambda loader, tag, node: None)  # !!python/name: and the like
    with open(os.path.join(ROOT, "mkdocs.yml")) as f:
        nav = yaml.load(f, Loader=Loader)["nav"]
    section = next((entry["Research"] for entry in nav if isinstance(entry, dict) and "Research" in entry), None)
    if section is None:
        return None
    paths = [entry if isinstance(entry, str) else next(iter(entry.values())) for entry in section]
    return [p for p in paths if isinstance(p, str)]


def results_pages() -> list[str]:
    """The result pages of the Research section (paths under docs/): its index and the runs page aside."""
    return [p for p in research_section() or [] if p not in RESEARCH_ASIDE]


def research_files() -> list[str]:
    """The pages under docs/research/ (paths under docs/), its index aside."""
    if not os.path.isdir(RESEARCH):
        return []
    return sorted(f"research/{f}" for f in os.listdir(RESEARCH) if f.endswith(".md") and f != "index.md")


def opening_summary(text: str) -> list[str] | None:
    """The lines of the ``## Summary`` section a page opens with (from under that heading to the next heading,
    blank lines at either end dropped), or None when the first line under the page's title that is not blank
    is not ``## Summary``."""
    lines = text.split("\n")
    rest = [i for i, line in enumerate(lines) if line.strip()]
    if len(rest) < 2 or not lines[rest[0]].startswith("# ") or lines[rest[1]].rstrip() != "## Summary":
        return None
    out, fenced = [], False
    for line in lines[rest[1] + 1:]:
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and HEADING.match(line):
            break
        out.append(line)
    while out and not out[0].strip():
        out.pop(0)
    while out and not out[-1].strip():
        out.pop()
    return out


def undated_tables(text: str) -> list[str]:
    """The header rows of the tables with no ``Measured YYYY-MM-DD`` line (or ``... to YYYY-MM-DD``) between
    the previous table or heading and their header. The paragraph under the page's title dates the page as a
    whole and counts for no table."""
    lines = text.split("\n")
    page_line = set()
    title = next((i for i, line in enumerate(lines) if line.startswith("# ")), None)
    if title is not None:
        i = title + 1
        while i < len(lines) and not lines[i].strip():
            i += 1
        while i < len(lines) and lines[i].strip() and not lines[i].startswith(("#", "|")):
            page_line.add(i)
            i += 1
    out, dated, fenced = [], False, False
    for i, line in enumerate(lines):
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif fenced or i in page_line:
            continue
        elif line.startswith("#"):
            dated = False
        elif line.startswith("|") and i + 1 < len(lines) and TABLE_RULE.match(lines[i + 1]):
            if not dated:
                out.append(line)
            dated = False
        elif MEASURED.match(line):
            first, last = MEASURED.match(line).groups()
            assert last is None or first <= last, f"a backwards range: {line}"
            dated = True
    return out


def test_the_site_builds_strictly(tmp_path):
    env = dict(os.environ, NO_MKDOCS_2_WARNING="1")
    done = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
                          cwd=ROOT, capture_output=True, text=True, env=env, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "site" / "index.html").exists()
    assert (tmp_path / "site" / "reference" / "dnb_env" / "index.html").stat().st_size > 10_000  # docstrings rendered
    with open(os.path.join(ROOT, "mkdocs.yml")) as f:
        nav = f.read()
    every = [os.path.relpath(os.path.join(folder, f), DOCS) for folder, _, files in os.walk(DOCS)
             for f in files if f.endswith(".md") and not os.path.relpath(folder, DOCS).startswith(("reference", "scripts"))]
    missing = [p for p in every if p not in nav]
    assert not missing, f"pages not in the site's nav: {missing}"


def test_pages_have_snippets_to_check():
    assert sum(len(snippets(p)) for p in pages()) >= 6


@pytest.mark.parametrize("page", [p for p in pages() if snippets(p)])
def test_snippets_run(page, tmp_path):
    code = "\n\n".join(snippets(page))
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), MPLBACKEND="Agg")
    done = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, env=env,
                          timeout=300)
    assert done.returncode == 0, f"a snippet of docs/{page} failed:\n{done.stderr[-3000:]}"


def test_results_pages_come_from_the_nav():
    assert research_section() is not None, "mkdocs.yml's nav has no Research section"
    listed = results_pages()
    assert "research/teacher.md" in listed and "research/solver.md" in listed and "research/runs.md" not in listed
    assert all(os.path.exists(os.path.join(DOCS, p)) for p in listed)
    assert sorted(listed) == [p for p in research_files() if p not in RESEARCH_ASIDE], \
        "every page under docs/research/ belongs in mkdocs.yml's Research section, and nothing else"


@pytest.mark.parametrize("page", results_pages())
def test_results_tables_say_when_they_were_measured(page):
    with open(os.path.join(DOCS, page)) as f:
        missing = undated_tables(f.read())
    assert not missing, (f"docs/{page}: a line 'Measured YYYY-MM-DD.' (or 'Measured YYYY-MM-DD to YYYY-MM-DD.') "
                         f"belongs before each of these tables: {missing}")


def test_opening_summary_reads_the_first_section():
    page = "# Title\n\n## Summary\n\nA claim.\n\n    dnb x  # not a heading\n```\n# nor this\n```\n\n## The log\n\ntext\n"
    assert opening_summary(page) == ["A claim.", "", "    dnb x  # not a heading", "```", "# nor this", "```"]
    assert opening_summary("# Title\n\n*Measured 2026-11-28.*\n\n## Summary\n\nA claim.\n") is None
    assert opening_summary("# Title\n\n## Background\n\n## Summary\n") is None
    assert len(opening_summary("# T\n## Summary\n" + "line\n" * 50)) == 50


def test_research_pages_exist():
    assert "research/teacher.md" in research_files() and "research/runs.md" in research_files()


@pytest.mark.parametrize("page", research_files())
def test_research_pages_open_with_a_summary(page):
    with open(os.path.join(DOCS, page)) as f:
        summary = opening_summary(f.read())
    assert summary is not None, f"docs/{page}: the first section under the title must be '## Summary'"
    assert sum(1 for line in summary if line.strip()) >= 3, f"docs/{page}: the summary is empty"
    assert len(summary) <= SUMMARY_LINES, (f"docs/{page}: the summary has {len(summary)} lines, "
                                           f"more than one screen ({SUMMARY_LINES})")


# ------------------------------------------------------------------------------------ docs/observations.md
OBSERVATIONS = os.path.join(DOCS, "observations.md")
ENCODER_SECTION = re.compile(r"^## `([a-z0-9_]+)`\n(.*?)(?=^## |\Z)", re.S | re.M)
SHAPE_5X5 = re.compile(r"Shape on 5x5: `\((\d+), (\d+), (\d+)\)`")
SHAPE_RXC = re.compile(r"on R x C: `\(([^)]*)\)`")
CHANNEL_ROW = re.compile(r"^\| (\d+)(?:-(\d+))? \|", re.M)
SUMMARY_ROW = re.compile(r"^\| \[`([a-z0-9_]+)`\]\(#\1\) \| \(([^)]*)\) \| \((\d+), (\d+), (\d+)\) \|", re.M)


def encoder_sections() -> dict[str, str]:
    """name -> text of each ``## `name``` section of docs/observations.md."""
    with open(OBSERVATIONS) as f:
        return {m.group(1): m.group(2) for m in ENCODER_SECTION.finditer(f.read())}


def formula_shape(formula: str, rows: int, cols: int) -> tuple[int, ...]:
    """``"9, 2R+1, 2C+1"`` evaluated on a rows x cols board."""
    out = []
    for part in formula.split(","):
        expr = re.sub(r"(\d)([RC])", r"\1*\2", part.strip())
        assert re.fullmatch(r"[0-9RC*+ ]+", expr), f"not a shape formula: {formula!r}"
        out.append(eval(expr, {"__builtins__": {}}, {"R": rows, "C": cols}))
    return tuple(out)


def channel_indices(section: str) -> list[int]:
    """The channels listed in the first column of a section's table (``4``, ``0-3`` and the like)."""
    out = []
    for first, last in CHANNEL_ROW.findall(section):
        out += range(int(first), int(last or first) + 1)
    return out


def test_formula_shape_reads_the_page_notation():
    assert formula_shape("9, 2R+1, 2C+1", 3, 4) == (9, 7, 9)
    assert formula_shape("44, R, C", 3, 4) == (44, 3, 4)
    assert channel_indices("| 0-3 | a | |\n| 4 | b | 0/1 |\n| 5-6 | c | |\n") == [0, 1, 2, 3, 4, 5, 6]


def test_observations_page_documents_every_encoder():
    """Each encoder of list_encoders() has a section whose stated shapes (5x5 and the R x C formula) are
    encoder_shape's, whose channel table lists each channel exactly once, and whose picture exists."""
    from dnb_env.observations import encoder_shape, list_encoders

    sections = encoder_sections()
    assert sorted(sections) == sorted(list_encoders()), "docs/observations.md: one '## `name`' section per encoder"
    for name, text in sections.items():
        shape = SHAPE_5X5.search(text)
        assert shape, f"docs/observations.md, {name}: no 'Shape on 5x5: `(C, H, W)`'"
        assert tuple(map(int, shape.groups())) == encoder_shape(name, 5, 5), name
        formula = SHAPE_RXC.search(text)
        assert formula and formula_shape(formula.group(1), 3, 4) == encoder_shape(name, 3, 4), name
        assert channel_indices(text) == list(range(encoder_shape(name, 5, 5)[0])), \
            f"docs/observations.md, {name}: the table must list channels 0..C-1 once each, in order"
        picture = f"img/encoders/{name}.png"
        assert f"]({picture})" in text, f"docs/observations.md, {name}: no picture {picture}"
        assert 0 < os.path.getsize(os.path.join(DOCS, picture)) < 60_000, picture


def test_observations_summary_table_matches_the_encoders():
    from dnb_env.observations import encoder_shape, list_encoders

    with open(OBSERVATIONS) as f:
        rows = SUMMARY_ROW.findall(f.read())
    assert [r[0] for r in rows] == list_encoders()
    for name, formula, *shape in rows:
        assert tuple(map(int, shape)) == encoder_shape(name, 5, 5), name
        assert formula_shape(formula, 2, 3) == encoder_shape(name, 2, 3), name


def test_encoder_planes_script_draws_small_pictures(tmp_path):
    pytest.importorskip("matplotlib", reason="the picture script needs the plot extra")
    script = os.path.join(DOCS, "scripts", "encoder_planes.py")
    env = dict(os.environ, PYTHONPATH=ROOT + os.pathsep + os.environ.get("PYTHONPATH", ""), MPLBACKEND="Agg")
    done = subprocess.run([sys.executable, script, "--out", str(tmp_path), "chainloop6", "edgequad44"],
                          capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    assert sorted(os.listdir(tmp_path)) == ["chainloop6.png", "edgequad44.png", "position.png"]
    spec = importlib.util.spec_from_file_location("encoder_planes", script)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    state = module.position()  # the page says: 5x5, 32 undrawn edges, one box each, player 0 to move
    assert (state.rows, state.cols, state.num_actions - state.edges.bit_count()) == (5, 5, 32)
    assert state.scores == (1, 1) and state.current_player == 0
    assert all(0 < (tmp_path / f).stat().st_size < 60_000 for f in os.listdir(tmp_path))
    bad = subprocess.run([sys.executable, script, "--out", str(tmp_path / "none"), "no_such_encoder"],
                         capture_output=True, text=True, env=env, timeout=300)
    assert bad.returncode != 0 and "unknown encoder" in bad.stderr and not (tmp_path / "none").exists()
