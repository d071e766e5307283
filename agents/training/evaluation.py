"""Measuring a network during training: move accuracy against the exact solver, and games against
opponents the caller passes in.

A position's moves are labelled by the exact solver: *optimal* moves reach its best final margin, *winning*
moves keep the best result (BoxesZero's criterion), and a position is *greedy-hard* when the greedy rule
allows a move that is not optimal. Boards of at most 24 edges are labelled from the middle game on; larger
ones (5x5 and up, with the native solver) in their last :data:`LATE_UNDRAWN` undrawn edges, where labelling
every move costs a few hundredths of a second.
"""

from __future__ import annotations

import random
from typing import NamedTuple

import numpy as np

from agents.models.evaluator import NetworkEvaluator
from agents.search import SearchSettings, make_search, run_many
from agents.search.settings import default
from dnb_env.agent import Seedable
from dnb_env.core import MIDDLE_GAME, MIDGAME_STEPS, GameState, geometry
from dnb_env.solver import Solver, SolverBudgetExceeded, beyond_native, native_available

__all__ = ["Labelled", "LATE_UNDRAWN", "EVAL_SEED_OFFSET", "MIDDLE_GAME", "MIDGAME_STEPS", "midgame_steps",
           "labelled_positions", "replay_positions", "accuracy", "policy_moves", "search_moves", "score_against",
           "default_opponents", "evaluation_games",
           "play_evaluation_games", "evaluation_scores"]


#: on boards of more than 24 edges, labelled positions have at most this many undrawn edges (5x5: from
#: move 26 of 60 on); full move values there cost 0.02 s a position, median, with the native solver
LATE_UNDRAWN = 34

#: a training run of seed s scores its network on ``labelled_positions(board, eval_positions, s + EVAL_SEED_OFFSET)``
EVAL_SEED_OFFSET = 12345


class Labelled(NamedTuple):
    """A position with the exact solver's verdict on its moves."""

    state: GameState
    optimal: frozenset  # moves reaching the solver's best final margin
    winning: frozenset  # moves keeping the best result (win, draw or loss): BoxesZero's criterion
    hard: bool  # the greedy rule allows a move that is not optimal


def midgame_steps(board: str) -> list[int]:
    """:data:`MIDGAME_STEPS` scaled from the 60 edges of 5x5 to ``board`` (:attr:`Geometry.midgame_steps`)."""
    return geometry(board).midgame_steps


def labelled_positions(board: str, count: int, seed: int = 0, first: int | None = None) -> list[Labelled]:
    """Middle and late-game positions from realistic play (:func:`dnb_env.analysis.realistic_move`),
    stopped after ``first`` .. ``num_actions - 3`` moves, labelled by the exact solver. ``first`` defaults to
    the start of the middle game, ``round(MIDDLE_GAME * num_actions)`` (9 on 3x3). Boards of more than 24
    edges need the native solver and are labelled in their last :data:`LATE_UNDRAWN` undrawn edges only
    (``first`` is raised to that); without the native solver, or on boards larger than it takes, they give
    an empty list."""
    from baselines.greedy import GreedyAgent
    from dnb_env.analysis import realistic_move

    g = geometry(board)
    if first is None:
        first = g.midgame_start
    if not 0 <= first <= g.num_actions - 3:
        raise ValueError(f"first must be in [0, {g.num_actions - 3}], not {first}")
    if g.num_actions > 24:
        if not native_available() or beyond_native(g):
            return []
        first = max(first, g.num_actions - LATE_UNDRAWN)
    solver = Solver()
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        s = GameState.new(g)
        stop = rng.randrange(first, s.num_actions - 2)
        while len(s.history) < stop and not s.is_terminal():
            s = s.apply(realistic_move(s, rng))
        if s.is_terminal():
            continue
        try:
            mv = solver.move_values(s)
        except SolverBudgetExceeded:  # rare at LATE_UNDRAWN; the position is drawn again
            continue
        best = max(mv.values())
        optimal = frozenset(a for a, v in mv.items() if v == best)
        sign = (best > 0) - (best < 0)
        winning = frozenset(a for a, v in mv.items() if (v > 0) - (v < 0) == sign)
        hard = any(a not in optimal for a in GreedyAgent.candidates(s))
        out.append(Labelled(s, optimal, winning, hard))
    return out


def replay_positions(samples, steps: list[int], count: int, iteration: int | None = None,
                     max_undrawn: int | None = None) -> tuple[dict[int, list], dict[int, list]]:
    """Per step up to ``count`` (state, winning moves) pairs of the played positions of ``samples`` (a
    replay's :class:`~agents.training.samples.Samples`; of ``iteration`` only, if given), and the replay's
    label move of each (the argmax of its ``pi``). Positions are labelled by the exact solver; steps beyond
    its reach (``max_undrawn``) get none."""
    solver = Solver(max_undrawn)
    a = GameState.new(samples.board).num_actions
    if iteration is not None and not (samples.iteration == iteration).any():
        raise ValueError(f"the replay holds no samples of iteration {iteration} "
                         f"(it holds {sorted(set(samples.iteration.tolist()))})")
    out: dict[int, list] = {k: [] for k in steps}
    labels: dict[int, list] = {k: [] for k in steps}
    for k in steps:
        if a - k > solver.max_undrawn:
            continue
        rows = (~samples.node) & (samples.step == k)
        if iteration is not None:
            rows &= samples.iteration == iteration
        idx = np.flatnonzero(rows)
        for i, s in zip(idx, samples.states(idx)):
            if len(out[k]) >= count:
                break
            winning = solver.winning_moves(s)
            if winning:
                out[k].append((s, winning))
                labels[k].append(int(np.argmax(samples.pi[i])))
    return out, labels


