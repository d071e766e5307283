"""The HTTP layer: a FastAPI app with the JSON API under ``/api/`` and the page at ``/``.

    from dnb_web import WebConfig, create_app
    app = create_app(WebConfig(results_roots=("results",), max_games=64))
    # uvicorn.run(app, host="127.0.0.1", port=8000)   (what `dnb serve` does)

Game state lives in :class:`dnb_web.games.Game` objects owned by the app's :class:`GameStore`; positions
are :class:`dnb_env.core.GameState`; agents come from ``make_agent`` (default: :func:`registry.make_agent`).

Thinking time is bounded in three ways. (1) Each agent move runs in a process of its own, forked from the
server, which builds the agent from the game's spec (:class:`_MoveRunner`, ``workers`` moves at once); a
move still running at the game's time limit is killed with its process (504), so no request, however slow
its agent, keeps a slot past its deadline from the other games' moves. Moves wait in order for a slot.
Analyses run on daemon threads of a small pool of their own (:class:`_Pool`, ``workers`` at once; they
keep each game's solver and analyst between requests): a thread cannot be killed, so an analysis past its
limit keeps its slot until it ends, and when such analyses fill the pool, further analyses get 503 at
once instead of queueing; daemon threads never hold up the server's exit (Ctrl-C). Building and listing
agents has a pool of its own. (2) An agent that takes a ``time_limit`` option is given 0.8 x the game's
limit (a spec cannot raise it or turn it off). (3) The options that size a search (``simulations``,
``rollouts``, ``depth``, ``node_limit``, the solver's zones, ...) are capped by the board
(:func:`option_caps`), defaults included, node budgets of 0 (unlimited) and non-finite numbers (nan, inf)
in any option are refused, so that no single move runs away.

Every error is JSON ``{"error": code, "message": text}`` with a 4xx status for bad input (which changes
nothing), a 5xx status for an agent that crashed or ran out of time, and 500 ``internal_error`` for
anything unexpected. Requests whose ``Host`` header is not an allowed host get 400 ``bad_host`` (DNS
rebinding); files of tournament folders are read only when their real path lies inside the folder.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import csv
import inspect
import itertools
import json
import logging
import math
import os
import re
import threading
import time
from dataclasses import dataclass
from typing import Annotated, Callable, Literal

from fastapi import FastAPI, HTTPException, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, StrictStr
from starlette.exceptions import HTTPException as StarletteHTTPException

from dnb_web import insight
from dnb_web.games import (Game, GameStore, WebError, allowed_path, check_board, frames, parse_spec, read_record,
                           record_text)

__all__ = ["WebConfig", "create_app"]

STATIC_DIR = os.path.join(os.path.dirname(__file__), "static")


@dataclass(frozen=True)
class WebConfig:
    """Limits and folders of one app (``dnb serve`` options).

    results_roots: folders whose tournament folders (``dnb tournament --out``) may be browsed
    checkpoint_roots: folders from which ``checkpoint=`` paths may be loaded (the shipped weights always)
    max_games: live games at once; max_think_s: the longest time limit per agent move a game may ask for
    time_limit_s: the default time limit per agent move; max_body: largest request body in bytes
    solver_nodes: alpha-beta node budget of each exact-solver query of the insight view
    workers: agent moves at once (a process each) and analyses at once (daemon threads); build_workers:
    agent builds at once
    idle_s: a game without requests for this long is dropped (and the least recently used idle game
    makes room when ``max_games`` are live)
    allowed_hosts: ``Host`` header values served (``"*"``: any), against DNS rebinding
    """

    results_roots: tuple[str, ...] = ("results",)
    checkpoint_roots: tuple[str, ...] = ("runs",)
    max_games: int = 64
    max_think_s: float = 60.0
    time_limit_s: float = 10.0
    max_body: int = 64 * 1024
    solver_nodes: int = 300_000
    workers: int = 4
    build_workers: int = 2
    idle_s: float = 3600.0
    allowed_hosts: tuple[str, ...] = ("127.0.0.1", "localhost", "::1")


# --------------------------------------------------------------------------- request bodies
class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NewGame(_Body):
    board: StrictStr = Field("3x3", description="'RxC' boxes, 1x1 .. 9x9")
    opponent: StrictStr = Field("random", description="agent spec, e.g. 'alphabeta:depth=4' (GET /api/agents)")
    human: StrictInt = Field(0, ge=0, le=1, description="the human's seat: 0 moves first")
    seed: Annotated[StrictInt, Field(ge=0, le=2**63 - 1)] | None = Field(
        None, description="seed of the agent, >= 0 (None: fresh randomness)")
    time_limit: StrictFloat | StrictInt | None = Field(None, description="seconds per agent move")


class Move(_Body):
    action: StrictInt = Field(description="OpenSpiel action number")
    ply: StrictInt | None = Field(None, description="moves played before this one; a mismatch is refused (409)")


class Replay(_Body):
    record: dict | None = Field(None, description="a JSON record (GET /api/games/{id}/record)")
    text: StrictStr | None = Field(None, description="or its text form")


# --------------------------------------------------------------------------- helpers
def _error(status: int, code: str, message: str, **extra) -> JSONResponse:
    return JSONResponse({"error": code, "message": message, **extra}, status_code=status)


class _BodyLimit:
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
                    return await _error(413, "body_too_large", message)(scope, receive, send)
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


class _HostCheck:
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
            return await _error(400, "bad_host", f"the Host header {host!r} is not one this server answers to "
                                                 f"({', '.join(sorted(self.hosts))})")(scope, receive, send)
        return await self.app(scope, receive, send)


class _Pool:
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
                _settle(fut, exc=exc)
            else:
                _settle(fut, result=result)
            finally:
                with self.lock:
                    self.running -= 1

        threading.Thread(target=target, name=f"dnb-{self.what}-{next(self._ids)}", daemon=True).start()
        return fut


class AgentFailed(Exception):
    """An agent's move that raised (``"TypeName: message"`` of its exception) or whose process died."""


