"""The teacher dataset format: a folder of labelled positions written by ``dnb teach``
(:mod:`agents.training.teacher`), its checks, and its rows as training samples.

    data = TeacherData.load("data/teach-5x5")       # checked against its manifest
    data.samples                                     # agents.training.samples.Samples (the training contract)
    data.values[i, a]                                # exact label of move a in position i (see ``kind``)
    samples, known = to_samples(data, "margin")      # targets for a model of that value unit

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
import re
from dataclasses import dataclass

import numpy as np

from agents.training.samples import Samples
from dnb_env.core import DEFAULT_BOARD, geometry
from dnb_env.io import atomic_write, read_json
from dnb_env.limits import INT_LIMIT, check_seed, is_int, is_number
from dnb_env.solver import DEFAULT_NODE_LIMIT, MOVES_REACH, VALUE_REACH

__all__ = ["FORMAT", "VERSION", "MARGIN", "OUTCOME", "VALUE", "NO_VALUE", "TeachConfig", "TeacherData", "TeacherError",
           "to_samples", "DEFAULT_PLAYERS"]

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

    board: str = DEFAULT_BOARD
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
        object.__setattr__(self, "board", g.name)
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


def _write_manifest(folder: str, manifest: dict) -> None:
    atomic_write(os.path.join(folder, MANIFEST), json.dumps(manifest, indent=1) + "\n")


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
