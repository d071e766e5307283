"""No process the package starts outlives it: a pool's workers and an engine's program end when the process
that started them is killed outright (SIGKILL, SIGTERM), and never before, whichever thread started them."""

from __future__ import annotations

import os
import select
import shlex
import signal
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

from agents.engine import EngineAgent
from dnb_env.core import GameState

ROOT = Path(__file__).parent.parent
TINY_PY = Path(__file__).parent / "fixtures" / "engine_tiny.py"
GONE_WITHIN = 5.0  # seconds the children of a killed process may take to end (a pool's watch: half a second)

# A pool of two workers, one of them replaced by the pool's worker-handler thread ("replace"): it exits in
# a task (holding none of the pool's locks, which would hang the pool whatever this package does), whose
# result is then given as if it had answered.
POOL = """
import os, signal, sys, time
from agents.processes import spawn_pool
pool = spawn_pool(2, 1)
assert pool.map(abs, range(-4, 4)) == [4, 3, 2, 1, 0, 1, 2, 3]
if "replace" in sys.argv:
    first = {p.pid for p in pool._pool}
    lost = pool.apply_async(os._exit, (0,))
    while {p.pid for p in pool._pool} <= first or len(pool._pool) < 2:
        time.sleep(0.05)
    lost._set(0, (True, None))
    new = ({p.pid for p in pool._pool} - first).pop()
    while pool.apply(os.getpid) != new:  # until the new worker has started and answered a task
        pass
print(*(p.pid for p in pool._pool), flush=True)
if "close" in sys.argv:
    pool.close()
    pool.join()
    print(*(p.exitcode for p in pool._pool), flush=True)
else:  # both workers busy in a long task: an idle one would end anyway, on the end of the task queue
    pool.map_async(time.sleep, [60, 60], chunksize=1)
    time.sleep(0.3)
    while pool._inqueue._reader.poll():
        time.sleep(0.05)
    print("busy", flush=True)
    time.sleep(60)
"""


def _stat(pid: int) -> list[str] | None:
    """The fields of /proc/PID/stat after the command's name (state, ppid, ...); None for no such process."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (a zombie is not: it has ended, only nobody reaped it)."""
    fields = _stat(pid)
    return fields is not None and fields[0] != "Z"


def _descendants(pid: int) -> set[int]:
    """The pids of every live process below ``pid`` (children, their children, ...), read from /proc."""
    parents = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            fields = _stat(int(entry))
            if fields is not None and fields[0] != "Z":
                parents[int(entry)] = int(fields[1])
    found, todo = set(), [pid]
    while todo:
        parent = todo.pop()
        kids = {child for child, ppid in parents.items() if ppid == parent}
        todo.extend(kids - found)
        found |= kids
    return found


def _python(code: str, *args, **kwargs) -> subprocess.Popen:
    """A Python process of the project running ``code`` with ``args``, its output a pipe of text."""
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code), *map(str, args)], cwd=ROOT,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def _line(proc: subprocess.Popen, seconds: float = 20) -> str:
    """The next line ``proc`` prints, within ``seconds``, stripped."""
    ready, _, _ = select.select([proc.stdout], [], [], seconds)
    if not ready:
        proc.kill()
        raise AssertionError(f"no line within {seconds:g} s")
    line = proc.stdout.readline().strip()
    assert line, proc.stderr.read()
    return line


def _pids(proc: subprocess.Popen) -> set[int]:
    """The pids on the next line ``proc`` prints."""
    return {int(pid) for pid in _line(proc).split()}


def _wait_for(check, seconds: float, what: str):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        value = check()
        if value:
            return value
        time.sleep(0.05)
    raise AssertionError(f"{what} within {seconds:g} s")


def _kill_and_check(proc: subprocess.Popen, children: set[int], sig=signal.SIGKILL) -> None:
    """Kill ``proc`` with ``sig``: every one of ``children`` is gone within :data:`GONE_WITHIN` seconds."""
    assert children and all(_alive(pid) for pid in children), children
    proc.send_signal(sig)
    proc.wait(10)
    try:
        _wait_for(lambda: not any(_alive(pid) for pid in children), GONE_WITHIN, "the children ended")
    finally:
        for pid in children:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
    assert proc.returncode == -sig


def test_a_pools_workers_end_with_the_process_that_started_them():
    """Workers busy in a task (nothing else would end them before it ends), and the pool's resource
    tracker, end when the run is killed."""
    proc = _python(POOL)
    workers = _pids(proc)
    assert len(workers) == 2 and _line(proc) == "busy"
    below = _descendants(proc.pid)
    assert workers <= below
    _kill_and_check(proc, below, signal.SIGTERM)


