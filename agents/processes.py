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

No process the package starts outlives the process that started it, however that ends (SIGKILL
included): each calls :func:`die_with_parent` as it starts (a pool's workers in their initializer, an
engine's program before it runs: :mod:`agents.engine.agent`). On Linux the kernel then kills the child
when the *thread* that started it ends (``prctl(PR_SET_PDEATHSIG)``), so that is asked for only where that
thread lasts as long as its process: the main thread. A pool starts its first workers in the caller's
thread but replaces a dead one from its worker-handler thread, which ends as the pool closes, before its
workers have finished (killed then, one could hold the pool's queue locked and hang its shutdown); such
a worker, and every worker elsewhere than on Linux, instead looks at its parent every half second from a
thread of its own.

A run's state in its worker processes (the tournament's agents, self-play's network) lives in a worker
object each process makes as it starts (:func:`spawn_worker_pool`, reached by :func:`call_worker`), or for
work that comes without an initializer (Ray tasks) in :func:`process_local`; both keep it on the process
object, never in a module global.
"""

from __future__ import annotations

import contextlib
import ctypes
import multiprocessing
import multiprocessing.pool
import os
import signal
import sys
import threading
import time

from threadpoolctl import threadpool_limits

__all__ = ["THREAD_VARS", "thread_env", "limit_threads", "process_threads", "die_with_parent", "spawn_pool", "spawn_worker_pool",
           "call_worker", "process_local"]

THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "VECLIB_MAXIMUM_THREADS")

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>
_WATCH = 0.5  # seconds between a worker's looks at its parent, where the kernel does not watch it


def _find_prctl():
    """libc's ``prctl`` on Linux, else None; found here, in the parent, so that a child between fork and
    exec only calls it (loading a library there could deadlock)."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        prctl = ctypes.CDLL(None, use_errno=True)["prctl"]
    except (OSError, AttributeError):
        return None
    prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    prctl.restype = ctypes.c_int
    return prctl


_PRCTL = _find_prctl()


def die_with_parent(parent: int, thread_lasts: bool = True) -> None:
    """In a child process as it starts: make it end when its parent, the process ``parent`` (the pid the
    parent passed), ends, and exit at once (code 1) if that has happened already. On Linux with
    ``thread_lasts`` the kernel kills it then (``prctl(PR_SET_PDEATHSIG, SIGKILL)``); as that fires when
    the *thread* that started the child ends, ``thread_lasts`` says that thread lasts as long as the
    child is needed: the parent's main thread, or a thread that waits for the child. Otherwise, and on
    other systems, nothing is set here; the caller watches the parent itself where it can (a pool's
    workers do)."""
    if thread_lasts and _PRCTL is not None:
        _PRCTL(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)
    if os.getppid() != parent:  # after the prctl: a parent that died just before it is seen here
        os._exit(1)


def _watch_parent(parent: int) -> None:
    """A daemon thread of a worker the kernel does not watch: the process exits once ``parent`` has ended."""
    while os.getppid() == parent:
        time.sleep(_WATCH)
    os._exit(1)


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


def process_threads() -> int:
    """The threads this process was given for numpy/BLAS and torch: ``OMP_NUM_THREADS`` where it is set
    (:func:`thread_env` sets it: a tournament's ``threads`` in its workers and in its own process), else 1,
    never the libraries' default of every core (beside other work, torch's threads wait on each other: a
    network agent's moves ran 4-50 times slower)."""
    try:
        return max(1, int(os.environ.get("OMP_NUM_THREADS", "1")))
    except ValueError:
        return 1


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


class _Pool(multiprocessing.pool.Pool):
    """A pool whose processes end with this process: each carries this process's pid and whether the
    thread that starts it is the main thread (the first ones start in the caller's thread, replacements of
    dead ones in the pool's worker-handler thread), for :func:`_init`."""

    @staticmethod
    def Process(ctx, *args, **kwds):
        proc = ctx.Process(*args, **kwds)
        proc.dnb_parent = (os.getpid(), threading.current_thread() is threading.main_thread())
        return proc


def _init(threads: int, initializer, initargs) -> None:
    parent, thread_lasts = multiprocessing.current_process().dnb_parent
    die_with_parent(parent, thread_lasts)
    if not thread_lasts or _PRCTL is None:
        threading.Thread(target=_watch_parent, args=(parent,), daemon=True, name="dnb-parent-watch").start()
    os.environ.update(dict.fromkeys(THREAD_VARS, str(threads)))  # for whatever the worker starts
    if "torch" in sys.modules:
        sys.modules["torch"].set_num_threads(threads)
    if initializer is not None:
        initializer(*initargs)
    threadpool_limits(limits=threads)  # any pool loaded that did not read the variables (kept for the process)


def spawn_pool(workers: int, threads: int, initializer=None, initargs=()) -> multiprocessing.pool.Pool:
    """A ``multiprocessing`` pool of ``workers`` spawned processes with ``threads`` threads each for
    numpy/BLAS and torch, each running ``initializer(*initargs)`` once; they end when this process does
    (:func:`die_with_parent`)."""
    with thread_env(threads):  # Pool starts its processes before it returns
        return _Pool(workers, initializer=_init, initargs=(threads, initializer, initargs),
                     context=multiprocessing.get_context("spawn"))


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
