"""AlphaZero self-play training: self-play -> replay buffer -> Adam with L2 -> next iteration.

* Self-play: ``games_per_iteration`` games played in lockstep (:func:`agents.mcts.run_many`), so every
  network call carries leaves of all of them; Dirichlet noise at the root, moves drawn at
  ``temperature`` for the first ``temperature_moves`` moves, then the most visited. ``workers=N`` splits
  the games over N processes (the tree search is Python, one core each; each has its own copy of the net
  on ``device``); game g of iteration i is seeded by (seed, i, g), so the split does not change the games.
* Targets: the root visit distribution and the game result z for the player to move (+1/-1/0), or
  ``(1 - q_mix) z + q_mix Q`` with the root's searched value Q (BoxesZero uses q_mix = 0.25).
* Replay: samples of the last ``buffer_iterations`` iterations, drawn with weight
  ``gamma_decay^(iteration - sample iteration)`` (Dotsformer's experience decay); each drawn sample is
  mapped by a random board symmetry (8 on square boards, 4 otherwise).
* Loss: cross-entropy to the visit distribution + squared value error; L2 through Adam's weight decay.
* Every iteration writes ``checkpoint.pt`` (network, optimiser, iteration; atomic), ``replay.npz`` (atomic),
  a line of ``metrics.jsonl`` and ``training.png``; ``--resume`` continues after the last complete
  iteration. The config is saved as ``config.json`` and a resume with another config is refused, except
  for ``iterations`` and ``lr`` (to extend a run, or anneal its learning rate; each metrics row records
  the lr it trained with) and ``workers`` and ``device`` (to move a run between machines).

    dnb train alphazero --board 3x3 --preset cpu --out runs/az-3x3 [--resume] [--iterations N]
"""

from __future__ import annotations

import dataclasses
import json
import os
import time
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
import torch
import torch.nn.functional as F

from agents.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from agents.mcts import MCTS, MCTSConfig, final_value, run_many, visits_to_policy
from agents.networks import NetConfig, build_network
from agents.networks.evaluator import NetworkEvaluator
from dnb_env.core import GameState, parse_board
from dnb_env.observations import encode_batch
from dnb_env.symmetry import symmetries, transform_planes, transform_policy

__all__ = ["TrainConfig", "train", "export_weights", "PRESETS"]


@dataclass(frozen=True)
class TrainConfig:
    board: str = "3x3"
    encoder: str = "alphazero4"
    blocks: int = 6
    width: int = 112
    iterations: int = 100
    games_per_iteration: int = 32
    simulations: int = 800  # Table A1
    c_puct: float = 1.0  # Table A1
    temperature: float = 0.4  # Table A1
    temperature_moves: int = 8
    dirichlet_alpha: float = 0.3
    dirichlet_epsilon: float = 0.25
    search_batch: int = 8
    prune: bool = False  # pure AlphaZero
    q_mix: float = 0.0
    value_target: str = "win"  # "win" (AlphaZero's z) or "margin" (final box margin / boxes, as the solver scores)
    buffer_iterations: int = 10
    gamma_decay: float = 0.9  # Table A1 experience decay
    batch_size: int = 1024  # Table A1
    epochs: int = 5  # Table A1
    lr: float = 1e-3
    l2: float = 1e-4
    augment: bool = True
    seed: int = 0
    device: str = "cpu"
    workers: int = 1  # self-play processes; each plays its share of the games with its own copy of the net
    eval_positions: int = 200  # labelled positions for the accuracy metrics (boards the solver covers)
    eval_games: int = 20  # raw-policy games against random and against greedy at each evaluation (0: none)

    def __post_init__(self):
        parse_board(self.board)
        NetConfig(board=self.board, encoder=self.encoder, blocks=self.blocks, width=self.width)
        if not 0 <= self.q_mix <= 1:
            raise ValueError("q_mix must be in [0, 1]")
        if self.workers < 1:
            raise ValueError(f"workers must be >= 1, not {self.workers}")
        if self.value_target not in ("win", "margin"):
            raise ValueError(f"value_target must be 'win' or 'margin', not {self.value_target!r}")

    def net_config(self) -> NetConfig:
        return NetConfig(board=self.board, encoder=self.encoder, blocks=self.blocks, width=self.width)

    def mcts_config(self) -> MCTSConfig:
        return MCTSConfig(simulations=self.simulations, c_puct=self.c_puct, temperature=self.temperature,
                          dirichlet_alpha=self.dirichlet_alpha, dirichlet_epsilon=self.dirichlet_epsilon,
                          add_noise=True, batch_size=self.search_batch, prune=self.prune, reuse_tree=False,
                          value=self.value_target)