def test_a_worker_the_pool_replaced_lives_as_long_as_the_pool_and_ends_with_the_run():
    """A worker that died is replaced from the pool's worker-handler thread, which ends with the pool: the
    replacement works, finishes like the others when the pool is closed (not killed as that thread ends,
    which could leave the pool's queue locked), and still ends when the run is killed."""
    proc = _python(POOL, "replace", "close")
    try:
        out, err = proc.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        for pid in _descendants(proc.pid):
            os.kill(pid, signal.SIGKILL)
        proc.kill()
        raise AssertionError("the pool's close hung") from None
    assert proc.returncode == 0, err
    pids, codes = out.splitlines()
    assert len(pids.split()) == 2 and codes.split() == ["0", "0"], (out, err)

    proc = _python(POOL, "replace")
    workers = _pids(proc)
    assert len(workers) == 2 and _line(proc) == "busy"
    _kill_and_check(proc, _descendants(proc.pid))


def _tiny(*args) -> list[str]:
    return [sys.executable, str(TINY_PY), *map(str, args)]


def test_an_engine_hung_in_a_move_ends_with_the_process_that_started_it(tmp_path):
    """An engine that sleeps in its move never reads the end of its input: it ends with its controller."""
    marker, pidfile = tmp_path / "marker", tmp_path / "pid"
    proc = _python("""
        import sys
        from agents.engine import EngineAgent
        from dnb_env.core import GameState
        agent = EngineAgent(sys.argv[1:], board=(2, 2), timeout=60)
        agent.select_action(GameState.new(2, 2))
    """, *_tiny("--misbehave", "hang", "--once", marker, "--pidfile", pidfile))
    _wait_for(marker.exists, 20, "the engine hung in its move")
    engine = int(pidfile.read_text())
    assert _descendants(proc.pid) == {engine}
    _kill_and_check(proc, {engine})


def test_an_engine_started_from_a_thread_that_ended_still_plays():
    """The kernel's parent-death signal follows the thread that started the program: a program started
    from a thread that has since ended is not killed with it."""
    agent = EngineAgent(_tiny(), board=(2, 2), seed=1)
    state = GameState.new(2, 2)
    starter = threading.Thread(target=agent.prepare, args=(state,))
    starter.start()
    starter.join()
    try:
        time.sleep(0.2)
        assert agent.proc.poll() is None
        assert state.is_legal(agent.select_action(state))
    finally:
        agent.close()


def test_a_tournament_with_workers_and_engines_leaves_no_process_when_killed(tmp_path):
    """``dnb tournament --workers 2`` with an engine: killed while the engine hangs in a move, its workers
    and every engine they started end with it."""
    marker = tmp_path / "marker"
    cmd = " ".join(shlex.quote(a) for a in _tiny("--misbehave", "hang", "--once", marker))
    proc = subprocess.Popen([sys.executable, "-m", "registry.cli", "tournament", "--board", "2x2", "--agents",
                             f'greedy,engine:cmd="{cmd}",name=t,log={tmp_path / "t.log"}', "--games", "4",
                             "--workers", "2", "--time-per-move", "30", "--out", str(tmp_path / "out")],
                            cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    _wait_for(marker.exists, 30, "the engine hung in its move")
    below = _descendants(proc.pid)
    engines = {pid for pid in below if _stat(pid) and int(_stat(pid)[1]) != proc.pid}
    assert len(below) >= 3 and engines, below  # two workers (and a resource tracker), an engine below one
    _kill_and_check(proc, below)


def test_the_web_apps_move_process_ends_with_the_server(tmp_path):
    """A move of the web app runs in a process forked from the server: killing the server ends it, even in
    the middle of a long search."""
    marker = tmp_path / "thinking"
    proc = _python("""
        import os, sys, time
        from dnb_web.server import MoveRunner

        class Slow:  # an agent that thinks for a minute
            def select_action(self, state):
                open(sys.argv[1], "w").write(str(os.getpid()))
                time.sleep(60)

        runner = MoveRunner(1, lambda name, **kw: Slow())
        runner.start(("slow", {}), 2, 2, 0, (), timeout=60).result()
    """, marker)
    _wait_for(lambda: marker.exists() and marker.read_text(), 20, "the move process started")
    move = int(marker.read_text())
    assert move in _descendants(proc.pid)
    _kill_and_check(proc, {move})
