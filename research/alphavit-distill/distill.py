"""Distil the rule agent ``prsboxes`` into the size-agnostic ``alphavit`` network over many boards.

    python research/alphavit-distill/distill.py data --out runs/avit-distill/data.npz --seconds 720
    python research/alphavit-distill/distill.py fit --data runs/avit-distill/data.npz \
        --init agents/checkpoints/alphavit.pt --out runs/avit-distill/fit --steps 600
    dnb tournament --board 7x7 --agents "alphavit:checkpoint=runs/avit-distill/fit/weights.pt,greedy" ...

``data`` plays games on every board of ``--boards`` (``RxC:games`` per round, rounds until ``--seconds`` or
``--rounds``), ``prsboxes`` (untimed, seeded) against itself, ``greedy`` and ``alphabeta:depth=2`` in turn,
each game from a few guided random opening moves, and with probability ``--explore`` a move of either side
replaced by :func:`dnb_env.analysis.realistic_move`. Every position where ``prsboxes`` chose the move played
is one row of :class:`agents.training.samples.Samples`:

=========  ===========================================================================================
``pi``     one-hot at prsboxes' move: **a teacher's choice, not an exact label** (the solver-labelled
           ``dnb teach`` format holds the value of every move; this holds one move a strong rule agent
           played, so it is kept apart from that format)
``z, q``   the game's final box difference for the mover over the number of boxes (the ``margin`` value
           unit of ``alphavit.pt``), the same in both
``move``   prsboxes' move; ``iteration`` 0, ``node`` False; ``initiative``, ``move_class`` as usual
=========  ===========================================================================================

The file (``np.savez_compressed``) holds ``boards``, every board's columns as ``"RxC.column"`` plus
``"RxC.game"`` (the game each row comes from, for a held-out split by game), and ``config`` (JSON);
the whole file is rewritten after every round, so a run stopped at any time keeps its last round.

``fit`` trains a network (``--init`` a checkpoint, else an untrained ``cpu``-preset ``alphavit``) on one data
file or several (``--data A.npz,B.npz``: joined per board, their games kept apart), on the rows of whole
games, ``--held`` of the games kept out: each step one board (drawn in proportion to its rows),
a random board symmetry, the project's loss (:func:`agents.training.losses.total_loss`: policy
cross-entropy plus value MSE), Adam with a cosine schedule, one torch thread. Every ``--eval-every`` steps
it writes ``weights.pt`` (a playing checkpoint: ``alphavit:checkpoint=.../weights.pt``; a copy stays as
``weights-STEP.pt``) and a line of
``metrics.jsonl``: per board the held-out share of positions where the raw policy's move is prsboxes' move
(``agree``) and the value's mean squared error (``value_mse``); step 0 is the starting network.

``--teacher A,B`` mixes in positions labelled by the exact solver (``dnb teach`` datasets, any boards:
:func:`load_teacher`; the policy target spread over the best moves, the value the margin of best play), drawn
by ``--teacher-share`` of the steps; the positions that ``benchmarks/checkpoint_accuracy.py`` scores are left
out of them (``--exclude-eval``). ``--teacher-held`` datasets are scored at every evaluation (``optimal``: the
share of their positions where the raw policy's move is a best move).
"""

import argparse
import io
import json
import os
import random
import shutil
import time
from dataclasses import asdict, dataclass

import numpy as np

from dnb_env.analysis import realistic_move
from dnb_env.core import GameState, geometry
from dnb_env.io import atomic_write

TEACHER = "prsboxes"
OPPONENTS = (TEACHER, "greedy", "alphabeta:depth=2")
DEFAULT_BOARDS = "3x3:3,4x4:2,5x5:2,6x6:1,7x7:1,3x5:2,4x6:1,5x7:1"


def parse_boards(text: str) -> dict[str, int]:
    """``"3x3:3,7x7:1"`` -> ``{"3x3": 3, "7x7": 1}`` (games a round); a ValueError for a bad board, a count
    below 1 or a board given twice."""
    out: dict[str, int] = {}
    for part in text.split(","):
        name, _, count = part.strip().partition(":")
        board = geometry(name).name  # ValueError for a malformed board
        games = int(count) if count else 1
        if games < 1:
            raise ValueError(f"{part!r}: games a round must be >= 1")
        if board in out:
            raise ValueError(f"board {board} given twice")
        out[board] = games
    if not out:
        raise ValueError("no board given")
    return out


