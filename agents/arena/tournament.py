"""The tournament driver: the schedule (:mod:`~agents.arena.schedule`), the results folder
(:mod:`~agents.arena.results`), a runner (:mod:`~agents.arena.runners`), the ratings
(:mod:`~agents.arena.ratings`) and their output (:mod:`~agents.arena.output`), wired together.

    report = run_tournament(cfg, out="results/5x5", build=agent_from_spec, describe=describe_spec)
    gauntlet("3x3", ("mine", MyAgent), ("random", "greedy"), games=100, build=agent_from_spec).results_of(0)
"""

from __future__ import annotations

import os
from typing import Callable, Sequence

from agents.arena.play import label
from agents.arena.ratings import TournamentReport, summarise
from agents.arena.results import open_results
from agents.arena.runners import finished_games, ray_session
from agents.arena.schedule import TournamentConfig, game_ids, game_tasks
from dnb_env.agent import Closeable

__all__ = ["run_tournament", "gauntlet"]


def gauntlet(board: str, entry, opponents: Sequence = ("random", "greedy"), games: int = 400,
             seed: int = 0, openings: int = 0, progress: bool = False, *,
             build: Callable | None = None, describe: Callable | None = None) -> TournamentReport:
    """``entry`` (a spec, or ``(label, factory)``) against each of ``opponents`` (specs or pairs too),
    ``games`` games each with the first seat alternating, in this process; ``report.results_of(0)`` has its
    scores and intervals. Specs need ``build`` and are labelled by ``describe`` as in :func:`run_tournament`
    (:func:`registry.tournaments.gauntlet` passes the registry's)."""
    entries = [entry, *opponents]
    cfg = TournamentConfig(board=board, agents=tuple(map(label, entries)), games=games, mode="gauntlet",
                           seed=seed, openings=openings, bootstrap=0)
    return run_tournament(cfg, agents=entries, progress=progress, echo=None, build=build, describe=describe)


def _labelled(entries: list, describe: Callable | None) -> tuple[list, list[str], Callable | None]:
    """The entries to play (a spec whose label is not itself as a ``(label, spec)`` pair), their labels,
    and the ``identity(agents)`` of :func:`agents.arena.results.check_or_save_config` (None without
    ``describe``); ValueError when two agents have one label."""
    if describe is None:
        played, labels, identity = entries, [label(e) for e in entries], None
    else:
        labels = [describe(e)[0] if isinstance(e, str) else label(e) for e in entries]
        played = [(name, e) if isinstance(e, str) and name != e else e for name, e in zip(labels, entries)]
        is_spec = [isinstance(e, str) for e in entries]

        def identity(agents):
            return [describe(a)[1] if spec else a for a, spec in zip(agents, is_spec)] + list(agents[len(is_spec):])
    seen: dict[str, int] = {}
    for k, name in enumerate(labels):
        if name in seen:
            raise ValueError(f"two agents of the tournament are labelled {name!r}: {label(entries[seen[name]])!r} "
                             f"and {label(entries[k])!r}; give each a name= of its own")
        seen[name] = k
    return played, labels, identity


def run_tournament(config: TournamentConfig, out: str | None = None, agents: Sequence | None = None,
                   progress: bool = True, echo: Callable[[str], None] | None = print, *,
                   build: Callable | None = None, describe: Callable | None = None) -> TournamentReport:
    """Play (or resume) the tournament; results under ``out`` when given. ``agents`` may replace the spec
    strings of ``config.agents`` with ``(label, factory)`` entries of the same labels, in the same order;
    the spec strings left are built by ``build(spec, board, seed) -> Agent`` (module-level, so that it
    pickles), which the caller checks beforehand (:func:`registry.tournaments.run_tournament` does both).
    ``describe(spec) -> (label, identity)`` names a spec in the tables, records and files (an engine's
    ``name=``; default: the spec itself) and says what identifies it when a folder is resumed (the spec
    without the options that do not change play, such as an engine's ``log=``); two agents with one label
    are refused. Before any game (and before the folder is made) each spec is built once, and an agent
    with ``check_board(board)`` is asked whether it plays the board (an engine that declares other boards
    refuses it with a ValueError; it is closed after): a start that fails leaves nothing.
    Where matplotlib (the plot extra) is missing, ``tournament.png`` is skipped with a note through ``echo``
    after the CSV files are written."""
    entries = list(agents) if agents is not None else list(config.agents)
    specs = _check_entries(config, entries, build)
    played, labels, identity = _labelled(entries, describe)
    _check_builds(specs, config.board, build)
    games = game_ids(config)
    lock, done, appender, session = _open_run(config, out, games, labels, identity)
    tasks = game_tasks(config, games, {r["id"] for r in done})
    if echo and done:
        echo(f"resuming: {len(done)} games on file, {len(tasks)} to play")
    records = list(done)
    _play_games(config, played, build, tasks, session, records, appender, lock, progress)
    order = {key: k for k, key in enumerate(games)}  # the order games finished in does not matter
    records.sort(key=lambda r: order[r["id"]])
    report = summarise(labels, records, bootstrap=config.bootstrap, seed=config.seed)
    if out is not None:
        _write_report(report, out, echo)
    if echo:
        echo(f"{config.board}, {len(records)} games, {config.games} per pair, openings {config.openings} "
             f"{config.opening_mode if config.openings else ''}".rstrip())
        echo(report.table())
    return report


