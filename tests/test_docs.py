"""The documentation site builds without a warning, and the Python snippets of its pages run.

Every ```python block of the README and of a page under docs/ (API reference pages aside) is run in
order, the blocks of one page sharing one namespace, in a fresh interpreter started in a temporary folder:
a snippet that stops working fails here instead of rotting on the site."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = os.path.join(ROOT, "docs")
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.S | re.M)


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