@dataclass(frozen=True)
class DataConfig:
    boards: str = DEFAULT_BOARDS
    rounds: int = 1000
    seconds: float = 720.0
    explore: float = 0.05
    opening_max: float = 1 / 6  # guided random opening moves: 0 .. this share of the board's edges
    seed: int = 0

    def __post_init__(self):
        parse_boards(self.boards)
        if self.rounds < 1 or not self.seconds > 0:
            raise ValueError("rounds must be >= 1 and seconds > 0")
        if not 0 <= self.explore <= 1 or not 0 <= self.opening_max <= 0.5:
            raise ValueError(f"explore must be in [0, 1] and opening_max in [0, 0.5], got {self.explore}, {self.opening_max}")


def teacher_row(state: GameState, move: int):
    """A :class:`~agents.training.samples.Record` of ``move`` chosen by the teacher in ``state``: ``pi``
    one-hot at it, the value filled in when the game ends; a ValueError for a finished game or an illegal
    move."""
    from agents.training.samples import Record

    if state.is_terminal() or not state.is_legal(move):
        raise ValueError(f"move {move!r} is not a legal move of the position (moves played: {list(state.history)})")
    pi = np.zeros(state.num_actions, np.float32)
    pi[move] = 1.0
    return Record(state, int(move), pi, q=0.0)


def play_game(board: str, seats, teacher_seats: tuple[bool, bool], opening: list[int], explore: float,
              rng: random.Random) -> tuple[list, GameState]:
    """Play ``seats`` (two agents) from ``opening``; returns the records of the moves the seats marked in
    ``teacher_seats`` chose (explored moves are not theirs and are left out), each with ``z`` = ``q`` = the
    final box difference for its mover over the boxes, and the final state."""
    s = GameState.from_actions(board, actions=list(opening))
    for agent in seats:
        agent.reset()
    records = []
    while not s.is_terminal():
        p = s.current_player
        if rng.random() < explore:
            move = realistic_move(s, rng)
        else:
            move = seats[p].select_action(s)
            if teacher_seats[p]:
                records.append(teacher_row(s, move))
        s = s.apply(move)
    score = s.scores
    boxes = s.geometry.num_boxes
    for r in records:
        mover = r.state.current_player
        r.z = r.q = (score[mover] - score[1 - mover]) / boxes
    return records, s


def _opening(board: str, config: DataConfig, rng: random.Random) -> list[int]:
    from agents.arena.play import make_opening

    k = rng.randint(0, int(geometry(board).num_actions * config.opening_max))
    return make_opening(board, k, "guided", rng.getrandbits(48))


def make_data(config: DataConfig, out: str, echo=print) -> dict:
    """Play rounds of games (:func:`play_game`) and write ``out`` after each; returns the rows per board."""
    from agents.training.samples import Samples
    from registry.specs import agent_from_spec

    boards = parse_boards(config.boards)
    rng = random.Random(config.seed)
    agents = {(b, spec): agent_from_spec(spec, b, seed=config.seed * 1009 + i)
              for b in boards for i, spec in enumerate(OPPONENTS)}
    samples = {b: Samples.empty(b) for b in boards}
    games = {b: np.zeros(0, np.int64) for b in boards}
    t0, game = time.perf_counter(), 0
    for rnd in range(config.rounds):
        for b, count in boards.items():
            for _ in range(count):
                other = agents[(b, OPPONENTS[game % len(OPPONENTS)])]
                teacher = agents[(b, TEACHER)]
                seats = (teacher, other) if rng.random() < 0.5 else (other, teacher)
                marks = tuple(a is teacher for a in seats)
                records, _ = play_game(b, seats, marks, _opening(b, config, rng), config.explore, rng)
                samples[b] = samples[b].concat(Samples.from_records(b, records, 0))
                games[b] = np.concatenate([games[b], np.full(len(records), game, np.int64)])
                game += 1
        save_data(out, samples, games, config)
        seconds = time.perf_counter() - t0
        echo(f"round {rnd + 1}: {game} games, {sum(len(s) for s in samples.values())} rows, {seconds:.0f} s")
        if seconds >= config.seconds:
            break
    return {b: len(s) for b, s in samples.items()}


