"""Learning the frontier: do Nimstring and solver labels at 40-42 undrawn edges teach the 5x5 network's raw
policy and value to keep won positions won there?

    python research/frontier/learn.py data --out runs/frontier-learn/data.jsonl --seconds 2400
    python research/frontier/learn.py fit --data runs/frontier-learn/data.jsonl \
        --init agents/checkpoints/alphazero-5x5.pt --family resnet --out runs/frontier-learn/fit-resnet
    python research/frontier/learn.py value --sets research/frontier/sets/5x5-s20.json \
        research/frontier/sets/5x5-s18.json research/frontier/sets/5x5-s16.json \
        --checkpoints shipped=agents/checkpoints/alphazero-5x5.pt,tuned=runs/frontier-learn/fit-resnet/weights.pt

``data`` takes positions of 5x5 after ``--steps`` moves (18-20: 42-40 undrawn edges; one position at step 16
took three minutes) from the frontier benchmark's three kinds of play (``benchmarks/frontier.py``: prsboxes'
own games, ``alphabeta:depth=2`` against ``greedy``, guided random moves), with the games of ``--seed`` (the
benchmark's sets use seed 1, so the positions here are other games; a position whose edges equal a set's
position is skipped all the same).
Each position with at least two safe moves and no box on offer gets:

* ``nim``: for each safe move, whether drawing it wins Nimstring for the mover (``Nimstring.first_win``
  asked about that move alone, one table kept across the position's moves), or null past ``--nim-positions``
  positions for that move;
* ``won``: whether the mover can win on boxes (``Solver.can_win`` within ``--node-limit`` nodes), or null.

One JSON line a position, appended and flushed at once: a run stopped at any time keeps every finished
position, and running ``data`` again with the same settings resumes after them (a partly written last line
is dropped; settings other than the file's first line, ``--seconds`` apart, are refused). ``--workers N``
labels N games side by side in as many processes (a 16-core machine: 16); the rows are the same, only their
order in the file may differ.

``fit`` fine-tunes a 5x5 checkpoint on the positions of 90% of the games (a tenth held out, whole games):
the policy towards a uniform target over the safe moves that win Nimstring (positions where every safe
move is settled and one wins), the value towards +1 / -1 where the solver settled the position, both by the
project's loss shapes (cross-entropy, squared error), Adam, a random board symmetry a batch, one torch thread.
Every ``--eval-every`` steps it writes ``weights.pt`` and a line of ``metrics.jsonl`` with the held-out
share of positions whose raw policy's best move wins Nimstring (``nim_pick``) and the value's AUC against
the solver's labels (``value_auc``); step 0 is the starting network.

``value`` prints, per set file and checkpoint, the value head's AUC against the set's won / lost labels and
the share of won positions valued above 0, with the raw policy's keep rate scored separately by
``benchmarks/frontier.py score --agents alphazero:checkpoint=...,simulations=0``.
"""


import argparse
import importlib.util
import json
import os
import time
from dataclasses import asdict, dataclass

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

BOARD = "5x5"


