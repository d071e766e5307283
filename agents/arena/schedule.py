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
from dataclasses import InitVar, dataclass

from agents.arena.play import make_opening
from agents.ray_cluster import check_backend
from dnb_env.clock import TIME_MARGIN, TimeControl, check_time_control
from dnb_env.core import DEFAULT_BOARD, geometry
from dnb_env.limits import check_seed, is_int, is_number

__all__ = ["TournamentConfig", "MAX_GAMES", "MAX_WORKERS", "game_ids", "game_tasks"]

#: Most games one tournament schedules, all pairs together (pairs x games per pair): the schedule is built
#: in memory (about 200 bytes a game), so a typo such as ``--games 1000000000000`` is refused up front.
MAX_GAMES = 1_000_000
#: The config's names of the clock's settings (``config.json``'s keys and the constructor's keywords), for
#: the errors of :func:`dnb_env.clock.check_time_control`.
CONFIG_NAMES = {"per_move": "time_per_move", "per_game": "time_per_game", "increment": "increment",
                "margin": "time_margin", "overrun": "overrun"}
#: The types of those keys, as :func:`setting_problem` reads them.
CLOCK_KEYS = {"time_per_move": "float | None", "time_margin": "float", "overrun": "str",
              "time_per_game": "float | None", "increment": "float"}
#: Those keys of a config without a clock (their defaults).
NO_CLOCK = {"time_per_move": None, "time_margin": TIME_MARGIN, "overrun": "lose", "time_per_game": None,
            "increment": 0.0}
#: Most worker processes (``workers``) and threads per process (``threads``) a tournament accepts.
MAX_WORKERS = 1024
#: The most bootstrap samples of the Elo intervals.
MAX_BOOTSTRAP = 10_000


@dataclass(frozen=True)
class TournamentConfig:
    """All that defines a tournament; saved as ``config.json`` beside the results.

    ``time_control``: the clock of every game (None: each agent at its own budget). Its settings may be given
    flat instead, as ``config.json`` holds them (:data:`CONFIG_NAMES`: ``time_per_move``, ``time_margin``,
    ``overrun``, ``time_per_game``, ``increment``; not with another ``time_control``): they are read into it,
    and the config's attributes of those names read them back from it."""

    board: str = DEFAULT_BOARD
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
    time_control: TimeControl | None = None  # the clock of every game (None: each agent at its own budget)
    # or its settings, flat (TimeControl's per_move, margin, overrun, per_game, increment)
    time_per_move: InitVar[float | None] = None
    time_margin: InitVar[float] = TIME_MARGIN
    overrun: InitVar[str] = "lose"
    time_per_game: InitVar[float | None] = None
    increment: InitVar[float] = 0.0

    def __post_init__(self, time_per_move, time_margin, overrun, time_per_game, increment):
        flat = {"time_per_move": time_per_move, "time_margin": time_margin, "overrun": overrun,
                "time_per_game": time_per_game, "increment": increment}
        object.__setattr__(self, "time_control", _read_clock(self.time_control, flat))
        check_backend(self.backend)
        if self.ray_address is not None and self.backend != "ray":
            raise ValueError(f"ray_address is used only with backend 'ray', not {self.backend!r}")
        g = geometry(self.board)
        if self.board is g:  # a Geometry given: config.json keeps its name
            object.__setattr__(self, "board", g.name)
        edges = g.num_actions
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

    def pairs(self) -> list[tuple[int, int]]:
        n = len(self.agents)
        if self.mode == "gauntlet":
            return [(0, j) for j in range(1, n)]
        return list(itertools.combinations(range(n), 2))

    def to_json(self) -> dict:
        """The config as ``config.json`` holds it: the clock's settings as the flat keys of
        :data:`CONFIG_NAMES` (their defaults without a clock), as every version wrote them."""
        data = dataclasses.asdict(self)
        del data["time_control"]
        return data | clock_json(self.time_control)

    @classmethod
    def from_json(cls, data: dict) -> "TournamentConfig":
        """The config saved as ``data`` (``config.json``, parsed); ValueError for another type than an object,
        an unknown key, a value of the wrong type (:func:`setting_problem`) and one the config refuses."""
        if not isinstance(data, dict):
            raise ValueError(f"a tournament config is a JSON object, not a {type(data).__name__}")
        known = {f.name: f.type for f in dataclasses.fields(cls) if f.name != "time_control"} | CLOCK_KEYS
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


def _flat_setting(key: str) -> property:
    """The config's ``key`` (of :data:`CLOCK_KEYS`), read from its ``time_control``."""
    return property(lambda config: clock_json(config.time_control)[key],
                    doc=f"``time_control``'s setting as ``config.json``'s ``{key}`` (read-only)")


for _key in CLOCK_KEYS:  # after the dataclass took the defaults: the flat names read time_control from now on
    setattr(TournamentConfig, _key, _flat_setting(_key))


def _read_clock(time_control, flat: dict) -> TimeControl | None:
    """The config's clock: ``time_control``, or one made of the ``flat`` settings (keys of
    :data:`CLOCK_KEYS`; those of ``time_control`` or defaults when it is given); None without a clock, where
    the other flat settings are still checked."""
    if time_control is not None:
        if not isinstance(time_control, TimeControl):
            raise ValueError(f"time_control must be a TimeControl or None, got {_shown(time_control)}")
        own = clock_json(time_control)
        other = [key for key, value in flat.items() if value not in (NO_CLOCK[key], own[key])]
        if other:
            raise ValueError(f"give time_control or its settings ({', '.join(other)}), not both")
        return time_control
    if flat["time_per_move"] is None and flat["time_per_game"] is None:
        check_time_control(increment=flat["increment"], margin=flat["time_margin"], overrun=flat["overrun"],
                           names=CONFIG_NAMES)
        return None
    return TimeControl(flat["time_per_move"], flat["time_margin"], flat["overrun"], flat["time_per_game"],
                       flat["increment"], names=CONFIG_NAMES)


def clock_json(tc: TimeControl | None) -> dict:
    """The time control ``tc`` as the flat keys of ``config.json`` (:data:`CLOCK_KEYS`); :data:`NO_CLOCK` for
    None."""
    if tc is None:
        return dict(NO_CLOCK)
    return {"time_per_move": tc.per_move, "time_margin": tc.margin, "overrun": tc.overrun,
            "time_per_game": tc.per_game, "increment": tc.increment}


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
