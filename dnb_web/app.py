"""The HTTP layer: a FastAPI app with the JSON API under ``/api/`` and the page at ``/``.

    from dnb_web import WebConfig, create_app
    app = create_app(WebConfig(results_roots=("results",), max_games=64))
    # uvicorn.run(app, host="127.0.0.1", port=8000)   (what `dnb serve` does)

Game state lives in :class:`dnb_web.games.Game` objects owned by the app's :class:`GameStore`; positions
are :class:`dnb_env.core.GameState`; agents come from ``make_agent`` (default: :func:`registry.make_agent`).

The routes are here; the machinery lives beside them: :mod:`dnb_web.server` (middleware, the move
processes and analysis threads), :mod:`dnb_web.options` (option caps, offered specs), :mod:`dnb_web.tournaments`
(tournament folders, read through the arena's results reader), :mod:`dnb_web.insight` (the analysis).

Thinking time is bounded in three ways. (1) Each agent move runs in a process of its own, forked from the
server, which builds the agent from the game's spec (:class:`~dnb_web.server.MoveRunner`, ``workers`` moves
at once); a move still running at the game's time limit is killed with its process (504), so no request,
however slow its agent, keeps a slot past its deadline from the other games' moves. Moves wait in order for
a slot. Analyses run on daemon threads of a small pool of their own (:class:`~dnb_web.server.DaemonPool`,
``workers`` at once; they keep each game's solver and analyst between requests): a thread cannot be killed,
so an analysis past its limit keeps its slot until it ends, and when such analyses fill the pool, further
analyses get 503 at once instead of queueing; daemon threads never hold up the server's exit (Ctrl-C).
Building and listing agents has a pool of its own. (2) An agent that takes a ``time_limit`` option is given
0.8 x the game's limit (a spec cannot raise it or turn it off). (3) The options that size a search
(``simulations``, ``rollouts``, ``depth``, ``node_limit``, the solver's zones, ...) are capped by the board
(:func:`~dnb_web.options.option_caps`), defaults included, node budgets of 0 (unlimited) and non-finite
numbers (nan, inf) in any option are refused, so that no single move runs away.

Every error is JSON ``{"error": code, "message": text}`` with a 4xx status for bad input (which changes
nothing), a 5xx status for an agent that crashed or ran out of time, and 500 ``internal_error`` for
anything unexpected. Requests whose ``Host`` header is not an allowed host get 400 ``bad_host`` (DNS
rebinding); files of tournament folders are read only when their real path lies inside the folder.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Annotated, Callable, Literal

from fastapi import FastAPI, Query, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, PlainTextResponse
from fastapi.staticfiles import StaticFiles
from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, StrictStr
from starlette.exceptions import HTTPException as StarletteHTTPException

from dnb_web import insight, tournaments as folders
from dnb_web.games import (Game, GameStore, WebError, allowed_path, check_board, frames, parse_spec, read_record,
                           record_text)
from dnb_web.options import REFUSED, candidates, find_checkpoints, limit_options, option_caps  # noqa: F401  (option_caps: API)
from dnb_web.server import BodyLimit, DaemonPool, HostCheck, MoveRunner, error_response, wait_for
from dnb_web.server import DaemonPool as _Pool  # noqa: F401  (its name here before dnb_web.server)

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
    idle_s: a game without requests for this long is dropped (when ``max_games`` are live, a finished game
    makes room for a new one; a game in play is never dropped for a newcomer: the new one gets 503)
    allowed_hosts: ``Host`` header values served (``"*"``: any), against DNS rebinding
    allowed_engines: engine programs a game may play (an ``engine`` spec whose ``cmd`` starts with one of
    them, exactly, after ``shlex.split``); none: every ``engine`` spec is refused
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
    allowed_engines: tuple[str, ...] = ()


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
# --------------------------------------------------------------------------- the app
def create_app(config: WebConfig = WebConfig(), make_agent: Callable | None = None) -> FastAPI:
    """The web app. ``make_agent(name, board=..., seed=..., **options)`` builds opponents (default: the
    registry's); tests pass their own to add misbehaving agents."""
    if make_agent is None:
        from registry import make_agent
    from agents.models import family_agents
    from agents.network_agent import SHIPPED_DIR
    from registry import list_agents
    from registry.specs import check_spec, parse_agent_spec

    store = GameStore(config.max_games, config.idle_s)
    moves = MoveRunner(config.workers, make_agent)  # agent moves: processes, killed at their time limit
    pool = DaemonPool(config.workers, "analysis")  # analyses (threads: they keep each game's solver and analyst)
    builds = DaemonPool(config.build_workers, "build")  # building agents for new games and for /api/agents
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
        return error_response(exc.status, exc.code, exc.message)

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError):
        errors = exc.errors()
        if any(e.get("type") == "json_invalid" for e in errors):
            return error_response(400, "malformed_json", "the request body is not valid JSON")
        parts = []
        for e in errors:
            where = ".".join(str(x) for x in e.get("loc", ()) if x != "body") or "body"
            parts.append(f"{where}: {e.get('msg')}")
        return error_response(422, "bad_request", "; ".join(parts),
                      detail=[{"loc": list(e.get("loc", ())), "msg": e.get("msg")} for e in errors])

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException):
        code = {404: "not_found", 405: "method_not_allowed", 413: "body_too_large"}.get(exc.status_code, "http_error")
        return error_response(exc.status_code, code, str(exc.detail))

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception):
        log.error("unexpected error on %s %s", request.method, request.url.path, exc_info=exc)
        return error_response(500, "internal_error", f"unexpected error: {type(exc).__name__}")

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
                kwargs = limit_options(check_spec(name, kwargs), kwargs, rows, cols, config.time_limit_s)
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
        found = tuple(find_checkpoints(config.checkpoint_roots))
        with offered_lock:
            entry = offered.get((rows, cols))
            stale = entry is None or entry[0] != found or (entry[1].done() and entry[1].exception() is not None)
            if stale:
                specs = candidates(list_agents(), rows, cols)
                for path, _ in found:  # each checkpoint under every model family's agent (those it fits build)
                    specs += [f"{agent}:checkpoint={path}" for agent in family_agents()]
                entry = offered[(rows, cols)] = (found, builds.start(buildable, specs, rows, cols))
        try:
            ok = entry[1].result(timeout=config.max_think_s)
        except concurrent.futures.TimeoutError:
            raise WebError(503, "busy", "listing the agents took too long; try again") from None
        return {"board": f"{rows}x{cols}", "agents": [{"spec": s} for s in ok],
                "names": [n for n in list_agents() if n not in REFUSED]}

    # ----------------------------------------------------------------------- games
    def _game_json(game: Game) -> dict:
        return game.state_json()

    @app.post("/api/games", status_code=201, tags=["games"], summary="Create a game against an agent")
    async def new_game(body: NewGame):
        rows, cols = check_board(body.board)
        name, kwargs = parse_spec(body.opponent, checkpoint_roots, config.allowed_engines)
        limit = config.time_limit_s if body.time_limit is None else float(body.time_limit)
        if not 0 < limit <= config.max_think_s:
            raise WebError(400, "bad_time_limit", f"time_limit must be in (0, {config.max_think_s}] seconds, got {limit}")
        kwargs = limit_options(check_spec(name, kwargs), kwargs, rows, cols, limit)
        store.check_room()  # 503 before an agent is built for nothing
        try:
            agent = await wait_for(builds.start(build, name, kwargs, rows, cols, body.seed), config.max_think_s)
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
            return await wait_for(fut, game.time_limit)
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
    def _folder(folder: str, root: int | None) -> str:
        roots = list(config.results_roots)
        path = folders.find_folder(folder, roots, root)  # a root given: the folder must lie inside that one
        return allowed_path(path, roots if root is None else [roots[root]], "folder")

    FOLDER = Query(..., description="the folder's name relative to its results root (as GET /api/tournaments "
                                    "lists it), or its path")
    ROOT = Query(None, description="the index of its results root in 'roots' (default: the first root holding it)")

    played = folders.PlayedCounts()  # each results file read again only when it changed

    @app.get("/api/tournaments", tags=["tournaments"], summary="Tournament folders under the allowed roots")
    def tournaments():
        return {"roots": list(config.results_roots), "folders": folders.list_folders(config.results_roots, played)}

    @app.get("/api/tournaments/view", tags=["tournaments"], summary="Standings, plots and games of a folder")
    def tournament(folder: str = FOLDER, root: int | None = ROOT):
        return folders.folder_view(_folder(folder, root), folder)

    @app.get("/api/tournaments/plot", tags=["tournaments"], summary="A plot (PNG) of a tournament folder")
    def tournament_plot(folder: str = FOLDER, name: str = Query(...), root: int | None = ROOT):
        real = folders.plot_file(_folder(folder, root), name)
        if real is None:
            raise WebError(404, "not_found", f"no plot {name!r} in {folder!r}")
        return FileResponse(real, media_type="image/png")

    @app.get("/api/tournaments/game", tags=["tournaments"], summary="One game of a tournament, move by move")
    def tournament_game(folder: str = FOLDER, id: str = Query(...), root: int | None = ROOT):
        return folders.folder_game(_folder(folder, root), folder, id)

    app.add_middleware(BodyLimit, limit=config.max_body)
    app.add_middleware(HostCheck, hosts=config.allowed_hosts)
    return app