PRESETS = {
    "paper": {},  # the dataclass defaults: Dotsformer Table A1 and the 6 x 112 residual tower
    # small tower, fewer simulations; margin values and exact simple-endgame leaves make the few
    # simulations count (the pure AlphaZero settings stay in "paper")
    "cpu": dict(blocks=3, width=32, simulations=100, games_per_iteration=32, batch_size=256, epochs=4,
                iterations=60, buffer_iterations=8, value_target="margin", prune=True),
}


def make_config(preset: str, **overrides) -> TrainConfig:
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}; presets: {', '.join(PRESETS)}")
    fields = {f.name for f in dataclasses.fields(TrainConfig)}
    unknown = set(overrides) - fields
    if unknown:
        raise ValueError(f"unknown training options: {sorted(unknown)}")
    return TrainConfig(**{**PRESETS[preset], **{k: v for k, v in overrides.items() if v is not None}})


# ------------------------------------------------------------------------------ self-play
def self_play(net, config: TrainConfig, iteration: int = 0, games: range | None = None) -> tuple[list, dict]:
    """Play the iteration's games ``games`` (default all ``games_per_iteration``) in lockstep; returns
    samples (state, pi, z) and stats. Game g draws its noise and moves from ``default_rng([seed,
    iteration, g])``, so a game does not depend on which process plays it or beside which others."""
    evaluator = NetworkEvaluator(net, config.device)
    mcfg = config.mcts_config()
    games = range(config.games_per_iteration) if games is None else games
    n = len(games)
    rngs = [np.random.default_rng([config.seed, iteration, g]) for g in games]
    states = [GameState.new(config.board) for _ in range(n)]
    searches = [MCTS(evaluator, mcfg, rngs[i]) for i in range(n)]
    records: list[list] = [[] for _ in range(n)]  # (state, pi, q) per move
    active = list(range(n))
    while active:
        counts = run_many([searches[i] for i in active], [states[i] for i in active], evaluator)
        for k, i in enumerate(active):
            s = states[i]
            c = counts[k]
            pi = visits_to_policy(c, 1.0)
            q = searches[i].root_value()
            records[i].append((s, pi, q))
            if len(s.history) < config.temperature_moves:
                p = visits_to_policy(c, config.temperature)
                a = int(rngs[i].choice(len(p), p=p))
            else:
                best = np.flatnonzero(c == c.max())
                a = int(rngs[i].choice(best))
            states[i] = s.apply(a)
        active = [i for i in active if not states[i].is_terminal()]
    samples = []
    margins = []
    for i in range(n):
        final = states[i]
        margins.append(final.scores[0] - final.scores[1])
        for s, pi, q in records[i]:
            z = final_value(final.as_seen_by(s.current_player), config.value_target)
            target = (1 - config.q_mix) * z + config.q_mix * q
            samples.append((s, pi, target))
    stats = {"games": n, "positions": len(samples), "first_player_win_rate": float(np.mean([m > 0 for m in margins])),
             "network_calls": evaluator.calls}
    return samples, stats


def _worker_init() -> None:
    torch.set_num_threads(1)  # one core per self-play process


_WORKER_NET: dict = {}


def _self_play_share(state_dict, config: TrainConfig, iteration: int, games: range) -> tuple[list, dict]:
    """One worker process's share of an iteration's self-play (its net is built once and reloaded)."""
    net = _WORKER_NET.get("net")
    if net is None:
        net = _WORKER_NET["net"] = build_network(config.net_config()).to(config.device)
    net.load_state_dict(state_dict)
    return self_play(net, config, iteration, games)