def policy_moves(net, states: list[GameState], device: str = "cpu") -> list[int]:
    """The raw policy's most probable legal move in each state."""
    priors, _ = NetworkEvaluator(net, device).evaluate(states)
    return [int(np.argmax(p)) for p in priors]


def search_moves(net, states: list[GameState], simulations: int, c_puct: float = default("c_puct"),
                 batch_size: int = default("batch_size"), device: str = "cpu") -> list[int]:
    """The most visited move of a ``simulations`` search (pruning on, as when playing; values in the
    network's units; no exact solver, which labels these positions) in each state; the searches run in
    lockstep so network calls are shared, on the C++ search when it is built (both give the same counts)."""
    if not states:
        return []
    evaluator = NetworkEvaluator(net, device)
    mcfg = SearchSettings(simulations=simulations, c_puct=c_puct, batch_size=batch_size, prune=True,
                          reuse_tree=False, value=net.config.value)
    rng = np.random.default_rng(0)
    board = (states[0].rows, states[0].cols)
    counts = run_many([make_search(evaluator, mcfg, rng, board=board) for _ in states], states, evaluator)
    return [int(np.argmax(c)) for c in counts]


def accuracy(net, positions: list[Labelled], device: str = "cpu", simulations: int | None = None) -> dict:
    """Share of positions where the raw policy's top move (and the search's, if ``simulations``) is optimal,
    overall and where greedy errs."""
    if not positions:
        return {}
    states = [p.state for p in positions]
    moves = {"raw": policy_moves(net, states, device)}
    if simulations:
        moves["search"] = search_moves(net, states, simulations, device=device)
    out = {}
    for kind, chosen in moves.items():
        right = [m in p.optimal for m, p in zip(chosen, positions)]
        out[f"{kind}_accuracy"] = float(np.mean(right))
        hard = [r for r, p in zip(right, positions) if p.hard]
        if hard:
            out[f"{kind}_accuracy_greedy_hard"] = float(np.mean(hard))
    return out


def default_opponents(seed: int = 0) -> dict:
    """``random`` and ``greedy``, the opponents a training run measures its raw policy against."""
    from baselines.greedy import GreedyAgent
    from baselines.random_agent import RandomAgent

    return {"random": RandomAgent(seed=seed), "greedy": GreedyAgent(seed=seed)}


def evaluation_games(opponents: dict, games: int) -> list[tuple[str, int]]:
    """The evaluation games against ``opponents``: ``(name, game number)``, ``games`` per opponent."""
    return [(name, g) for name in opponents for g in range(max(0, games))]


def play_evaluation_games(player, opponents: dict, board: str, tasks, seed: int = 0) -> list[float]:
    """``player``'s result (1 win, 0.5 draw, 0 loss) in each game of ``tasks`` (:func:`evaluation_games`).
    Game ``g`` against the ``j``-th opponent: the player's seat is ``g % 2``, the guided random opening
    (num_actions // 6 moves) is the same for both colour assignments, and both agents are reseeded from
    ``(seed, j, g)`` first (agents without ``seed`` are played as they are). Every game therefore depends on
    nothing but its task, so a share of the games played anywhere (a Ray actor) gives the local results."""
    from agents.arena import make_opening, play_game

    k = GameState.new(board).num_actions // 6
    names = list(opponents)
    results = []
    for name, g in tasks:
        opponent = opponents[name]
        player_seed, opponent_seed = np.random.SeedSequence([seed, names.index(name), g]).generate_state(2)
        for agent, agent_seed in ((player, player_seed), (opponent, opponent_seed)):
            if isinstance(agent, Seedable):
                agent.seed(int(agent_seed))
        opening = make_opening(board, k, "guided", seed + g // 2)
        seat = g % 2  # the player's seat
        rec = play_game(board, *((player, opponent) if seat == 0 else (opponent, player)), opening)
        diff = rec["scores"][seat] - rec["scores"][1 - seat]
        results.append(1.0 if diff > 0 else 0.5 if diff == 0 else 0.0)
    return results


def evaluation_scores(tasks, results, games: int) -> dict:
    """``{"win_rate_vs_<name>": score}`` from the results of ``tasks``, ``games`` per opponent."""
    totals: dict[str, float] = {}
    for (name, _), result in zip(tasks, results, strict=True):
        totals[name] = totals.get(name, 0.0) + result
    return {f"win_rate_vs_{name}": total / games for name, total in totals.items()}


def score_against(player, opponents: dict, board: str, games: int, seed: int = 0) -> dict:
    """``player``'s score (wins + draws/2) over ``games`` games against each of ``opponents`` (name ->
    Agent), played here (:func:`play_evaluation_games`). Returns ``{"win_rate_vs_<name>": score}``."""
    tasks = evaluation_games(opponents, games)
    return evaluation_scores(tasks, play_evaluation_games(player, opponents, board, tasks, seed), games)