def save_data(path: str, samples: dict, games: dict, config: DataConfig) -> None:
    arrays = {"boards": np.array(list(samples)), "config": np.array(json.dumps(asdict(config)))}
    for b, s in samples.items():
        arrays.update({f"{b}.{k}": v for k, v in s.arrays().items() if k != "board"})
        arrays[f"{b}.game"] = games[b]
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    atomic_write(path, buf.getvalue())


def load_data(path: str) -> tuple[dict, dict]:
    """``(samples, games)`` per board of a file written by :func:`save_data`; a ValueError naming the file
    for a missing column, columns of different lengths, or a policy target that is not one-hot at ``move``."""
    from agents.training.samples import Samples

    with np.load(path) as f:
        data = dict(f)
    if "boards" not in data:
        raise ValueError(f"{path}: not a distillation data file (no boards)")
    samples, games = {}, {}
    for b in (str(x) for x in data["boards"]):
        cols = {k.split(".", 1)[1]: v for k, v in data.items() if k.startswith(b + ".")}
        s = Samples.from_arrays({"board": b, **cols}, source=f"{path} ({b})")
        g = cols.get("game")
        if g is None or len(g) != len(s):
            raise ValueError(f"{path} ({b}): the game column is missing or of another length")
        onehot = np.zeros_like(s.pi)
        onehot[np.arange(len(s)), s.move.astype(np.int64)] = 1.0
        if not np.array_equal(s.pi, onehot) or np.abs(s.z).max(initial=0) > 1:
            raise ValueError(f"{path} ({b}): a policy target is not one-hot at the teacher's move, or a value is out of [-1, 1]")
        samples[b], games[b] = s, g
    return samples, games


def load_many(paths: str) -> tuple[dict, dict]:
    """:func:`load_data` of each of the comma-separated ``paths``, joined per board; the game ids of the k-th
    file are offset by ``k * GAME_OFFSET`` so that games of different files stay apart in the held-out split.
    A ValueError for a file given twice."""
    names = [p.strip() for p in paths.split(",") if p.strip()]
    if len(set(map(os.path.abspath, names))) != len(names):
        raise ValueError(f"a data file is given twice: {paths!r}")
    samples: dict = {}
    games: dict = {}
    for k, path in enumerate(names):
        s_k, g_k = load_data(path)
        for b in s_k:
            g = g_k[b] + k * GAME_OFFSET
            if b in samples:
                samples[b], games[b] = samples[b].concat(s_k[b]), np.concatenate([games[b], g])
            else:
                samples[b], games[b] = s_k[b], g
    return samples, games


#: Game ids of the k-th data file of :func:`load_many` start at ``k * GAME_OFFSET``.
GAME_OFFSET = 1_000_000


def split(samples: dict, games: dict, held: float, seed: int) -> tuple[dict, dict]:
    """``(train, held)`` Samples per board: about ``held`` of each board's games kept out, whole."""
    rng = np.random.default_rng(seed)
    train, test = {}, {}
    for b, s in samples.items():
        ids = np.unique(games[b])
        out = rng.choice(ids, size=int(round(len(ids) * held)), replace=False)
        mask = np.isin(games[b], out)
        train[b], test[b] = s.take(np.flatnonzero(~mask)), s.take(np.flatnonzero(mask))
    return train, test


def held_report(net, held: dict, encoder: str) -> dict:
    """Per board: ``agree`` (share of positions where the raw policy's most probable legal move is the
    teacher's) and ``value_mse``, with ``n``."""
    import torch

    from dnb_env.observations import encode_batch

    out = {}
    net.eval()
    for b, s in held.items():
        if not len(s):
            continue
        with torch.no_grad():
            res = net(torch.from_numpy(encode_batch(encoder, s.states())))
        drawn = np.unpackbits(s.edges, axis=1, bitorder="little")[:, :s.pi.shape[1]].astype(bool)
        logits = res["policy_logits"].numpy().copy()
        logits[drawn] = -np.inf
        agree = float((logits.argmax(axis=1) == s.move).mean())
        mse = float(((res["value"].numpy() - s.z) ** 2).mean())
        out[b] = {"n": len(s), "agree": round(agree, 4), "value_mse": round(mse, 4)}
    return out


