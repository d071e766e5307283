"""The tutorials under docs/tutorials/ run as written, top to bottom, at cut-down budgets.

Each page's ```python and ```bash blocks run in order in a fresh temporary folder (the reader's working
folder): the Python blocks in one interpreter sharing one namespace, each bash block in ``bash -e -o
pipefail`` with the virtual environment's ``bin`` first on ``PATH`` (so ``dnb`` and ``python`` are the
project's) and ``DNB_SRC`` set to the checkout (the pages use ``$DNB_SRC/examples/...``). Other blocks
(```text for printed output, ```console for what is not run here, such as ``dnb serve``) are shown only.

A budget is cut by HTML comments on the lines just above a block, one substitution each:

    <!-- test: --iterations 150 => --iterations 2 -->
    <!-- test: total_timesteps=100_000 => total_timesteps=2_000 -->

The text left of `` => `` must occur in the block (else the page is reported, so a budget cannot drift
out of its comment); every occurrence is replaced. A comment that is not directly above a block that runs is
an error too.

    python tests/test_tutorials.py docs/tutorials/engine.md [--full]   # run one page, printing each block
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import textwrap

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TUTORIALS = os.path.join(ROOT, "docs", "tutorials")
RUN = ("python", "bash")
SHOWN = ("text", "console")
FENCE_OPEN = re.compile(r"^```(\w*)")
COMMENT = re.compile(r"^<!--\s*test:(.*?)-->\s*$")


class PageError(ValueError):
    """A tutorial page whose blocks or budget comments cannot be read as this module expects."""


def blocks(text: str, page: str = "page") -> list[tuple[str, str, list[tuple[str, str]]]]:
    """The fenced blocks of ``text`` as ``(language, code, substitutions)``, in page order; PageError for a
    fence of another language, an unclosed fence, or a budget comment that is malformed or not directly above
    a block that runs."""
    out, pending, lines, i = [], [], text.split("\n"), 0
    while i < len(lines):
        line = lines[i]
        comment = COMMENT.match(line.strip())
        if comment:
            old, sep, new = comment.group(1).partition("=>")
            if not sep or not old.strip():
                raise PageError(f"{page}:{i + 1}: a test comment reads '<!-- test: OLD => NEW -->', got {line!r}")
            pending.append((old.strip(), new.strip(), i + 1))
            i += 1
            continue
        fence = FENCE_OPEN.match(line)
        if fence:
            lang, start = fence.group(1), i + 1
            end = next((j for j in range(start, len(lines)) if lines[j].startswith("```")), None)
            if end is None:
                raise PageError(f"{page}:{i + 1}: a fence that is never closed")
            if lang not in RUN + SHOWN:
                raise PageError(f"{page}:{i + 1}: a ```{lang} block: tutorials use {', '.join(RUN + SHOWN)}")
            if pending and lang not in RUN:
                raise PageError(f"{page}:{pending[0][2]}: a test comment above a ```{lang} block, which does not run")
            if lang in RUN:
                out.append((lang, textwrap.dedent("\n".join(lines[start:end])) + "\n",
                            [(old, new) for old, new, _ in pending]))
            pending, i = [], end + 1
            continue
        if pending and line.strip():
            raise PageError(f"{page}:{pending[0][2]}: a test comment must be directly above a ```python or "
                            "```bash block")
        i += 1
    if pending:
        raise PageError(f"{page}:{pending[0][2]}: a test comment after the last block")
    return out


def cut(code: str, substitutions: list[tuple[str, str]], where: str = "block") -> str:
    """``code`` with each substitution applied; PageError when a text to replace is not in it."""
    for old, new in substitutions:
        if old not in code:
            raise PageError(f"{where}: the test comment's {old!r} is not in the block below it")
        code = code.replace(old, new)
    return code


# Runs the blocks of a page (a JSON list of [language, code]) in order, in the working folder.
DRIVER = r"""
import json, subprocess, sys
namespace = {"__name__": "__main__"}
for n, (lang, code) in enumerate(json.load(open(sys.argv[1])), 1):
    print(f"----- block {n} ({lang})", flush=True)
    if lang == "python":
        exec(compile(code, f"<block {n}>", "exec"), namespace)
        sys.stdout.flush()
    else:
        done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", code])
        if done.returncode:
            sys.exit(f"block {n} (bash) exited with {done.returncode}")
"""


def run_page(page: str, folder: str, full: bool = False, timeout: float | None = 600,
             capture: bool = True) -> subprocess.CompletedProcess:
    """Run the tutorial ``page`` (a path) in ``folder``: with its test budgets, or as written (``full``)."""
    with open(page) as f:
        parsed = blocks(f.read(), os.path.relpath(page, ROOT))
    code = [(lang, text if full else cut(text, subs, f"{os.path.relpath(page, ROOT)} block {n}"))
            for n, (lang, text, subs) in enumerate(parsed, 1)]
    with open(os.path.join(folder, ".tutorial-blocks.json"), "w") as f:
        json.dump(code, f)
    bin_dir = os.path.dirname(sys.executable)
    env = dict(os.environ, PATH=bin_dir + os.pathsep + os.environ.get("PATH", ""), DNB_SRC=ROOT,
               MPLBACKEND="Agg", PYTHONUNBUFFERED="1")
    return subprocess.run([sys.executable, "-c", DRIVER, ".tutorial-blocks.json"], cwd=folder, env=env,
                          capture_output=capture, text=True, timeout=timeout)


def tutorial_pages() -> list[str]:
    if not os.path.isdir(TUTORIALS):
        return []
    return sorted(f for f in os.listdir(TUTORIALS) if f.endswith(".md") and f != "index.md")


# ------------------------------------------------------------------------------ the mechanism itself
PAGE = """Intro.

