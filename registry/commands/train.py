"""``dnb train``: self-play training of a model family."""

from __future__ import annotations

import argparse

from dnb_env.limits import check_cpus
from registry.commands.parsing import backend_options
from registry.extras import extra_hint

#: ``dnb train``'s board when none is given: the small board of the default (cpu) preset, not DEFAULT_BOARD.
TRAIN_BOARD = "3x3"


def model_family(algorithm: str | None, model: str | None) -> str:
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


def run(args: argparse.Namespace) -> int:
    from agents.training.config import make_train_config
    from agents.training.overrides import parse_settings
    from agents.training.loop import train

    model = model_family(args.algorithm, args.model)
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


def _settings_epilog() -> str:
    """The epilog of ``dnb train --help``: every ``--set`` key with its description and defaults (the model
    families' keys need PyTorch, so this is built when the help is shown)."""
    head = "--set keys (dotted, or the bare name where unique), with their defaults under --preset cpu and paper:"
    try:
        from agents.training.overrides import settings_help

        return head + "\n  " + settings_help().replace("\n", "\n  ")
    except ModuleNotFoundError as exc:
        hint = extra_hint(exc.name or "")
        if hint is None:
            raise
        return f"dnb train needs {hint} (the --set keys are listed here once it is installed)"


def add_parser(sub: argparse._SubParsersAction) -> None:
    """The ``dnb train`` subcommand's options."""
    tr = sub.add_parser("train", help="self-play training of a model family (resnet = AlphaZero, dotsformer, alphavit)",
                        formatter_class=argparse.RawDescriptionHelpFormatter, epilog=_settings_epilog)
    tr.add_argument("algorithm", nargs="?", default=None, help="alphazero (= --model resnet), dotsformer or alphavit")
    tr.add_argument("--model", default=None, help="model family: resnet, dotsformer or alphavit (default: resnet)")
    tr.add_argument("--board", default=TRAIN_BOARD, help=f"board as RxC boxes (default {TRAIN_BOARD})")
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
    backend_options(tr, "self-play in --set workers=N Ray actors (CPU, --set threads each), the learner here")
    tr.add_argument("--set", action="append", metavar="KEY=VALUE",
                    help="any other setting, e.g. --set epochs=4 --set model.width=64 --set curriculum.rule=boxeszero")
    tr.add_argument("--no-progress", action="store_true", help="no progress bar")
    tr.set_defaults(func=run)