def _move_process(conn, make_agent: Callable, name: str, kwargs: dict, rows: int, cols: int, seed,
                  history: tuple) -> None:
    """The process of one agent move (forked from the server, so it has every agent registered there):
    build the agent ``name`` as the app's ``make_agent`` does, and send its move in the position that
    ``history`` reaches, or ``("error", type, message)``, through ``conn``."""
    import signal
    import sys

    from dnb_env.core import GameState

    signal.set_wakeup_fd(-1)  # signals here are not the server's (its event loop listens on that fd)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C stops the server, which ends its moves
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    if "torch" in sys.modules:  # one thread: the moves are the parallelism, and the parent's pool is not here
        sys.modules["torch"].set_num_threads(1)
    try:
        agent = make_agent(name, board=f"{rows}x{cols}", seed=seed, **kwargs)
        out = ("move", agent.select_action(GameState.from_actions(rows, cols, list(history))))
    except BaseException as exc:  # noqa: BLE001  (reported by the server)
        out = ("error", type(exc).__name__, str(exc))
    try:
        conn.send(out)
    except Exception as exc:  # noqa: BLE001  (a move that cannot be pickled)
        conn.send(("error", type(exc).__name__, f"its move {out[1]!r} cannot be sent back: {exc}"))
    conn.close()


