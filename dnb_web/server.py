"""The web app's server machinery: ASGI middleware, the pools that run agent moves and analyses, and
JSON errors.

* :class:`BodyLimit`: a request body over the limit gets 413 before the app reads it.
* :class:`HostCheck`: a request whose ``Host`` header is not an allowed host gets 400 ``bad_host`` (DNS
  rebinding).
* :class:`MoveRunner`: each agent move in a process of its own forked from the server, killed at the
  game's time limit, ``workers`` moves at once, waiting in order for a slot.
* :class:`DaemonPool`: analyses and agent builds on daemon threads, ``size`` at once; full slots are a 503
  at once instead of a queue behind jobs that may never end.
* :func:`error_response`: the JSON body ``{"error": code, "message": text}`` of every error.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import itertools
import os
import threading
from typing import Callable

from fastapi import HTTPException
from fastapi.responses import JSONResponse

from dnb_env.agent import Closeable
from dnb_web.checks import WebError

__all__ = ["error_response", "BodyLimit", "HostCheck", "DaemonPool", "AgentFailed", "MoveRunner", "settle",
           "wait_for"]


def error_response(status: int, code: str, message: str, **extra) -> JSONResponse:
    return JSONResponse({"error": code, "message": message, **extra}, status_code=status)


class BodyLimit:
    """ASGI middleware: a request body over ``limit`` bytes gets 413 before the app sees a byte of it
    (by its Content-Length) or as soon as the streamed body passes the limit."""

    def __init__(self, app, limit: int):
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        message = f"the request body is larger than {self.limit} bytes"
        for name, value in scope.get("headers", ()):
            if name == b"content-length":
                try:
                    too_big = int(value) > self.limit
                except ValueError:
                    too_big = True
                if too_big:
                    return await error_response(413, "body_too_large", message)(scope, receive, send)
        seen = 0

        async def counted():
            nonlocal seen
            msg = await receive()
            if msg["type"] == "http.request":
                seen += len(msg.get("body", b""))
                if seen > self.limit:
                    raise HTTPException(413, message)  # FastAPI passes HTTPExceptions from body reading on
            return msg

        return await self.app(scope, counted, send)


class HostCheck:
    """ASGI middleware: a request whose ``Host`` header (without its port) is not in ``hosts`` gets 400
    ``bad_host``, so that a page of another site whose name was re-pointed at 127.0.0.1 (DNS rebinding)
    cannot drive the API. ``"*"`` in ``hosts`` lets every host through. (Starlette's TrustedHostMiddleware
    does the same, but answers in plain text and cuts ``[::1]:8000`` at the first colon.)"""

    def __init__(self, app, hosts):
        self.app = app
        self.hosts = {h.lower().strip("[]") for h in hosts}

    @staticmethod
    def host_of(value: str) -> str:
        value = value.strip().lower()
        if value.startswith("["):  # [::1]:8000
            return value[1:value.find("]")] if "]" in value else value
        return value.rsplit(":", 1)[0] if value.count(":") == 1 else value

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket") or "*" in self.hosts:
            return await self.app(scope, receive, send)
        host = ""
        for name, value in scope.get("headers", ()):
            if name == b"host":
                host = self.host_of(value.decode("latin-1"))
                break
        if host not in self.hosts:
            return await error_response(400, "bad_host", f"the Host header {host!r} is not one this server answers to "
                                                 f"({', '.join(sorted(self.hosts))})")(scope, receive, send)
        return await self.app(scope, receive, send)


class DaemonPool:
    """At most ``size`` jobs at once, each on a daemon thread of its own. A caller may stop waiting for a
    job (a time limit), but a thread cannot be stopped: the job keeps its slot until it ends. When the
    slots are full, :meth:`start` refuses at once (WebError 503) rather than queueing behind jobs that
    may never end, and daemon threads never hold up the interpreter's exit."""

    def __init__(self, size: int, what: str):
        self.size, self.what = size, what
        self.running = 0
        self.lock = threading.Lock()
        self._ids = itertools.count()

    def start(self, fn, *args) -> concurrent.futures.Future:
        """``fn(*args)`` on a new daemon thread; a ``concurrent.futures.Future`` of its result."""
        with self.lock:
            if self.running >= self.size:
                raise WebError(503, "busy", f"all {self.size} {self.what} slots are taken (jobs that ran past their "
                                            "time limit are still finishing); try again in a moment")
            self.running += 1
        fut: concurrent.futures.Future = concurrent.futures.Future()
        fut.set_running_or_notify_cancel()

        def target():
            try:
                result = fn(*args)
            except BaseException as exc:  # noqa: BLE001  (handed to the waiter)
                settle(fut, exc=exc)
            else:
                settle(fut, result=result)
            finally:
                with self.lock:
                    self.running -= 1

        threading.Thread(target=target, name=f"dnb-{self.what}-{next(self._ids)}", daemon=True).start()
        return fut


class AgentFailed(Exception):
    """An agent's move that raised (``"TypeName: message"`` of its exception) or whose process died."""


