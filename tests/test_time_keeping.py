"""Time is a contract: every agent that takes a move time keeps it on a big board with the other core busy.

Each agent of the registry that thinks to a clock plays 20 moves on 9x9 at 0.2 s a move, spread from its
first move (network loading and first calls included) to the exact solver's zone, beside one CPU-bound
process; no move may take longer than the move time plus the arena's margin (what loses a tournament game
on time). ``alphazero`` and ``dotsformer`` ship no 9x9 weights and are refused on 9x9 (checked here); the
size-agnostic ``alphavit`` plays, and ``greedy`` and ``random``, which take no move time, are held to it too. ``benchmarks/time_keeping.py`` measures the same on every board."""

from __future__ import annotations

import importlib.util
import pathlib

import pytest

from conftest import HARD_5X5
from dnb_env.clock import TIME_MARGIN
from registry.agents import list_agents

ROOT = pathlib.Path(__file__).resolve().parents[1]
BOARD, MOVES, PER_MOVE = "9x9", 20, 0.2
#: The network families that ship no 9x9 weights, and the agents that take no move time (their moves still
#: must not overrun).
NO_WEIGHTS, UNTIMED = ("alphazero", "dotsformer"), ("greedy", "random")


def _bench():
    spec = importlib.util.spec_from_file_location("bench_time_keeping", ROOT / "benchmarks" / "time_keeping.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


BENCH = _bench()
#: Timed beside one busy process and nothing else: ``make test`` runs this module alone, after the rest.
pytestmark = pytest.mark.timing


@pytest.fixture(scope="module")
def busy_core():
    """One CPU-bound process for the module's tests (the other core of a two-core machine)."""
    with BENCH.busy(1) as procs:
        yield procs


@pytest.mark.parametrize("name", list_agents())
def test_each_timed_agent_keeps_its_move_time_on_9x9_beside_a_busy_process(name, busy_core):
    spec = BENCH.engine_spec("prsboxes") if name == "engine" else name
    result = BENCH.keep_time(spec, BOARD, MOVES, PER_MOVE)
    if name in NO_WEIGHTS:  # refused when built, with a message naming the weights there are
        assert "no shipped" in result.get("refused", ""), result
        return
    assert "refused" not in result, result["refused"]
    assert result["timed"] == (name not in UNTIMED), result
    assert "error" not in result, result.get("traceback")
    moves = result["moves"]
    assert len(moves) == MOVES
    late = [round(s, 3) for s in moves if s > PER_MOVE + TIME_MARGIN]
    assert not late, f"{name}: moves over {PER_MOVE} s + {TIME_MARGIN} s: {late} (all: {[round(s, 3) for s in moves]})"


def test_the_moves_reach_the_first_move_and_the_solver_zone():
    numbers = BENCH.move_numbers(180, 20)
    assert len(numbers) == 20 and numbers[0] == 0 and numbers[-1] == 178
    assert sum(180 - k <= 48 for k in numbers) >= 10  # half of them within the last 48 undrawn edges
    assert BENCH.move_numbers(12, 20) == list(range(11))  # a small board: every move but the last


@pytest.mark.parametrize("name", NO_WEIGHTS + ("alphavit",))
def test_a_network_agent_keeps_its_move_time_where_a_leafs_nimstring_planes_take_seconds(name, busy_core):
    import time

    from dnb_env.core import GameState
    from registry import make_agent

    agent = make_agent(name, board="5x5", seed=0)
    state = GameState.from_actions("5x5", actions=HARD_5X5)
    agent.prepare(state)
    agent.set_move_time(PER_MOVE)
    start = time.perf_counter()
    agent.select_action(state)
    spent = time.perf_counter() - start
    assert spent <= PER_MOVE + TIME_MARGIN, f"{name}: {spent:.3f} s at {PER_MOVE} s a move"
