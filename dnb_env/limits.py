"""The ranges of the numbers the commands and configs take, checked in one way before anything is written
or started: counts of processes and threads (capped by the CPUs this process may use), seeds, and finite
numbers. Each check raises a ValueError naming the setting as the caller gives it (``--workers``,
``workers``), which ``dnb`` prints as one ``dnb: error:`` line.

```python
from dnb_env.limits import check_cpus, check_int, check_number, check_seed
check_cpus(args.workers, "--workers")             # 1 .. the CPUs of this machine
check_seed(config.seed, "seed")                   # 0 .. 2**63 - 1
check_number(config.lr, "lr", low=0, open_low=True)   # finite, > 0
```
"""

from __future__ import annotations

import math
import numbers
import os

__all__ = ["INT_LIMIT", "MAX_SEED", "is_int", "is_number", "machine_cpus", "machine_memory_mb", "check_cpus", "check_int", "check_number", "check_seed"]

#: The bound of the integers a saved file may hold (seeds and counts: numpy, torch and the native engine take
#: 64 bits).
INT_LIMIT = 2**63
#: The largest seed (a seed is never negative).
MAX_SEED = INT_LIMIT - 1


def is_int(x) -> bool:
    """Whether ``x`` is an integer below :data:`INT_LIMIT` in size, as a file read back may hold one (not a
    bool: JSON's true is no number)."""
    return isinstance(x, int) and not isinstance(x, bool) and abs(x) < INT_LIMIT


def is_number(x) -> bool:
    """Whether ``x`` is such an integer or a finite float."""
    return is_int(x) or (isinstance(x, float) and math.isfinite(x))


def machine_cpus() -> int:
    """The CPUs this process may run on (its affinity where the system tells it, else every CPU)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def check_int(value, name: str, low: int | None = None, high: int | None = None, why: str = "") -> None:
    """ValueError naming ``name`` unless ``value`` is an integer (not a bool) in ``low..high`` (either end
    open where None); ``why`` says where ``high`` comes from ("the CPUs of this machine")."""
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name} must be a whole number, got {value!r}")
    if low is not None and value < low:
        raise ValueError(f"{name} must be at least {low:,}, got {value:,}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be at most {high:,}{f' ({why})' if why else ''}, got {value:,}")


def check_cpus(value, name: str) -> None:
    """``value`` processes or threads on this machine: 1 .. :func:`machine_cpus` (more would only wait for a
    CPU, and a number past the machine's is almost always a typing error)."""
    check_int(value, name, 1, machine_cpus(), "the CPUs of this machine")


def check_seed(value, name: str = "seed") -> None:
    """A seed: a whole number in 0 .. :data:`MAX_SEED`."""
    check_int(value, name, 0, MAX_SEED)


def check_number(value, name: str, low: float | None = None, high: float | None = None,
                 open_low: bool = False) -> None:
    """ValueError naming ``name`` unless ``value`` is a finite number in ``[low, high]`` (``(low, high]``
    with ``open_low``; either end open where None)."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{name} must be a finite number, got {value!r}")
    if low is not None and (value <= low if open_low else value < low):
        raise ValueError(f"{name} must be {'more than' if open_low else 'at least'} {low:g}, got {value:g}")
    if high is not None and value > high:
        raise ValueError(f"{name} must be at most {high:g}, got {value:g}")


def machine_memory_mb() -> float:
    """The memory of this machine in MB (a bound for table sizes); infinity where the system does not say."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (AttributeError, ValueError, OSError):
        return math.inf