<!-- test: --games 400 => --games 4 -->
```bash
dnb tournament --games 400 --out here
```

```text
printed output
```

<!-- test: steps=1000 => steps=10 -->
<!-- test: "a" => "b" -->
```python
run(steps=1000, name="a")
```
"""


def test_blocks_read_languages_and_budgets():
    got = blocks(PAGE)
    assert [lang for lang, _, _ in got] == ["bash", "python"]
    assert got[0][2] == [("--games 400", "--games 4")]
    assert got[1][2] == [("steps=1000", "steps=10"), ('"a"', '"b"')]
    assert cut(got[1][1], got[1][2]) == 'run(steps=10, name="b")\n'


@pytest.mark.parametrize("page, message", [
    (PAGE.replace("--games 400 --out", "--games 40 --out"), "is not in the block"),
    ("<!-- test: a => b -->\n\ntext\n```python\na\n```\n", "directly above"),
    ("<!-- test: a => b -->\n```text\na\n```\n", "does not run"),
    ("<!-- test: a b -->\n```python\na\n```\n", "reads '<!-- test: OLD => NEW -->'"),
    ("```python\na\n", "never closed"),
    ("```sh\na\n```\n", "a ```sh block"),
    ("```python\na\n```\n<!-- test: a => b -->\n", "after the last block"),
])
def test_bad_pages_are_refused(page, message):
    with pytest.raises(PageError, match=re.escape(message)):
        for _, code, subs in blocks(page):
            cut(code, subs)


def test_a_failing_block_fails_the_page(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("```python\nx = 1\n```\n\n```bash\ntest \"$(cat out.txt)\" = 2\n```\n\n"
                    "```python\nopen('out.txt', 'w').write(str(x + 1))\n```\n")
    assert run_page(str(page), str(tmp_path)).returncode != 0  # the bash check runs before the file exists
    page.write_text("```python\nx = 1\nopen('out.txt', 'w').write(str(x + 1))\n```\n\n"
                    "```bash\ntest \"$(cat out.txt)\" = 2\ndnb --version\n```\n\n```python\nassert x == 1\n```\n")
    done = run_page(str(page), str(tmp_path))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "----- block 3 (python)" in done.stdout


# ------------------------------------------------------------------------------ the tutorials
def test_every_tutorial_is_listed_in_the_index():
    pages = tutorial_pages()
    assert len(pages) >= 5
    with open(os.path.join(TUTORIALS, "index.md")) as f:
        index = f.read()
    assert [p for p in pages if f"({p})" not in index] == []


#: The optional extras a page imports (the modules of its "You need ..." line), beyond the base install.
NEEDS = {"maskable-ppo.md": ("gymnasium", "torch", "sb3_contrib"), "alphazero-3x3.md": ("torch", "matplotlib"),
         "solver-and-web.md": ("fastapi", "httpx")}


def test_the_readme_runs(tmp_path):
    """The README's Python tour and its command block run as written from the checkout (its examples folder
    beside them), at the budgets its test comments cut; what it only shows (make, pip, dnb serve) is not run."""
    for module in ("gymnasium", "torch"):                          # the tour's environment and network agent
        pytest.importorskip(module)
    (tmp_path / "examples").symlink_to(os.path.join(ROOT, "examples"))
    done = run_page(os.path.join(ROOT, "README.md"), str(tmp_path))
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    assert (tmp_path / "results" / "engine" / "results.jsonl").exists()
    assert "move " in done.stdout                                   # the engine answered over the pipe


@pytest.mark.parametrize("page", tutorial_pages())
def test_tutorial_runs(page, tmp_path):
    for module in NEEDS.get(page, ()):
        pytest.importorskip(module, reason=f"docs/tutorials/{page} needs {module} (an extra of the project)")
    done = run_page(os.path.join(TUTORIALS, page), str(tmp_path))
    assert done.returncode == 0, (f"docs/tutorials/{page} failed:\n{done.stdout[-4000:]}\n{done.stderr[-4000:]}")


if __name__ == "__main__":  # run one page in a temporary folder, printing as it goes
    import argparse
    import tempfile

    parser = argparse.ArgumentParser(description="Run one tutorial page's blocks in order.")
    parser.add_argument("page")
    parser.add_argument("--full", action="store_true", help="the budgets as written (no test comments)")
    parser.add_argument("--folder", help="working folder (default: a new temporary one)")
    args = parser.parse_args()
    folder = args.folder or tempfile.mkdtemp(prefix="dnb-tutorial-")
    os.makedirs(folder, exist_ok=True)
    print(f"working folder: {folder}", flush=True)
    sys.exit(run_page(os.path.abspath(args.page), folder, full=args.full, timeout=None, capture=False).returncode)
