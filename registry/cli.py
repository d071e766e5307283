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
"""

from __future__ import annotations

import argparse
import errno
import os
import random
import sys

from dnb_env.core import GameState
from dnb_env.limits import check_cpus, check_int, check_number, machine_cpus, machine_memory_mb
from registry.extras import extra_hint, missing_extra


def _demo(args: argparse.Namespace) -> int:
    rng = random.Random(args.seed)
    state = GameState.new(args.board)
    print(f"A random game on {state.rows}x{state.cols} (seed {args.seed})\n")
    print(state, end="\n\n")
    while not state.is_terminal():
        action = rng.choice(state.legal_actions())
        mover = state.current_player
        state = state.apply(action)
        print(f"move {len(state.history)}: player {mover} draws {action} ({state.geometry.action_name(action)})")
        print(state, end="\n\n")
    return 0


def _tournament(args: argparse.Namespace) -> int:
    from agents.arena import TournamentConfig
    from agents.engine.protocol import check_time_control
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
    check_time_control(args.time_per_move, args.time_per_game, args.increment, args.time_margin, args.overrun,
                       names={"per_move": "--time-per-move", "per_game": "--time-per-game",
                              "increment": "--increment", "margin": "--time-margin", "overrun": "--overrun"})
    cfg = TournamentConfig(
        board=args.board, agents=split_agents(args.agents),
        games=args.games, openings=moves, opening_mode=mode, mode=args.mode, workers=args.workers,
        threads=args.threads, seed=args.seed, bootstrap=args.bootstrap, backend=args.backend,
        ray_address=args.ray_address, time_per_move=args.time_per_move, time_margin=args.time_margin,
        overrun=args.overrun, time_per_game=args.time_per_game, increment=args.increment,
    )
    run_tournament(cfg, out=args.out, progress=not args.no_progress)
    if args.out:
        plot = ", tournament.png" if os.path.exists(os.path.join(args.out, "tournament.png")) else ""
        print(f"results: {args.out}/results.jsonl, pairs.csv, elo.csv{plot}")
    return 0


def _engine(args: argparse.Namespace) -> int:
    from agents.engine import serve
    from registry.agents import make_agent
    from registry.specs import agent_boards, check_agent_spec

    name, kwargs = check_agent_spec(args.spec)  # a bad spec: an error here, before any line is read
    if name == "engine":
        raise ValueError("dnb engine serves the registry's agents; an engine program speaks the protocol itself")
    return serve(lambda board, seed: make_agent(name, board=board, seed=seed, **kwargs), name=args.spec,
                 boards=agent_boards(args.spec))


def _backend_options(parser: argparse.ArgumentParser, ray_help: str) -> None:
    parser.add_argument("--backend", choices=["local", "ray"], default="local",
                        help=f"local: processes on this machine; ray: {ray_help} (pip install 'dnb-env[ray]')")
    parser.add_argument("--ray-address", default=None, metavar="ADDR",
                        help="with --backend ray: auto (the cluster this machine joined with `ray start`) or "
                             "HOST:PORT of the head; default: start a local Ray instance for the run")


def _family(algorithm: str | None, model: str | None) -> str:
    """The model family of ``dnb train``/``dnb fit``'s positional algorithm name (the agent name a family
    plays under, :func:`agents.models.family_agents`) and ``--model``."""
    from agents.models import family_agents

    families = family_agents()
    family = model or families.get(algorithm or "alphazero")
    if family is None:
        raise ValueError(f"unknown algorithm {algorithm!r}; available: {', '.join(families)} (or --model)")
    if algorithm and model and families.get(algorithm) != model:
        raise ValueError(f"{algorithm} trains --model {families.get(algorithm)}, not {model}")
    return family


def _train(args: argparse.Namespace) -> int:
    from agents.training.config import make_train_config, parse_settings
    from agents.training.loop import train

    model = _family(args.algorithm, args.model)
    overrides = dict(board=args.board, iterations=args.iterations, games_per_iteration=args.games,
                     simulations=args.simulations, encoder=args.encoder, seed=args.seed, device=args.device,
                     backend=args.backend)
    overrides.update(parse_settings(model, args.set))
    config = make_train_config(model, args.preset, **overrides)
    if config.backend == "local":  # self-play processes and threads here (on Ray: the cluster's)
        check_cpus(config.workers, "workers (--set workers)")
        check_cpus(config.threads, "threads (--set threads)")
    metrics = train(config, args.out, resume=args.resume, progress=not args.no_progress, ray_address=args.ray_address)
    if metrics:
        last = metrics[-1]
        print(f"iteration {last['iteration']}: policy loss {last['policy_loss']:.3f}, value loss "
              f"{last['value_loss']:.3f}, first searched move {last['start_step']}"
              + (f", raw accuracy {last['raw_accuracy']:.3f}" if "raw_accuracy" in last else ""))
    print(f"checkpoint: {args.out}/checkpoint.pt, metrics: {args.out}/metrics.jsonl, plot: {args.out}/training.png")
    return 0


def _solve(args: argparse.Namespace) -> int:
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


def _teach_players() -> tuple[str, ...]:
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


def _teach(args: argparse.Namespace) -> int:
    from agents.training.teacher import TeachConfig, generate
    from registry.specs import agent_from_spec, check_agent_spec, split_agents

    lo, sep, hi = args.undrawn.partition("-")
    try:
        lo, hi = int(lo), int(hi if sep else lo)
    except ValueError:
        raise ValueError(f"--undrawn takes MIN-MAX or N, got {args.undrawn!r}") from None
    players = split_agents(args.players) if args.players else _teach_players()
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


def _fit(args: argparse.Namespace) -> int:
    from agents.training.config import make_train_config, parse_settings
    from agents.training.supervised import FitConfig, fit

    model = _family(args.algorithm, args.model)
    settings = parse_settings(model, args.set)
    other = sorted(k for k in settings if not k.startswith(("model.", "loss.")))
    if other:
        raise ValueError(f"dnb fit takes --set model.* and loss.* keys only, not {', '.join(other)}")
    check_cpus(args.threads, "--threads")
    check_cpus(args.workers, "--workers")
    train_cfg = make_train_config(model, args.preset, board=args.board, encoder=args.encoder, **settings)
    config = FitConfig(model=train_cfg.model, loss=train_cfg.loss, data=tuple(args.data), held=args.held,
                       positions=args.positions, steps=args.steps, batch_size=args.batch_size, lr=args.lr,
                       lr_schedule=args.lr_schedule, temperature=args.temperature, eval_every=args.eval_every,
                       eval_positions=args.eval_positions, seed=args.seed, threads=args.threads, init=args.init)
    rows = fit(config, args.out, resume=args.resume, progress=not args.no_progress, device=args.device,
               workers=args.workers)
    last = rows[-1] if rows else {}
    if last.get("n"):
        print(f"step {last['step']}: keeps the win in {last['keep']:.3f} of winning held-out positions "
              f"({last['keep_hard']:.3f} of the greedy-hard ones; greedy {rows[0]['keep']:.3f} / {rows[0]['keep_hard']:.3f})")
    if "value_auc" in last:  # held-out sets of result-only positions have no policy score, only this
        print(f"step {last['step']}: value sign {last['value_sign']:.3f}, value AUC {last['value_auc']:.3f} on the held-out positions")
    print(f"checkpoint: {args.out}/checkpoint.pt, metrics: {args.out}/metrics.jsonl")
    return 0


def _export(args: argparse.Namespace) -> int:
    from agents.training.store import export_weights

    if not os.path.exists(os.path.join(args.run, "manifest.json")) and \
            os.path.exists(os.path.join(args.run, "metrics.jsonl")) and \
            os.path.exists(os.path.join(args.run, "checkpoint.pt")):  # a `dnb fit` run
        from agents.training.supervised import playing_weights

        info = playing_weights(args.run, args.out)
        print(f"{args.out}: {info['step']} supervised steps on {info['positions']} teacher positions")
        return 0
    info = export_weights(args.run, args.out)
    print(f"{args.out}: {info['iterations']} iterations, {info['self_play_games']} self-play games, "
          f"{info['training_seconds']} s of training")
    return 0


def _report(args: argparse.Namespace) -> int:
    from agents.training.report import main

    return main(args.runs, board=args.board, plot=args.plot)


def _plot_attention(args: argparse.Namespace) -> int:
    """``dnb plot attention``: :func:`agents.models.attention_plot.main` on the rest of the command line
    (its options, usage and errors under this command's name; torch is imported only here)."""
    from agents.models.attention_plot import main

    return main(args.rest, prog="dnb plot attention")


def _serve(args: argparse.Namespace) -> int:
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


def _agents(args: argparse.Namespace) -> int:
    """``dnb agents``: each agent with its one-line summary, marked with the extra it needs where that is not
    installed; ``dnb agents NAME``: the agent's section of the reference (:func:`registry.docs.render_agent`)."""
    from registry import list_agents
    from registry.agents import NETWORK_AGENTS, agent_needs, describe_agent
    from registry.docs import render_agent

    if args.name:
        print(render_agent(args.name), end="")  # an unknown name: ValueError listing the known ones (exit 2)
        return 0
    names = sorted(set(list_agents()) | set(NETWORK_AGENTS))
    width = max(map(len, names))
    for name in names:
        summary = describe_agent(name).summary.replace("``", "")
        needs = agent_needs(name)
        print(f"{name:<{width}}  {summary}" + (f" [needs {extra_hint(needs)}]" if needs else ""))
    print("\n`dnb agents NAME` shows an agent's options and strength.")
    return 0


def _train_settings() -> str:
    """The epilog of ``dnb train --help``: every ``--set`` key with its description and defaults (the model
    families' keys need PyTorch, so this is built when the help is shown)."""
    head = "--set keys (dotted, or the bare name where unique), with their defaults under --preset cpu and paper:"
    try:
        from agents.training.config import settings_help

        return head + "\n  " + settings_help().replace("\n", "\n  ")
    except ModuleNotFoundError as exc:
        hint = extra_hint(exc.name or "")
        if hint is None:
            raise
        return f"dnb train needs {hint} (the --set keys are listed here once it is installed)"


def version() -> str:
    """The installed distribution's version (``importlib.metadata``), else ``dnb_env.__version__`` (a source
    tree that was never installed)."""
    from importlib import metadata

    try:
        return metadata.version("dnb-env")
    except metadata.PackageNotFoundError:
        import dnb_env

        return dnb_env.__version__


class _Version(argparse.Action):
    """``--version``: the version looked up only when asked for."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, help="print the version and exit")

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"{parser.prog} {version()}")
        parser.exit()


class _Parser(argparse.ArgumentParser):
    """An ArgumentParser whose ``epilog`` may be a function, called when the help is shown: ``dnb train``'s
    list of settings imports the model families (PyTorch), which the other commands must not need."""

    def format_help(self):
        if callable(self.epilog):
            self.epilog = self.epilog()
        return super().format_help()


class _Defaults(argparse.ArgumentDefaultsHelpFormatter):
    """``--help`` shows each option's default, where it has one."""

    def _get_help_string(self, action):
        if action.default is None or action.default is False:
            return action.help
        return super()._get_help_string(action)


def main(argv: list[str] | None = None) -> int:
    from agents.engine.protocol import TIME_MARGIN

    parser = _Parser(prog="dnb", description="Dots-and-Boxes for game-AI research")
    parser.add_argument("--version", action=_Version)
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    demo = sub.add_parser("demo", help="play and print a random game", formatter_class=_Defaults)
    demo.add_argument("--board", default="5x5", help="board as RxC boxes")
    demo.add_argument("--seed", type=int, default=0, help="seed of the random moves")
    demo.set_defaults(func=_demo)
    tour = sub.add_parser("tournament", help="round robin or gauntlet with Elo, win rates and plots",
                          formatter_class=_Defaults)
    tour.add_argument("--board", default="5x5", help="board as RxC boxes")
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
    _backend_options(tour, "games run as Ray tasks (each with --threads CPUs); the local instance has --workers CPUs")
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
    tour.set_defaults(func=_tournament)
    tr = sub.add_parser("train", help="self-play training of a model family (resnet = AlphaZero, dotsformer, alphavit)",
                        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_train_settings)
    tr.add_argument("algorithm", nargs="?", default=None, help="alphazero (= --model resnet), dotsformer or alphavit")
    tr.add_argument("--model", default=None, help="model family: resnet, dotsformer or alphavit (default: resnet)")
    tr.add_argument("--board", default="3x3", help="board as RxC boxes (default 3x3)")
    tr.add_argument("--preset", default="cpu", help="cpu (small, 2 cores; default) or paper (Dotsformer Table A1)")
    tr.add_argument("--out", required=True, help="run folder (config, manifest, iterations/, metrics, plot)")
    tr.add_argument("--resume", action="store_true", help="continue the run in --out after its last committed iteration")
    tr.add_argument("--iterations", type=int, default=None, help="training iterations (default: the preset's, below)")
    tr.add_argument("--games", type=int, default=None, help="self-play games per iteration (default: the preset's)")
    tr.add_argument("--simulations", type=int, default=None, help="search simulations per move (default: the preset's)")
    tr.add_argument("--encoder", default=None, help="input encoder (default: the family's: alphazero4 for resnet, chainloop6 for the others)")
    tr.add_argument("--seed", type=int, default=None, help="seed of the run (default 0)")
    tr.add_argument("--device", default=None,
                    help="the learner's device: cpu (default), cuda, cuda:N or auto (a CUDA GPU if torch sees one)")
    _backend_options(tr, "self-play in --set workers=N Ray actors (CPU, --set threads each), the learner here")
    tr.add_argument("--set", action="append", metavar="KEY=VALUE",
                    help="any other setting, e.g. --set epochs=4 --set model.width=64 --set curriculum.rule=boxeszero")
    tr.add_argument("--no-progress", action="store_true", help="no progress bar")
    tr.set_defaults(func=_train)
    so = sub.add_parser("solve", help="exact value of a whole board by the alpha-beta solver, resumable "
                                      "(e.g. `dnb solve 4x4 --out runs/solve-4x4`)", formatter_class=_Defaults)
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
    so.set_defaults(func=_solve)
    te = sub.add_parser("teach", help="a teacher dataset: realistic positions labelled by the exact solver",
                        formatter_class=_Defaults)
    te.add_argument("--board", default="5x5", help="board as RxC boxes")
    te.add_argument("--undrawn", default="26-38", help="undrawn edges of the positions: MIN-MAX or N")
    te.add_argument("--positions", type=int, default=10_000, help="positions in the dataset (a resume may raise it)")
    te.add_argument("--out", required=True, help="dataset folder (continued if it holds the same dataset)")
    te.add_argument("--players", default=None,
                    help="agent specs whose games give the positions, e.g. greedy,alphabeta:depth=2,prsboxes "
                         "(default: those three and the raw policies of the shipped alphazero and dotsformer; "
                         "without PyTorch the two network players are left out with a notice, and the "
                         "dataset's manifest records the players it used)")
    te.add_argument("--margin-max", type=int, default=None,
                    help="positions with more undrawn edges get win/loss labels instead of margins (default 36)")
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
    _backend_options(te, "jobs run as Ray tasks, --workers at once")
    te.add_argument("--no-progress", action="store_true", help="no progress bar")
    te.set_defaults(func=_teach)
    ft = sub.add_parser("fit", help="supervised training of a model family on teacher datasets (dnb teach)",
                        formatter_class=_Defaults)
    ft.add_argument("algorithm", nargs="?", default=None, help="alphazero (= --model resnet), dotsformer or alphavit")
    ft.add_argument("--model", default=None, help="model family (default: resnet)")
    ft.add_argument("--board", default="5x5", help="board as RxC boxes")
    ft.add_argument("--preset", default="cpu", help="model preset: cpu or paper")
    ft.add_argument("--encoder", default=None, help="input encoder (default: the family's)")
    ft.add_argument("--data", action="append", required=True, metavar="DIR", help="teacher dataset (repeatable)")
    ft.add_argument("--held", default=None, metavar="DIR", help="held-out teacher dataset scored during training")
    ft.add_argument("--positions", type=int, default=0, help="train on the first N positions only (0: all)")
    ft.add_argument("--steps", type=int, default=20_000, help="gradient steps (a resume may raise it)")
    ft.add_argument("--batch-size", type=int, default=256, help="positions per gradient step")
    ft.add_argument("--lr", type=float, default=1e-3, help="Adam learning rate, a finite number more than 0")
    ft.add_argument("--lr-schedule", choices=["cosine", "constant"], default="cosine", help="learning rate over the steps")
    ft.add_argument("--temperature", type=float, default=0.0,
                    help="policy target: 0 uniform over the best moves, else a softmax of the move labels")
    ft.add_argument("--eval-every", type=int, default=1000, help="steps between held-out scores and commits")
    ft.add_argument("--eval-positions", type=int, default=2000, help="held-out positions scored")
    ft.add_argument("--seed", type=int, default=0, help="seed of the network and of the batches, 0..2**63-1")
    ft.add_argument("--threads", type=int, default=1, help="torch threads: 1 to the CPUs of this machine")
    ft.add_argument("--init", default=None, metavar="CHECKPOINT",
                    help="start from these weights (a fit, a training run or playing weights of the same model)")
    ft.add_argument("--device", default="auto", help="auto (a CUDA GPU if torch sees one, else the CPU), cpu, cuda or cuda:N")
    ft.add_argument("--workers", type=int, default=1,
                    help="processes that encode the data once before the first step: 1 to the CPUs of this machine")
    ft.add_argument("--set", action="append", metavar="KEY=VALUE",
                    help="model.* and loss.* settings as for dnb train, e.g. --set model.dim=64 --set loss.value_weight=2")
    ft.add_argument("--out", required=True, help="run folder (config.json, checkpoint.pt, metrics.jsonl)")
    ft.add_argument("--resume", action="store_true", help="continue the run in --out from its last commit")
    ft.add_argument("--no-progress", action="store_true", help="no progress bar")
    ft.set_defaults(func=_fit)
    ex = sub.add_parser("export", help="a training run's network as playing weights (e.g. to ship)")
    ex.add_argument("run", help="run folder of `dnb train` or `dnb fit`")
    ex.add_argument("out", help="checkpoint to write, e.g. agents/checkpoints/alphazero-3x3.pt")
    ex.set_defaults(func=_export)
    rp = sub.add_parser("report", help="iterations per rollback step of training runs, side by side (markdown)")
    rp.add_argument("runs", nargs="+", help="run folders of `dnb train`")
    rp.add_argument("--plot", metavar="PNG", help="also draw each run's first searched move S (and raw accuracy, "
                    "where measured) on --board against the self-play games and positions it cost, pretraining "
                    "of --set init included")
    rp.add_argument("--board", help="board of the plot, RxC (default: each run's --board)")
    rp.set_defaults(func=_report)
    pl = sub.add_parser("plot", help="pictures: `dnb plot attention --checkpoint PATH --moves 0,5 --out att.png`")
    pictures = pl.add_subparsers(dest="what", required=True, parser_class=_Parser)
    at = pictures.add_parser("attention", add_help=False,
                             help="Dotsformer's attention maps over a board (Dotsformer Figure 10); "
                                  "`dnb plot attention --help` for its options")
    at.set_defaults(func=_plot_attention, parser=at)
    sv = sub.add_parser("serve", help="the web app: play any agent in the browser, insight, replays, tournaments",
                        formatter_class=_Defaults)
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
    sv.set_defaults(func=_serve)
    en = sub.add_parser("engine", help="serve an agent over stdin/stdout with the engine protocol "
                                       "(docs/engine-protocol.md)", formatter_class=_Defaults)
    en.add_argument("spec", help="agent spec name[:key=value,...], e.g. greedy or alphabeta:depth=3")
    en.set_defaults(func=_engine)
    ag = sub.add_parser("agents", help="list the agents, or show one agent's options and strength",
                        formatter_class=_Defaults)
    ag.add_argument("name", nargs="?", default=None,
                    help="an agent: print its description, options (type, default, meaning) and strength")
    ag.set_defaults(func=_agents)
    args, rest = parser.parse_known_args(argv)  # `dnb plot attention` hands its options to the plot's parser
    if rest and getattr(args, "func", None) is not _plot_attention:
        parser.error(f"unrecognized arguments: {' '.join(rest)}")
    args.rest = rest
    try:
        return args.func(args)
    except Exception as exc:
        from dnb_env.io import disk_full

        full = disk_full(exc)  # a full disk, wherever it was met (and whatever error it became): how to go on
        if full is not None:
            error = _disk_full_message(args, full)
        elif isinstance(exc, ModuleNotFoundError):  # an extra's library: say which extra; any other module is a real error
            error = missing_extra(exc, f"dnb {args.command}")
        elif isinstance(exc, ValueError):
            error = str(exc)
        else:
            error = None
        if error is None:
            raise
        print(f"dnb: error: {error}", file=sys.stderr)
        return 2


#: The commands that write a run folder (their --out) and go on from what it holds when run again.
_RUN_FOLDERS = ("teach", "fit", "train", "solve", "tournament")


def _disk_full_message(args: argparse.Namespace, exc: OSError) -> str:
    """What ``dnb`` says when a write found the disk full: the file, the run folder and what it holds
    (every command commits atomically, so what it holds is whole), and how to go on."""
    from dnb_env.io import written_name

    what = "no space left on device" if exc.errno == errno.ENOSPC else "over the disk quota"
    file = written_name(exc.filename) if isinstance(exc.filename, str) else "a file"
    folder = getattr(args, "out", None)
    if args.command not in _RUN_FOLDERS or not folder:
        return f"{what} while writing {file}; free some space and run the same command again"
    started = any(os.path.exists(os.path.join(folder, name)) for name in ("config.json", "manifest.json"))
    again = "run the same command with --resume" if args.command in ("fit", "train") and started and \
        not args.resume else "run the same command again"
    return (f"{what} while writing {file}; the run in {folder} is intact up to {_committed(args.command, folder)}, "
            f"free some space and {again}")


def _committed(command: str, folder: str) -> str:
    """What the run folder ``folder`` of ``command`` holds committed, in words ("iteration 3", "12 finished
    games"), read without trusting it (a damaged file says only "its last commit")."""
    from dnb_env.io import parse_json, read_json

    def load(name: str):
        try:
            return read_json(os.path.join(folder, name))
        except (OSError, ValueError):
            return None

    def rows(name: str) -> list:
        try:
            with open(os.path.join(folder, name), "rb") as f:
                lines = f.read().splitlines()
        except OSError:
            return []
        return [row for row, why in map(parse_json, lines) if why is None]

    if command == "teach":
        m = load("manifest.json")
        if isinstance(m, dict) and isinstance(m.get("positions"), int) and isinstance(m.get("shards"), list):
            return f"its {m['positions']:,} positions in {len(m['shards'])} shards"
    elif command == "train":
        m = load("manifest.json")
        if isinstance(m, dict) and isinstance(m.get("iteration"), int):
            return f"iteration {m['iteration']}"
    elif command == "fit":
        steps = [r["step"] for r in rows("metrics.jsonl") if isinstance(r, dict) and isinstance(r.get("step"), int)]
        if steps and os.path.exists(os.path.join(folder, "checkpoint.pt")):
            return f"step {steps[-1]}"
    elif command == "tournament":
        games = [r for r in rows("results.jsonl") if isinstance(r, dict)]
        return f"{len(games)} finished game{'s' * (len(games) != 1)}"
    elif command == "solve":
        st = load("state.json")
        if isinstance(st, dict) and all(isinstance(st.get(k), int) for k in ("nodes", "lo", "hi")):
            return f"its last save ({st['nodes']:,} nodes searched, value in [{st['lo']}, {st['hi']}])"
    main = {"teach": "manifest.json", "train": "manifest.json", "fit": "checkpoint.pt", "solve": "state.json"}
    if not os.path.exists(os.path.join(folder, main.get(command, "results.jsonl"))):
        return "its start (nothing was committed yet)"
    return "its last commit"


if __name__ == "__main__":
    sys.exit(main())
