"""The package as a user installs it: the wheel built from this tree (distribution ``dnb-env``), installed
without extras into a fresh virtual environment, runs every command that needs no extra, and names the extra a
command needs; the sdist built from the checkout holds the packages and the C++ sources and nothing of the
checkout's tests and research folders; the checkout's own (editable) install exposes the five packages only.

Slow (about a minute: two virtual environments, a wheel build, numpy from the package index), hence the
``packaging`` mark; it runs in the normal suite. The wheel is built without pybind11 in the build environment,
the documented pure-Python fallback of setup.py (no C++ compile, so the test stays quick); the C++ extension
is tested in place by tests/test_native.py. The release itself (`make dist`: the manylinux wheel with the
compiled extension, checked by auditwheel and played on its C++ engine) takes minutes and is not run here.
"""

from __future__ import annotations

import importlib.util
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tarfile
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
FILES = ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE", "CHANGELOG.md", "CITATION.cff")
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


def _clean_env() -> dict:
    """This process's environment less what would point a child Python at other modules or another venv."""
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "DNB_BACKEND", "PYTHONHOME")}
    env["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    return env


@pytest.fixture(scope="module")
def builder(tmp_path_factory):
    """``(python, env, folder)`` of a build environment: the build requirements but pybind11 (setup.py then
    builds without the extension)."""
    tmp = tmp_path_factory.mktemp("packaging")
    env = _clean_env()
    python = _venv(tmp / "build-env", env)
    requires = [r for r in PYPROJECT["build-system"]["requires"] if not r.startswith("pybind11")]
    _run([python, "-m", "pip", "install", "-q", *requires], tmp, env)
    return python, env, tmp


@pytest.fixture(scope="module")
def installed(builder):
    """``(wheel, python of a fresh venv with the wheel installed without extras, env, work folder)``."""
    builder, env, tmp = builder
    src = tmp / "src"
    src.mkdir()
    for name in FILES:
        shutil.copy2(ROOT / name, src / name)
    for top in TOP:
        shutil.copytree(ROOT / top, src / top,
                        ignore=shutil.ignore_patterns("__pycache__", "_native*.so", "_native*.pyd"))
    dist = tmp / "dist"
    build = _run([builder, "-m", "pip", "wheel", "-v", "--no-deps", "--no-build-isolation", "-w", dist, src], tmp, env)
    log = build.stdout + build.stderr
    assert "building without the C++ extension" in log
    noise = [line for line in log.splitlines() if BUILD_WARNINGS.search(line) and "Location 'file:" not in line]
    assert not noise, "\n".join(noise)
    (wheel,) = dist.glob("dnb_env-*.whl")
    python = _venv(tmp / "env", env)
    _run([python, "-m", "pip", "install", "-q", wheel], tmp, env)
    work = tmp / "work"
    work.mkdir()
    return wheel, python, env, work


@pytest.fixture(scope="module")
def sdist(builder):
    """The sdist built from the checkout itself (its tests, docs and research folders in place) by the build
    environment, as ``python -m build`` builds it in isolation."""
    python, env, tmp = builder
    out = tmp / "sdist"
    _run([python, "-c", "import sys; from setuptools import build_meta; build_meta.build_sdist(sys.argv[1])", out],
         ROOT, env)
    (path,) = out.glob("dnb_env-*.tar.gz")
    return path


def test_the_wheel_holds_every_package_file_the_license_and_no_sources(installed):
    wheel, *_ = installed
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = _source_files() - names
    assert not missing, sorted(missing)
    assert {"agents/checkpoints/alphazero-3x3.pt", "dnb_web/static/index.html", "dnb_env/py.typed"} <= names
    info = f"dnb_env-{dnb_env.__version__}.dist-info"
    assert {n.split("/")[0] for n in names} == {*TOP, info}  # the five packages and the metadata, nothing else
    assert f"{info}/licenses/LICENSE" in names
    metadata = zipfile.ZipFile(wheel).read(f"{info}/METADATA").decode()
    assert re.search(r"^Name: dnb-env$", metadata, re.M), metadata[:300]
    assert re.search(rf"^Version: {re.escape(dnb_env.__version__)}$", metadata, re.M), metadata[:300]
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
    assert "pip install 'dnb-env[torch]'" in agents.stdout  # the network agents, with the extra they need
    demo = _run(dnb + ["demo", "--board", "2x2", "--seed", "1"], work, env)
    assert "game over" in demo.stdout

    out = work / "t3x3"
    tour = _run(dnb + ["tournament", "--board", "3x3", "--agents", "random,greedy,alphabeta:depth=2", "--games", "2",
                       "--workers", "1", "--bootstrap", "10", "--no-progress", "--out", str(out)], work, env)
    assert (out / "pairs.csv").is_file() and (out / "elo.csv").is_file() and "Elo" in tour.stdout
    if not has["matplotlib"]:
        assert "tournament.png skipped: the plot needs matplotlib: pip install 'dnb-env[plot]'" in tour.stdout
        assert not (out / "tournament.png").exists()

    train_help = _run(dnb + ["train", "--help"], work, env)
    assert "dnb train needs PyTorch: pip install 'dnb-env[torch]'" in train_help.stdout
    train = _run(dnb + ["train", "--out", str(work / "run")], work, env, check=False)
    assert train.returncode == 2 and "dnb: error: dnb train needs PyTorch: pip install 'dnb-env[torch]'" in train.stderr
    network = _run(dnb + ["tournament", "--board", "3x3", "--agents", "alphazero,random", "--games", "2"], work, env,
                   check=False)
    assert network.returncode == 2 and "pip install 'dnb-env[torch]'" in network.stderr
    serve = _run(dnb + ["serve", "--port", "0"], work, env, check=False)
    assert serve.returncode == 2 and re.fullmatch(r"dnb: error: dnb serve needs \w+: pip install 'dnb-env\[web\]'\n",
                                                  serve.stderr), serve.stderr


def test_the_installed_distribution_is_dnb_env(installed):
    _, python, env, work = installed
    code = ("import json; from importlib.metadata import distribution; d = distribution('dnb-env'); "
            "print(json.dumps([d.version, sorted(d.read_text('top_level.txt').split()), "
            "[e.value for e in d.entry_points if e.group == 'console_scripts']]))")
    version, top, scripts = json.loads(_run([python, "-c", code], work, env).stdout)
    assert (version, top, scripts) == (dnb_env.__version__, TOP, ["registry.cli:main"])


def test_the_citation_names_the_release():
    cff = (ROOT / "CITATION.cff").read_text()
    assert re.search(rf"^version: {re.escape(dnb_env.__version__)}$", cff, re.M), "CITATION.cff's version"
    assert re.search(r'^title: "dnb-env: ', cff, re.M)


def test_the_sdist_holds_the_packages_and_cpp_sources_and_no_tests_or_research_data(sdist):
    stem = f"dnb_env-{dnb_env.__version__}"
    with tarfile.open(sdist) as tar:
        names = tar.getnames()
        pkg_info = tar.extractfile(f"{stem}/PKG-INFO").read().decode()
    assert all(n == stem or n.startswith(f"{stem}/") for n in names)
    files = {n[len(stem) + 1:] for n in names if n != stem}
    top = {n.split("/")[0] for n in files}
    # the packages, what builds them and the release notes: no tests, runs, data, research, docs, examples
    assert top <= {*TOP, *FILES, "PKG-INFO", "setup.cfg", "dnb_env.egg-info"}, sorted(top)
    csrc = {p.relative_to(ROOT).as_posix() for p in (ROOT / "dnb_env" / "csrc").glob("*.[ch]pp")}
    assert "dnb_env/csrc/module.cpp" in csrc and csrc <= files, sorted(csrc - files)
    missing = _source_files() - files
    assert not missing, sorted(missing)
    assert not [n for n in files if n.endswith((".so", ".pyd", ".pyc"))]  # nothing built in place
    assert re.search(r"^Name: dnb-env$", pkg_info, re.M) and f"\nVersion: {dnb_env.__version__}\n" in pkg_info


def test_the_checkout_install_exposes_only_the_five_packages(tmp_path):
    """This environment's install of the checkout (editable under `make setup`) maps the five packages, not the
    checkout: from another folder its other folders are not importable."""
    env = _clean_env()
    folders = ("data", "tests", "runs", "docs", "examples", "benchmarks", "research")
    # a name may belong to some other installed package: what matters is that none resolves into the checkout
    code = ("import importlib.util, json; "
            f"print(json.dumps([getattr(importlib.util.find_spec(m), 'submodule_search_locations', None) "
            f"and list(importlib.util.find_spec(m).submodule_search_locations) for m in {folders!r}]))")
    for name, where in zip(folders, json.loads(_run([sys.executable, "-c", code], tmp_path, env).stdout)):
        assert not any(str(ROOT) in p for p in (where or [])), (name, where)
    code = f"import importlib, json; print(json.dumps([importlib.import_module(m).__file__ for m in {TOP!r}]))"
    found = json.loads(_run([sys.executable, "-c", code], tmp_path, env).stdout)
    assert found == [importlib.util.find_spec(m).origin for m in TOP]
