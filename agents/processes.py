"""Worker processes with deliberate thread counts, for every pool the package starts (tournaments,
self-play).

numpy's BLAS and torch size their thread pools from ``OMP_NUM_THREADS`` and friends when they load. In a
spawned worker numpy loads before any initializer runs, so the variables must already be in the
environment the worker inherits: :func:`spawn_pool` sets them around the pool's start (the caller's
values are restored after; the pool is then never started at full size) and each worker also calls
``torch.set_num_threads`` and caps every pool already loaded with ``threadpoolctl``. In this process
:func:`limit_threads` caps the loaded BLAS/OpenMP pools through ``threadpoolctl.threadpool_limits`` (the
variables alone cannot resize a library already loaded). With the libraries' defaults (every core per
process) two busy processes on 2 cores ran self-play 30 times slower.

A run's state in its worker processes (the tournament's agents, self-play's network) lives in a worker
object each process makes as it starts (:func:`spawn_worker_pool`, reached by :func:`call_worker`), or for
work that comes without an initializer (Ray tasks) in :func:`process_local`; both keep it on the process
object, never in a module global.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys

from threadpoolctl import threadpool_limits

__all__ = ["THREAD_VARS", "thread_env", "limit_threads", "spawn_pool", "spawn_worker_pool", "call_worker", "process_local"]

THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")


@contextlib.contextmanager
def thread_env(threads: int):
    """``threads`` in the BLAS/OpenMP variables of ``os.environ`` for the length of the block, the caller's
    values restored after it; a process started inside inherits them."""
    saved = {var: os.environ.get(var) for var in THREAD_VARS}
    os.environ.update(dict.fromkeys(THREAD_VARS, str(threads)))
    try:
        yield
    finally:
        for var, value in saved.items():
            if value is None:
                os.environ.pop(var, None)
            else:
                os.environ[var] = value


@contextlib.contextmanager
def limit_threads(threads: int):
    """``threads`` threads for work done in this process during the block (the in-process path of a pool
    with one worker): every BLAS/OpenMP pool already loaded (numpy's BLAS, through ``threadpoolctl``), the
    BLAS/OpenMP variables for any library loaded inside it, and torch's intra-op pool when torch is
    loaded; all restored after."""
    torch = sys.modules.get("torch")
    before = torch.get_num_threads() if torch is not None else None
    with thread_env(threads), threadpool_limits(limits=threads):
        if torch is not None:
            torch.set_num_threads(threads)
        try:
            yield
        finally:
            if torch is not None:
                torch.set_num_threads(before)


def _init(threads: int, initializer, initargs) -> None:
    os.environ.update(dict.fromkeys(THREAD_VARS, str(threads)))  # for whatever the worker starts
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
    if initializer is not None:
        initializer(*initargs)
    threadpool_limits(limits=threads)  # any pool loaded that did not read the variables (kept for the process)


def spawn_pool(workers: int, threads: int, initializer=None, initargs=()) -> multiprocessing.pool.Pool:
    """A ``multiprocessing`` pool of ``workers`` spawned processes with ``threads`` threads each for
    numpy/BLAS and torch, each running ``initializer(*initargs)`` once."""
    with thread_env(threads):  # Pool starts its processes before it returns
        return multiprocessing.get_context("spawn").Pool(workers, initializer=_init,
                                                         initargs=(threads, initializer, initargs))


def _hold_worker(make_worker, args) -> None:
    """In a worker process, as it starts: its worker object, kept on the process object (not in a module)."""
    multiprocessing.current_process().dnb_worker = make_worker(*args)


def spawn_worker_pool(workers: int, threads: int, make_worker, args=()) -> multiprocessing.pool.Pool:
    """:func:`spawn_pool` whose processes each make one worker object, ``make_worker(*args)``, as they start
    (the run's state: agents, a network); ``pool.map(functools.partial(call_worker, "play"), tasks)`` runs
    ``worker.play(task)`` for each task in one of them."""
    return spawn_pool(workers, threads, _hold_worker, (make_worker, args))


def call_worker(method: str, task):
    """In a process of :func:`spawn_worker_pool`: ``worker.<method>(task)`` of the process's worker object."""
    return getattr(multiprocessing.current_process().dnb_worker, method)(task)


def process_local(key, make):
    """The object this process keeps for ``key``, made by ``make()`` the first time; one at a time (a call
    with another key replaces it). For work that comes to a process without an initializer, e.g. the games
    of one tournament as Ray tasks: the process keeps the run's agents between its tasks."""
    proc = multiprocessing.current_process()
    held = getattr(proc, "dnb_local", None)
    if held is None or held[0] != key:
        held = proc.dnb_local = (key, make())
    return held[1]