class _MoveRunner:
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
              timeout: float) -> concurrent.futures.Future:
        """The move of the agent ``spec`` = (name, options) after ``history``: a future of the action, which
        fails with TimeoutError when the move's process ran ``timeout`` seconds (it is killed then) and with
        :class:`AgentFailed` when the agent raised or its process died. Cancel it to give up a place in the
        queue."""
        fut: concurrent.futures.Future = concurrent.futures.Future()
        self.jobs.put((fut, spec, rows, cols, seed, tuple(history), timeout))
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
                _settle(fut, exc=exc)
            else:
                _settle(fut, result=result)

    def _run(self, spec: tuple, rows: int, cols: int, seed, history: tuple, timeout: float):
        name, kwargs = spec
        move_seed = None if seed is None else (seed * 1_000_003 + len(history)) % 2**63
        receive, send = self.context.Pipe(duplex=False)
        proc = self.context.Process(target=_move_process, name="dnb-move", daemon=True,
                                    args=(send, self.make_agent, name, kwargs, rows, cols, move_seed, history))
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


def _settle(fut: concurrent.futures.Future, result=None, exc: BaseException | None = None) -> None:
    try:
        if exc is None:
            fut.set_result(result)
        else:
            fut.set_exception(exc)
    except RuntimeError:  # the event loop of an asyncio waiter is closed (the server has stopped)
        pass


async def _wait(fut: concurrent.futures.Future, timeout: float):
    """The result of ``fut``; asyncio.TimeoutError after ``timeout`` seconds (the job goes on)."""
    return await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(fut)), timeout)


