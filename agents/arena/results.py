"""The results folder of a tournament: ``results.jsonl`` (one game a line), ``config.json`` and a lock.

    lock, done, appender = open_results(out, config, game_ids(config))   # a run: locked, resumed
    appender.add(record); appender.close(); lock.close()
    read_games("results/5x5/results.jsonl")                              # a reader: valid games, read only

* Every finished game is appended as one line, flushed and fsynced (:class:`dnb_env.io.JsonlAppender`); a
  killed run resumes with the games it has. A line that is not a game of this tournament (a torn last line,
  bad JSON, a record of the wrong shape, an id, seats or result that do not fit the schedule) is moved to
  ``results.jsonl.rejected`` with a warning; every valid game is kept, and a game on file twice counts once.
* The config is saved beside the results and a resume with a different config is refused
  (:data:`FREE_KEYS` may change, and so may what the caller's ``identity`` leaves out of an agent's spec:
  an engine's ``log=``). Records name their players by their labels (an engine's ``name=``); a record of
  a resumed folder that names a player by its spec, as records written before labels did, counts as
  that player's. A larger ``games`` extends the tournament: every game's opening and seeds
  depend only on its id, so the games on file are the first ones of the longer schedule.
* :class:`FolderLock` (:class:`dnb_env.io.RunLock`): one run per folder at a time, so two runs cannot append
  the same games to one file; :func:`folder_locked` tells a reader (the web app) whether a run holds it now,
  without taking it. A run holding it first removes the temporary files a killed run left.
* :func:`game_problem` is the one check of a record's shape (an id, integer moves, and where present player
  labels, two integer scores, a numeric result, a list of opening moves, a forfeit with its player and
  reason, finite move times): the resume and every reader
  (:func:`read_games`, the web app's tournament browser) use it.
"""

from __future__ import annotations

import dataclasses
import json
import os
from typing import Callable, Sequence

from agents.arena.play import seats
from agents.arena.schedule import TournamentConfig, _shown, clock_json, setting_problem
from dnb_env.core import geometry
from dnb_env.io import LOCK, JsonlAppender, RunLock, atomic_write, folder_locked, read_json, read_jsonl
from dnb_env.limits import INT_LIMIT, is_int, is_number

__all__ = ["RESULTS", "CONFIG", "LOCK", "FREE_KEYS", "FolderLock", "folder_locked", "game_problem",
           "tournament_problem", "check_or_save_config", "read_config", "open_results", "read_games"]

RESULTS = "results.jsonl"
CONFIG = "config.json"
#: Config keys a resumed run may change: they do not change which games are played.
FREE_KEYS = ("workers", "threads", "bootstrap", "backend", "ray_address")
#: Config keys added after the first results folders were written: a saved config without them has their
#: defaults.
_LATER_KEYS = ("time_per_move", "time_margin", "overrun", "time_per_game", "increment")


def game_problem(rec) -> str | None:
    """Why ``rec`` (a parsed line of ``results.jsonl``) does not have the shape of a game record (None when
    it has): an id, integer moves, and where present string labels ``first``/``second``, two integer
    ``scores``, a numeric ``result_first``, a list ``opening``, a ``forfeit`` (the game lost by an agent
    that could not move: ``{"player": 0 or 1, "kind", "reason"}``) and the timing :func:`_timing_problem`
    checks."""
    if not isinstance(rec, dict):
        return f"a JSON {type(rec).__name__}, not a game record"
    key = rec.get("id")
    if not isinstance(key, str):
        return f"no game id (a string), got {key!r}"
    if not isinstance(rec.get("moves"), list) or not all(is_int(a) for a in rec["moves"]):
        return f"game {key} has no list of integer moves"
    for side in ("first", "second"):
        if side in rec and not isinstance(rec[side], str):
            return f"game {key} has a {side} player that is not a label"
    scores = rec.get("scores")
    if scores is not None and not (isinstance(scores, list) and len(scores) == 2 and all(map(is_int, scores))):
        return f"game {key} has scores that are not two integers"
    result = rec.get("result_first")
    if result is not None and (isinstance(result, bool) or not isinstance(result, (int, float))):
        return f"game {key} has a result_first that is not a number"
    if rec.get("opening") is not None and not isinstance(rec["opening"], list):
        return f"game {key} has an opening that is not a list of moves"
    forfeit = rec.get("forfeit")
    if forfeit is not None and not (isinstance(forfeit, dict) and forfeit.get("player") in (0, 1)
                                    and not isinstance(forfeit.get("player"), bool)
                                    and isinstance(forfeit.get("reason"), str)):
        return f"game {key} has a forfeit without a player (0 or 1) and a reason"
    return _timing_problem(rec)