class SelfPlayPool:
    """``config.workers`` processes that play one iteration's games between them (contiguous shares; see
    :func:`self_play` for the seeding). With ``workers=1`` the games are played in this process."""

    def __init__(self, config: TrainConfig):
        self.config = config
        self.pool = None
        if config.workers > 1:
            import concurrent.futures
            import multiprocessing

            self.pool = concurrent.futures.ProcessPoolExecutor(
                config.workers, mp_context=multiprocessing.get_context("spawn"), initializer=_worker_init)

    def play(self, net, iteration: int) -> tuple[list, dict]:
        cfg = self.config
        if self.pool is None:
            return self_play(net, cfg, iteration)
        state = {k: v.detach().cpu() for k, v in net.state_dict().items()}
        bounds = np.linspace(0, cfg.games_per_iteration, cfg.workers + 1).astype(int)
        jobs = [self.pool.submit(_self_play_share, state, cfg, iteration, range(lo, hi))
                for lo, hi in zip(bounds[:-1], bounds[1:]) if hi > lo]
        results = [job.result() for job in jobs]
        samples = [x for part, _ in results for x in part]
        stats = {"games": sum(st["games"] for _, st in results), "positions": len(samples),
                 "first_player_win_rate": float(sum(st["first_player_win_rate"] * st["games"] for _, st in results)
                                                / max(1, sum(st["games"] for _, st in results))),
                 "network_calls": sum(st["network_calls"] for _, st in results)}
        return samples, stats

    def close(self) -> None:
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)
            self.pool = None


# ------------------------------------------------------------------------------ replay
class Replay:
    def __init__(self, planes=None, policies=None, values=None, iterations=None):
        self.planes = planes
        self.policies = policies
        self.values = values
        self.iterations = iterations

    def add(self, samples, encoder: str, iteration: int) -> None:
        planes = encode_batch(encoder, [s for s, _, _ in samples])
        policies = np.stack([pi for _, pi, _ in samples]).astype(np.float32)
        values = np.array([z for _, _, z in samples], dtype=np.float32)
        its = np.full(len(samples), iteration, dtype=np.int32)
        if self.planes is None:
            self.planes, self.policies, self.values, self.iterations = planes, policies, values, its
        else:
            self.planes = np.concatenate([self.planes, planes])
            self.policies = np.concatenate([self.policies, policies])
            self.values = np.concatenate([self.values, values])
            self.iterations = np.concatenate([self.iterations, its])

    def keep_recent(self, iteration: int, window: int) -> None:
        keep = self.iterations > iteration - window
        self.planes, self.policies = self.planes[keep], self.policies[keep]
        self.values, self.iterations = self.values[keep], self.iterations[keep]

    def weights(self, iteration: int, gamma: float) -> np.ndarray:
        w = gamma ** (iteration - self.iterations).astype(np.float64)
        return w / w.sum()

    def __len__(self):
        return 0 if self.planes is None else len(self.planes)

    def save(self, path: str) -> None:
        tmp = f"{path}.tmp{os.getpid()}.npz"
        np.savez_compressed(tmp, planes=self.planes, policies=self.policies, values=self.values,
                            iterations=self.iterations)
        os.replace(tmp, path)

    @classmethod
    def load(cls, path: str) -> "Replay":
        with np.load(path) as data:
            return cls(data["planes"], data["policies"], data["values"], data["iterations"])


