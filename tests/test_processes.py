"""agents.processes: thread limits in this process."""

import os

import numpy as np  # noqa: F401  (numpy's BLAS loaded before the limit, as in every run)
from threadpoolctl import threadpool_info, threadpool_limits

from agents.processes import THREAD_VARS, limit_threads


def _blas_threads() -> list[int]:
    return [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]


def test_limit_threads_resizes_an_already_loaded_blas_and_restores_it(monkeypatch):
    assert _blas_threads(), "numpy's BLAS should be visible to threadpoolctl"
    for var in THREAD_VARS:
        monkeypatch.delenv(var, raising=False)
    with threadpool_limits(limits=2, user_api="blas"):  # a loaded BLAS sized 2, whatever the machine
        outside = _blas_threads()
        with limit_threads(1):
            assert _blas_threads() == [1] * len(outside)
            assert all(os.environ[var] == "1" for var in THREAD_VARS)
        assert _blas_threads() == outside
    assert not any(var in os.environ for var in THREAD_VARS)