def load_teacher(folders: str, positions: int = 0, exclude_eval: int = 0) -> tuple[dict, dict]:
    """``(samples, dropped)`` per board: the rows of the solver-labelled ``dnb teach`` datasets ``folders``
    (comma-separated; the first ``positions`` rows of each, 0: all) as training samples in the margin unit
    (:func:`agents.training.dataset.to_samples`: policy uniform over the best moves, value the margin of best
    play), rows without a known margin left out. With ``exclude_eval`` every row whose drawn edges are those of
    one of the first ``exclude_eval`` positions that ``benchmarks/checkpoint_accuracy.py`` scores on that board
    (``labelled_positions(board, exclude_eval, seed=EVAL_SEED_OFFSET)``) is left out too; ``dropped`` counts
    them per board."""
    from agents.training.dataset import TeacherData, to_samples
    from agents.training.evaluation import EVAL_SEED_OFFSET, labelled_positions

    names = [f.strip() for f in folders.split(",") if f.strip()]
    if len(set(map(os.path.abspath, names))) != len(names):
        raise ValueError(f"a teacher dataset is given twice: {folders!r}")
    samples: dict = {}
    for folder in names:
        data = TeacherData.load(folder)
        if positions:
            data = data.take(np.arange(min(positions, len(data))))
        s, known = to_samples(data, "margin")
        s = s.take(np.flatnonzero(known))
        b = s.board
        samples[b] = samples[b].concat(s) if b in samples else s
    dropped = {}
    for b, s in samples.items():
        dropped[b] = 0
        if exclude_eval:
            seen = {q.state.edges for q in labelled_positions(b, exclude_eval, seed=EVAL_SEED_OFFSET)}
            keep = np.array([int.from_bytes(row.tobytes(), "little") not in seen for row in s.edges], bool)
            dropped[b] = int((~keep).sum())
            samples[b] = s.take(np.flatnonzero(keep))
    return samples, dropped


def teacher_report(net, held: dict) -> dict:
    """Per board of solver-labelled ``held`` samples: ``optimal`` (share of positions where the raw policy's
    most probable legal move, :func:`agents.training.evaluation.policy_moves`, is one of the best moves), with
    ``n``."""
    from agents.training.evaluation import policy_moves

    net.eval()
    out = {}
    for b, s in held.items():
        best = s.pi[np.arange(len(s)), policy_moves(net, s.states())] > 0
        out[b] = {"n": len(s), "optimal": round(float(best.mean()), 4)}
    return out


@dataclass(frozen=True)
class FitConfig:
    data: str
    init: str = ""
    steps: int = 600
    batch: int = 64
    lr: float = 3e-4
    l2: float = 1e-4
    held: float = 0.1
    eval_every: int = 100
    seed: int = 0
    teacher: str = ""
    teacher_positions: int = 0
    teacher_share: float = 0.0
    teacher_held: str = ""
    exclude_eval: int = 200

    def __post_init__(self):
        if self.steps < 1 or self.batch < 1 or self.eval_every < 1 or not self.lr > 0 or not 0 <= self.held < 1:
            raise ValueError("steps, batch and eval_every must be >= 1, lr > 0 and held in [0, 1)")
        if not 0 <= self.teacher_share <= 1 or (self.teacher_share > 0) != bool(self.teacher):
            raise ValueError("teacher_share must be in [0, 1], above 0 exactly when teacher datasets are given")
        if self.teacher_positions < 0 or self.exclude_eval < 0:
            raise ValueError("teacher_positions and exclude_eval must be >= 0")


