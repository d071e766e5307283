"""The ship gate: a candidate pair of networks scored and played against the pair it would replace.

    python research/gate.py --tag nim38 \\
        --net df=dotsformer:runs/exports/df-nim38.pt --net rs=alphazero:runs/exports/rs-nim38.pt \\
        --ref df=dotsformer:runs/exports/df-v42-10000-s1600.pt --ref rs=alphazero:runs/exports/rs-v42-10000-s1600.pt \\
        held midgame midsearch raw-h2h h2h ship shipraw base
    python research/gate.py ... --dry-run h2h       # print the commands only

Parts (each writes under ``--out``, named ``TAG-PART[-NET]``; tournaments resume from their folders, so a
killed gate continues where it stopped when run again):

==========  =========================================================================================
held        ``benchmarks/teacher_score.py``: every net and ref on each ``--held`` dataset (raw policies)
searched    ``benchmarks/searched_value.py``: each net's searched value on each ``--held`` dataset
rules       ``benchmarks/teacher_rules.py``: the hand-written move rules on each ``--held`` dataset
midgame     ``benchmarks/midgame.py``: greedy and every net's raw policy, ``--positions`` winning positions a step
midsearch   the same, each net searched (50 simulations, the solver's zones off)
raw-h2h     the first two nets against each other, raw policies (``--games``, default 400)
h2h         the same, searched at the play defaults
ship        each net against the ref of the same name, searched (default 200 games)
shipraw     the same, raw policies
base        each net in a gauntlet against the baselines, searched (default 50 games a pair)
==========  =========================================================================================

A net is ``NAME=AGENT:CHECKPOINT`` (``df=dotsformer:research/weights/df-100k-sac2.pt``). This one script
replaces the per-study gate scripts the research used before (``eval-*.sh``, ``ship-eval.sh``): each was this
gate with its own nets, datasets and parts, as research/README.md lists.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import shlex
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
PARTS = ("held", "searched", "rules", "midgame", "midsearch", "raw-h2h", "h2h", "ship", "shipraw", "base")
GAMES = {"raw-h2h": 400, "h2h": 400, "ship": 200, "shipraw": 200, "base": 50}
RAW = "simulations=0"
SEARCHED_OFF = "simulations=50,solve_root=0,solve_leaf=0"
BASELINES = "random,greedy,alphabeta:depth=4,mcts,prsboxes"
HELD = {"5x5": ("teach5-nfar-held", "teach5-gfar-held", "teach5-vfar-held", "teach5-held"),
        "3x3": ("teach3-held",)}


def _net(text: str) -> tuple[str, str, str]:
    name, eq, rest = text.partition("=")
    agent, colon, path = rest.partition(":")
    if not (eq and colon and name and agent and path) or not name.replace("-", "").replace("_", "").isalnum():
        raise argparse.ArgumentTypeError(f"expected NAME=AGENT:CHECKPOINT, got {text!r}")
    return name, agent, path


def _spec(net: tuple[str, str, str], options: str = "") -> str:
    _, agent, path = net
    return f"{agent}:checkpoint={path}" + (f",{options}" if options else "")


def commands(args) -> list[tuple[list[str], pathlib.Path | None]]:
    """Every command of the requested parts, with the file its standard output goes to (None: a tournament,
    which writes its own folder)."""
    py, out, tag = [sys.executable], pathlib.Path(args.out), args.tag
    nets, refs = args.net, {r[0]: r for r in args.ref}
    games = lambda part: str(args.games or GAMES[part])
    tourney = [sys.executable, "-m", "registry.cli", "tournament", "--board", args.board,
               "--openings", args.openings, "--seed", str(args.seed), "--workers", str(args.workers), "--no-progress"]
    held = [pathlib.Path(args.data_dir) / h for h in (args.held or HELD.get(args.board, ()))]
    bench = lambda name: py + [str(ROOT / "benchmarks" / f"{name}.py")]
    todo: list[tuple[list[str], pathlib.Path | None]] = []
    for part in args.parts:
        p = out / f"{tag}-{part}"
        if part in ("held", "searched", "rules"):
            if not held:
                raise SystemExit(f"gate: no held-out datasets for {args.board}: name them with --held")
            for h in held:
                stem = pathlib.Path(f"{p}-{h.name}")
                if part == "held":
                    cmd = bench("teacher_score") + ["--held", str(h), "--json", f"{stem}.json"] + \
                        [f"{n[0]}={n[2]}" for n in nets] + [f"{r[0]}-ref={r[2]}" for r in args.ref]
                elif part == "searched":
                    cmd = bench("searched_value") + ["--held", str(h), "--json", f"{stem}.json"] + \
                        [f"{n[0]}={_spec(n)}" for n in nets]
                else:
                    cmd = bench("teacher_rules") + ["--held", str(h)]
                if args.held_positions:
                    cmd += ["--positions", str(args.held_positions)]
                todo.append((cmd, pathlib.Path(f"{stem}.txt")))
        elif part in ("midgame", "midsearch"):
            agents = ["greedy"] if part == "midgame" else []
            options = RAW if part == "midgame" else SEARCHED_OFF
            groups = [nets] if part == "midgame" else [[n] for n in nets]
            for group in groups:
                cmd = bench("midgame") + ["--board", args.board, "--positions", str(args.positions), "--agents",
                                          ",".join(agents + [_spec(n, options) for n in group])]
                if args.steps:
                    cmd += ["--steps", args.steps]
                suffix = "" if part == "midgame" else f"-{group[0][0]}"
                todo.append((cmd, pathlib.Path(f"{p}{suffix}.txt")))
        elif part in ("raw-h2h", "h2h"):
            if len(nets) < 2:
                raise SystemExit(f"gate: {part} needs two --net")
            options = RAW if part == "raw-h2h" else ""
            todo.append((tourney + ["--games", games(part), "--agents",
                                    ",".join(_spec(n, options) for n in nets[:2]), "--out", str(p)], None))
        elif part in ("ship", "shipraw"):
            options = RAW if part == "shipraw" else ""
            for n in nets:
                if n[0] not in refs:
                    raise SystemExit(f"gate: {part} needs --ref {n[0]}=AGENT:CHECKPOINT")
                todo.append((tourney + ["--games", games(part), "--agents",
                                        f"{_spec(n, options)},{_spec(refs[n[0]], options)}", "--out", f"{p}-{n[0]}"], None))
        elif part == "base":
            for n in nets:
                todo.append((tourney + ["--mode", "gauntlet", "--games", games(part), "--agents",
                                        f"{_spec(n)},{args.baselines}", "--out", f"{p}-{n[0]}"], None))
    return todo


def run(todo, dry_run: bool = False) -> None:
    for cmd, out in todo:
        line = " ".join(shlex.quote(c) for c in cmd) + (f" > {shlex.quote(str(out))}" if out else "")
        print(line, flush=True)
        if dry_run:
            continue
        if out is None:
            subprocess.run(cmd, cwd=ROOT, check=True)
            continue
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(f".{out.name}.tmp")
        with open(tmp, "w") as f:
            subprocess.run(cmd, cwd=ROOT, check=True, stdout=f)
        os.replace(tmp, out)                        # a killed part leaves no half-written figures


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="research/gate.py", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    p.add_argument("parts", nargs="+", choices=PARTS, metavar="PART", help=f"one or more of {', '.join(PARTS)}")
    p.add_argument("--tag", required=True, help="names the outputs: OUT/TAG-PART...")
    p.add_argument("--net", type=_net, action="append", required=True, help="NAME=AGENT:CHECKPOINT (repeat)")
    p.add_argument("--ref", type=_net, action="append", default=[], help="the replaced net of the same NAME")
    p.add_argument("--board", default="5x5")
    p.add_argument("--out", default=str(ROOT / "runs" / "gate"), help="folder of the outputs")
    p.add_argument("--data-dir", default=str(ROOT / "data"), help="folder of the unpacked datasets")
    p.add_argument("--held", type=lambda s: s.split(","), help="datasets under --data-dir (default: the board's held-out sets)")
    p.add_argument("--held-positions", type=int, default=0, help="the first N positions of each (0: all)")
    p.add_argument("--positions", type=int, default=100, help="winning positions a step for midgame / midsearch")
    p.add_argument("--steps", help="midgame steps (default: the benchmark's)")
    p.add_argument("--games", type=int, help="games of every match (default: the part's)")
    p.add_argument("--openings", default="15:guided")
    p.add_argument("--baselines", default=BASELINES)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    args = p.parse_args(argv)
    # every path as an absolute one: the parts run from the checkout, whatever folder the gate was called from
    args.out, args.data_dir = str(pathlib.Path(args.out).resolve()), str(pathlib.Path(args.data_dir).resolve())
    args.net = [(n, a, str(pathlib.Path(c).resolve())) for n, a, c in args.net]
    args.ref = [(n, a, str(pathlib.Path(c).resolve())) for n, a, c in args.ref]
    names = [n[0] for n in args.net]
    if len(set(names)) != len(names):
        p.error(f"two --net share a name: {names}")
    if not args.dry_run:
        missing = [n[2] for n in args.net + args.ref if not pathlib.Path(n[2]).exists()]
        if missing:
            p.error(f"no checkpoint {missing[0]} (python research/data.py restore runs/exports brings the old exports)")
    try:
        run(commands(args), args.dry_run)
    except subprocess.CalledProcessError as exc:
        print(f"gate: a part failed (exit {exc.returncode}): {' '.join(map(str, exc.cmd))}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
