"""Midgame winning-move accuracy in BoxesZero's protocol (Appendix E.3, Table 4), for any agents.

Positions come from games between real agents (default ``alphabeta:depth=2`` against ``greedy``, each
game opened by ``num_actions // 6`` guided random moves, colours alternating), taken at fixed steps
(moves already played; by default BoxesZero's 22, 24, 26, 28 and 30 of the 60 moves of 5x5, scaled to
the board). As in BoxesZero's data sets only *winning* positions are kept (the mover can win) and a move
is right when it keeps the win, by the exact solver. Each agent under test (specs of the registry, e.g.
``dotsformer:checkpoint=PATH,simulations=0`` for a raw policy) picks a move in every position; the
accuracy per step comes with a Wilson 95% interval, and the agent's mean time per move ends its row.
BoxesZero's own searched 90-hour row on 5x5 is printed beside it for reference.

``--replay FILE`` takes the positions from a training run's replay instead (``runs/NAME/iterations/N/
replay.npz``: the positions its self-play played, not the internal tree nodes; ``--iteration`` keeps one
iteration's). Then it measures how well a network fits the positions it trained on, or, with the run's
newest iteration, on positions its self-play reached that it has not trained on yet; the replay's own label
(the most probable move of its ``pi``) is scored as the agent ``replay label``.

``--classes`` adds where the moves went: per agent and step, the agent's moves by Definition 3 class
(safe / conceding / scoring) as "right/chosen" (a safe move that loses the win is a wrong safe move: the
parity fight of the chains, which the greedy rule cannot see), and the same for the solver's winning moves.

``--label chosen`` labels only the moves the agents pick (one null-window search each, after one to keep
won positions only) instead of every legal move, which makes steps far from the end affordable (5x5 steps
16-20 with ``--max-undrawn 44``).

Labels come from :class:`dnb_env.solver.Solver` (the native alpha-beta solver when the extension is
built: every 5x5 step from 22 on, 38 undrawn edges; the retrograde solver otherwise, up to 24 undrawn,
step 36 on 5x5). Steps beyond ``--max-undrawn`` are reported as out of reach. A move is labelled by
whether the game is still won after it (boxes already taken included).

    python benchmarks/midgame.py --board 3x3 --agents "dotsformer:checkpoint=runs/df3-cpu/checkpoint.pt,simulations=0" \
        --positions 100
"""

from __future__ import annotations

import argparse
import time

from agents.arena import make_opening, wilson_interval
from agents.training.evaluation import MIDGAME_STEPS, midgame_steps, replay_positions
from dnb_env.analysis import MoveClass, move_classes
from dnb_env.core import GameState
from dnb_env.solver import Solver, SolverBudgetExceeded
from registry import make_agent
from registry.specs import parse_agent_spec, split_agents

BOXESZERO_90H = dict(zip(MIDGAME_STEPS, (0.671, 0.745, 0.880, 0.975, 1.0)))  # BoxesZero Table 4, 5x5, searched


class ChosenMoveLabels:
    """The winning moves of a won position, found one move at a time: ``move in labels`` asks the solver
    whether that move keeps the win (one null-window search, remembered). With ``--label chosen`` only the
    moves the agents pick are labelled, so positions far from the end (where labelling every move costs
    minutes) can be scored."""

    def __init__(self, solver: Solver, state: GameState):
        self.solver, self.state, self.known = solver, state, {}

    def __contains__(self, move) -> bool:
        if move not in self.known:
            self.known[move] = self.solver.keeps_win(self.state, move)
        return self.known[move]