def option_caps(rows: int, cols: int) -> dict[str, int]:
    """The largest value of each option that sizes an agent's search on a ``rows`` x ``cols`` board:
    simulations (of playouts up to ``edges`` moves long) shrink as the board grows; node budgets; depths;
    the exact solver's zones in undrawn edges (``solve_leaf``, ``solve_root``, ``solver_edges``,
    ``max_undrawn``: the retrograde engine enumerates 2^k positions, so at most 24)."""
    edges = (rows + 1) * cols + rows * (cols + 1)
    return {"simulations": max(1000, 200_000 // edges), "rollouts": 16, "depth": edges,
            "node_limit": 5_000_000, "search_nodes": 300_000, "solver_nodes": 2_000_000, "solve_nodes": 200_000,
            "search_depth": edges, "search_safe": edges, "search_full": edges, "solve_leaf": min(edges, 36),
            "solve_root": min(edges, 34), "solver_edges": min(edges, 24), "max_undrawn": min(edges, 24)}


#: Node budgets whose 0 means "no budget" in the agent (the exact solver's ``node_limit=0`` is unlimited):
#: the web app wants each at least 1.
NODE_BUDGETS = ("node_limit", "solver_nodes", "search_nodes", "solve_nodes")


def _limit_options(factory, kwargs: dict, rows: int, cols: int, limit: float) -> dict:
    """``kwargs`` with the game's time limit and the board's caps applied. An agent that takes a
    ``time_limit`` gets at most 0.8 x ``limit`` (a smaller one of its spec is kept; none is refused); a
    capped option above its cap (or a node budget below 1: 0 is unlimited) is refused, a default above it
    lowered to it; a number that is not finite (nan, inf) is refused in any option. WebError 400 otherwise."""
    for option, value in kwargs.items():
        if isinstance(value, float) and not math.isfinite(value):
            raise WebError(400, "bad_agent", f"{option}={value} is not a finite number")
    params = inspect.signature(factory).parameters
    out = dict(kwargs)
    if "time_limit" in params:
        given = out.get("time_limit", params["time_limit"].default)
        own = round(0.8 * limit, 3)
        if "time_limit" in out and (given is None or given <= 0):
            raise WebError(400, "bad_agent", f"time_limit must be a positive number of seconds, got {given!r} "
                                             f"(the game's time limit bounds every move)")
        out["time_limit"] = own if given in (None, inspect.Parameter.empty) else min(float(given), own)
    for option, cap in option_caps(rows, cols).items():
        if option not in params:
            continue
        if option in out:
            value = out[option]
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value > cap:
                raise WebError(400, "bad_agent", f"{option}={value} is more than the web app allows on "
                                                 f"{rows}x{cols} (at most {cap})")
            if option in NODE_BUDGETS and (value is None or isinstance(value, (int, float)) and value < 1):
                raise WebError(400, "bad_agent", f"{option}={value}: a node budget must be at least 1 (the exact "
                                                 f"solver reads 0 as unlimited); the web app takes 1..{cap} on "
                                                 f"{rows}x{cols}")
        else:
            default = params[option].default
            if isinstance(default, (int, float)) and not isinstance(default, bool) and default > cap:
                out[option] = cap
    return out


_CANDIDATES = ("random", "greedy", "alphabeta:depth=2", "alphabeta:depth=4", "prsboxes", "solver",
               "mcts:simulations=1000", "openspiel_mcts:simulations=300", "alphazero", "alphazero:simulations=0",
               "dotsformer", "dotsformer:simulations=0")


def _candidates(names: list[str], rows: int, cols: int) -> list[str]:
    """Specs worth offering on a board: the presets above of the registered names, and every other
    registered name with its defaults. The exact solver only where it solves the whole game fast."""
    out = [c for c in _CANDIDATES if c.partition(":")[0] in names]
    out += [n for n in names if not any(c.partition(":")[0] == n for c in _CANDIDATES)]
    edges = (rows + 1) * cols + rows * (cols + 1)
    if edges > 24:
        out = [c for c in out if c != "solver"]
    return out


def _find_checkpoints(roots, limit: int = 20) -> list[tuple[str, int]]:
    """(path, modification time in ns) of the first ``limit`` ``.pt`` files within three folder levels of
    ``roots`` whose real path lies inside their root."""
    found = []
    for root in roots:
        if not os.path.isdir(root):
            continue
        for dirpath, dirnames, files in os.walk(root):
            if dirpath[len(root):].count(os.sep) >= 3:
                dirnames[:] = []
            for f in sorted(files):
                path = os.path.join(dirpath, f)
                if f.endswith(".pt") and len(found) < limit and _inside(path, root, want="file"):
                    try:
                        found.append((path, os.stat(path).st_mtime_ns))
                    except OSError:
                        continue
    return found


def _inside(path: str, folder: str, want: str = "file") -> str | None:
    """The real path of ``path`` if it is an existing file (``want="file"``) or folder whose real path
    lies inside ``folder``'s real path (symbolic links resolved); None otherwise."""
    real, top = os.path.realpath(path), os.path.realpath(folder)
    try:
        if os.path.commonpath([real, top]) != top:
            return None
    except ValueError:
        return None
    return real if (os.path.isfile(real) if want == "file" else os.path.isdir(real)) else None


def _read_csv(folder: str, name: str) -> list[dict]:
    path = _inside(os.path.join(folder, name), folder)
    if path is None:
        return []
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except (OSError, csv.Error, UnicodeDecodeError):
        return []


def _read_json(folder: str, name: str):
    path = _inside(os.path.join(folder, name), folder)
    if path is None:
        return None
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


def _game_line_ok(rec) -> bool:
    """A results.jsonl line has the shape of a game: an id, integer moves, and (where present) player names,
    two integer scores, a numeric result and a list of opening moves."""
    if not (isinstance(rec, dict) and isinstance(rec.get("id"), str) and isinstance(rec.get("moves"), list)
            and all(_is_int(a) for a in rec["moves"])):
        return False
    if any(k in rec and not isinstance(rec[k], str) for k in ("first", "second")):
        return False
    scores = rec.get("scores")
    if scores is not None and not (isinstance(scores, list) and len(scores) == 2 and all(map(_is_int, scores))):
        return False
    result = rec.get("result_first")
    if result is not None and (isinstance(result, bool) or not isinstance(result, (int, float))):
        return False
    return rec.get("opening") is None or isinstance(rec["opening"], list)


def _read_games(folder: str) -> list[dict]:
    """The valid game lines of a folder's results.jsonl, read only (a browser never moves lines aside)."""
    path = _inside(os.path.join(folder, "results.jsonl"), folder)
    out = []
    if path is None:
        return out
    try:
        with open(path, "rb") as f:
            for line in f:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if _game_line_ok(rec):
                    out.append(rec)
    except OSError:
        pass
    return out


# --------------------------------------------------------------------------- the app
def create_app(config: WebConfig = WebConfig(), make_agent: Callable | None = None) -> FastAPI:
    """The web app. ``make_agent(name, board=..., seed=..., **options)`` builds opponents (default: the
    registry's); tests pass their own to add misbehaving agents."""
    if make_agent is None:
        from registry import make_agent
    from agents.network_agent import SHIPPED_DIR
    from registry import list_agents
    from registry.specs import check_spec, parse_agent_spec

    store = GameStore(config.max_games, config.idle_s)
    moves = _MoveRunner(config.workers, make_agent)  # agent moves: processes, killed at their time limit
    pool = _Pool(config.workers, "analysis")  # analyses (threads: they keep each game's solver and analyst)
    builds = _Pool(config.build_workers, "build")  # building agents for new games and for /api/agents
    offered: dict[tuple[int, int], tuple[tuple, concurrent.futures.Future]] = {}  # board -> (checkpoints, job)
    offered_lock = threading.Lock()
    checkpoint_roots = list(config.checkpoint_roots) + [SHIPPED_DIR]
    log = logging.getLogger("dnb_web")

    @contextlib.asynccontextmanager
    async def lifespan(app):
        try:
            yield
        finally:
            moves.close()  # the moves in progress end with the server

    app = FastAPI(
        title="dnb: play and watch Dots-and-Boxes",
        description="Play any registered agent, see its evaluation, the board's chains and the exact solver's "
                    "verdict; replay saved games and tournament folders. Actions use OpenSpiel's "
                    "dots_and_boxes numbering.",
        version="1",
        docs_url=None,  # FastAPI's Swagger UI loads from a CDN; /docs below renders the schema locally
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.store, app.state.config, app.state.pools = store, config, (pool, builds, moves)

    @app.exception_handler(WebError)
    async def _web_error(request: Request, exc: WebError):
        return _error(exc.status, exc.code, exc.message)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError):
        errors = exc.errors()
        if any(e.get("type") == "json_invalid" for e in errors):
            return _error(400, "malformed_json", "the request body is not valid JSON")
        parts = []
        for e in errors:
            where = ".".join(str(x) for x in e.get("loc", ()) if x != "body") or "body"
            parts.append(f"{where}: {e.get('msg')}")
        return _error(422, "bad_request", "; ".join(parts),
                      detail=[{"loc": list(e.get("loc", ())), "msg": e.get("msg")} for e in errors])

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException):
        code = {404: "not_found", 405: "method_not_allowed", 413: "body_too_large"}.get(exc.status_code, "http_error")
        return _error(exc.status_code, code, str(exc.detail))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception):
        log.error("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
        return _error(500, "internal_error", f"unexpected error: {type(exc).__name__}")

    def build(name: str, kwargs: dict, rows: int, cols: int, seed):
        return make_agent(name, board=f"{rows}x{cols}", seed=seed, **kwargs)

    # ----------------------------------------------------------------------- page
    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def page():
        with open(os.path.join(STATIC_DIR, "index.html"), encoding="utf-8") as f:
            return HTMLResponse(f.read())

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")

    @app.get("/docs", response_class=HTMLResponse, include_in_schema=False)
    async def api_docs():
        """The API reference: /openapi.json rendered by static/api.js (nothing from other hosts)."""
        with open(os.path.join(STATIC_DIR, "api.html"), encoding="utf-8") as f:
            return HTMLResponse(f.read())

    # ----------------------------------------------------------------------- agents
    def buildable(specs: list[str], rows: int, cols: int) -> list[str]:
        ok = []
        for spec in specs:
            try:
                name, kwargs = parse_agent_spec(spec)
                kwargs = _limit_options(check_spec(name, kwargs), kwargs, rows, cols, config.time_limit_s)
                build(name, kwargs, rows, cols, 0)
            except Exception:  # noqa: BLE001  (anything the registry cannot build is not offered)
                continue
            ok.append(spec)
        return ok

    @app.get("/api/agents", tags=["agents"], summary="Agent specs that can be built for a board")
    def agents(board: str = Query("3x3", description="'RxC'")):
        # a plain def: FastAPI runs it in its thread pool, so walking folders never blocks the event loop.
        # One build job per board and set of checkpoints (paths and times), shared by concurrent requests.
        rows, cols = check_board(board)
        found = tuple(_find_checkpoints(config.checkpoint_roots))
        with offered_lock:
            entry = offered.get((rows, cols))
            stale = entry is None or entry[0] != found or (entry[1].done() and entry[1].exception() is not None)
            if stale:
                specs = _candidates(list_agents(), rows, cols)
                for path, _ in found:
                    specs += [f"alphazero:checkpoint={path}", f"dotsformer:checkpoint={path}"]
                entry = offered[(rows, cols)] = (found, builds.start(buildable, specs, rows, cols))
        try:
            ok = entry[1].result(timeout=config.max_think_s)
        except concurrent.futures.TimeoutError:
            raise WebError(503, "busy", "listing the agents took too long; try again") from None
        return {"board": f"{rows}x{cols}", "agents": [{"spec": s} for s in ok], "names": list_agents()}

    # ----------------------------------------------------------------------- games
    def _game_json(game: Game) -> dict:
        return game.state_json()

    @app.post("/api/games", status_code=201, tags=["games"], summary="Create a game against an agent")
    async def new_game(body: NewGame):
        rows, cols = check_board(body.board)
        name, kwargs = parse_spec(body.opponent, checkpoint_roots)
        limit = config.time_limit_s if body.time_limit is None else float(body.time_limit)
        if not 0 < limit <= config.max_think_s:
            raise WebError(400, "bad_time_limit", f"time_limit must be in (0, {config.max_think_s}] seconds, got {limit}")
        kwargs = _limit_options(check_spec(name, kwargs), kwargs, rows, cols, limit)
        store.check_room()  # 429 before an agent is built for nothing
        try:
            agent = await _wait(builds.start(build, name, kwargs, rows, cols, body.seed), config.max_think_s)
        except asyncio.TimeoutError:
            raise WebError(503, "agent_unavailable", f"building {body.opponent!r} took too long") from None
        except Exception as exc:  # noqa: BLE001  (the registry could not build it for this board)
            raise WebError(400, "agent_unavailable", f"{body.opponent!r} cannot play {rows}x{cols}: {exc}") from None
        game = Game(rows=rows, cols=cols, opponent=body.opponent, human=body.human, agent=agent, seed=body.seed,
                    time_limit=limit, spec=(name, kwargs))
        store.add(game)
        return _game_json(game)

    @app.get("/api/games/{gid}", tags=["games"], summary="The game's position, turn and scores")
    async def get_game(gid: str):
        return _game_json(store.get(gid))

    @app.delete("/api/games/{gid}", tags=["games"], summary="End a game and free its slot")
    async def delete_game(gid: str):
        store.remove(gid)
        return {"deleted": gid}

    @app.post("/api/games/{gid}/move", tags=["games"], summary="The human draws an edge")
    async def human_move(gid: str, body: Move):
        game = store.get(gid)
        game.play(body.action, by="human", ply=body.ply)
        return _game_json(game)

    @app.post("/api/games/{gid}/agent-move", tags=["games"],
              summary="The agent plays one move (call again while it keeps the turn)")
    async def agent_move(gid: str):
        game = store.get(gid)
        game._check_open()
        if game.busy:
            raise WebError(409, "agent_thinking", "the agent is still thinking about this position (another "
                                                  "request asked for its move); try again in a moment")
        if game.turn != "agent":
            raise WebError(409, "not_your_turn", "it is the human's turn")
        generation, state = game.generation, game.state
        fut = moves.start(game.spec, game.rows, game.cols, game.seed, state.history, game.time_limit)
        game.busy, game.error = True, None

        def release(f):
            game.busy = False
            game.touch()

        fut.add_done_callback(release)
        queue_s = config.max_think_s  # the longest a move waits for a slot (taken by moves of that length)
        for wait_s in (queue_s + game.time_limit, None):  # then a move that started late: its limit ends it
            try:
                await asyncio.wait_for(asyncio.shield(asyncio.wrap_future(fut)), wait_s)
            except Exception:  # noqa: BLE001  (sorted out below from the future; the game stays as it was)
                pass
            if not fut.done() and fut.cancel():  # it never got a slot: its place is given up
                raise WebError(503, "busy", f"all {config.workers} agent move slots stayed taken for {queue_s:g} s "
                                            "(moves of other games); try again in a moment")
            if fut.done():
                break
        exc = fut.exception()
        if isinstance(exc, TimeoutError):  # its process was killed at the time limit
            game.error = f"the agent did not move within the time limit of {game.time_limit:g} s"
            raise WebError(504, "agent_timeout", game.error)
        if exc is not None:  # a crashing agent, or its process died
            game.error = f"the agent crashed: {exc}"
            raise WebError(500, "agent_failed", game.error)
        action = fut.result()
        if game.generation != generation:  # resigned meanwhile
            return _game_json(game)
        try:
            game.play(action, by="agent")
        except WebError as exc:
            game.error = f"the agent chose an illegal move: {exc.message}"
            raise WebError(500, "agent_failed", game.error) from None
        return _game_json(game)

    @app.post("/api/games/{gid}/undo", tags=["games"], summary="Take back to before the human's last move")
    async def undo(gid: str):
        game = store.get(gid)
        game.undo()
        return _game_json(game)

    @app.post("/api/games/{gid}/resign", tags=["games"], summary="The human resigns")
    async def resign(gid: str):
        game = store.get(gid)
        game.resign()
        return _game_json(game)

    @app.get("/api/games/{gid}/analysis", tags=["insight"],
             summary="Move classes, chains, the exact solver and the agent's own view of the position")
    async def analysis(gid: str, agent: bool = Query(True, description="include the agent's view"),
                       solver: bool = Query(True, description="include the exact solver (node budget)")):
        game = store.get(gid)
        state = game.state
        if not game.analysis_lock.acquire(blocking=False):
            raise WebError(409, "analysis_busy", "an analysis of this game is still running")
        deadline = time.perf_counter() + 0.8 * game.time_limit

        def work():
            try:
                out = {"ply": len(state.history), "structure": insight.structure(state), "solver": None, "agent": None}
                if solver:
                    if game.solver is None:
                        game.solver = insight.make_solver(config.solver_nodes)
                    out["solver"] = insight.solve(game.solver, state)
                if agent and not state.is_terminal():
                    try:
                        if game.analyst is None:
                            name, kwargs = game.spec
                            game.analyst = build(name, kwargs, game.rows, game.cols, game.seed)
                        out["agent"] = insight.agent_view(game.analyst, state, deadline=deadline)
                    except Exception as exc:  # noqa: BLE001  (shown on the page; the game goes on)
                        out["agent"] = {"kind": "error", "error": f"{type(exc).__name__}: {exc}"}
                return out
            finally:
                game.analysis_lock.release()
                game.touch()

        try:
            fut = pool.start(work)
        except WebError:
            game.analysis_lock.release()
            raise
        try:
            return await _wait(fut, game.time_limit)
        except asyncio.TimeoutError:
            raise WebError(504, "analysis_timeout", f"the analysis took longer than {game.time_limit:g} s") from None

    @app.get("/api/games/{gid}/record", tags=["records"], summary="The game as JSON or text (download)")
    async def record(gid: str, format: Literal["json", "text"] = "json"):
        game = store.get(gid)
        rec = game.record()
        name = f"dnb-{rec['board']}-{gid[:6]}"
        if format == "text":
            return PlainTextResponse(record_text(rec),
                                     headers={"Content-Disposition": f'attachment; filename="{name}.txt"'})
        return JSONResponse(rec, headers={"Content-Disposition": f'attachment; filename="{name}.json"'})

    @app.post("/api/records/replay", tags=["records"], summary="Check a saved game and return every position")
    async def replay(body: Replay):
        if (body.record is None) == (body.text is None):
            raise WebError(400, "bad_record", "send either 'record' (JSON) or 'text'")
        rows, cols, actions, players = read_record(body.record if body.record is not None else body.text)
        return {"board": f"{rows}x{cols}", "players": players, "actions": actions,
                "frames": frames(rows, cols, actions)}

    # ----------------------------------------------------------------------- tournaments
    # plain defs: FastAPI runs them in its thread pool (file reading and parsing stay off the event loop)
    def _folder(folder: str) -> str:
        return allowed_path(folder, list(config.results_roots), "folder")

    @app.get("/api/tournaments", tags=["tournaments"], summary="Tournament folders under the allowed roots")
    def tournaments():
        found = []
        for root in config.results_roots:
            if not os.path.isdir(root):
                continue
            for dirpath, dirnames, files in os.walk(root):
                if dirpath[len(root):].count(os.sep) >= 3:
                    dirnames[:] = []
                dirnames.sort()
                if "results.jsonl" in files and _inside(os.path.join(dirpath, "results.jsonl"), root):
                    found.append(dirpath)
        return {"roots": list(config.results_roots), "folders": found}

    @app.get("/api/tournaments/view", tags=["tournaments"], summary="Standings, plots and games of a folder")
    def tournament(folder: str):
        path = _folder(folder)
        games = [{"id": r["id"], "first": r.get("first"), "second": r.get("second"), "scores": r.get("scores"),
                  "result_first": r.get("result_first"), "moves": len(r["moves"]),
                  "opening": len(r.get("opening") or [])} for r in _read_games(path)]
        plots = sorted(f for f in os.listdir(path) if f.endswith(".png") and _inside(os.path.join(path, f), path))
        return {"folder": folder, "config": _read_json(path, "config.json"), "elo": _read_csv(path, "elo.csv"),
                "pairs": _read_csv(path, "pairs.csv"), "plots": plots, "games": games}

    @app.get("/api/tournaments/plot", tags=["tournaments"], summary="A plot (PNG) of a tournament folder")
    def tournament_plot(folder: str, name: str):
        path = _folder(folder)
        real = _inside(os.path.join(path, name), path) if re.fullmatch(r"[\w.-]+\.png", name) else None
        if real is None:
            raise WebError(404, "not_found", f"no plot {name!r} in {folder!r}")
        return FileResponse(real, media_type="image/png")

    @app.get("/api/tournaments/game", tags=["tournaments"], summary="One game of a tournament, move by move")
    def tournament_game(folder: str, id: str):
        path = _folder(folder)
        cfg = _read_json(path, "config.json")
        if not isinstance(cfg, dict) or "board" not in cfg:
            raise WebError(404, "not_found", f"{folder!r} has no readable config.json (its board)")
        rows, cols = check_board(cfg["board"])
        for rec in _read_games(path):
            if rec["id"] == id:
                return {"board": f"{rows}x{cols}", "players": [str(rec.get("first")), str(rec.get("second"))],
                        "actions": rec["moves"], "opening": len(rec.get("opening") or []),
                        "frames": frames(rows, cols, rec["moves"])}
        raise WebError(404, "not_found", f"no game {id!r} in {folder!r}")

    app.add_middleware(_BodyLimit, limit=config.max_body)
    app.add_middleware(_HostCheck, hosts=config.allowed_hosts)
    return app
