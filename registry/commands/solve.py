"""``dnb solve``: the exact value of a whole board by the alpha-beta solver, resumable."""

from __future__ import annotations

import argparse

from dnb_env.limits import check_cpus, check_int, check_number, machine_memory_mb
from registry.commands.parsing import Defaults


def run(args: argparse.Namespace) -> int:
    from dnb_env.solve_run import MIN_SLICE_NODES, solve_board

    moves = [int(m) for m in args.moves.split(",")] if args.moves else []
    check_cpus(args.threads, "--threads")
    check_number(args.tt_mb, "--tt-mb", low=0, open_low=True, high=machine_memory_mb())
    check_int(args.slice_nodes, "--slice-nodes", MIN_SLICE_NODES)
    check_number(args.save_every, "--save-every", low=0)
    st = solve_board(args.board, args.out, moves=moves, tt_mb=args.tt_mb, slice_nodes=args.slice_nodes,
                     save_every=args.save_every, threads=args.threads, progress=not args.no_progress)
    where = f"{args.board} after {len(moves)} moves" if moves else f"{args.board} from the empty board"
    print(f"{where}: value {st['value']:+d} for the player to move ({st['nodes']:,} nodes, "
          f"{st['seconds']:.0f} s over {st['slices']} slices; state in {args.out})")
    return 0


def add_parser(sub: argparse._SubParsersAction) -> None:
    """The ``dnb solve`` subcommand's options."""
    so = sub.add_parser("solve", help="exact value of a whole board by the alpha-beta solver, resumable "
                                      "(e.g. `dnb solve 4x4 --out runs/solve-4x4`)", formatter_class=Defaults)
    so.add_argument("board", help="board as RxC boxes")
    so.add_argument("--out", required=True, help="folder of the solve's table and state (continued if it holds "
                                                 "the same problem)")
    so.add_argument("--moves", default="", help="comma-separated OpenSpiel actions played first (default: none)")
    so.add_argument("--tt-mb", type=float, default=1024.0,
                    help="transposition table size in MB (saved to the folder), more than 0 and at most the "
                         "machine's memory")
    so.add_argument("--slice-nodes", type=int, default=50_000_000, help="nodes per search slice, at least 1,000")
    so.add_argument("--save-every", type=float, default=300.0,
                    help="seconds between saves of the table and state (0: after every slice)")
    so.add_argument("--threads", type=int, default=1,
                    help="search threads sharing the table: 1 to the CPUs of this machine")
    so.add_argument("--no-progress", action="store_true", help="no progress bar")
    so.set_defaults(func=run)
