"""``dnb fit``: supervised training of a model family on teacher datasets."""

from __future__ import annotations

import argparse

from dnb_env.core import DEFAULT_BOARD
from dnb_env.limits import check_cpus
from registry.commands.parsing import Defaults
from registry.commands.train import model_family


def run(args: argparse.Namespace) -> int:
    from agents.training.config import make_train_config
    from agents.training.overrides import parse_settings
    from agents.training.supervised import FitConfig, fit

    model = model_family(args.algorithm, args.model)
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


def add_parser(sub: argparse._SubParsersAction) -> None:
    """The ``dnb fit`` subcommand's options."""
    ft = sub.add_parser("fit", help="supervised training of a model family on teacher datasets (dnb teach)",
                        formatter_class=Defaults)
    ft.add_argument("algorithm", nargs="?", default=None, help="alphazero (= --model resnet), dotsformer or alphavit")
    ft.add_argument("--model", default=None, help="model family (default: resnet)")
    ft.add_argument("--board", default=DEFAULT_BOARD, help="board as RxC boxes")
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
    ft.set_defaults(func=run)
