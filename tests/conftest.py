"""Shared helpers: a brute-force negamax over GameState (the tests' own exact oracle); the research's held-out
datasets, unpacked once a session from their archives in research/datasets."""

from __future__ import annotations

import importlib.util
import pathlib
import random

import pytest

from dnb_env.analysis import realistic_move  # noqa: F401  (re-exported for the tests)
from dnb_env.core import GameState


class BruteForce:
    """Exact margin of the remaining boxes for the player to move, memoised on the drawn-edge set.

    Uses nothing but ``GameState.apply``: the value of a position depends only on which edges are drawn
    (the boxes already claimed are sunk), and a move that completes a box keeps the turn (no sign change).
    """

    def __init__(self):
        self.memo: dict[tuple[int, int, int], int] = {}

    def value(self, state: GameState) -> int:
        key = (state.rows, state.cols, state.edges)
        v = self.memo.get(key)
        if v is not None:
            return v
        if state.is_terminal():
            return 0
        best = None
        mover = state.current_player
        before = state.scores[mover]
        for a in state.legal_actions():
            child = state.apply(a)
            gained = child.scores[mover] - before
            v = gained + self.value(child) if child.current_player == mover else -self.value(child)
            if best is None or v > best:
                best = v
        self.memo[key] = best
        return best

    def move_values(self, state: GameState) -> dict[int, int]:
        out = {}
        mover = state.current_player
        for a in state.legal_actions():
            child = state.apply(a)
            gained = child.scores[mover] - state.scores[mover]
            out[a] = gained + self.value(child) if child.current_player == mover else -self.value(child)
        return out


#: A 5x5 position of 39 undrawn edges from the shipped dotsformer's own play, where the Nimstring search of a
#: position one move on (38 undrawn) runs 200,000 positions, a second and more, before it gives up.
HARD_5X5 = (56, 47, 44, 29, 25, 27, 59, 30, 35, 24, 58, 22, 57, 0, 8, 45, 40, 52, 36, 48, 1)


@pytest.fixture(scope="session")
def brute() -> BruteForce:
    return BruteForce()


def random_state(rng: random.Random, rows: int, cols: int, moves: int) -> GameState:
    s = GameState.new(rows, cols)
    for _ in range(min(moves, s.num_actions)):
        s = s.apply(rng.choice(s.legal_actions()))
    return s



def _backends() -> list:
    """Every backend the tests run the engine-backed modules against: the Python reference always, the
    native engine when built (CI sets DNB_REQUIRE_NATIVE=1, and tests/test_native.py fails without it)."""
    from dnb_env import native

    return ["python"] + (["native"] if native.available() else [])


@pytest.fixture(params=_backends())
def each_backend(request):
    """Run the test once per backend (``pytestmark = pytest.mark.usefixtures("each_backend")``)."""
    from dnb_env import native

    with native.use_backend(request.param):
        yield request.param


class Killed(Exception):
    """Raised by :func:`kill_at`'s hook: the run was "killed" there."""


def kill_at(stage: str, commit: int = 2):
    """A training run's ``fault`` hook that raises :class:`Killed` at ``stage`` of the ``commit``-th commit
    (``RunStore``'s stages: checkpoint, replay, metrics, rename, manifest, views, prune)."""
    seen = {"n": 0}

    def fault(at):
        if at == stage:
            seen["n"] += 1
            if seen["n"] == commit:
                raise Killed(at)

    return fault


def load_script(relative: str):
    """A script of the checkout that is not in a package (``"research/data.py"``,
    ``"benchmarks/paired_match.py"``), loaded by its path as a module."""
    path = pathlib.Path(__file__).resolve().parents[1] / relative
    spec = importlib.util.spec_from_file_location(path.stem.replace("-", "_"), path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def research_data_module():
    """research/data.py, which packs, unpacks and restores the research's data."""
    return load_script("research/data.py")


@pytest.fixture(scope="session")
def held_set(tmp_path_factory):
    """``held_set("teach5-held")``: the folder of that research dataset, unpacked from
    research/datasets/teach5-held.tar.xz into a session folder (once per name)."""
    data = research_data_module()
    root = tmp_path_factory.mktemp("research")
    made: dict[str, pathlib.Path] = {}

    def get(name: str) -> pathlib.Path:
        if name not in made:
            made[name] = data.unpack(f"data/{name}", into=root)
        return made[name]

    return get
