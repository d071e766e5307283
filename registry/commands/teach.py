"""``dnb teach``: a teacher dataset, realistic positions labelled by the exact solver."""

from __future__ import annotations

import argparse
import sys

from dnb_env.core import DEFAULT_BOARD
from dnb_env.limits import check_cpus
from dnb_env.solver import MOVES_REACH, VALUE_REACH
from registry.commands.parsing import Defaults, backend_options
from registry.extras import extra_hint


def default_players() -> tuple[str, ...]:
    """``dnb teach``'s default mix (:data:`agents.training.teacher.DEFAULT_PLAYERS`) less the players this
    install cannot build: without PyTorch the network agents' raw policies are left out, with a notice on
    stderr that names the extra that would add them."""
    from agents.training.teacher import DEFAULT_PLAYERS
    from registry import list_agents
    from registry.specs import parse_agent_spec

    known = set(list_agents())
    players = tuple(spec for spec in DEFAULT_PLAYERS if parse_agent_spec(spec)[0] in known)
    left_out = [spec for spec in DEFAULT_PLAYERS if spec not in players]
    if left_out:
        print(f"dnb teach: the default players leave out {', '.join(left_out)}: the network agents need "
              f"{extra_hint('torch')}", file=sys.stderr)
    return players


def run(args: argparse.Namespace) -> int:
    from agents.training.teacher import TeachConfig, generate
    from registry.specs import agent_from_spec, check_agent_spec, split_agents

    lo, sep, hi = args.undrawn.partition("-")
    try:
        lo, hi = int(lo), int(hi if sep else lo)
    except ValueError:
        raise ValueError(f"--undrawn takes MIN-MAX or N, got {args.undrawn!r}") from None
    players = split_agents(args.players) if args.players else default_players()
    for spec in players:
        check_agent_spec(spec)
    kw = dict(board=args.board, undrawn_min=lo, undrawn_max=hi, positions=args.positions, seed=args.seed)
    for key in ("margin_max", "move_labels_max", "shard_size", "per_game", "opening", "explore", "node_limit"):
        if getattr(args, key) is not None:
            kw[key] = getattr(args, key)
    if args.backend == "local":
        check_cpus(args.workers, "--workers")
    config = TeachConfig(players=players, **kw)
    manifest = generate(config, args.out, agent_from_spec, workers=args.workers, backend=args.backend,
                        ray_address=args.ray_address, progress=not args.no_progress,
                        exclude=args.exclude or ())
    c = manifest["counts"]
    print(f"{args.out}: {manifest['positions']} positions in {len(manifest['shards'])} shards from {c['games']} "
          f"games ({c['duplicates']} duplicates dropped, {c['skipped']} over the node budget); "
          f"{c['label_seconds']:.0f} solver-seconds of labels")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    """The ``dnb teach`` subcommand's options."""
    te = sub.add_parser("teach", help="a teacher dataset: realistic positions labelled by the exact solver",
                        formatter_class=Defaults)
    te.add_argument("--board", default=DEFAULT_BOARD, help="board as RxC boxes")
    te.add_argument("--undrawn", default=f"26-{MOVES_REACH}", help="undrawn edges of the positions: MIN-MAX or N")
    te.add_argument("--positions", type=int, default=10_000, help="positions in the dataset (a resume may raise it)")
    te.add_argument("--out", required=True, help="dataset folder (continued if it holds the same dataset)")
    te.add_argument("--players", default=None,
                    help="agent specs whose games give the positions, e.g. greedy,alphabeta:depth=2,prsboxes "
                         "(default: those three and the raw policies of the shipped alphazero and dotsformer; "
                         "without PyTorch the two network players are left out with a notice, and the "
                         "dataset's manifest records the players it used)")
    te.add_argument("--margin-max", type=int, default=None,
                    help="positions with more undrawn edges get win/loss labels instead of margins "
                         f"(default {VALUE_REACH})")
    te.add_argument("--move-labels-max", type=int, default=None,
                    help="positions with more undrawn edges get only their own win/loss result, no label per move "
                         "(one search instead of one per move; no policy target). Default -1: every position "
                         "gets move labels")
    te.add_argument("--shard-size", type=int, default=None, help="candidate positions per job and shard (default 250)")
    te.add_argument("--per-game", type=int, default=None, help="positions taken from one game (default 2)")
    te.add_argument("--opening", type=int, default=None,
                    help="random safe opening moves (default -1: between 1/6 and 1/3 of the edges, per game)")
    te.add_argument("--explore", type=float, default=None,
                    help="probability of a plausible random move instead of the agent's (default 0.1)")
    te.add_argument("--node-limit", type=int, default=None,
                    help="solver nodes per query; positions past it are skipped and counted (default 20M)")
    te.add_argument("--exclude", action="append", metavar="DIR",
                    help="dataset folder whose positions are never taken (a held-out set; repeatable)")
    te.add_argument("--workers", type=int, default=1,
                    help="processes labelling positions: 1 to the CPUs of this machine (Ray tasks at once with "
                         "--backend ray)")
    te.add_argument("--seed", type=int, default=0, help="seed of the games, 0..2**63-1")
    backend_options(te, "jobs run as Ray tasks, --workers at once")
    te.add_argument("--no-progress", action="store_true", help="no progress bar")
    te.set_defaults(func=run)