def fit(config: FitConfig, out: str, echo=print) -> list[dict]:
    """Train as the module docstring says; writes ``out/weights.pt``, ``out/metrics.jsonl``, ``out/config.json``."""
    import torch

    from agents.checkpoint import load_network, save_checkpoint
    from agents.models import build_model, make_model_config
    from agents.training.config import LossConfig
    from agents.training.losses import total_loss
    from agents.training.replay import BoardReplays, Replay

    torch.set_num_threads(1)
    torch.manual_seed(config.seed)
    samples, games = load_many(config.data)
    train, held = split(samples, games, config.held, config.seed)
    if config.init:
        net, _ = load_network(config.init, family="alphavit")
    else:
        net = build_model(make_model_config("alphavit", preset="cpu", board=max(samples, key=lambda b: len(samples[b]))))
    encoder = net.config.encoder
    replays = BoardReplays({b: Replay(s) for b, s in train.items() if len(s)})
    teacher = teacher_held = None
    if config.teacher:
        rows_t, dropped = load_teacher(config.teacher, config.teacher_positions, config.exclude_eval)
        teacher = BoardReplays({b: Replay(s) for b, s in rows_t.items()})
        echo(json.dumps({"teacher": {b: len(s) for b, s in rows_t.items()}, "left out as evaluation positions": dropped}))
    if config.teacher_held:
        teacher_held, _ = load_teacher(config.teacher_held)
    optimizer = torch.optim.Adam(net.parameters(), lr=config.lr, weight_decay=config.l2)
    loss_cfg = LossConfig()
    os.makedirs(out, exist_ok=True)
    atomic_write(os.path.join(out, "config.json"), json.dumps(asdict(config), indent=1))
    rng = np.random.default_rng(config.seed)

    def report() -> dict:
        row = {"held": held_report(net, held, encoder)}
        if teacher_held:
            row["teacher_held"] = teacher_report(net, teacher_held)
        return row

    rows = [{"step": 0, **report()}]
    echo(json.dumps(rows[0]))
    totals: dict[str, float] = {}
    t0 = time.perf_counter()
    for step in range(1, config.steps + 1):
        for group in optimizer.param_groups:
            group["lr"] = config.lr * (0.05 + 0.95 * 0.5 * (1 + np.cos(np.pi * (step - 1) / config.steps)))
        net.train()
        source = teacher if teacher is not None and rng.random() < config.teacher_share else replays
        board, arrays = source.draw(rng, config.batch, 0, 1.0, encoder, 0.0, True)
        batch = {k: torch.from_numpy(v) for k, v in arrays.items()}
        loss, parts = total_loss(net(batch["planes"]), batch, loss_cfg, board)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        for k, v in parts.items():
            totals[k] = totals.get(k, 0.0) + v
        if step % config.eval_every == 0 or step == config.steps:
            n = step - rows[-1]["step"]
            row = {"step": step, "seconds": round(time.perf_counter() - t0, 1),
                   **{k: round(v / n, 4) for k, v in totals.items()}, **report()}
            totals = {}
            save_checkpoint(os.path.join(out, "weights.pt"), net, extra={"distill": asdict(config), "step": step})
            shutil.copyfile(os.path.join(out, "weights.pt"), os.path.join(out, f"weights-{step}.pt"))
            rows.append(row)
            atomic_write(os.path.join(out, "metrics.jsonl"), "".join(json.dumps(r) + "\n" for r in rows))
            echo(json.dumps(row))
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="command", required=True)
    d = sub.add_parser("data", help="play prsboxes' games and write its moves and the results")
    d.add_argument("--out", required=True)
    for f in DataConfig.__dataclass_fields__.values():
        d.add_argument("--" + f.name.replace("_", "-"), type=type(f.default), default=f.default)
    t = sub.add_parser("fit", help="train alphavit on a data file")
    t.add_argument("--out", required=True)
    for f in FitConfig.__dataclass_fields__.values():
        t.add_argument("--" + f.name.replace("_", "-"), type=str if f.name in ("data", "init", "teacher", "teacher_held") else type(f.default),
                       default=None if f.name == "data" else f.default, required=f.name == "data")
    args = vars(ap.parse_args(argv))
    command, out = args.pop("command"), args.pop("out")
    try:
        if command == "data":
            make_data(DataConfig(**args), out)
        else:
            fit(FitConfig(**args), out)
    except ValueError as exc:
        ap.error(str(exc))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