def _move_process(conn, make_agent: Callable, name: str, kwargs: dict, rows: int, cols: int, seed,
                  history: tuple, parent: int, move_time: float | None = None) -> None:
    """The process of one agent move (forked from the server ``parent``, so it has every agent registered
    there): build the agent ``name`` as the app's ``make_agent`` does, and send its move in the position that
    ``history`` reaches, or ``("error", type, message)``, through ``conn``. With ``move_time`` an agent that
    thinks to a clock is told it, less the seconds its build took (a network's loading counts). It dies
    with the server (the thread that forked it waits for it)."""
    import signal
    import sys
    import time

    from dnb_env.agent import Timed
    from dnb_env.clock import MIN_MOVE_TIME

    start = time.perf_counter()

    from agents.processes import die_with_parent
    from dnb_env.core import GameState, geometry

    die_with_parent(parent)

    signal.set_wakeup_fd(-1)  # signals here are not the server's (its event loop listens on that fd)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the server, which ends its moves
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if "torch" in sys.modules:  # one thread: the moves are the parallelism, and the parent's pool is not here
        sys.modules["torch"].set_num_threads(1)
    agent = None
    try:
        agent = make_agent(name, board=geometry(rows, cols).name, seed=seed, **kwargs)
        if move_time is not None and isinstance(agent, Timed):
            agent.set_move_time(max(MIN_MOVE_TIME, move_time - (time.perf_counter() - start)))
        out = ("move", agent.select_action(GameState.from_actions(rows, cols, list(history))))
    except BaseException as exc:  # noqa: BLE001  (reported by the server)
        out = ("error", type(exc).__name__, str(exc))
    finally:
        if isinstance(agent, Closeable):  # an engine's program stopped (killed with this process: its input ends)
            agent.close()
    try:
        conn.send(out)
    except Exception as exc:  # noqa: BLE001  (a move that cannot be pickled)
        conn.send(("error", type(exc).__name__, f"its move {out[1]!r} cannot be sent back: {exc}"))
    conn.close()


class MoveRunner:
    """Agent moves, each in a process of its own forked from the server, at most ``size`` at once (one
    thread of this class waits on each). A move still running at its time limit is killed with its
    process: a slot is never held past a deadline, whatever the agent does (a thread cannot be stopped,
    a process can). Moves wait for a slot in the order they came (each game has at most one in flight).
    Each move builds its agent afresh from the game's spec, seeded from the game's seed and the ply (so a
    seeded game replays), in a copy of the server as it is at that moment (every agent registered so far)."""

    def __init__(self, size: int, make_agent: Callable):
        import multiprocessing
        import queue

        self.make_agent = make_agent
        self.context = multiprocessing.get_context("fork")
        self.jobs: queue.SimpleQueue = queue.SimpleQueue()
        self.live: set = set()  # processes of the moves in progress
        self.lock = threading.Lock()
        self.threads = [threading.Thread(target=self._serve, name=f"dnb-move-{i}", daemon=True) for i in range(size)]
        for th in self.threads:
            th.start()

    def start(self, spec: tuple, rows: int, cols: int, seed, history: tuple,
              timeout: float, move_time: float | None = None) -> concurrent.futures.Future:
        """The move of the agent ``spec`` = (name, options) after ``history``: a future of the action, which
        fails with TimeoutError when the move's process ran ``timeout`` seconds (it is killed then) and with
        :class:`AgentFailed` when the agent raised or its process died. ``move_time``: the clock the agent
        is told where it thinks to one (less its build's seconds). Cancel it to give up a place in the
        queue."""
        fut: concurrent.futures.Future = concurrent.futures.Future()
        self.jobs.put((fut, spec, rows, cols, seed, tuple(history), timeout, move_time))
        return fut

    def _serve(self) -> None:
        while True:
            job = self.jobs.get()
            if job is None:
                return
            fut, *args = job
            if not fut.set_running_or_notify_cancel():  # given up while it waited
                continue
            try:
                result = self._run(*args)
            except BaseException as exc:  # noqa: BLE001  (handed to the waiter)
                settle(fut, exc=exc)
            else:
                settle(fut, result=result)

    def _run(self, spec: tuple, rows: int, cols: int, seed, history: tuple, timeout: float,
             move_time: float | None = None):
        name, kwargs = spec
        move_seed = None if seed is None else (seed * 1_000_003 + len(history)) % 2**63
        receive, send = self.context.Pipe(duplex=False)
        proc = self.context.Process(target=_move_process, name="dnb-move", daemon=True,
                                    args=(send, self.make_agent, name, kwargs, rows, cols, move_seed, history,
                                          os.getpid(), move_time))
        with self.lock:
            proc.start()
            self.live.add(proc)
        send.close()
        try:
            if not receive.poll(timeout):
                raise TimeoutError(f"no move within {timeout:g} s")
            try:
                out = receive.recv()
            except EOFError:
                proc.join(1.0)
                raise AgentFailed(f"its process ended without a move (exit code {proc.exitcode})") from None
        finally:
            proc.join(1.0)  # a process that sent its move ends at once
            if proc.is_alive():
                proc.kill()
                proc.join()
            with self.lock:
                self.live.discard(proc)
            receive.close()
        if out[0] == "error":
            raise AgentFailed(f"{out[1]}: {out[2]}")
        return out[1]

    def close(self) -> None:
        """End the moves in progress and the threads (queued moves are left unanswered)."""
        for _ in self.threads:
            self.jobs.put(None)
        with self.lock:
            for proc in self.live:
                proc.kill()


def settle(fut: concurrent.futures.Future, result=None, exc: BaseException | None = None) -> None:
    try:
        if exc is None:
            fut.set_result(result)
        else:
            fut.set_exception(exc)
    except RuntimeError:  # the event loop of an asyncio waiter is closed (the server has stopped)
        pass


async def wait_for(fut: concurrent.futures.Future, timeout: float):
    """The result of ``fut``; asyncio.TimeoutError after ``timeout`` seconds (the job goes on)."""
    return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(fut)), timeout)