def _is_seconds(x) -> bool:
    """A finite number of seconds (not a bool), below 2**63."""
    return is_number(x) and abs(x) < INT_LIMIT


def _timing_problem(rec: dict) -> str | None:
    """Why the timing fields of a game record (where present) are not what :func:`summarise` adds up: two
    finite ``think_s``, ``max_s`` and ``ready_s``, two integer ``moves_by``, a list of finite ``move_s`` and a
    list of two finite clocks a move ``clock_s``."""
    key = rec["id"]
    for field in ("think_s", "max_s", "ready_s", "moves_by"):
        pair = rec.get(field)
        ok = is_int if field == "moves_by" else _is_seconds
        if (field in rec or (field == "think_s" and "moves_by" in rec and "max_s" in rec)) and \
                not (isinstance(pair, list) and len(pair) == 2 and all(map(ok, pair))):
            return f"game {key} has a {field} that is not two {'integers' if field == 'moves_by' else 'finite numbers'}"
    if "move_s" in rec and not (isinstance(rec["move_s"], list) and all(map(_is_seconds, rec["move_s"]))):
        return f"game {key} has a move_s that is not a list of finite numbers"
    clocks = rec.get("clock_s")
    if "clock_s" in rec and not (isinstance(clocks, list) and all(
            isinstance(c, list) and len(c) == 2 and all(map(_is_seconds, c)) for c in clocks)):
        return f"game {key} has a clock_s that is not a list of two finite numbers a move"
    return None


def tournament_problem(rec, games: dict, labels: Sequence, aliases: Sequence = (),
                       edges: int | None = None) -> str | None:
    """Why a line of ``results.jsonl`` is not a game of this tournament (None when it is one): a game id
    of the schedule ``games`` (id -> (pair index, i, j, g)), the labels of its seats (``labels[k]``, or
    one of the names in ``aliases[k]`` where given), a result_first of 0, 0.5 or 1, the shape of
    :func:`game_problem` and, given the board's number of ``edges``, moves that are edges of it."""
    if not isinstance(rec, dict):
        return f"a JSON {type(rec).__name__}, not a game record"
    key = rec.get("id")
    if not isinstance(key, str) or key not in games:
        return f"no game of this tournament has id {key!r}"
    problem = game_problem(rec)
    if problem is not None:
        return problem
    first, second = seats(*games[key][1:])
    names = [{labels[k], *(aliases[k] if aliases else ())} for k in (first, second)]
    if rec.get("first") not in names[0] or rec.get("second") not in names[1]:
        return f"game {key} is {labels[first]} vs {labels[second]}, not {rec.get('first')!r} vs {rec.get('second')!r}"
    if rec.get("result_first") not in (0, 0.5, 1):
        return f"game {key} has no result_first of 0, 0.5 or 1"
    if edges is not None and not all(0 <= a < edges for a in rec["moves"]):
        return f"game {key} has moves that are not edges of the board (0..{edges - 1})"
    return None


class FolderLock(RunLock):
    """The :class:`dnb_env.io.RunLock` of a results folder for the length of a tournament, so two runs
    cannot append the same games to one file."""

    def __init__(self, folder: str):
        super().__init__(folder, what="tournament")


def _identified(config: dict, identity: Callable | None) -> dict:
    """``config`` (a saved or current config as JSON) with its agents replaced by ``identity(agents)``."""
    agents = config.get("agents")
    if identity is None or not isinstance(agents, list) or not all(isinstance(a, str) for a in agents):
        return config
    return {**config, "agents": list(identity(agents))}


def check_or_save_config(cfg_path: str, config: TournamentConfig, identity: Callable | None = None) -> list | None:
    """Save the config beside the results, or check that a resumed run has the same one; ``identity(agents)
    -> keys`` gives what identifies the agents (default: their specs as they stand), so that options which
    do not change play (an engine's ``log=``) may change. Returns the saved config's agents (None for a new
    folder)."""
    if not os.path.exists(cfg_path):
        atomic_write(cfg_path, json.dumps(config.to_json(), indent=2) + "\n")
        return None
    saved = read_config(cfg_path)
    saved_agents = saved["agents"]
    current = json.loads(json.dumps(config.to_json()))
    same = {k: v for k, v in _identified(current, identity).items() if k not in FREE_KEYS}
    ident = _identified(saved, identity)
    if {k: v for k, v in ident.items() if k not in FREE_KEYS} == same:
        return saved_agents
    if {k: v for k, v in ident.items() if k not in FREE_KEYS + ("games",)} == \
            {k: v for k, v in same.items() if k != "games"}:
        if config.games < saved["games"]:
            raise ValueError(f"{os.path.dirname(cfg_path)} holds a tournament of {saved['games']} games a pair; "
                             f"--games may grow to extend it, not shrink (asked: {config.games})")
        atomic_write(cfg_path, json.dumps(config.to_json(), indent=2) + "\n")  # extended
        return saved_agents
    differs = "; ".join(f"{k}: saved {_shown(ident.get(k))}, now {_shown(v)}" for k, v in same.items()
                        if ident.get(k) != v)
    raise ValueError(f"{os.path.dirname(cfg_path)} holds a tournament with another config ({cfg_path}: {differs}); "
                     "use another --out or the same options (a larger --games extends it)")