def _frontier_benchmark():
    """``benchmarks/frontier.py`` (a script, not a package), loaded by its path: its kinds of play and games."""
    spec = importlib.util.spec_from_file_location("frontier_benchmark", os.path.join(ROOT, "benchmarks", "frontier.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


@dataclass(frozen=True)
class DataConfig:
    steps: str = "18,19,20"
    seed: int = 7
    seconds: float = 2400.0
    nim_positions: int = 2_000_000
    node_limit: int = 20_000_000
    table_mb: float = 256.0

    def step_list(self) -> list[int]:
        steps = [int(x) for x in self.steps.split(",") if x.strip()]
        if not steps or any(not 0 < s < 60 for s in steps):
            raise ValueError(f"steps must be moves played on 5x5, 1..59, got {self.steps!r}")
        return steps


def _set_edges() -> set[int]:
    from dnb_env.core import GameState

    out = set()
    folder = os.path.join(ROOT, "research", "frontier", "sets")
    for name in sorted(os.listdir(folder)):
        with open(os.path.join(folder, name)) as f:
            for p in json.load(f)["positions"]:
                out.add(GameState.from_actions(BOARD, actions=p["history"]).edges)
    return out


def _read_lines(path: str) -> list[dict]:
    """The complete JSON lines of ``path`` (a partly written last line is dropped)."""
    rows = []
    if not os.path.exists(path):
        return rows
    with open(path) as f:
        for line in f:
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError:
                break
    return rows


_WORKER: dict = {}  # in a labelling process: its Nimstring search, solver and the sets' positions


def _label_init(config: DataConfig) -> None:
    from dnb_env import native
    from dnb_env.solver import Solver

    _WORKER.update(config=config, bench=_frontier_benchmark(), skip=_set_edges(),
                   nim=native._require().Nimstring(5, 5, table_mb=config.table_mb),
                   solver=Solver(60, node_limit=config.node_limit, threads=1, tt_mb=512))


def _label(kind: str, g: int) -> dict:
    """The row of game ``g`` of ``kind`` (module docstring), in a process set up by :func:`_label_init`."""
    from baselines.nimstring import safe_moves
    from dnb_env.core import GameState
    from dnb_env.solver import SolverBudgetExceeded

    config, bench, nim, solver = _WORKER["config"], _WORKER["bench"], _WORKER["nim"], _WORKER["solver"]
    steps = config.step_list()
    step = steps[g % len(steps)]
    history = bench.play_to_step(BOARD, step, kind, bench.position_seed(config.seed, kind, g), g)
    state = GameState.from_actions(BOARD, actions=history)
    safe = safe_moves(state) if not state.is_terminal() else []
    row = {"kind": kind, "game": g, "step": step, "history": history}
    if len(safe) < 2 or state.edges in _WORKER["skip"]:
        row["skipped"] = "a set's position" if state.edges in _WORKER["skip"] else "fewer than two safe moves"
        return row
    t = time.perf_counter()
    nim.clear()
    labels = {}
    for m in safe:
        found = nim.first_win(state.edges, [m], config.nim_positions, keep=True)
        labels[str(m)] = None if found is None else found == m
    row["nim"], row["nim_s"] = labels, round(time.perf_counter() - t, 3)
    t = time.perf_counter()
    try:
        row["won"] = bool(solver.can_win(state))
    except SolverBudgetExceeded:
        row["won"] = None
    row["won_s"] = round(time.perf_counter() - t, 3)
    return row


def make_data(config: DataConfig, out: str, echo=print, workers: int = 1) -> int:
    """Append labelled positions to ``out``, at least one, then until ``config.seconds`` (module docstring);
    the number labelled. With ``workers`` > 1 that many processes label games side by side (each its own
    search tables); rows are appended as they finish, so the file's order may differ from run to run, and
    a resumed run skips every game already in it."""
    from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

    from dnb_env.io import atomic_write

    config.step_list()  # bad steps: refused before anything is written
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    rows = _read_lines(out)
    head = {"config": {k: v for k, v in asdict(config).items() if k != "seconds"}}
    if rows and rows[0] != head:
        raise ValueError(f"{out} was made with other settings ({rows[0].get('config')}); nothing changed")
    done = {(r["kind"], r["game"]) for r in rows[1:]}
    if rows:  # rewrite the complete lines only: a partly written last line goes
        atomic_write(out, "".join(json.dumps(r) + "\n" for r in rows))
    kinds = _frontier_benchmark().KINDS

    def games():
        game = 0
        while True:
            kind, g = kinds[game % len(kinds)], game // len(kinds)
            game += 1
            if (kind, g) not in done:
                yield kind, g

    t0, written = time.perf_counter(), 0
    os.makedirs(os.path.dirname(os.path.abspath(out)) or ".", exist_ok=True)
    with open(out, "a") as f:
        if not rows:
            f.write(json.dumps(head) + "\n")

        def write(row: dict) -> None:
            nonlocal written
            written += "nim" in row
            f.write(json.dumps(row) + "\n")
            f.flush()
            if "nim" in row:
                settled = sum(v is not None for v in row["nim"].values())
                echo(f"{row['kind']} game {row['game']} step {row['step']}: {settled}/{len(row['nim'])} safe moves "
                     f"settled ({sum(bool(v) for v in row['nim'].values())} win) in {row['nim_s']} s, "
                     f"won={row['won']} in {row['won_s']} s [{written} positions, {time.perf_counter() - t0:.0f} s]")

        todo = games()
        if workers == 1:
            _label_init(config)
            while True:  # at least one position, then until config.seconds
                write(_label(*next(todo)))
                if written and time.perf_counter() - t0 >= config.seconds:
                    break
            return written
        with ProcessPoolExecutor(workers, initializer=_label_init, initargs=(config,)) as pool:
            running = {pool.submit(_label, *next(todo)) for _ in range(workers)}
            while running:
                finished, running = wait(running, return_when=FIRST_COMPLETED)
                for fut in finished:
                    write(fut.result())
                    if not written or time.perf_counter() - t0 < config.seconds:
                        running.add(pool.submit(_label, *next(todo)))
    return written


# --------------------------------------------------------------------------------------------- training
def load_rows(path: str) -> list[dict]:
    rows = _read_lines(path)
    if not rows or "config" not in rows[0]:
        raise ValueError(f"{path}: not a frontier-learn data file")
    return [r for r in rows[1:] if "nim" in r]


def targets(rows: list[dict]):
    """``(states, pi, has_pi, z, has_z, n_safe)``: the policy target (uniform over the Nimstring-winning safe
    moves, where every safe move is settled and one wins), the value target (+1 / -1 where the solver
    settled) and each position's number of safe moves."""
    from dnb_env.core import GameState

    states = [GameState.from_actions(BOARD, actions=r["history"]) for r in rows]
    a = states[0].num_actions if states else 60
    pi = np.zeros((len(rows), a), np.float32)
    has_pi = np.zeros(len(rows), bool)
    z = np.zeros(len(rows), np.float32)
    has_z = np.zeros(len(rows), bool)
    n_safe = np.array([len(r["nim"]) for r in rows], np.int64)
    for i, r in enumerate(rows):
        labels = r["nim"]
        if all(v is not None for v in labels.values()):
            wins = [int(m) for m, v in labels.items() if v]
            if wins:
                pi[i, wins] = 1.0 / len(wins)
                has_pi[i] = True
        if r.get("won") is not None:
            z[i], has_z[i] = (1.0 if r["won"] else -1.0), True
    return states, pi, has_pi, z, has_z, n_safe


def auc(scores, labels) -> float | None:
    """Area under the ROC curve of ``scores`` for the boolean ``labels`` (ties count a half); None without
    both classes."""
    scores, labels = np.asarray(scores, float), np.asarray(labels, bool)
    pos, neg = scores[labels], scores[~labels]
    if not len(pos) or not len(neg):
        return None
    greater = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(greater / (len(pos) * len(neg)))


def evaluate(net, states, pi, has_pi, z, has_z, n_safe) -> dict:
    """On the rows of :func:`targets`: ``nim_pick``, the share of positions with a policy target whose raw
    policy's best legal move wins Nimstring (``nim_random``: a random safe move's chance), and ``value_auc``,
    the value's AUC against the solver's won / lost labels."""
    import torch

    from dnb_env.observations import encode_batch

    net.eval()
    with torch.no_grad():
        res = net(torch.from_numpy(encode_batch(net.config.encoder, states)))
    logits = res["policy_logits"].numpy().copy()
    legal = np.stack([s.legal_mask() for s in states])
    logits[~legal] = -np.inf
    best = logits.argmax(axis=1)
    picks = pi[np.arange(len(states)), best] > 0
    value = res["value"].numpy().reshape(-1)
    # a random safe move's chance of winning Nimstring, for scale: the rows' share of winning safe moves
    chance = [float((pi[i] > 0).sum()) / n_safe[i] for i in np.flatnonzero(has_pi)]
    return {"positions": len(states), "nim_pick": round(float(picks[has_pi].mean()), 4) if has_pi.any() else None,
            "nim_random": round(float(np.mean(chance)), 4) if chance else None, "nim_n": int(has_pi.sum()), "value_auc": auc(value[has_z], z[has_z] > 0), "value_n": int(has_z.sum())}


@dataclass(frozen=True)
class FitConfig:
    data: str
    init: str
    family: str = "resnet"
    steps: int = 1500
    batch: int = 64
    lr: float = 1e-4
    l2: float = 1e-4
    held: float = 0.1
    eval_every: int = 250
    seed: int = 0


def fit(config: FitConfig, out: str, echo=print) -> list[dict]:
    import torch

    from agents.checkpoint import load_network, save_checkpoint
    from dnb_env.io import atomic_write
    from dnb_env.observations import encode_batch
    from dnb_env.symmetry import symmetries, transform_policy, transform_state

    torch.set_num_threads(1)
    torch.manual_seed(config.seed)
    rows = load_rows(config.data)
    games = sorted({(r["kind"], r["game"]) for r in rows})
    rng = np.random.default_rng(config.seed)
    out_games = {games[i] for i in rng.choice(len(games), size=int(round(len(games) * config.held)), replace=False)}
    train = [r for r in rows if (r["kind"], r["game"]) not in out_games]
    held = [r for r in rows if (r["kind"], r["game"]) in out_games]
    tr, he = targets(train), targets(held)
    net, _ = load_network(config.init, family=config.family)
    encoder = net.config.encoder
    optimizer = torch.optim.Adam(net.parameters(), lr=config.lr, weight_decay=config.l2)
    os.makedirs(out, exist_ok=True)
    atomic_write(os.path.join(out, "config.json"), json.dumps(asdict(config), indent=1))
    report = [{"step": 0, "train_positions": len(train), "held": evaluate(net, *he)}]
    echo(json.dumps(report[0]))
    usable = np.flatnonzero(tr[2] | tr[4])
    syms = symmetries(5, 5)
    t0 = time.perf_counter()
    for step in range(1, config.steps + 1):
        net.train()
        idx = rng.choice(usable, size=min(config.batch, len(usable)), replace=False)
        sym = syms[int(rng.integers(len(syms)))]
        states = [transform_state(sym, tr[0][i]) for i in idx]
        pi = transform_policy(sym, tr[1][idx], 5, 5)
        planes = torch.from_numpy(encode_batch(encoder, states))
        res = net(planes)
        has_pi, has_z = torch.from_numpy(tr[2][idx]), torch.from_numpy(tr[4][idx])
        logp = torch.log_softmax(res["policy_logits"], dim=1)
        target = torch.from_numpy(pi)
        p_loss = -(target * torch.where(target > 0, logp, torch.zeros_like(logp))).sum(1)
        v_loss = (res["value"].reshape(-1) - torch.from_numpy(tr[3][idx])) ** 2
        loss = (p_loss * has_pi).sum() / max(1, int(has_pi.sum())) + (v_loss * has_z).sum() / max(1, int(has_z.sum()))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        if step % config.eval_every == 0 or step == config.steps:
            row = {"step": step, "seconds": round(time.perf_counter() - t0, 1), "held": evaluate(net, *he)}
            save_checkpoint(os.path.join(out, "weights.pt"), net, extra={"frontier_learn": asdict(config), "step": step})
            report.append(row)
            atomic_write(os.path.join(out, "metrics.jsonl"), "".join(json.dumps(r) + "\n" for r in report))
            echo(json.dumps(row))
    return report


def value_report(sets: list[str], checkpoints: dict[str, str], family: str) -> list[dict]:
    """Per set and checkpoint: the value's AUC against the set's won / lost labels and the share of won
    positions valued above 0."""
    import torch

    from agents.checkpoint import load_network
    from dnb_env.core import GameState
    from dnb_env.observations import encode_batch

    out = []
    for path in sets:
        with open(path) as f:
            data = json.load(f)
        pos = [p for p in data["positions"] if p["label"] in ("won", "lost")]
        states = [GameState.from_actions(BOARD, actions=p["history"]) for p in pos]
        won = np.array([p["label"] == "won" for p in pos])
        for name, ckpt in checkpoints.items():
            net, _ = load_network(ckpt, family=family)
            net.eval()
            with torch.no_grad():
                v = net(torch.from_numpy(encode_batch(net.config.encoder, states)))["value"].numpy().reshape(-1)
            out.append({"set": os.path.basename(path), "checkpoint": name, "positions": len(pos), "won": int(won.sum()),
                        "value_auc": auc(v, won), "won_valued_above_0": round(float((v[won] > 0).mean()), 4)})
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    d = sub.add_parser("data", help="label positions at 40-42 undrawn edges by Nimstring and the solver")
    d.add_argument("--out", required=True)
    for f in DataConfig.__dataclass_fields__.values():
        d.add_argument("--" + f.name.replace("_", "-"), type=type(f.default), default=f.default)
    d.add_argument("--workers", type=int, default=1, help="labelling processes side by side (speed only)")
    t = sub.add_parser("fit", help="fine-tune a 5x5 checkpoint on a data file")
    t.add_argument("--out", required=True)
    for f in FitConfig.__dataclass_fields__.values():
        kind = str if f.name in ("data", "init", "family") else type(f.default)
        required = f.name in ("data", "init")
        t.add_argument("--" + f.name.replace("_", "-"), type=kind, required=required,
                       default=None if required else f.default)
    v = sub.add_parser("value", help="the value's AUC on the frontier sets, per checkpoint")
    v.add_argument("--sets", nargs="+", required=True)
    v.add_argument("--checkpoints", required=True, help="NAME=PATH,NAME=PATH")
    v.add_argument("--family", default="resnet")
    args = vars(ap.parse_args(argv))
    command = args.pop("command")
    try:
        if command == "data":
            out, workers = args.pop("out"), args.pop("workers")
            make_data(DataConfig(**args), out, workers=workers)
        elif command == "fit":
            out = args.pop("out")
            fit(FitConfig(**args), out)
        else:
            cks = dict(part.split("=", 1) for part in args["checkpoints"].split(","))
            for row in value_report(args["sets"], cks, args["family"]):
                print(json.dumps(row))
    except ValueError as exc:
        ap.error(str(exc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
