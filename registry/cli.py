"""The ``dnb`` command line.

    dnb demo --board 5x5 --seed 0      a random game, printed move by move with the ASCII board
    dnb tournament --board 5x5 --agents random,greedy,alphabeta:depth=3,prsboxes --games 100 \
        --openings 10:guided --workers 2 --threads 1 --out results/5x5
    dnb tournament ... --backend ray [--ray-address auto]    games as Ray tasks (README "Running on a cluster")
    dnb train --board 5x5 --out runs/x --backend ray --set workers=8 [--ray-address auto]   self-play actors on Ray
    dnb engine alphabeta:depth=3        an agent as an engine on stdin/stdout (docs/engine-protocol.md)
    dnb agents [NAME]                   the agents with a summary each; NAME: its options and strength
    dnb serve --port 8000               the web app (play, insight, replays, tournament folders; extra [web])
    dnb --version

Without extras (``pip install dnb-env``) ``demo``, ``agents``, ``teach`` and tournaments of the agents that need no
network run; a command that needs an extra says which (``dnb train needs PyTorch: pip install 'dnb-env[torch]'``,
:mod:`registry.extras`).

Each command but ``serve`` is a module of :mod:`registry.commands`; ``serve`` is here, since the command line is
the one floor above the web app.
"""

from __future__ import annotations

import argparse
import sys

from registry.commands import agents, demo, engine, errors, export, fit, plot, report, solve, teach, tournament, train
from registry.commands.parsing import Defaults, Parser, Version, version
from registry.extras import missing_extra

__all__ = ["main", "version"]

def serve(args: argparse.Namespace) -> int:
    """``dnb serve``: the web app (the one command that imports :mod:`dnb_web`)."""
    import ipaddress

    try:
        import uvicorn

        from dnb_web import WebConfig, create_app
    except ImportError as exc:
        raise (missing_extra(exc, "dnb serve")
               or ValueError(f"dnb serve needs the web extra: pip install 'dnb-env[web]' ({exc})")) from None
    if not 0 <= args.port <= 65535:
        raise ValueError(f"--port must be in 0..65535, got {args.port}")
    for option, value in (("--max-games", args.max_games), ("--max-think", args.max_think),
                          ("--time-limit", args.time_limit), ("--idle", args.idle)):
        if not value > 0:
            raise ValueError(f"{option} must be more than 0, got {value:g}")
    if any(not cmd.strip() for cmd in args.allow_engine or ()):
        raise ValueError("--allow-engine needs the engine's program, e.g. --allow-engine ./my_engine")
    try:
        address = ipaddress.ip_address(args.host)
    except ValueError:
        address = None
    loopback = args.host == "localhost" or (address is not None and address.is_loopback)
    if not loopback:
        print(f"dnb serve: warning: binding {args.host} makes the app reachable from other machines; it has no "
              "authentication (use 127.0.0.1 unless you mean it)", file=sys.stderr)
    # the Host headers answered (against DNS rebinding): loopback names and --host; any for a wildcard bind
    hosts = ("*",) if address is not None and address.is_unspecified else ("127.0.0.1", "localhost", "::1", args.host)
    config = WebConfig(results_roots=tuple(args.results or ["results"]),
                       checkpoint_roots=tuple(args.checkpoints or ["runs"]), max_games=args.max_games,
                       max_think_s=args.max_think, time_limit_s=min(args.time_limit, args.max_think),
                       idle_s=args.idle, allowed_hosts=hosts, allowed_engines=tuple(args.allow_engine or ()))
    app = create_app(config)
    uconfig = uvicorn.Config(app, host=args.host, port=args.port, log_level="warning", log_config=None)
    try:
        sock = uconfig.bind_socket()  # bound before the address is printed (and --port 0 has its real port)
    except (OSError, SystemExit) as exc:
        raise ValueError(f"cannot listen on {args.host}:{args.port}: {exc}") from None
    port = sock.getsockname()[1]
    shown = f"[{args.host}]" if ":" in args.host else args.host
    print(f"dnb serve: http://{shown}:{port}/  (API under /api/, OpenAPI at /docs; Ctrl-C stops)", flush=True)
    server = uvicorn.Server(uconfig)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
    return 0


def add_serve_parser(sub: argparse._SubParsersAction) -> None:
    """The ``dnb serve`` subcommand's options."""
    sv = sub.add_parser("serve", help="the web app: play any agent in the browser, insight, replays, tournaments",
                        formatter_class=Defaults)
    sv.add_argument("--host", default="127.0.0.1", help="address to bind (anything but loopback prints a warning)")
    sv.add_argument("--port", type=int, default=8000, help="port to listen on")
    sv.add_argument("--results", action="append", metavar="DIR",
                    help="folder whose tournament folders may be browsed (repeatable; default: results)")
    sv.add_argument("--checkpoints", action="append", metavar="DIR",
                    help="folder from which checkpoint= paths may be loaded (repeatable; default: runs; the "
                         "shipped weights always)")
    sv.add_argument("--max-games", type=int, default=64,
                    help="live games at once; when full, a finished game makes room, and a new game is refused "
                         "while every live game is in play")
    sv.add_argument("--time-limit", type=float, default=10.0, help="default seconds per agent move")
    sv.add_argument("--max-think", type=float, default=60.0, help="longest time limit per agent move a game may ask")
    sv.add_argument("--idle", type=float, default=3600.0,
                    help="seconds without requests after which a game is dropped")
    sv.add_argument("--allow-engine", action="append", metavar="CMD",
                    help="an engine program games may play as engine:cmd=\"CMD ARGS...\" (repeatable; the "
                         "program, the first word of cmd, must equal CMD exactly; default: none, every engine "
                         "refused)")
    sv.set_defaults(func=serve)


#: Each command's ``add_parser(sub)``, in the order ``dnb --help`` lists them.
COMMANDS = (demo.add_parser, tournament.add_parser, train.add_parser, solve.add_parser, teach.add_parser,
            fit.add_parser, export.add_parser, report.add_parser, plot.add_parser, add_serve_parser,
            engine.add_parser, agents.add_parser)


def build_parser() -> Parser:
    """The ``dnb`` parser with every command's subparser."""
    parser = Parser(prog="dnb", description="Dots-and-Boxes for game-AI research")
    parser.add_argument("--version", action=Version)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=Parser)
    for add_parser in COMMANDS:
        add_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run the ``dnb`` command line ``argv`` (default: ``sys.argv[1:]``); its exit code. An error the user can
    act on is one ``dnb: error:`` line on stderr and exit code 2 (:func:`registry.commands.errors.error_message`)."""
    parser = build_parser()
    args, rest = parser.parse_known_args(argv)  # `dnb plot attention` hands its options to the plot's parser
    if rest and not getattr(args, "takes_rest", False):
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    args.rest = rest
    try:
        return args.func(args)
    except Exception as exc:
        error = errors.error_message(args, exc)
        if error is None:
            raise
        print(f"dnb: error: {error}", file=sys.stderr)
        return 2


if __name__ == "__main__":  # python -m registry.cli
    sys.exit(main())
