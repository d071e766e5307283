"""The documentation site builds without a warning, and the Python snippets of its pages run.

Every ```python block of the README and of a page under docs/ (API reference pages aside) is run in
order, the blocks of one page sharing one namespace, in a fresh interpreter started in a temporary folder:
a snippet that stops working fails here instead of rotting on the site. Every table of a results page
(the site's Results section) says the day it was measured."""

from __future__ import annotations

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
    """The site's pages (paths under docs/), and the README as ``../README.md``."""
    out = ["../README.md"]
    for folder, _, files in os.walk(DOCS):
        if os.path.relpath(folder, DOCS).startswith("reference"):
            continue
        out += [os.path.relpath(os.path.join(folder, f), DOCS) for f in files if f.endswith(".md")]
    return sorted(out)


def snippets(page: str) -> list[str]:
    with open(os.path.join(DOCS, page)) as f:
        return [textwrap.dedent(block) for block in FENCE.findall(f.read())]


def results_pages() -> list[str]:
    """The pages of mkdocs.yml's Results section (paths under docs/), the runs in progress aside."""
    class Loader(yaml.SafeLoader):
        pass
    Loader.add_multi_constructor("", lambda loader, tag, node: None)  # !!python/name: and the like
    with open(os.path.join(ROOT, "mkdocs.yml")) as f:
        nav = yaml.load(f, Loader=Loader)["nav"]
    section = next(entry["Results"] for entry in nav if isinstance(entry, dict) and "Results" in entry)
    paths = [entry if isinstance(entry, str) else next(iter(entry.values())) for entry in section]
    return [p for p in paths if isinstance(p, str) and p != "runs.md"]


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
    missing = [p for p in pages() if p not in nav and not p.startswith("..")]
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
    listed = results_pages()
    assert "teacher.md" in listed and "results/solver.md" in listed and "runs.md" not in listed
    assert all(os.path.exists(os.path.join(DOCS, p)) for p in listed)


@pytest.mark.parametrize("page", results_pages())
def test_results_tables_say_when_they_were_measured(page):
    with open(os.path.join(DOCS, page)) as f:
        missing = undated_tables(f.read())
    assert not missing, (f"docs/{page}: a line 'Measured YYYY-MM-DD.' (or 'Measured YYYY-MM-DD to YYYY-MM-DD.') "
                         f"belongs before each of these tables: {missing}")
