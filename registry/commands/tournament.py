"""``dnb tournament``: a round robin or gauntlet of agent specs, with Elo, win rates and plots."""

from __future__ import annotations

import argparse
import os

from dnb_env.core import DEFAULT_BOARD
from dnb_env.limits import check_cpus, machine_cpus
from registry.commands.parsing import Defaults, backend_options


def run(args: argparse.Namespace) -> int:
    from agents.arena import TournamentConfig
    from dnb_env.clock import TimeControl, check_time_control
    from registry.specs import split_agents
    from registry.tournaments import run_tournament

    head, _, tail = args.openings.partition(":")
    try:
        moves = int(head)
    except ValueError:
        raise ValueError(f"--openings must be K or K:pure or K:guided, got {args.openings!r}") from None
    mode = tail or "guided"
    if args.backend == "local":  # on Ray they are the cluster's CPUs
        check_cpus(args.workers, "--workers")
        check_cpus(args.threads, "--threads")
    clock = dict(per_move=args.time_per_move, per_game=args.time_per_game, increment=args.increment,
                 margin=args.time_margin, overrun=args.overrun)
    flags = {"per_move": "--time-per-move", "per_game": "--time-per-game", "increment": "--increment",
             "margin": "--time-margin", "overrun": "--overrun"}
    # one check, in the options' own words: the clock's when there is one, else the other options'
    control = None
    if args.time_per_move is not None or args.time_per_game is not None:
        control = TimeControl(**clock, names=flags)
    else:
        check_time_control(**clock, names=flags)
    cfg = TournamentConfig(
        board=args.board, agents=split_agents(args.agents),
        games=args.games, openings=moves, opening_mode=mode, mode=args.mode, workers=args.workers,
        threads=args.threads, seed=args.seed, bootstrap=args.bootstrap, backend=args.backend,
        ray_address=args.ray_address, time_control=control,
    )
    run_tournament(cfg, out=args.out, progress=not args.no_progress)
    if args.out:
        plot = ", tournament.png" if os.path.exists(os.path.join(args.out, "tournament.png")) else ""
        print(f"results: {args.out}/results.jsonl, pairs.csv, elo.csv{plot}")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    """The ``dnb tournament`` subcommand's options."""
    from dnb_env.clock import TIME_MARGIN

    tour = sub.add_parser("tournament", help="round robin or gauntlet with Elo, win rates and plots",
                          formatter_class=Defaults)
    tour.add_argument("--board", default=DEFAULT_BOARD, help="board as RxC boxes")
    tour.add_argument("--agents", required=True,
                      help="comma-separated specs name[:key=value,...], e.g. random,alphabeta:depth=3,prsboxes")
    tour.add_argument("--games", type=int, default=20,
                      help="games per pair (first player alternates; at most 1,000,000 games in all)")
    tour.add_argument("--openings", default="0",
                      help="K random opening moves, fewer than the board's edges: K or K:guided (safe moves "
                           "while there are any) or K:pure (any moves)")
    tour.add_argument("--mode", choices=["round_robin", "gauntlet"], default="round_robin",
                      help="every pair, or the first agent against each other one")
    tour.add_argument("--workers", type=int, default=machine_cpus(),
                      help="processes playing games: 1 to the CPUs of this machine (1..1024 Ray tasks at once with "
                           "--backend ray), no more than there are games to play (default: one per CPU, here "
                           "%(default)s)")
    tour.add_argument("--threads", type=int, default=1,
                      help="numpy/BLAS and torch threads of each worker process: 1 to the CPUs of this machine")
    tour.add_argument("--seed", type=int, default=0, help="seed of the openings and of the agents, 0..2**63-1")
    backend_options(tour, "games run as Ray tasks (each with --threads CPUs); the local instance has --workers CPUs")
    clock = tour.add_mutually_exclusive_group()
    clock.add_argument("--time-per-move", type=float, default=None, metavar="S",
                       help="seconds a move for every agent: the agents that can think to a clock (alphabeta, "
                            "prsboxes, solver, mcts, openspiel_mcts, the network agents' search, engine:) use "
                            "it, the others play at their own budget; every move is timed")
    clock.add_argument("--time-per-game", type=float, default=None, metavar="S",
                       help="seconds on each side's game clock (with --increment): before each move an agent "
                            "that thinks to a clock gets its clock over the moves it has left (at least 10) "
                            "plus the increment, capped by its clock less --time-margin; an engine gets its "
                            "clock ('go left MS inc MS'); a side whose clock runs out loses on time")
    tour.add_argument("--increment", type=float, default=0.0, metavar="I",
                      help="seconds added to a side's game clock after each of its moves (with --time-per-game)")
    tour.add_argument("--time-margin", type=float, default=TIME_MARGIN, metavar="S",
                      help="seconds past --time-per-move, or past the clock, before a move is an overrun "
                           "(engine: agents are held to it too)")
    tour.add_argument("--overrun", choices=["lose", "warn"], default="lose",
                      help="an overrun loses the game on time, or is only listed in the game's record (a late "
                           "engine: is then waited for, up to its timeout past its move time)")
    tour.add_argument("--bootstrap", type=int, default=200, help="bootstrap samples for the Elo intervals, 0..10,000 (0: none)")
    tour.add_argument("--out", default=None, help="folder for results (resumes if it holds the same tournament; a larger --games extends it)")
    tour.add_argument("--no-progress", action="store_true", help="no progress bar")
    tour.set_defaults(func=run)
