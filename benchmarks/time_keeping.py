"""Time keeping: the longest move of every agent that takes a move time, by board, beside busy processes.

Each agent of the registry that thinks to a clock (``set_move_time``: :class:`dnb_env.agent.Timed`) is
built for each board and told the move time, and plays ``--moves`` moves of one game: half of its moves
are spread from the first move of the game to the last, the other half over the last 48 undrawn edges (the
exact solver's and the Nimstring search's zones), and a greedy opponent plays every move between them, for
both sides. Each move is timed as the arena times
it (``time.perf_counter`` around ``select_action``); the agent's build (network loading) and ``prepare``
(an engine's start-up) are timed apart, as the arena does. ``--load N`` runs N CPU-bound processes beside
it (spinning loops, ended at the end) to stand for a busy machine.

    python benchmarks/time_keeping.py --boards 5x5,7x7,9x9,10x10 --moves 20 --time-per-move 0.2 --load 1

The table gives, for each agent and board: the longest move, the mean move, the moves over the move time
and the moves over the move time plus the arena's margin (:data:`dnb_env.clock.TIME_MARGIN`: lost on time
in a tournament), and the build and ``prepare`` seconds. An agent that cannot play a board (a network
without weights for it) is listed with the reason. ``engine`` is an agent served over the engine protocol
by this package (``dnb engine SPEC``, ``--engine``).
"""

from __future__ import annotations

import argparse
import contextlib
import subprocess
import sys
import time
import traceback
import warnings

from dnb_env.agent import Closeable, Preparable, Timed, Tolerant
from dnb_env.clock import TIME_MARGIN
from dnb_env.core import GameState, geometry

#: The undrawn edges over which half of an agent's moves are spread (the solver and Nimstring zones: 38-44).
LATE = 48

__all__ = ["busy", "move_numbers", "timed_agents", "keep_time", "main"]


