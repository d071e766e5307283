#!/usr/bin/env bash
# Fills .whl/ (ignored by git: .git/info/exclude) with the cp312 wheels that run.sh installs on the GPU
# machine, which has Python 3.12 with torch and numpy but no network. Run it here, from the checkout, with
# network to PyPI:
#
#     bash research/gpu-selfplay/prepare.sh
#
# The set is what `import dnb_env, agents, registry`, `dnb train`, `dnb tournament`, `dnb export` and
# benchmarks/selfplay_gpu.py need beside torch and numpy (pyproject.toml's dependencies threadpoolctl and
# filelock), and what `python3 setup.py build_ext --inplace` needs to build dnb_env._native (setuptools>=77
# reads pyproject.toml's license expression; pybind11: without it the extension is silently skipped). All
# four are pure Python (py3-none-any). Everything else the package imports is optional (gymnasium,
# pettingzoo, tqdm, matplotlib, tensorboardX: the runs work without them, without the plots and event files).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
WHEELS=(threadpoolctl==3.6.0 filelock==3.20.0 setuptools==80.9.0 pybind11==3.0.1)

exclude="$(git rev-parse --git-path info/exclude)"
mkdir -p "$(dirname "$exclude")"
grep -qxF '/.whl/' "$exclude" 2>/dev/null || echo '/.whl/' >>"$exclude"

PY=${PYTHON:-python3}
rm -rf .whl && mkdir .whl
"$PY" -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    --platform any -d .whl "${WHEELS[@]}"
ls -l .whl
du -sh .whl
git check-ignore -q .whl/x || { echo "prepare.sh: .whl/ is not ignored by git" >&2; exit 1; }
