"""What a tournament plays: its config (saved as ``config.json`` beside the results), its games and their
seeds.

    cfg = TournamentConfig(board="5x5", agents=("random", "greedy"), games=20, openings=10)
    games = game_ids(cfg)          # "i-j-g" -> (pair index, i, j, g), in schedule order
    tasks = game_tasks(cfg, games, done=set())   # (i, j, g, opening, agent_seed) of every game still to play

Game ``g`` of a pair uses opening ``g // 2`` (both colour assignments see the same one, Dotsformer Appendix
C); each game's opening and agent seeds depend only on its id, so a game does not depend on where, when or
beside which others it is played.
"""

from __future__ import annotations

import dataclasses
import itertools
from dataclasses import dataclass

from agents.arena.play import TimeControl, make_opening
from agents.engine.protocol import TIME_MARGIN, check_time_control
from agents.ray_cluster import check_backend
from dnb_env.core import geometry
from dnb_env.limits import check_seed, is_int, is_number

__all__ = ["TournamentConfig", "MAX_GAMES", "MAX_WORKERS", "game_ids", "game_tasks"]

#: Most games one tournament schedules, all pairs together (pairs x games per pair): the schedule is built
#: in memory (about 200 bytes a game), so a typo such as ``--games 1000000000000`` is refused up front.
MAX_GAMES = 1_000_000
#: The config's names of the clock's settings, for :func:`agents.engine.protocol.check_time_control`.
CONFIG_NAMES = {"per_move": "time_per_move", "per_game": "time_per_game", "increment": "increment",
                "margin": "time_margin", "overrun": "overrun"}
#: Most worker processes (``workers``) and threads per process (``threads``) a tournament accepts.
MAX_WORKERS = 1024
#: The most bootstrap samples of the Elo intervals.
MAX_BOOTSTRAP = 10_000


