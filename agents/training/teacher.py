"""Teacher datasets: realistic positions labelled by the exact solver, written as training samples.

    dnb teach --board 5x5 --undrawn 26-38 --positions 100000 --out data/teach-5x5 --workers 2
    data = TeacherData.load("data/teach-5x5")       # checked against its manifest
    data.samples                                     # agents.training.samples.Samples (the training contract)
    data.values[i, a]                                # exact label of move a in position i (see ``kind``)

Positions come from games of a mix of agents (``players``: registry specs such as ``greedy``,
``alphabeta:depth=2``, ``prsboxes`` or a network's raw policy ``alphazero:simulations=0``; a game pairs two
of them, possibly one with itself), each game opened by ``opening`` random safe moves and every later move
replaced with probability ``explore`` by a plausible random one (:func:`dnb_env.analysis.realistic_move`).
Up to ``per_game`` positions with ``undrawn`` edges in the asked range are taken from one game. A position
is kept once: the dataset is deduplicated by symmetry-canonical drawn edges and the mover's boxes lead.

Labels (exact, by :class:`dnb_env.solver.Solver`):

==========  ===================================================================================
``kind``    ``values[i, a]`` for every legal move ``a`` (``NO_VALUE`` = -128 for drawn edges)
==========  ===================================================================================
0 margin    the exact margin of the remaining boxes for the mover after ``a`` (boxes ``a`` completes
            included): positions with at most ``margin_max`` undrawn edges
1 outcome   +1 / 0 / -1, the game's result for the mover after ``a`` with best play (boxes already
            owned included): positions with more undrawn edges, where one null-window search per move
            is much cheaper than the margins
2 value     no move labels (every entry ``NO_VALUE``): positions with more than ``move_labels_max``
            undrawn edges, where even one search per move is too dear; only the position's own result
            is known (one or two null-window searches)
==========  ===================================================================================

``value[i]`` is the best of the row (kind 2: the position's result, +1 / 0 / -1). Rows of kind 2 have no
policy target: their ``pi`` is all zero (the training loss leaves their policy and initiative terms out),
and ``move`` is a legal move drawn by the seeded generator, not a label. The shard also holds every column of
:class:`~agents.training.samples.Samples`: ``pi`` uniform over the best moves, ``z`` = ``q`` = the game's
exact outcome for the mover (+1/0/-1, win units; :func:`to_samples` re-targets it to a model's value unit
and policy temperature), ``move`` one best move (ties broken by the seeded generator), its ``initiative``
and every ``move_class``, ``iteration`` 0. Further columns: ``game`` (a dataset-wide game id: positions of
one game share it, so held-out splits can be made by game), ``player`` (index of the pair in the
manifest's ``pairs``) and ``seconds`` (solver time of the label).

A dataset folder::

    manifest.json        format "dnb-teacher", version, the config, committed shards with sha256, totals
    shard-000000.npz ... one per job: each job plays its own games from a seed of (seed, job)

Work is cut in jobs of ``shard_size`` candidate positions; jobs run in worker processes (or Ray tasks) and
are committed in job order (shard written atomically, then the manifest), so the dataset of a run resumed
after a kill is the dataset of one that never stopped: nothing committed is lost, nothing is written twice.
One run writes a folder at a time (:class:`dnb_env.io.RunLock`: a second is refused at once, naming the
first), and it starts by removing the temporary files (``*.tmp*``) of a run killed while writing.

Loading a dataset (``TeacherData.load``, a resume, ``--exclude``, ``dnb fit --data``) checks every field of the
manifest and every shard (its checksum, then labels and targets that are finite and in range, moves on the
board): a damaged folder is refused with a :class:`TeacherError` naming the file and what is wrong.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import random
import re
import time
from dataclasses import dataclass
from typing import Callable, Iterator

import numpy as np

from agents.arena import make_opening
from agents.training.samples import Record, Samples
from dnb_env.analysis import realistic_move
from dnb_env.core import GameState, geometry
from dnb_env.io import RunLock, atomic_write, read_json
from dnb_env.limits import INT_LIMIT, check_seed, is_int, is_number
from dnb_env.solver import DEFAULT_NODE_LIMIT, MOVES_REACH, VALUE_REACH, Solver, SolverTooLarge
from dnb_env.symmetry import action_permutation, symmetries

__all__ = ["FORMAT", "VERSION", "MARGIN", "OUTCOME", "VALUE", "NO_VALUE", "TeachConfig", "TeacherData", "TeacherError",
           "generate", "label_position", "canonical_key", "to_samples", "DEFAULT_PLAYERS"]

FORMAT = "dnb-teacher"
VERSION = 2
#: Versions this code reads: version 1 is version 2 without rows of kind ``VALUE``.
READABLE_VERSIONS = (1, 2)
MARGIN, OUTCOME, VALUE = 0, 1, 2
NO_VALUE = -128
MANIFEST = "manifest.json"
#: The default mix of position sources (registry agent specs); the last two are network agents, which need
#: PyTorch (``dnb teach`` leaves them out, with a notice, where it is not installed).
DEFAULT_PLAYERS = ("greedy", "alphabeta:depth=2", "prsboxes", "alphazero:simulations=0", "dotsformer:simulations=0")
EXTRA_COLUMNS = {"values": np.int8, "value": np.int8, "kind": np.int8, "game": np.int64, "player": np.int16,
                 "seconds": np.float32}


class TeacherError(ValueError):
    """A teacher dataset folder that is missing, of another format or version, or damaged."""


@dataclass(frozen=True)
class TeachConfig:
    """What a teacher dataset holds; saved in its manifest (a resume must ask for the same)."""

    board: str = "5x5"
    undrawn_min: int = 26
    undrawn_max: int = MOVES_REACH
    margin_max: int = VALUE_REACH  # positions with more undrawn edges get win/loss labels
    move_labels_max: int = -1  # positions with more undrawn edges get only their own result; -1: none
    positions: int = 10_000
    shard_size: int = 250  # candidate positions per job (and per shard file, less duplicates)
    per_game: int = 2
    players: tuple[str, ...] = DEFAULT_PLAYERS
    opening: int = -1  # random safe opening moves; -1: num_actions // 6 .. num_actions // 3 (Geometry.opening_range), drawn per game
    explore: float = 0.1
    node_limit: int = DEFAULT_NODE_LIMIT
    seed: int = 0

    def __post_init__(self):
        g = geometry(self.board)
        object.__setattr__(self, "board", f"{g.rows}x{g.cols}")
        object.__setattr__(self, "players", tuple(self.players))
        a = g.num_actions
        if not 1 <= self.undrawn_min <= self.undrawn_max <= a - 1:
            raise ValueError(f"undrawn range must satisfy 1 <= min <= max <= {a - 1} on {self.board}, "
                             f"got {self.undrawn_min}-{self.undrawn_max}")
        if self.positions < 1 or self.shard_size < 1 or self.per_game < 1:
            raise ValueError("positions, shard_size and per_game must be >= 1")
        if self.margin_max < 0 or self.node_limit < 0:
            raise ValueError("margin_max and node_limit must be >= 0")
        if self.move_labels_max < -1:
            raise ValueError(f"move_labels_max must be -1 (every position gets move labels) or >= 0, "
                             f"got {self.move_labels_max}")
        if not 0 <= self.explore <= 1:
            raise ValueError(f"explore must be in [0, 1], got {self.explore}")
        if self.opening < -1 or self.opening > a:
            raise ValueError(f"opening must be -1 (auto) or 0..{a}, got {self.opening}")
        if not self.players:
            raise ValueError("players: at least one agent spec")
        check_seed(self.seed)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self) | {"players": list(self.players)}

    @classmethod
    def from_dict(cls, data: dict) -> "TeachConfig":
        """The config saved as ``data`` (a manifest's ``config``); TeacherError for an unknown setting, one of
        the wrong type (or a number that is not finite, or past 2**63) and one out of range."""
        if not isinstance(data, dict):
            raise TeacherError(f"the config is a JSON {type(data).__name__}, not an object")
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(data) - names)
        if unknown:
            raise TeacherError(f"unknown teacher settings {unknown}")
        for f in dataclasses.fields(cls):
            if f.name in data:
                problem = _setting_problem(data[f.name], f.default)
                if problem:
                    raise TeacherError(f"teacher setting {f.name} is {problem}")
        try:
            return cls(**data)
        except ValueError as exc:
            raise TeacherError(str(exc)) from None

    @property
    def pairs(self) -> list[tuple[int, int]]:
        """Every unordered pair of players (a player with itself included), in a fixed order."""
        n = len(self.players)
        return [(i, j) for i in range(n) for j in range(i, n)]


def _setting_problem(value, default) -> str | None:
    """What is wrong with ``value`` as a setting whose default is ``default`` (None when nothing is): a
    string, an integer (below 2**63 in size), a finite number, or a list of strings, as the default is."""
    if isinstance(default, str):
        ok = isinstance(value, str)
    elif isinstance(default, tuple):
        ok = isinstance(value, list) and all(isinstance(v, str) for v in value)
    elif isinstance(default, float):
        ok = is_number(value) and abs(value) < INT_LIMIT
    else:
        ok = is_int(value)
    if ok:
        return None
    want = {str: "a string", tuple: "a list of agent specs", float: "a finite number"}.get(type(default), "an integer")
    return f"{_shown(value)}, not {want}"


def _shown(value, limit: int = 60) -> str:
    """``value`` for an error message: its repr, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


# ---------------------------------------------------------------------------------------------- labels
def canonical_key(state: GameState) -> bytes:
    """The drawn edges up to the board's symmetries (the smallest image as packed bits) and the mover's
    lead in boxes: positions with equal keys have equal labels up to a symmetry."""
    g = state.geometry
    bits = np.unpackbits(np.frombuffer(state.edges.to_bytes((g.num_actions + 7) // 8, "little"), np.uint8),
                         bitorder="little")[:g.num_actions].astype(bool)
    best = None
    for sym in symmetries(state.rows, state.cols):
        img = np.zeros(g.num_actions, bool)
        img[action_permutation(sym, state.rows, state.cols)] = bits
        packed = np.packbits(img).tobytes()
        if best is None or packed < best:
            best = packed
    return best + _lead(state).to_bytes(2, "little", signed=True)


def label_position(solver: Solver, state: GameState, margin_max: int) -> tuple[int, np.ndarray]:
    """``(kind, values)`` of ``state``: ``values[a]`` the exact margin (``MARGIN``, at most ``margin_max``
    undrawn edges) or outcome (``OUTCOME``) for the mover after each legal move ``a``, ``NO_VALUE`` for
    drawn edges. Raises :class:`dnb_env.solver.SolverTooLarge` past the solver's reach or budget."""
    g = state.geometry
    values = np.full(g.num_actions, NO_VALUE, np.int8)
    undrawn = g.num_actions - state.edges.bit_count()
    if undrawn <= margin_max:
        for a, v in solver.move_values(state).items():
            values[a] = v
        return MARGIN, values
    odd = g.num_boxes % 2 == 1  # no draws: one null-window search decides
    for a in state.legal_actions():
        child = state.apply(a)
        have = _lead(child)  # the child's mover's lead
        if child.current_player == state.current_player:
            wins = solver.at_least(child, 1 - have)
            values[a] = 1 if wins else (-1 if odd or not solver.at_least(child, -have) else 0)
        else:  # the opponent moves: our result is minus theirs
            theirs_win = solver.at_least(child, 1 - have)
            values[a] = -1 if theirs_win else (1 if odd or not solver.at_least(child, -have) else 0)
    return OUTCOME, values


def _lead(state: GameState) -> int:
    s0, s1 = state.scores
    return s0 - s1 if state.current_player == 0 else s1 - s0


# ---------------------------------------------------------------------------------------------- jobs
@dataclass(frozen=True)
class _Job:
    config: TeachConfig
    index: int
    make_player: Callable  # (spec, board, seed) -> Agent


def _play_positions(job: _Job, rng: random.Random) -> Iterator[tuple[GameState, int, int]]:
    """``(state, game number within the job, pair index)`` of positions taken from the job's games."""
    cfg = job.config
    g = geometry(cfg.board)
    a = g.num_actions
    pairs = cfg.pairs
    players: dict[int, object] = {}
    game = 0
    while True:
        pair_index = rng.randrange(len(pairs))
        i, j = pairs[pair_index]
        if rng.random() < 0.5:
            i, j = j, i
        seats = []
        for p in (i, j):
            if p not in players:
                players[p] = job.make_player(cfg.players[p], cfg.board, cfg.seed * 1_000_003 + job.index * 101 + p)
            seats.append(players[p])
        for agent in seats:
            agent.reset()
        opening = cfg.opening if cfg.opening >= 0 else rng.randint(*g.opening_range)
        opening = min(opening, a - cfg.undrawn_max)
        s = GameState.from_actions(cfg.board, actions=make_opening(cfg.board, opening, "guided", rng.getrandbits(48)))
        in_range = []
        while not s.is_terminal():
            undrawn = a - s.edges.bit_count()
            if undrawn < cfg.undrawn_min:
                break
            if undrawn <= cfg.undrawn_max:
                in_range.append(s)
            if rng.random() < cfg.explore:
                move = realistic_move(s, rng)
            else:
                move = seats[s.current_player].select_action(s)
            s = s.apply(move)
        for s in rng.sample(in_range, min(cfg.per_game, len(in_range))):
            yield s, game, pair_index
        game += 1


def _run_job(job: _Job) -> dict:
    """Play and label ``config.shard_size`` candidate positions; returns the shard's arrays (unpacked
    records) and its counters."""
    cfg = job.config
    rng = random.Random(cfg.seed * 1_000_003 + job.index)
    solver = Solver(max(cfg.undrawn_max, 0), node_limit=cfg.node_limit)
    seen: set[bytes] = set()
    rows = []
    skipped = duplicates = 0
    games = 0
    for state, game, pair in _play_positions(job, rng):
        if len(rows) + skipped + duplicates >= cfg.shard_size:
            break
        games = max(games, game + 1)
        key = canonical_key(state)
        if key in seen:
            duplicates += 1
            continue
        seen.add(key)
        t = time.process_time()
        undrawn = state.geometry.num_actions - state.edges.bit_count()
        try:
            if 0 <= cfg.move_labels_max < undrawn:
                kind, values = VALUE, np.full(state.geometry.num_actions, NO_VALUE, np.int8)
                result = solver.outcome(state)  # the game's result for the mover, boxes owned included
            else:
                kind, values = label_position(solver, state, cfg.margin_max)
                result = None
        except SolverTooLarge:  # over the node budget: not labelled, counted
            skipped += 1
            continue
        rows.append((state, kind, values, job.index * 100_000 + game, pair, time.process_time() - t, key, result))
    return {"job": job.index, "rows": rows, "skipped": skipped, "duplicates": duplicates, "games": games}


def _shard_arrays(board: str, rows: list, rng: random.Random) -> dict[str, np.ndarray]:
    """The columns of one shard from labelled ``rows``."""
    records = []
    best_of = []
    for state, kind, values, _, _, _, _, result in rows:
        if kind == VALUE:  # no move labels: no policy target; the move is any legal one, not a label
            best_of.append(int(result))
            move = int(rng.choice(state.legal_actions()))
            records.append(Record(state=state, move=move, pi=np.zeros(len(values), np.float32), q=float(result),
                                  z=float(result)))
            continue
        legal = values != NO_VALUE
        best = int(values[legal].max())
        best_of.append(best)
        optimal = np.flatnonzero(legal & (values == best))
        pi = np.zeros(len(values), np.float32)
        pi[optimal] = 1.0 / len(optimal)
        if kind == MARGIN:
            final = _lead(state) + best
            outcome = float((final > 0) - (final < 0))
        else:
            outcome = float(best)
        records.append(Record(state=state, move=int(rng.choice(list(optimal))), pi=pi, q=outcome, z=outcome))
    samples = Samples.from_records(board, records, 0) if records else Samples.empty(board)
    out = samples.arrays()
    a = samples.pi.shape[1]
    out["values"] = np.stack([r[2] for r in rows]) if rows else np.zeros((0, a), np.int8)
    out["value"] = np.array(best_of, np.int8)
    out["kind"] = np.array([r[1] for r in rows], np.int8)
    out["game"] = np.array([r[3] for r in rows], np.int64)
    out["player"] = np.array([r[4] for r in rows], np.int16)
    out["seconds"] = np.array([r[5] for r in rows], np.float32)
    return out


# ---------------------------------------------------------------------------------------------- dataset
@dataclass
class TeacherData:
    """A loaded teacher dataset: ``samples`` (the training contract) plus the label columns."""

    config: TeachConfig
    samples: Samples
    values: np.ndarray  # int8 [N, A]
    value: np.ndarray  # int8 [N]
    kind: np.ndarray  # int8 [N]
    game: np.ndarray  # int64 [N]
    player: np.ndarray  # int16 [N]
    seconds: np.ndarray  # float32 [N]

    def __len__(self) -> int:
        return len(self.samples)

    @property
    def lead(self) -> np.ndarray:
        """int32 ``[N]``: boxes the mover owns minus the opponent's, per position."""
        s = self.samples
        boxes = geometry(s.board).num_boxes
        owners = np.unpackbits(s.owners, axis=2, bitorder="little")[:, :, :boxes].sum(axis=2).astype(np.int32)
        return np.where(s.mover == 0, owners[:, 0] - owners[:, 1], owners[:, 1] - owners[:, 0])

    def concat(self, other: "TeacherData") -> "TeacherData":
        """This dataset's rows followed by ``other``'s (same board; the config stays this one's)."""
        return TeacherData(self.config, self.samples.concat(other.samples),
                           *(np.concatenate([getattr(self, c), getattr(other, c)]) for c in EXTRA_COLUMNS))

    @property
    def undrawn(self) -> np.ndarray:
        return (self.samples.pi.shape[1] - self.samples.step).astype(np.int16)

    def take(self, idx) -> "TeacherData":
        return TeacherData(self.config, self.samples.take(idx), *(getattr(self, c)[idx] for c in EXTRA_COLUMNS))

    def split_by_game(self, held_fraction: float, seed: int = 0) -> tuple["TeacherData", "TeacherData"]:
        """``(train, held)``: whole games go to one side, about ``held_fraction`` of them held out."""
        games = np.unique(self.game)
        rng = np.random.default_rng(seed)
        held_games = rng.choice(games, size=int(round(len(games) * held_fraction)), replace=False)
        held = np.isin(self.game, held_games)
        return self.take(np.flatnonzero(~held)), self.take(np.flatnonzero(held))

    @staticmethod
    def read_manifest(folder: str) -> dict:
        """The manifest of the dataset folder ``folder``, every field it holds checked
        (:func:`_manifest_problem`); TeacherError naming the file when it is missing, unreadable or damaged."""
        path = os.path.join(folder, MANIFEST)
        try:
            manifest = read_json(path, "a readable teacher manifest", error=TeacherError)
        except FileNotFoundError:
            raise TeacherError(f"{folder} is not a teacher dataset (no {MANIFEST})") from None
        if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
            raise TeacherError(f"{path} is not a {FORMAT} manifest")
        version = manifest.get("version")
        if not is_int(version) or version not in READABLE_VERSIONS:
            raise TeacherError(f"{path} has version {_shown(version)}; this code reads versions "
                               f"{', '.join(map(str, READABLE_VERSIONS))}")
        if not isinstance(manifest.get("shards"), list) or not isinstance(manifest.get("config"), dict):
            raise TeacherError(f"{path} lacks its shards or config")
        try:
            TeachConfig.from_dict(manifest["config"])
        except TeacherError as exc:
            raise TeacherError(f"{path}: {exc}") from None
        problem = _manifest_problem(manifest)
        if problem:
            raise TeacherError(f"{path} is damaged: {problem}")
        return manifest

    @classmethod
    def load(cls, folder: str, verify: bool = True) -> "TeacherData":
        """Every committed shard of ``folder``, checked against the manifest (sha256 with ``verify``)."""
        manifest = cls.read_manifest(folder)
        config = TeachConfig.from_dict(manifest["config"])
        parts = [_read_shard(folder, entry, config, verify) for entry in manifest["shards"]]
        samples = Samples.empty(config.board)
        extra = {c: [] for c in EXTRA_COLUMNS}
        for s, cols in parts:
            samples = samples.concat(s)
            for c in EXTRA_COLUMNS:
                extra[c].append(cols[c])
        a = samples.pi.shape[1]
        empty = {"values": np.zeros((0, a), np.int8)}
        return cls(config, samples, **{c: np.concatenate(v) if v else empty.get(c, np.zeros(0, t))
                                       for (c, v), t in zip(extra.items(), EXTRA_COLUMNS.values())})


    @classmethod
    def load_many(cls, folders, board: str) -> "TeacherData":
        """The datasets ``folders`` (at least one) joined in order, each checked to hold positions of
        ``board`` and at least one position; the config is the first one's."""
        data = None
        for folder in folders:
            part = cls.load(folder)
            if part.samples.board != board:
                raise TeacherError(f"teacher dataset {folder} is for {part.samples.board}, the model for {board}")
            if not len(part):
                raise TeacherError(f"teacher dataset {folder} holds no positions")
            data = part if data is None else data.concat(part)
        if data is None:
            raise TeacherError("no teacher dataset given")
        return data


#: A shard's file name, as the manifest gives it: a plain name inside the dataset folder.
_SHARD_NAME = re.compile(r"[A-Za-z0-9_-][A-Za-z0-9_.-]*\.npz")


def _manifest_problem(manifest: dict) -> str | None:
    """What is wrong with the fields of a manifest past its format, version and config (None when nothing
    is): every shard entry (a plain ``.npz`` name, its positions, job and sha256), the totals and counts."""
    jobs = set()
    for entry in manifest["shards"]:
        if not isinstance(entry, dict) or not isinstance(entry.get("file"), str):
            return f"bad shard entry {_shown(entry)}"
        name = entry["file"]
        if not _SHARD_NAME.fullmatch(name):
            return f"shard file {_shown(name)} must be a plain .npz name inside the folder"
        for key in ("positions", "job"):
            if not is_int(entry.get(key)) or entry[key] < 0:
                return f"shard {name} has {key} {_shown(entry.get(key))}, not an integer >= 0"
        if not isinstance(entry.get("sha256"), str) or not re.fullmatch(r"[0-9a-f]{64}", entry["sha256"]):
            return f"shard {name} has no sha256 (64 hex digits)"
        jobs.add(entry["job"])
    for key in ("positions", "next_job"):
        if not is_int(manifest.get(key)) or manifest[key] < 0:
            return f"{key} is {_shown(manifest.get(key))}, not an integer >= 0"
    if manifest["positions"] != sum(e["positions"] for e in manifest["shards"]):
        return f"positions is {manifest['positions']}, its shards hold {sum(e['positions'] for e in manifest['shards'])}"
    if jobs and manifest["next_job"] <= max(jobs):
        return f"next_job is {manifest['next_job']}, but job {max(jobs)} is committed"
    counts = manifest.get("counts")
    if not isinstance(counts, dict):
        return f"counts is {_shown(counts)}, not an object"
    for key in ("skipped", "duplicates", "games", "label_seconds"):
        value = counts.get(key)
        if not (is_number(value) if key == "label_seconds" else is_int(value)) or not 0 <= value < INT_LIMIT:
            return f"counts.{key} is {_shown(value)}, not a number >= 0"
    return None


def _read_shard(folder: str, entry: dict, config: TeachConfig, verify: bool):
    """The samples and columns of the shard of manifest entry ``entry`` (checked by
    :func:`_manifest_problem`), checked against its checksum (``verify``) and for values no dataset holds."""
    path = os.path.join(folder, entry["file"])
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError as exc:
        raise TeacherError(f"shard {path} cannot be read ({exc.strerror or exc})") from None
    if verify and hashlib.sha256(data).hexdigest() != entry["sha256"]:
        raise TeacherError(f"shard {path} does not match its checksum in the manifest (damaged or replaced)")
    try:
        with np.load(io.BytesIO(data), allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except Exception as exc:  # any damage: of the zip (BadZipFile), its compression (zlib.error), numpy's headers
        raise TeacherError(f"shard {path} is corrupt ({type(exc).__name__}: {exc})") from None
    try:
        samples = Samples.from_arrays(arrays, source=path)
    except ValueError as exc:
        raise TeacherError(str(exc) if path in str(exc) else f"shard {path}: {exc}") from None
    if samples.board != config.board:
        raise TeacherError(f"shard {path} holds {samples.board} positions, the dataset is {config.board}")
    n, a = samples.pi.shape
    for c, t in EXTRA_COLUMNS.items():
        col = arrays.get(c)
        shape = (n, a) if c == "values" else (n,)
        if col is None or col.dtype != t or col.shape != shape:
            raise TeacherError(f"shard {path}: column {c} missing or not {np.dtype(t)}{list(shape)}")
    if n != entry["positions"]:
        raise TeacherError(f"shard {path} holds {n} positions, the manifest says {entry['positions']}")
    problem = _shard_problem(samples, arrays, config)
    if problem:
        raise TeacherError(f"shard {path} is damaged: {problem}")
    return samples, arrays


def _shard_problem(samples: Samples, arrays: dict, config: TeachConfig) -> str | None:
    """The first column of a shard holding a value no dataset holds (None when none does): labels and
    targets that are not finite or out of their range, moves off the board, players not in the config."""
    g = geometry(config.board)
    a, boxes = g.num_actions, g.num_boxes
    values = arrays["values"]
    checks = {
        "pi": np.isfinite(samples.pi) & (samples.pi >= 0) & (samples.pi <= 1),
        "z": np.isfinite(samples.z) & (np.abs(samples.z) <= 1),
        "q": np.isfinite(samples.q) & (np.abs(samples.q) <= 1),
        "seconds": np.isfinite(arrays["seconds"]) & (arrays["seconds"] >= 0),
        "mover": (samples.mover == 0) | (samples.mover == 1),
        "move": (samples.move >= 0) & (samples.move < a),
        "step": (samples.step >= 0) & (samples.step <= a),
        "values": (values == NO_VALUE) | (np.abs(values.astype(np.int16)) <= boxes),
        "value": np.abs(arrays["value"].astype(np.int16)) <= boxes,
        "kind": np.isin(arrays["kind"], (MARGIN, OUTCOME, VALUE)),
        "player": (arrays["player"] >= 0) & (arrays["player"] < len(config.pairs)),
        "game": arrays["game"] >= 0,
    }
    for column, ok in checks.items():
        bad = np.argwhere(~ok)
        if len(bad):
            where = tuple(int(i) for i in bad[0])
            return f"column {column} holds {arrays[column][where].item()!r} at {list(where)}"
    return None


class _Runner:
    """Jobs in order, computed locally, in spawned processes or as Ray tasks, a few ahead of the consumer."""

    def __init__(self, workers: int, backend: str, ray_address: str | None = None):
        self.workers, self.backend, self.ray_address = workers, backend, ray_address

    def map(self, jobs: Iterator[_Job]) -> Iterator[dict]:
        if self.backend == "ray":
            yield from self._ray(jobs)
        elif self.workers <= 1:
            from agents.processes import limit_threads

            with limit_threads(1):
                for job in jobs:
                    yield _run_job(job)
        else:
            from agents.processes import spawn_pool

            pool = spawn_pool(self.workers, 1)
            try:
                yield from pool.imap(_run_job, jobs)
            finally:
                pool.terminate()
                pool.join()

    def _ray(self, jobs: Iterator[_Job]) -> Iterator[dict]:
        from agents.ray_cluster import RaySession, require_ray

        ray = require_ray()
        with RaySession(self.ray_address, num_cpus=None if self.ray_address else self.workers):
            task = ray.remote(num_cpus=1)(_run_job)
            window = []
            for job in jobs:
                window.append(task.remote(job))
                if len(window) >= 2 * self.workers:
                    yield ray.get(window.pop(0))
            for ref in window:
                yield ray.get(ref)


def _write_manifest(folder: str, manifest: dict) -> None:
    atomic_write(os.path.join(folder, MANIFEST), json.dumps(manifest, indent=1) + "\n")


def generate(config: TeachConfig, out: str, make_player: Callable, *, workers: int = 1, backend: str = "local",
             ray_address: str | None = None, progress: bool = True, exclude: list[str] = (), echo=print,
             max_jobs: int | None = None) -> dict:
    """Fill (or continue) the dataset folder ``out`` until it holds ``config.positions`` positions; returns
    the manifest. ``make_player(spec, board, seed)`` builds an agent from a registry spec (it must pickle:
    a module-level function). A folder holding a dataset of another config is refused, except for a larger
    ``positions``. ``exclude``: dataset folders whose positions are never taken (held-out sets).
    ``max_jobs``: stop after that many jobs (for tests and benchmarks)."""
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if os.path.exists(out) and not os.path.isdir(out):
        raise TeacherError(f"{out} exists and is not a folder")
    excluded = set()
    for folder in exclude:  # read first: a start refused here leaves no folder behind
        other = TeacherData.load(folder)
        excluded |= {canonical_key(s) for s in other.samples.states()}
    # a second writer is refused here, before it reads or writes; taking the lock removes the shards and
    # manifests a killed run was writing (NAME.tmpPID)
    with RunLock(out, what="teach"):
        return _generate(config, out, make_player, workers, backend, ray_address, progress, excluded, echo,
                         max_jobs)


def _generate(config: TeachConfig, out: str, make_player: Callable, workers: int, backend: str,
              ray_address: str | None, progress: bool, excluded: set, echo, max_jobs: int | None) -> dict:
    if os.path.exists(os.path.join(out, MANIFEST)):
        manifest = TeacherData.read_manifest(out)
        saved = TeachConfig.from_dict(manifest["config"])
        if dataclasses.replace(saved, positions=config.positions) != config:
            differs = [k for k, v in config.to_dict().items() if k != "positions" and saved.to_dict()[k] != v]
            raise TeacherError(f"{out} holds a teacher dataset of another config ({os.path.join(out, MANIFEST)} "
                               f"differs in {differs}); use another folder")
        manifest["config"] = config.to_dict()
        known = TeacherData.load(out)
        seen = {canonical_key(s) for s in known.samples.states()}
        echo(f"resuming {out}: {manifest['positions']} positions in {len(manifest['shards'])} shards")
    else:
        manifest = {"format": FORMAT, "version": VERSION, "config": config.to_dict(),
                    "pairs": [[config.players[i], config.players[j]] for i, j in config.pairs],
                    "shards": [], "positions": 0, "next_job": 0,
                    "counts": {"skipped": 0, "duplicates": 0, "games": 0, "label_seconds": 0.0}}
        seen = set()
    seen |= excluded
    if manifest["positions"] >= config.positions:
        _write_manifest(out, manifest)
        return manifest

    bar = None
    if progress:
        try:
            from tqdm import tqdm

            bar = tqdm(total=config.positions, initial=manifest["positions"], unit="pos", desc="teach")
        except ImportError:
            pass

    def jobs():
        j = manifest["next_job"]
        while max_jobs is None or j < manifest["next_job"] + max_jobs:
            yield _Job(config, j, make_player)
            j += 1

    start_job = manifest["next_job"]
    try:
        for result in _Runner(workers, backend, ray_address).map(jobs()):
            fresh = [r for r in result["rows"] if r[6] not in seen]
            dups = len(result["rows"]) - len(fresh)
            fresh = fresh[: config.positions - manifest["positions"]]
            seen.update(r[6] for r in fresh)
            name = f"shard-{result['job']:06d}.npz"
            buf = io.BytesIO()
            np.savez_compressed(buf, **_shard_arrays(config.board, fresh, random.Random(result["job"])))
            data = buf.getvalue()
            atomic_write(os.path.join(out, name), data)
            manifest["shards"].append({"file": name, "positions": len(fresh), "job": result["job"],
                                       "sha256": hashlib.sha256(data).hexdigest()})
            manifest["positions"] += len(fresh)
            manifest["next_job"] = result["job"] + 1
            counts = manifest["counts"]
            counts["skipped"] += result["skipped"]
            counts["duplicates"] += result["duplicates"] + dups
            counts["games"] += result["games"]
            counts["label_seconds"] = round(counts["label_seconds"] + sum(r[5] for r in fresh), 3)
            _write_manifest(out, manifest)
            if bar is not None:
                bar.update(len(fresh))
            if manifest["positions"] >= config.positions:
                break
            if max_jobs is not None and manifest["next_job"] >= start_job + max_jobs:
                break
    finally:
        if bar is not None:
            bar.close()
    return manifest


# ---------------------------------------------------------------------------------------------- targets
def to_samples(data: TeacherData, value_unit: str = "margin", temperature: float = 0.0) -> tuple[Samples, np.ndarray]:
    """``(samples, value_known)``: the dataset as training samples for a model of ``value_unit`` ("win" or
    "margin": the final box difference over the number of boxes). The policy target is uniform over the
    best moves (``temperature=0``) or a softmax of the move labels at ``temperature`` (margin rows in
    boxes; outcome rows in units of a whole result); rows of kind ``VALUE`` keep an all-zero policy target
    (no policy loss). ``value_known[i]`` is False where the target is not known in that unit (outcome and
    value rows under ``"margin"``): their value loss is to be left out."""
    if value_unit not in ("win", "margin"):
        raise ValueError(f"value_unit must be 'win' or 'margin', got {value_unit!r}")
    if temperature < 0:
        raise ValueError(f"temperature must be >= 0, got {temperature}")
    s = data.samples
    boxes = geometry(s.board).num_boxes
    legal = data.values != NO_VALUE
    vals = data.values.astype(np.float32)
    if temperature > 0:
        labelled = legal.any(axis=1, keepdims=True)  # rows of kind VALUE have no move labels: pi stays 0
        logits = np.where(legal, vals / temperature, -np.inf)
        logits -= np.where(labelled, logits.max(axis=1, keepdims=True), 0.0)
        pi = np.where(labelled, np.exp(logits), 0.0)
        pi /= np.maximum(pi.sum(axis=1, keepdims=True), 1e-30)
    else:
        pi = s.pi
    lead = data.lead
    known = np.ones(len(s), bool)
    if value_unit == "margin":
        z = np.where(data.kind == MARGIN, (lead + data.value) / boxes, 0.0).astype(np.float32)
        known = data.kind == MARGIN
    else:
        z = s.z.copy()
    out = Samples(s.board, s.edges, s.owners, s.mover, s.move, pi.astype(np.float32), z, z.copy(), s.step,
                  s.iteration, s.initiative, s.move_class, s.node)
    return out, known