def _check_entries(config: TournamentConfig, entries: list, build: Callable | None) -> list[str]:
    """The spec strings among ``entries``; ValueError when the entries' labels are not ``config.agents``
    or there are specs and no ``build``."""
    keys = [label(e) for e in entries]
    if keys != list(config.agents):
        raise ValueError(f"agent entries {keys} do not match config.agents {list(config.agents)}")
    specs = [e for e in entries if isinstance(e, str)]
    if specs and build is None:
        raise ValueError(f"agent specs {specs} need a builder: pass build=, or run the tournament through "
                         "registry.tournaments.run_tournament (the registry's names)")
    return specs


def _check_builds(specs: list[str], board: str, build: Callable | None) -> None:
    """Build each spec once and ask an agent with ``check_board`` whether it plays ``board`` (closed after):
    what only building finds (a missing checkpoint, one of another board, an engine of other boards), before
    the folder is made."""
    for spec in dict.fromkeys(specs):
        agent = build(spec, board, 0)
        try:
            check = getattr(agent, "check_board", None)
            if check is not None:
                check(board)
        finally:
            if isinstance(agent, Closeable):
                agent.close()


def _open_run(config: TournamentConfig, out: str | None, games: dict, labels: list[str],
              identity: Callable | None) -> tuple:
    """``(lock, done, appender, session)``: the results folder's lock, the records on file and their
    appender (None, [] and None without ``out``), and the Ray session (None on other backends), the session
    closed again when the folder cannot be opened."""
    done: list[dict] = []
    appender = lock = session = None
    if config.backend == "ray":  # before the folder is touched: a cluster that is not there changes nothing
        session = ray_session(config)
    if out is not None:
        try:
            lock, done, appender = open_results(out, config, games, labels, identity)
        except BaseException:
            if session is not None:
                session.close()
            raise
    return lock, done, appender, session


def _play_games(config: TournamentConfig, played: list, build: Callable | None, tasks: list, session,
                records: list[dict], appender, lock, progress: bool) -> None:
    """Play ``tasks``, adding each finished game's record to ``records`` and the appender (where there is
    one) with a progress bar; the bar, appender and lock are closed after, whatever happens."""
    try:
        from tqdm import tqdm
    except ImportError:  # pragma: no cover
        tqdm = None
    bar = tqdm(total=len(tasks), desc="games", disable=not progress or tqdm is None) if tqdm else None
    try:
        with finished_games(config, played, build, tasks, session) as finished:
            for rec in finished:
                records.append(rec)
                if appender:
                    appender.add(rec)
                if bar:
                    bar.update(1)
    finally:
        if bar:
            bar.close()
        if appender:
            appender.close()
        if lock:
            lock.close()


def _write_report(report: TournamentReport, out: str, echo: Callable[[str], None] | None) -> None:
    """Write the report's CSV files and ``tournament.png`` under ``out``; the plot is skipped with a note
    through ``echo`` where matplotlib is missing."""
    report.write_csv(out)
    try:
        report.plot(os.path.join(out, "tournament.png"))
    except ModuleNotFoundError as exc:  # the plot extra is not installed: the CSV files are the results
        if exc.name != "matplotlib":
            raise
        if echo:
            echo("tournament.png skipped: the plot needs matplotlib: pip install 'dnb-env[plot]'")