@dataclass(frozen=True)
class TournamentConfig:
    """All that defines a tournament; saved as ``config.json`` beside the results."""

    board: str = "5x5"
    agents: tuple[str, ...] = ("random", "greedy")
    games: int = 20  # per pair
    openings: int = 0  # random opening moves
    opening_mode: str = "guided"  # "pure" or "guided"
    mode: str = "round_robin"  # or "gauntlet": the first agent against each other one
    workers: int = 1  # processes playing games (1: in the calling process)
    threads: int = 1  # numpy/BLAS and torch threads of each worker process, or of this one (workers=1)
    seed: int = 0
    bootstrap: int = 200  # bootstrap samples for the Elo intervals (0: none)
    backend: str = "local"  # "local" (processes of this machine) or "ray" (games as Ray tasks)
    ray_address: str | None = None  # with backend "ray": auto, HOST:PORT, or None (a local Ray instance)
    time_per_move: float | None = None  # seconds a move for every agent (None: each at its own budget)
    time_margin: float = TIME_MARGIN  # seconds past time_per_move, or the clock, before a move is an overrun
    overrun: str = "lose"  # an overrun loses the game on time ("lose") or is listed in the record ("warn")
    time_per_game: float | None = None  # seconds on each side's game clock (not with time_per_move)
    increment: float = 0.0  # seconds added to a side's game clock after each of its moves

    def __post_init__(self):
        self.time_control()  # checks the clock's settings
        check_backend(self.backend)
        if self.ray_address is not None and self.backend != "ray":
            raise ValueError(f"ray_address is used only with backend 'ray', not {self.backend!r}")
        edges = geometry(self.board).num_actions
        if len(self.agents) < 2:
            raise ValueError("a tournament needs at least two agents")
        if len(set(self.agents)) != len(self.agents):
            raise ValueError(f"agent entries must be distinct, got {list(self.agents)}")
        if self.games < 1:
            raise ValueError(f"games must be >= 1, got {self.games}")
        if not 0 <= self.openings < edges:
            raise ValueError(f"openings must be in 0..{edges - 1} (a {self.board} board has {edges} edges), "
                             f"got {self.openings}")
        if self.opening_mode not in ("pure", "guided"):
            raise ValueError(f"opening_mode must be 'pure' or 'guided', got {self.opening_mode!r}")
        if self.mode not in ("round_robin", "gauntlet"):
            raise ValueError(f"mode must be 'round_robin' or 'gauntlet', got {self.mode!r}")
        for name in ("workers", "threads"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
            if getattr(self, name) > MAX_WORKERS:
                raise ValueError(f"{name} must be at most {MAX_WORKERS}, got {getattr(self, name)}")
        pairs = len(self.pairs())
        if pairs * self.games > MAX_GAMES:
            raise ValueError(f"a tournament plays at most {MAX_GAMES:,} games in all (pairs x games per pair), "
                             f"got {pairs} pair{'s' * (pairs != 1)} x {self.games:,} games")
        if not 0 <= self.bootstrap <= MAX_BOOTSTRAP:
            raise ValueError(f"bootstrap must be in 0..{MAX_BOOTSTRAP:,}, got {self.bootstrap:,}")
        check_seed(self.seed)

    def time_control(self) -> TimeControl | None:
        """The clock of every game (None without ``time_per_move`` or ``time_per_game``); ValueError for bad
        settings."""
        if not check_time_control(self.time_per_move, self.time_per_game, self.increment, self.time_margin,
                                  self.overrun, names=CONFIG_NAMES):
            return None
        return TimeControl(self.time_per_move, self.time_margin, self.overrun, self.time_per_game,
                           self.increment)

    def pairs(self) -> list[tuple[int, int]]:
        n = len(self.agents)
        if self.mode == "gauntlet":
            return [(0, j) for j in range(1, n)]
        return list(itertools.combinations(range(n), 2))

    def to_json(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_json(cls, data: dict) -> "TournamentConfig":
        """The config saved as ``data`` (``config.json``, parsed); ValueError for another type than an object,
        an unknown key, a value of the wrong type (:func:`setting_problem`) and one the config refuses."""
        if not isinstance(data, dict):
            raise ValueError(f"a tournament config is a JSON object, not a {type(data).__name__}")
        known = {f.name: f.type for f in dataclasses.fields(cls)}
        unknown = set(data) - set(known)
        if unknown:
            raise ValueError(f"unknown tournament config keys: {sorted(unknown)}")
        for key, value in data.items():
            problem = setting_problem(known[key], value)
            if problem:
                raise ValueError(f"tournament config key {key} is {problem}")
        data = dict(data)
        data["agents"] = tuple(data.get("agents", ()))
        return cls(**data)


def setting_problem(kind: str, value) -> str | None:
    """What is wrong with ``value`` as a config setting of the annotated type ``kind`` (None when nothing
    is): strings, integers below 2**63 in size, finite numbers, a list of strings, or None where allowed."""
    if value is None and kind.endswith("| None"):
        return None
    base = kind.removesuffix(" | None")
    checks = {"str": lambda v: isinstance(v, str),
              "int": is_int,
              "float": is_number,
              "tuple[str, ...]": lambda v: isinstance(v, (list, tuple)) and all(isinstance(a, str) for a in v)}
    if checks[base](value):
        return None
    want = {"str": "a string", "int": "an integer", "float": "a finite number", "tuple[str, ...]": "a list of agent specs"}
    return f"{_shown(value)}, not {want[base]}" + (" or null" if base != kind else "")


def _shown(value, limit: int = 60) -> str:
    """``value`` for an error message: its repr, cut to ``limit`` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit] + "..."


def game_ids(config: TournamentConfig) -> dict[str, tuple[int, int, int, int]]:
    """Every game of the tournament: id ``"i-j-g"`` -> (pair index, i, j, g), in schedule order."""
    return {f"{i}-{j}-{g}": (p, i, j, g) for p, (i, j) in enumerate(config.pairs()) for g in range(config.games)}


def game_tasks(config: TournamentConfig, games: dict, done: set) -> list[tuple]:
    """The tasks ``(i, j, g, opening, agent_seed)`` of the ``games`` (:func:`game_ids`) whose id is not in
    ``done``, in schedule order."""
    tasks = []
    for key, (pair_index, i, j, g) in games.items():
        if key in done:
            continue
        op_seed = (config.seed * 1_000_003 + pair_index * 10_007 + g // 2) & 0x7FFFFFFF
        opening = make_opening(config.board, config.openings, config.opening_mode, op_seed) if config.openings else []
        agent_seed = (config.seed * 7_919 + pair_index * 104_729 + g * 2) & 0x7FFFFFFF
        tasks.append((i, j, g, opening, agent_seed))
    return tasks
