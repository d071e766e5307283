"""Where a tournament's games are played: in this process, in a pool of spawned processes, or as Ray tasks.

    session = ray_session(config)      # backend "ray": the cluster, checked before any file is touched
    with finished_games(config, entries, build, tasks, session) as finished:
        for record in finished: ...    # in the order the games finish

* One worker (or one game): the games run in the calling process with torch (and any library loaded during
  the run) at ``threads`` threads, restored after; the run's agents are closed at its end (an engine's
  program stopped), after an error and on Ctrl-C.
* ``workers > 1``: spawned processes whose numpy/BLAS and torch use ``threads`` threads each (set in their
  environment before numpy loads there); each process makes the run's :class:`~agents.arena.play.GamePlayer`
  once, as it starts (:func:`agents.processes.spawn_worker_pool`), and plays its games with it; an engine's
  program is stopped as its worker exits (or, when the pool is terminated, on the end of its input).
* ``backend="ray"``: every game is a Ray task (``threads`` CPUs each, retried by Ray if its worker dies); a
  Ray worker process keeps the agents of one run between its games (:func:`agents.processes.process_local`),
  reseeded per game like the local pool's.

Each game's seeds come with its task, so every runner plays the same games.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
from typing import Callable, Sequence

from agents.arena.play import GamePlayer, TimeControl
from agents.arena.schedule import TournamentConfig
from agents.processes import call_worker, limit_threads, process_local, spawn_worker_pool
from agents.ray_cluster import RaySession, check_resources

__all__ = ["worker_pool", "ray_session", "ray_games", "finished_games"]


def worker_pool(workers: int, threads: int, board: str, entries: Sequence, build: Callable | None = None,
                time_control: TimeControl | None = None):
    """A pool of ``workers`` spawned processes, each with ``threads`` threads for numpy/BLAS and torch and its
    own :class:`GamePlayer` of the run; ``pool.imap_unordered(functools.partial(call_worker, "play"), tasks)``
    plays ``tasks`` there."""
    return spawn_worker_pool(workers, threads, GamePlayer, (board, entries, build, time_control))


def ray_session(config: TournamentConfig) -> RaySession:
    """Ray for the run (:class:`agents.ray_cluster.RaySession`), checked to hold a game's ``threads`` CPUs."""
    session = RaySession(config.ray_address, num_cpus=config.workers)
    try:
        check_resources(session.resources(), cpus=config.threads, what=f"a game ({config.threads} threads)")
    except ValueError:
        session.close()
        raise
    return session


def _ray_play(run: str, board: str, entries: Sequence, build: Callable | None, threads: int, task,
              time_control: TimeControl | None = None) -> dict:
    """A Ray task: one game. A worker process keeps the agents of one run (``run``) between its games,
    reseeded per game like the local pool's; a task of another run replaces them."""
    games = process_local(("arena", run), lambda: GamePlayer(board, entries, build, time_control))
    with limit_threads(threads):
        return games.play(task)


def ray_games(ray, config: TournamentConfig, entries: Sequence, build: Callable | None, tasks: list):
    """The records of ``tasks`` played as Ray tasks, in the order they finish; at most about twice as
    many in flight as the cluster runs at once. Closing the generator early cancels the rest."""
    import uuid

    play = ray.remote(num_cpus=config.threads, max_retries=3)(_ray_play)
    run, entries_ref = uuid.uuid4().hex, ray.put(list(entries))
    window = max(2, 2 * int(ray.cluster_resources().get("CPU", 1) // config.threads))
    todo, pending = iter(tasks), []
    try:
        while True:
            for task in itertools.islice(todo, window - len(pending)):
                pending.append(play.remote(run, config.board, entries_ref, build, config.threads, task,
                                           config.time_control))
            if not pending:
                return
            ready, pending = ray.wait(pending, num_returns=1)
            yield ray.get(ready[0])
    finally:
        for ref in pending:
            ray.cancel(ref, force=True)


@contextlib.contextmanager
def finished_games(config: TournamentConfig, entries: Sequence, build: Callable | None, tasks: list,
                   session: RaySession | None = None):
    """The records of ``tasks`` as they finish: as Ray tasks when ``session`` is given (which this closes
    after), else in ``config.workers`` processes (no more than there are tasks) or in this process. Leaving
    the block early (an error, Ctrl-C) stops the games still running."""
    pool = finished = None
    clean = False
    in_process = contextlib.ExitStack()
    try:
        if session is not None:
            finished = ray_games(session.ray, config, entries, build, tasks)
        elif config.workers > 1 and len(tasks) > 1:
            pool = worker_pool(min(config.workers, len(tasks)), config.threads, config.board, entries,
                               build, config.time_control)  # no idle ones
            finished = pool.imap_unordered(functools.partial(call_worker, "play"), tasks)
        else:
            in_process.enter_context(limit_threads(config.threads))
            player = GamePlayer(config.board, entries, build, config.time_control)
            in_process.callback(player.close)  # engines stopped at the end, on an error and on Ctrl-C
            finished = map(player.play, tasks)
        yield finished
        clean = True
    finally:
        if pool is not None:
            if clean:
                pool.close()
                pool.join()
            else:
                pool.terminate()
        in_process.close()
        if session is not None:
            if not clean and finished is not None:
                finished.close()  # cancels the games still running
            session.close()