@contextlib.contextmanager
def busy(processes: int):
    """``processes`` CPU-bound processes (each a Python spinning loop) for the length of the block, killed
    after."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(processes)]
    try:
        yield procs
    finally:
        for p in procs:
            p.kill()
        for p in procs:
            p.wait()


def move_numbers(num_actions: int, moves: int, late: int = LATE) -> list[int]:
    """The edges drawn before each of the agent's ``moves`` moves (fewer on a board with fewer edges): half
    of them evenly spread from 0 (the game's first move) to ``num_actions - 2`` (two edges left), the other
    half over the last ``late`` undrawn edges (the exact solver's and the Nimstring search's zones)."""
    last = max(0, num_actions - 2)
    moves = min(moves, last + 1)

    def spread(lo: int, n: int) -> set[int]:
        return {lo} if n <= 1 else {round(lo + k * (last - lo) / (n - 1)) for k in range(n)}

    picks = spread(0, moves - moves // 2) | spread(max(0, num_actions - late), moves // 2)
    rest = sorted(set(range(last + 1)) - picks)
    while len(picks) < moves:  # a small board: the two halves met; the others evenly from the rest
        picks.add(rest.pop(len(rest) // 2))
    return sorted(picks)


def engine_spec(served: str) -> str:
    """The ``engine`` agent serving ``served`` (a spec of this registry) with this Python."""
    return f'engine:cmd="{sys.executable} -m registry.cli engine {served}",name=engine'


def timed_agents(served: str = "prsboxes") -> list[str]:
    """The specs of the registry's agents that take a move time, each with its defaults (``engine`` serving
    ``served``): every registered agent whose 3x3 agent is :class:`~dnb_env.agent.Timed`; a network agent
    without weights for 3x3 counts too (they all take a move time)."""
    from registry.agents import list_agents, make_agent

    specs = []
    for name in list_agents():
        if name == "engine":
            specs.append(engine_spec(served))
            continue
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                agent = make_agent(name, board="3x3", seed=0)
        except Exception:  # noqa: BLE001 - an agent that needs what is not here is kept: its board says why
            specs.append(name)
            continue
        if isinstance(agent, Timed):
            specs.append(name)
        if isinstance(agent, Closeable):
            agent.close()
    return specs


def keep_time(spec: str, board: str, moves: int = 20, per_move: float = 0.2, margin: float = TIME_MARGIN,
              seed: int = 0) -> dict:
    """``spec`` plays ``moves`` moves on ``board`` at ``per_move`` seconds a move (see the module docstring):
    ``{"moves": [seconds, ...], "build_s", "ready_s", "timed"}`` (``timed``: whether the agent was told the
    move time), or ``{"refused": reason}`` when it cannot be built for the board, with ``"error"`` and
    ``"traceback"`` too when a move raised."""
    from baselines.greedy import GreedyAgent
    from registry.specs import agent_from_spec

    start = time.perf_counter()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # a network playing outside its training boards
            agent = agent_from_spec(spec, board, seed)
    except Exception as exc:  # noqa: BLE001 - reported in the table
        return {"refused": f"{type(exc).__name__}: {exc}"}
    out: dict = {"build_s": time.perf_counter() - start, "ready_s": 0.0, "moves": [], "timed": isinstance(agent, Timed)}
    opponent = GreedyAgent(seed=seed + 1)
    state = GameState.new(board)
    try:
        if isinstance(agent, Timed):
            agent.set_move_time(per_move)
        if isinstance(agent, Tolerant):
            agent.set_overrun(margin, "lose")
        agent.reset()
        if isinstance(agent, Preparable):
            t = time.perf_counter()
            agent.prepare(state)
            out["ready_s"] = time.perf_counter() - t
        for k in move_numbers(state.num_actions, moves):
            while len(state.history) < k and not state.is_terminal():
                state = state.apply(opponent.select_action(state))
            if state.is_terminal():
                break
            t = time.perf_counter()
            action = agent.select_action(state)
            out["moves"].append(time.perf_counter() - t)
            state = state.apply(action)
    except Exception as exc:  # noqa: BLE001 - reported in the table
        out["error"] = f"{type(exc).__name__}: {exc}"
        out["traceback"] = traceback.format_exc()
    finally:
        if isinstance(agent, Closeable):
            agent.close()
    return out


def summary(result: dict, per_move: float, margin: float) -> dict:
    """The row of one agent and board: longest and mean move, moves over the move time and over it plus the
    margin, the build and ``prepare`` seconds."""
    xs = result["moves"]
    return {"n": len(xs), "max_s": max(xs, default=0.0), "mean_s": sum(xs) / len(xs) if xs else 0.0,
            "over": sum(x > per_move for x in xs), "late": sum(x > per_move + margin for x in xs),
            "build_s": result["build_s"], "ready_s": result["ready_s"], "error": result.get("error")}


def table(rows: dict, boards: list[str], per_move: float, margin: float) -> str:
    """The Markdown table of ``rows`` (``{(spec, board): summary or {"refused": ...}}``)."""
    head = (f"| agent | board | longest move (s) | mean move (s) | over {per_move:g} s | over {per_move + margin:g} s "
            "| build (s) | prepare (s) |")
    lines = [head, "|" + "---|" * 8]
    for (spec, board), row in rows.items():
        name = spec.partition(":")[0]
        if "refused" in row:  # the error's message up to its first aside
            why = row["refused"].partition(": ")[2].split(" (")[0].split(";")[0]
            lines.append(f"| {name} | {board} | refused: {why} | | | | | |")
            continue
        late = f"{row['late']}" + (f" ({row['error'][:60]})" if row["error"] else "")
        lines.append(f"| {name} | {board} | {row['max_s']:.3f} | {row['mean_s']:.3f} | {row['over']}/{row['n']} "
                     f"| {late} | {row['build_s']:.2f} | {row['ready_s']:.2f} |")
    return "\n".join(lines)


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--boards", default="5x5,7x7,9x9,10x10", help="boards, comma separated (default: %(default)s)")
    p.add_argument("--agents", default=None, help="agent specs, comma separated (default: every agent of the "
                                                  "registry that takes a move time)")
    p.add_argument("--moves", type=int, default=20, help="moves of each agent on each board (default: %(default)s)")
    p.add_argument("--time-per-move", type=float, default=0.2, help="seconds a move (default: %(default)s)")
    p.add_argument("--margin", type=float, default=TIME_MARGIN,
                   help="seconds past the move time before a move is lost on time (default: the arena's, %(default)s)")
    p.add_argument("--load", type=int, default=0, help="CPU-bound processes beside it (default: %(default)s)")
    p.add_argument("--engine", default="prsboxes", help="the agent the engine agent serves (default: %(default)s)")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    if args.moves < 1 or not args.time_per_move > 0 or args.load < 0 or args.margin < 0:
        p.error("--moves must be >= 1, --time-per-move > 0, --load and --margin >= 0")
    boards = [geometry(b.strip()).name for b in args.boards.split(",") if b.strip()]
    specs = args.agents.split(",") if args.agents else timed_agents(args.engine)
    rows: dict = {}
    from tqdm import tqdm

    with busy(args.load):
        bar = tqdm(total=len(specs) * len(boards), desc="time keeping", unit="run", disable=None)
        for spec in specs:
            for board in boards:
                bar.set_postfix_str(f"{spec.partition(':')[0]} {board}")
                result = keep_time(spec, board, args.moves, args.time_per_move, args.margin, args.seed)
                rows[(spec, board)] = result if "refused" in result else summary(result, args.time_per_move,
                                                                                   args.margin)
                bar.update()
        bar.close()
    print(f"{args.moves} moves a board at {args.time_per_move:g} s a move, {args.load} CPU-bound process(es) beside")
    print(table(rows, boards, args.time_per_move, args.margin))
    return rows


if __name__ == "__main__":
    main()
