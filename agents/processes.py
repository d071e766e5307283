"""Worker processes with deliberate thread counts, for every pool the package starts (tournaments,
self-play).

numpy's BLAS and torch size their thread pools from ``OMP_NUM_THREADS`` and friends when they load. In a
spawned worker numpy loads before any initializer runs, so the variables must already be in the
environment the worker inherits: :func:`spawn_pool` sets them around the pool's start (the caller's
values are restored after) and each worker also calls ``torch.set_num_threads``. With the libraries'
defaults (every core per process) two busy processes on 2 cores ran self-play 30 times slower.
"""

from __future__ import annotations

import contextlib
import multiprocessing
import os
import sys

__all__ = ["THREAD_VARS", "thread_env", "limit_threads", "spawn_pool"]

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
    with one worker): the BLAS/OpenMP variables for any library loaded inside it, and torch's intra-op
    pool when torch is loaded; both restored after. A BLAS that numpy already loaded keeps its size (its
    calls in this package are small)."""
    torch = sys.modules.get("torch")
    before = torch.get_num_threads() if torch is not None else None
    with thread_env(threads):
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


def spawn_pool(workers: int, threads: int, initializer=None, initargs=()) -> multiprocessing.pool.Pool:
    """A ``multiprocessing`` pool of ``workers`` spawned processes with ``threads`` threads each for
    numpy/BLAS and torch, each running ``initializer(*initargs)`` once."""
    with thread_env(threads):  # Pool starts its processes before it returns
        return multiprocessing.get_context("spawn").Pool(workers, initializer=_init,
                                                         initargs=(threads, initializer, initargs))