def read_config(cfg_path: str) -> dict:
    """The tournament config saved at ``cfg_path``, parsed and checked (:meth:`TournamentConfig.from_json`),
    as JSON (a folder saved before a setting existed holds that setting's default, and the clock's settings
    are those of its ``time_control``); ValueError naming the file when it cannot be read, is not JSON or is
    not a config this code accepts."""
    try:
        saved = read_json(cfg_path, "a tournament config")
    except FileNotFoundError as exc:
        raise ValueError(f"{cfg_path} cannot be read ({exc.strerror or exc})") from None
    checked = saved
    if isinstance(saved, dict):
        defaults = TournamentConfig().to_json()
        saved = {**{k: v for k, v in defaults.items() if k in _LATER_KEYS}, **saved}
        # the keys a resume may change are the new run's, not the file's: only their types are checked here
        # (an older version's ranges may differ)
        kinds = {f.name: f.type for f in dataclasses.fields(TournamentConfig)}
        for key in FREE_KEYS:
            why = setting_problem(kinds[key], saved[key]) if key in saved else None
            if why is None and isinstance(saved.get(key), int) and saved[key] < 0:  # no version wrote one
                why = f"{saved[key]}, not a count"
            if why is not None:
                raise ValueError(f"{cfg_path} is not a tournament config this code accepts ({key} is {why})")
        checked = {**saved, **{k: v for k, v in defaults.items() if k in FREE_KEYS}}
    try:
        config = TournamentConfig.from_json(checked)
    except ValueError as exc:
        raise ValueError(f"{cfg_path} is not a tournament config this code accepts ({exc})") from None
    return saved | clock_json(config.time_control)  # a margin or overrun rule saved without a clock: defaults


def open_results(out: str, config: TournamentConfig, games: dict, labels: Sequence[str] | None = None,
                 identity: Callable | None = None):
    """Lock the folder ``out``, save or check its config (:func:`check_or_save_config` with ``identity``)
    and read the games on file (each id once; bad lines moved aside; players named by their spec, this
    run's or the saved config's, renamed to their ``labels``, default ``config.agents``); returns (lock,
    games, appender). A folder that cannot be written is a ValueError."""
    lock = None
    labels = list(config.agents) if labels is None else list(labels)
    try:
        os.makedirs(out, exist_ok=True)
        lock = FolderLock(out)  # which removes the temporary files a killed run left
        saved = check_or_save_config(os.path.join(out, CONFIG), config, identity)
        aliases = [{spec} for spec in config.agents]
        if isinstance(saved, list) and len(saved) == len(aliases):
            for names, spec in zip(aliases, saved):
                if isinstance(spec, str):
                    names.add(spec)
        path = os.path.join(out, RESULTS)
        done = {}
        edges = geometry(config.board).num_actions
        for rec in read_jsonl(path, lambda rec: tournament_problem(rec, games, labels, aliases, edges)):
            first, second = seats(*games[rec["id"]][1:])
            rec["first"], rec["second"] = labels[first], labels[second]
            done.setdefault(rec["id"], rec)  # a game on file twice counts once
        return lock, list(done.values()), JsonlAppender(path)
    except BaseException as exc:
        if lock is not None:
            lock.close()
        if isinstance(exc, OSError):
            where = f" ({exc.filename})" if exc.filename and exc.filename != out else ""
            raise ValueError(f"cannot write results to the folder {out}: {exc.strerror or exc}{where}") from None
        raise


def read_games(path: str) -> list[dict]:
    """The lines of the results file ``path`` that have the shape of a game (:func:`game_problem`), in file
    order, read only: a reader (the web app's browser) moves nothing aside. A missing or unreadable file has
    none."""
    out = []
    try:
        with open(path, "rb") as f:
            for line in f:
                try:
                    rec = json.loads(line)
                except (ValueError, RecursionError):  # not JSON, not text, or nested too deeply
                    continue
                if game_problem(rec) is None:
                    out.append(rec)
    except OSError:
        pass
    return out
