"""The package as a user installs it: the wheel built from this tree, installed without extras into a fresh
virtual environment, runs every command that needs no extra, and names the extra a command needs.

Slow (about a minute: two virtual environments, a wheel build, numpy from the package index), hence the
``packaging`` mark; it runs in the normal suite. The wheel is built without pybind11 in the build environment,
the documented pure-Python fallback of setup.py (no C++ compile, so the test stays quick); the C++ extension
is tested in place by tests/test_native.py.
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys
import zipfile

import pytest

import dnb_env

try:
    import tomllib
except ModuleNotFoundError:  # Python 3.10
    tomllib = pytest.importorskip("tomli")

pytestmark = pytest.mark.packaging

ROOT = pathlib.Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
# what a wheel is built from: the metadata files and the top-level folders of the packages
FILES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE")
TOP = sorted({p.rstrip("*").split(".")[0] for p in PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]})
# messages of setuptools and the build backend that a clean build must not print
BUILD_WARNINGS = re.compile(r"\w+Warning\b|would be ignored|deprecated", re.IGNORECASE)


def _run(args, cwd, env, timeout=600, check=True) -> subprocess.CompletedProcess:
    out = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    if check and out.returncode != 0:
        pytest.fail(f"{' '.join(map(str, args))} exited {out.returncode}\n{out.stdout}\n{out.stderr}")
    return out


def _venv(path: pathlib.Path, env: dict) -> pathlib.Path:
    _run([sys.executable, "-m", "venv", str(path)], path.parent, env)  # no --system-site-packages
    return path / "bin" / "python" if os.name != "nt" else path / "Scripts" / "python.exe"


def _source_files() -> set[str]:
    """The package files of this tree that a wheel must hold (Python modules, py.typed, package data)."""
    data = PYPROJECT["tool"]["setuptools"]["package-data"]
    out = set()
    for top in TOP:
        for path in (ROOT / top).rglob("*"):
            rel = path.relative_to(ROOT)
            if not path.is_file() or "__pycache__" in rel.parts or "csrc" in rel.parts:
                continue
            package = ".".join(rel.parent.parts)
            patterns = data.get("*", []) + data.get(package, [])
            if path.suffix == ".py" or any(path.match(p) for p in patterns):
                out.add(rel.as_posix())
    return out


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    """``(wheel, python of a fresh venv with the wheel installed without extras, env, work folder)``."""
    tmp = tmp_path_factory.mktemp("packaging")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "DNB_BACKEND", "PYTHONHOME")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    src = tmp / "src"
    src.mkdir()
    for name in FILES:
        shutil.copy2(ROOT / name, src / name)
    for top in TOP:
        shutil.copytree(ROOT / top, src / top,
                        ignore=shutil.ignore_patterns("__pycache__", "_native*.so", "_native*.pyd"))
    # the build environment: the build requirements but pybind11 (setup.py then builds without the extension)
    builder = _venv(tmp / "build-env", env)
    requires = [r for r in PYPROJECT["build-system"]["requires"] if not r.startswith("pybind11")]
    _run([builder, "-m", "pip", "install", "-q", *requires], tmp, env)
    dist = tmp / "dist"
    build = _run([builder, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation", "-w", dist, src], tmp, env)
    log = build.stdout + build.stderr
    assert "building without the C++ extension" in log
    noise = [line for line in log.splitlines() if BUILD_WARNINGS.search(line) and "Location 'file:" not in line]
    assert not noise, "\n".join(noise)
    (wheel,) = dist.glob("dnb-*.whl")
    python = _venv(tmp / "env", env)
    _run([python, "-m", "pip", "install", "-q", wheel], tmp, env)
    work = tmp / "work"
    work.mkdir()
    return wheel, python, env, work


def test_the_wheel_holds_every_package_file_the_license_and_no_sources(installed):
    wheel, *_ = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = _source_files() - names
    assert not missing, sorted(missing)
    assert {"agents/checkpoints/alphazero-3x3.pt", "dnb_web/static/index.html", "dnb_env/py.typed"} <= names
    info = f"dnb-{dnb_env.__version__}.dist-info"
    assert f"{info}/licenses/LICENSE" in names
    metadata = zipfile.ZipFile(wheel).read(f"{info}/METADATA").decode()
    assert "License-Expression: Apache-2.0" in metadata and "Provides-Extra: torch" in metadata
    assert not [n for n in names if "csrc" in n or n.endswith((".cpp", ".hpp"))]


def test_commands_without_extras(installed):
    _, python, env, work = installed
    dnb = [str(python.parent / "dnb")]
    has = {m: _run([python, "-c", f"import {m}"], work, env, check=False).returncode == 0
           for m in ("torch", "matplotlib")}
    assert not has["torch"], "the fresh environment has PyTorch: the test would not see a missing extra"

    assert "tournament" in _run(dnb + ["--help"], work, env).stdout
    assert _run(dnb + ["--version"], work, env).stdout.strip() == f"dnb {dnb_env.__version__}"
    agents = _run(dnb + ["agents"], work, env)
    assert {"random", "greedy", "alphabeta", "prsboxes"} <= set(agents.stdout.split())
    assert "pip install 'dnb[torch]'" in agents.stderr
    demo = _run(dnb + ["demo", "--board", "2x2", "--seed", "1"], work, env)
    assert "game over" in demo.stdout

    out = work / "t3x3"
    tour = _run(dnb + ["tournament", "--board", "3x3", "--agents", "random,greedy,alphabeta:depth=2", "--games", "2",
                       "--workers", "1", "--bootstrap", "10", "--no-progress", "--out", str(out)], work, env)
    assert (out / "pairs.csv").is_file() and (out / "elo.csv").is_file() and "Elo" in tour.stdout
    if not has["matplotlib"]:
        assert "tournament.png skipped: the plot needs matplotlib: pip install 'dnb[plot]'" in tour.stdout
        assert not (out / "tournament.png").exists()

    train_help = _run(dnb + ["train", "--help"], work, env)
    assert "dnb train needs PyTorch: pip install 'dnb[torch]'" in train_help.stdout
    train = _run(dnb + ["train", "--out", str(work / "run")], work, env, check=False)
    assert train.returncode == 2 and "dnb: error: dnb train needs PyTorch: pip install 'dnb[torch]'" in train.stderr
    network = _run(dnb + ["tournament", "--board", "3x3", "--agents", "alphazero,random", "--games", "2"], work, env,
                   check=False)
    assert network.returncode == 2 and "pip install 'dnb[torch]'" in network.stderr
    serve = _run(dnb + ["serve", "--port", "0"], work, env, check=False)
    assert serve.returncode == 2 and re.fullmatch(r"dnb: error: dnb serve needs \w+: pip install 'dnb\[web\]'\n",
                                                  serve.stderr), serve.stderr