def train_steps(net, optimizer, replay: Replay, config: TrainConfig, iteration: int, rng) -> dict:
    net.train()
    rows, cols = parse_board(config.board)
    syms = symmetries(rows, cols)
    n = len(replay)
    steps = max(1, config.epochs * n // config.batch_size)
    w = replay.weights(iteration, config.gamma_decay)
    totals = {"policy_loss": 0.0, "value_loss": 0.0}
    for _ in range(steps):
        idx = rng.choice(n, size=min(config.batch_size, n), p=w)
        planes, pis = replay.planes[idx], replay.policies[idx]
        if config.augment:
            sym = syms[int(rng.integers(len(syms)))]
            planes = transform_planes(sym, config.encoder, planes)
            pis = transform_policy(sym, pis, rows, cols)
        x = torch.from_numpy(np.ascontiguousarray(planes)).to(config.device)
        target_pi = torch.from_numpy(np.ascontiguousarray(pis)).to(config.device)
        target_v = torch.from_numpy(replay.values[idx]).to(config.device)
        logits, v = net(x)
        policy_loss = -(target_pi * F.log_softmax(logits, dim=1)).sum(dim=1).mean()
        value_loss = F.mse_loss(v, target_v)
        loss = policy_loss + value_loss
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        totals["policy_loss"] += policy_loss.item()
        totals["value_loss"] += value_loss.item()
    net.eval()
    return {k: v / steps for k, v in totals.items()} | {"train_steps": steps}


# ------------------------------------------------------------------------------ evaluation
class Labelled(NamedTuple):
    """A position with the exact solver's verdict on its moves."""

    state: GameState
    optimal: frozenset  # moves reaching the solver's best final margin
    winning: frozenset  # moves keeping the best result (win, draw or loss): BoxesZero's criterion
    hard: bool  # the greedy rule allows a move that is not optimal


MIDDLE_GAME = 22 / 60  # BoxesZero's middle-game test sets start at step 22 of the 60 edges of 5x5


def labelled_positions(board: str, count: int, seed: int = 0, first: int | None = None) -> list[Labelled]:
    """Middle and late-game positions from realistic play (:func:`dnb_env.analysis.realistic_move`),
    stopped after ``first`` .. ``num_actions - 3`` moves, labelled by the exact solver. ``first`` defaults to
    the start of the middle game, ``round(MIDDLE_GAME * num_actions)`` (9 on 3x3). Only for boards the
    solver covers (<= 24 edges); others give an empty list."""
    from baselines.greedy import GreedyAgent
    from baselines.solver import Solver
    from dnb_env.analysis import realistic_move
    import random

    g = GameState.new(board)
    if g.num_actions > 24:
        return []
    if first is None:
        first = round(MIDDLE_GAME * g.num_actions)
    if not 0 <= first <= g.num_actions - 3:
        raise ValueError(f"first must be in [0, {g.num_actions - 3}], not {first}")
    solver = Solver()
    rng = random.Random(seed)
    out = []
    while len(out) < count:
        s = GameState.new(board)
        stop = rng.randrange(first, s.num_actions - 2)
        while len(s.history) < stop and not s.is_terminal():
            s = s.apply(realistic_move(s, rng))
        if s.is_terminal():
            continue
        mv = solver.move_values(s)
        best = max(mv.values())
        optimal = frozenset(a for a, v in mv.items() if v == best)
        sign = (best > 0) - (best < 0)
        winning = frozenset(a for a, v in mv.items() if (v > 0) - (v < 0) == sign)
        hard = any(a not in optimal for a in GreedyAgent.candidates(s))
        out.append(Labelled(s, optimal, winning, hard))
    return out


def accuracy(net, positions: list[Labelled], config: TrainConfig, simulations: int | None = None) -> dict:
    """Share of positions where the raw policy's top move (and the search's, if ``simulations``) is optimal,
    overall and where greedy errs."""
    if not positions:
        return {}
    moves = {"raw": policy_moves(net, [p.state for p in positions], config.device)}
    if simulations:
        moves["search"] = search_moves(net, [p.state for p in positions], simulations, config.value_target,
                                       config.c_puct, config.search_batch, config.device)
    out = {}
    for kind, chosen in moves.items():
        right = [m in p.optimal for m, p in zip(chosen, positions)]
        out[f"{kind}_accuracy"] = float(np.mean(right))
        hard = [r for r, p in zip(right, positions) if p.hard]
        if hard:
            out[f"{kind}_accuracy_greedy_hard"] = float(np.mean(hard))
    return out


def policy_moves(net, states: list[GameState], device: str = "cpu") -> list[int]:
    """The raw policy's most probable legal move in each state."""
    priors, _ = NetworkEvaluator(net, device).evaluate(states)
    return [int(np.argmax(p)) for p in priors]


def search_moves(net, states: list[GameState], simulations: int, value: str = "win", c_puct: float = 1.0,
                 batch_size: int = 8, device: str = "cpu") -> list[int]:
    """The most visited move of a ``simulations`` search (pruning on, as when playing; ``value`` in the
    units the value head was trained on) in each state; the searches run in lockstep so network calls
    are shared."""
    evaluator = NetworkEvaluator(net, device)
    mcfg = MCTSConfig(simulations=simulations, c_puct=c_puct, batch_size=batch_size, prune=True,
                      reuse_tree=False, value=value)
    rng = np.random.default_rng(0)
    counts = run_many([MCTS(evaluator, mcfg, rng) for _ in states], states, evaluator)
    return [int(np.argmax(c)) for c in counts]


def win_rates(net, config: TrainConfig, seed: int = 0) -> dict:
    """The raw policy's score (wins + draws/2) against ``random`` and ``greedy`` over ``config.eval_games``
    games each: first player alternating, the same guided random opening (num_actions // 6 moves) for
    both colour assignments."""
    from agents.alphazero import PolicyAgent
    from agents.arena import make_opening, play_game
    from registry.agents import make_agent

    if config.eval_games <= 0:
        return {}
    me = PolicyAgent(NetworkEvaluator(net, config.device), seed=seed)
    k = GameState.new(config.board).num_actions // 6
    out = {}
    for name in ("random", "greedy"):
        opponent = make_agent(name, board=config.board, seed=seed)
        score = 0.0
        for g in range(config.eval_games):
            opening = make_opening(config.board, k, "guided", seed + g // 2)
            seat = g % 2  # our seat
            rec = play_game(config.board, *((me, opponent) if seat == 0 else (opponent, me)), opening)
            diff = rec["scores"][seat] - rec["scores"][1 - seat]
            score += 1.0 if diff > 0 else 0.5 if diff == 0 else 0.0
        out[f"win_rate_vs_{name}"] = score / config.eval_games
    return out


# ------------------------------------------------------------------------------ driver
def _panel(ax, metrics: list[dict], keys: tuple[str, ...], title: str, empty: str = "not measured yet",
           **style) -> None:
    """One line per metric in ``keys`` over the iterations that logged it, on a 0..1 axis (``empty`` is
    written in the panel when none did)."""
    for key in keys:
        rows = [m for m in metrics if key in m]
        if rows:
            ax.plot([m["iteration"] for m in rows], [m[key] for m in rows], label=key.replace("_", " "), **style)
    ax.set_ylim(0, 1)
    ax.set_xlabel("iteration")
    ax.set_title(title)
    if ax.lines:
        ax.legend(fontsize=8)
    else:
        ax.text(0.5, 0.5, empty, ha="center", va="center", transform=ax.transAxes, color="grey")
    ax.grid(alpha=0.3)


def _plot(metrics: list[dict], path: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    it = [m["iteration"] for m in metrics]
    fig, (a1, a2, a3) = plt.subplots(1, 3, figsize=(15, 4))
    a1.plot(it, [m["policy_loss"] for m in metrics], label="policy loss")
    a1.plot(it, [m["value_loss"] for m in metrics], label="value loss")
    a1.set_xlabel("iteration")
    a1.legend()
    a1.grid(alpha=0.3)
    _panel(a2, metrics, ("raw_accuracy", "search_accuracy", "raw_accuracy_greedy_hard", "search_accuracy_greedy_hard"),
           "share of optimal moves (exact solver)", empty="no exact labels: the solver covers\nboards of at most 24 edges")
    _panel(a3, metrics, ("win_rate_vs_random", "win_rate_vs_greedy"), "raw policy's score per game", marker="o")
    fig.tight_layout()
    tmp = path + ".tmp.png"
    fig.savefig(tmp, dpi=100)
    plt.close(fig)
    os.replace(tmp, path)


RESUMABLE = ("iterations", "lr", "workers", "device")  # settings a resumed run may change


def _save(path, net, optimizer, config, iteration):
    save_checkpoint(path, net, extra={"iteration": iteration, "optimizer": optimizer.state_dict(),
                                      "config": dataclasses.asdict(config), "value_target": config.value_target})


def export_weights(run: str, out: str) -> dict:
    """Write the network of the run folder ``run`` as a playing checkpoint ``out`` (atomically; no optimiser
    or replay), recording its training config, iterations, self-play games and seconds; returns the extra."""
    payload = load_checkpoint(os.path.join(run, "checkpoint.pt"))
    extra = payload["extra"]
    if "config" not in extra or "iteration" not in extra:
        raise CheckpointError(f"{run}/checkpoint.pt is not a training checkpoint")
    config = TrainConfig(**extra["config"])
    net = build_network(config.net_config())
    net.load_state_dict(payload["state_dict"])
    metrics = []
    path = os.path.join(run, "metrics.jsonl")
    if os.path.exists(path):
        with open(path) as f:
            metrics = [json.loads(line) for line in f if line.strip()]
    metrics = [m for m in metrics if m["iteration"] <= extra["iteration"]]
    info = {"value_target": config.value_target, "config": extra["config"], "iterations": extra["iteration"],
            "self_play_games": sum(m["games"] for m in metrics),
            "training_seconds": round(sum(m["self_play_s"] + m["train_s"] for m in metrics))}
    save_checkpoint(out, net, extra=info)
    return info


def train(config: TrainConfig, out: str, resume: bool = False, progress: bool = True, echo=print,
          eval_simulations: int = 200) -> list[dict]:
    os.makedirs(out, exist_ok=True)
    cfg_path = os.path.join(out, "config.json")
    ckpt_path = os.path.join(out, "checkpoint.pt")
    replay_path = os.path.join(out, "replay.npz")
    metrics_path = os.path.join(out, "metrics.jsonl")
    torch.manual_seed(config.seed)
    net = build_network(config.net_config()).to(config.device)
    optimizer = torch.optim.Adam(net.parameters(), lr=config.lr, weight_decay=config.l2)
    start = 0
    replay = Replay()
    metrics: list[dict] = []
    if resume and os.path.exists(ckpt_path):
        with open(cfg_path) as f:
            saved = json.load(f)
        mine = dataclasses.asdict(config)
        defaults = dataclasses.asdict(TrainConfig())  # a field added since the run started has its default
        differs = {k for k in mine if k not in RESUMABLE and saved.get(k, defaults[k]) != mine[k]}
        if differs:
            raise ValueError(f"{out} was trained with another config (differs in {sorted(differs)}); use another --out")
        payload = load_checkpoint(ckpt_path, config.board, config.encoder)
        net.load_state_dict(payload["state_dict"])
        optimizer.load_state_dict(payload["extra"]["optimizer"])
        for group in optimizer.param_groups:  # the learning rate may be lowered on resume
            group["lr"] = config.lr
        start = int(payload["extra"]["iteration"])
        if os.path.exists(replay_path):
            replay = Replay.load(replay_path)
        if os.path.exists(metrics_path):
            with open(metrics_path) as f:
                metrics = [json.loads(line) for line in f if line.strip()]
            metrics = [m for m in metrics if m["iteration"] <= start]
        echo(f"resuming after iteration {start}")
    elif os.path.exists(ckpt_path):
        raise CheckpointError(f"{out} already holds a run; pass --resume to continue it or choose another --out")
    with open(cfg_path + ".tmp", "w") as f:
        json.dump(dataclasses.asdict(config), f, indent=2)
    os.replace(cfg_path + ".tmp", cfg_path)
    positions = labelled_positions(config.board, config.eval_positions, seed=config.seed + 12345)
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover
        tqdm = None
    bar = tqdm(total=config.iterations, initial=start, desc="iterations", disable=not progress) if tqdm else None
    pool = SelfPlayPool(config)
    try:
        for iteration in range(start + 1, config.iterations + 1):
            rng = np.random.default_rng([config.seed, iteration])  # reproducible per iteration, also on resume
            t0 = time.perf_counter()
            samples, stats = pool.play(net, iteration)
            t1 = time.perf_counter()
            replay.add(samples, config.encoder, iteration)
            replay.keep_recent(iteration, config.buffer_iterations)
            losses = train_steps(net, optimizer, replay, config, iteration, rng)
            t2 = time.perf_counter()
            row = {"iteration": iteration, **stats, **losses, "lr": config.lr, "replay": len(replay),
                   "self_play_s": t1 - t0, "train_s": t2 - t1}
            evaluate = iteration % 5 == 0 or iteration == config.iterations
            row.update(accuracy(net, positions, config, eval_simulations if evaluate else None))
            if evaluate:
                row.update(win_rates(net, config, seed=config.seed + iteration))
            replay.save(replay_path)
            _save(ckpt_path, net, optimizer, config, iteration)
            with open(metrics_path, "a") as f:
                f.write(json.dumps(row) + "\n")
                f.flush()
                os.fsync(f.fileno())
            metrics.append(row)
            _plot(metrics, os.path.join(out, "training.png"))
            if bar:
                bar.update(1)
                bar.set_postfix(pl=f"{row['policy_loss']:.2f}", vl=f"{row['value_loss']:.2f}",
                                acc=f"{row.get('raw_accuracy', float('nan')):.2f}")
    finally:
        pool.close()
    if bar:
        bar.close()
    return metrics
