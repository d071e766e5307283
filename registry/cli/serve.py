"""``dnb serve``: the web app."""

from __future__ import annotations

import argparse
import sys

from registry.cli.parsing import Defaults
from registry.extras import missing_extra


def run(args: argparse.Namespace) -> int:
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


def add_parser(sub: argparse._SubParsersAction) -> None:
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
    sv.set_defaults(func=run)