def winning_positions(board: str, steps: list[int], count: int, players: tuple[str, str], seed: int,
                      max_undrawn: int | None = None, max_games: int = 5000, chosen_only: bool = False,
                      node_limit: int | None = None) -> dict[int, list]:
    """Per step, up to ``count`` (state, winning moves) pairs from games of ``players``; steps beyond the
    solver's reach get an empty list. With ``chosen_only`` the winning moves are a
    :class:`ChosenMoveLabels` (only the won positions are found here) and positions whose labels need more
    than ``node_limit`` nodes are skipped."""
    solver = Solver(max_undrawn) if node_limit is None else Solver(max_undrawn, node_limit=node_limit)
    max_undrawn = solver.max_undrawn
    a = GameState.new(board).num_actions
    reach = [k for k in steps if a - k <= max_undrawn]
    out: dict[int, list] = {k: [] for k in steps}
    agents = [make_agent(n, board=board, seed=seed + i, **kw) for i, (n, kw) in enumerate(map(parse_agent_spec, players))]
    for game in range(max_games):
        if all(len(out[k]) >= count for k in reach):
            break
        first, second = (agents[0], agents[1]) if game % 2 == 0 else (agents[1], agents[0])
        for ag in agents:
            ag.reset()
        s = GameState.from_actions(board, actions=make_opening(board, a // 6, "guided", seed * 100_003 + game))
        while not s.is_terminal() and len(s.history) <= max(reach, default=-1):
            k = len(s.history)
            if k in out and k in reach and len(out[k]) < count:
                if chosen_only:
                    try:
                        if solver.can_win(s):
                            out[k].append((s, ChosenMoveLabels(solver, s)))
                    except SolverBudgetExceeded:
                        pass
                else:
                    winning = solver.winning_moves(s)
                    if winning:
                        out[k].append((s, winning))
            s = s.apply((first, second)[s.current_player].select_action(s))
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--board", default="5x5")
    p.add_argument("--agents", required=True, help="comma-separated registry specs to test")
    p.add_argument("--steps", default=None, help="comma-separated steps (default: 22..30 of 60, scaled)")
    p.add_argument("--positions", type=int, default=100, help="winning positions per step")
    p.add_argument("--players", default="alphabeta:depth=2,greedy", help="the two agents whose games give positions")
    p.add_argument("--seed", type=int, default=7)
    p.add_argument("--max-undrawn", type=int, default=None, help="solver reach (default: 40 native, 24 retrograde)")
    p.add_argument("--classes", action="store_true", help="also break each agent's moves down by move class")
    p.add_argument("--label", choices=("all", "chosen"), default="all",
                   help="label every move of a position, or only the moves the agents choose (far from the end)")
    p.add_argument("--node-limit", type=int, default=None, help="solver nodes per label query (default 20M)")
    p.add_argument("--replay", default=None, help="take the positions from this replay file (a run's replay.npz)")
    p.add_argument("--iteration", type=int, default=None, help="with --replay: only this iteration's positions")
    args = p.parse_args(argv)
    if args.iteration is not None and args.replay is None:
        raise SystemExit("--iteration selects positions of a --replay file")
    if args.label == "chosen" and (args.classes or args.replay):
        raise SystemExit("--label chosen labels games' positions move by move: not with --classes or --replay")
    t0 = time.perf_counter()
    steps = [int(k) for k in args.steps.split(",")] if args.steps else midgame_steps(args.board)
    labels = {}
    if args.replay:
        from agents.training.replay import Replay

        samples = Replay.load(args.replay).samples
        if samples.board != args.board:
            raise SystemExit(f"{args.replay} is a replay of {samples.board}, not of --board {args.board}")
        try:
            sets, labels = replay_positions(samples, steps, args.positions, args.iteration, args.max_undrawn)
        except ValueError as exc:
            raise SystemExit(f"{args.replay}: {exc}") from None
        source = f"the replay {args.replay}" + ("" if args.iteration is None else f", iteration {args.iteration}")
    else:
        players = split_agents(args.players)
        if len(players) != 2:
            raise SystemExit("--players needs two agent specs")
        sets = winning_positions(args.board, steps, args.positions, players, args.seed, args.max_undrawn,
                                 chosen_only=args.label == "chosen", node_limit=args.node_limit)
        source = f"{players[0]} vs {players[1]} games"
    reach = Solver(args.max_undrawn).max_undrawn
    a = GameState.new(args.board).num_actions
    print(f"{args.board}: winning positions from {source} ({time.perf_counter() - t0:.0f} s)")
    ref = args.board == "5x5"
    print(f"{'agent':<48}" + "".join(f"step {k:<24}" for k in steps))
    if ref:
        cells = (f"{BOXESZERO_90H[k]:<29.3f}" if k in BOXESZERO_90H else f"{'-':<29}" for k in steps)
        print(f"{'BoxesZero 6b, 90 h, searched (Table 4)':<48}" + "".join(cells))
    res = {}
    classes = {k: [move_classes(s) for s, _ in sets[k]] for k in steps} if args.classes else {}
    players = [(REPLAY_LABEL, lambda k, j, s: labels[k][j])] if labels else []
    for spec in split_agents(args.agents):
        name, kw = parse_agent_spec(spec)
        players.append((spec, _chooser(make_agent(name, board=args.board, seed=0, **kw))))
    for spec, choose in players:
        cells = []
        moves, spent = 0, 0.0
        for k in steps:
            if not sets[k]:
                cells.append("out of reach" if a - k > reach else "no positions")
                continue
            hits, n, unlabelled = 0, 0, 0
            tally = {c: [0, 0] for c in _CLASSES}  # class -> [right, chosen]
            for j, (s, winning) in enumerate(sets[k]):
                t = time.perf_counter()
                move = choose(k, j, s)
                spent += time.perf_counter() - t
                moves += 1
                try:
                    right = move in winning
                except SolverBudgetExceeded:  # --label chosen: this move's label is past the node limit
                    unlabelled += 1
                    continue
                n += 1
                hits += right
                if args.classes:
                    kind = tally[MoveClass(classes[k][j][move])]
                    kind[0] += move in winning
                    kind[1] += 1
            if args.classes:
                res.update({(spec, k, c.name.lower()): tuple(v) for c, v in tally.items()})
            if unlabelled:
                res[(spec, k, "unlabelled")] = unlabelled
            if not n:
                cells.append(f"unlabelled n={unlabelled}")
                continue
            lo, hi = wilson_interval(hits, n)
            res[(spec, k)] = hits / n
            cells.append(f"{hits / n:.3f} [{lo:.3f}, {hi:.3f}] n={n}" + (f" ({unlabelled} unlabelled)" if unlabelled else ""))
        timing = "" if spec == REPLAY_LABEL else f"{spent / max(moves, 1):.3f} s/move"
        print(f"{spec[-47:]:<48}" + "".join(f"{c:<28} " for c in cells) + timing)
    if args.classes:
        _print_classes(sets, classes, res)
    return res


REPLAY_LABEL = "replay label"


def _chooser(agent):
    def choose(k, j, state):
        agent.reset()
        return agent.select_action(state)

    return choose


_CLASSES = (MoveClass.SAFE, MoveClass.CONCEDING, MoveClass.SCORING)


def _print_classes(sets: dict, classes: dict, res: dict) -> None:
    """Moves by class as right/chosen, per agent and step (``res[(spec, step, class)]``); first the solver's
    winning moves (all right)."""
    print("\nmoves by class, right/chosen (a move is right if it keeps the win)")
    print(f"{'agent':<48}{'step':<6}" + "".join(f"{c.name.lower():<12}" for c in _CLASSES))
    for k, items in sets.items():
        if items:
            counts = {c: sum(int(MoveClass(cls[m]) is c) for (_, win), cls in zip(items, classes[k]) for m in win)
                      for c in _CLASSES}
            print(f"{'winning moves of all positions (solver)':<48}{k:<6}" + "".join(f"{counts[c]:<12}" for c in _CLASSES))
    for spec, k in (key[:2] for key in res if len(key) == 3 and key[2] == _CLASSES[0].name.lower()):
        print(f"{spec[-47:]:<48}{k:<6}" + "".join(f"{'{}/{}'.format(*res[(spec, k, c.name.lower())]):<12}"
                                                   for c in _CLASSES))


if __name__ == "__main__":
    main()
