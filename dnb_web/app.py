"""The HTTP layer: a FastAPI app with the JSON API under ``/api/`` and the page at ``/``.

    from dnb_web import WebConfig, create_app
    app = create_app(WebConfig(results_roots=("results",), max_games=64))
    # uvicorn.run(app, host="127.0.0.1", port=8000)   (what `dnb serve` does)

Game state lives in :class:`dnb_web.games.Game` objects owned by the app's :class:`GameStore`; positions
are :class:`dnb_env.core.GameState`; agents come from ``make_agent`` (default: :func:`registry.make_agent`).
Agent moves and the insight view run in the app's thread pool under a time limit, so the event loop
never waits on an agent. Every error is JSON ``{"error": code, "message": text}`` with a 4xx status for
bad input (which changes nothing) and a 5xx status for an agent that crashed or ran out of time.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import csv
import inspect
import json
import os
import re
from dataclasses import dataclass
from typing import Callable, Literal

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
    workers: threads for agent moves and analysis; idle_s: a game untouched this long may be dropped
    """

    results_roots: tuple[str, ...] = ("results",)
    checkpoint_roots: tuple[str, ...] = ("runs",)
    max_games: int = 64
    max_think_s: float = 60.0
    time_limit_s: float = 10.0
    max_body: int = 64 * 1024
    solver_nodes: int = 300_000
    workers: int = 4
    idle_s: float = 3600.0


# --------------------------------------------------------------------------- request bodies
class _Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NewGame(_Body):
    board: StrictStr = Field("3x3", description="'RxC' boxes, 1x1 .. 9x9")
    opponent: StrictStr = Field("random", description="agent spec, e.g. 'alphabeta:depth=4' (GET /api/agents)")
    human: Literal[0, 1] = Field(0, description="the human's seat: 0 moves first")
    seed: StrictInt | None = Field(None, description="seed of the agent (None: fresh randomness)")
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


def _find_checkpoints(roots, limit: int = 20) -> list[str]:
    found = []
    for root in roots:
        if not os.path.isdir(root):
            continue
        for dirpath, dirnames, files in os.walk(root):
            if dirpath[len(root):].count(os.sep) >= 3:
                dirnames[:] = []
            for f in sorted(files):
                if f.endswith(".pt") and len(found) < limit:
                    found.append(os.path.join(dirpath, f))
    return found


def _read_csv(path: str) -> list[dict]:
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except (OSError, csv.Error):
        return []


def _read_games(path: str) -> list[dict]:
    """The valid game lines of a results.jsonl, read only (a browser never moves lines aside)."""
    out = []
    try:
        with open(path, "rb") as f:
            for line in f:
                try:
                    rec = json.loads(line)
                except ValueError:
                    continue
                if isinstance(rec, dict) and isinstance(rec.get("id"), str) and isinstance(rec.get("moves"), list):
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
    from registry.agents import check_spec

    store = GameStore(config.max_games, config.idle_s)
    executor = concurrent.futures.ThreadPoolExecutor(max_workers=config.workers, thread_name_prefix="dnb-agent")
    offered: dict[tuple[int, int], list[dict]] = {}
    checkpoint_roots = list(config.checkpoint_roots) + [SHIPPED_DIR]

    @contextlib.asynccontextmanager
    async def lifespan(app):
        yield
        executor.shutdown(wait=False, cancel_futures=True)

    app = FastAPI(
        title="dnb: play and watch Dots-and-Boxes",
        description="Play any registered agent, see its evaluation, the board's chains and the exact solver's "
                    "verdict; replay saved games and tournament folders. Actions use OpenSpiel's "
                    "dots_and_boxes numbering.",
        version="1", lifespan=lifespan,
    )
    app.state.store, app.state.config = store, config

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

    async def run(fn, *args, timeout: float):
        """``fn(*args)`` in the pool; TimeoutError after ``timeout`` s (the thread is left to finish)."""
        fut = asyncio.get_running_loop().run_in_executor(executor, fn, *args)
        return await asyncio.wait_for(asyncio.shield(fut), timeout), fut

    def build(name: str, kwargs: dict, rows: int, cols: int, seed):
        return make_agent(name, board=f"{rows}x{cols}", seed=seed, **kwargs)

    # ----------------------------------------------------------------------- page
    @app.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def page():
        with open(os.path.join(STATIC_DIR, "index.html"), encoding="utf-8") as f:
            return HTMLResponse(f.read())

    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")

    # ----------------------------------------------------------------------- agents
    @app.get("/api/agents", tags=["agents"], summary="Agent specs that can be built for a board")
    async def agents(board: str = Query("3x3", description="'RxC'")):
        rows, cols = check_board(board)
        if (rows, cols) not in offered:
            names = list_agents()
            specs = _candidates(names, rows, cols)
            for path in _find_checkpoints(config.checkpoint_roots):
                specs += [f"alphazero:checkpoint={path}", f"dotsformer:checkpoint={path}"]

            def buildable():
                from agents.arena import parse_agent_spec

                ok = []
                for spec in specs:
                    try:
                        name, kwargs = parse_agent_spec(spec)
                        build(name, kwargs, rows, cols, 0)
                    except Exception:  # noqa: BLE001  (anything the registry cannot build is not offered)
                        continue
                    ok.append(spec)
                return ok

            try:
                ok, _ = await run(buildable, timeout=config.max_think_s)
            except asyncio.TimeoutError:
                raise WebError(503, "busy", "listing the agents took too long; try again") from None
            offered[(rows, cols)] = [{"spec": s} for s in ok]
        return {"board": f"{rows}x{cols}", "agents": offered[(rows, cols)], "names": list_agents()}

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
        factory = check_spec(name, kwargs)
        if "time_limit" in inspect.signature(factory).parameters and "time_limit" not in kwargs:
            kwargs["time_limit"] = round(0.8 * limit, 3)  # an agent that can keep to a time limit is given one
        store.check_room()  # 429 before an agent is built for nothing
        try:
            agent, _ = await run(build, name, kwargs, rows, cols, body.seed, timeout=config.max_think_s)
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
            raise WebError(409, "agent_thinking", "the agent is already thinking about this position")
        if game.turn != "agent":
            raise WebError(409, "not_your_turn", "it is the human's turn")
        game.busy, game.error = True, None
        generation, state = game.generation, game.state

        def release(f):
            if not f.cancelled():
                f.exception()  # retrieved, so that no 'never retrieved' warning is logged
            game.busy = False

        fut = asyncio.get_running_loop().run_in_executor(executor, game.agent.select_action, state)
        fut.add_done_callback(release)
        try:
            action = await asyncio.wait_for(asyncio.shield(fut), game.time_limit)
        except asyncio.TimeoutError:
            game.error = f"the agent did not move within the time limit of {game.time_limit:g} s"
            raise WebError(504, "agent_timeout", game.error) from None
        except Exception as exc:  # noqa: BLE001  (a crashing agent: reported, the game stays as it was)
            game.busy = False
            game.error = f"the agent crashed: {type(exc).__name__}: {exc}"
            raise WebError(500, "agent_failed", game.error) from None
        game.busy = False
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
                        out["agent"] = insight.agent_view(game.analyst, state)
                    except Exception as exc:  # noqa: BLE001  (shown on the page; the game goes on)
                        out["agent"] = {"kind": "error", "error": f"{type(exc).__name__}: {exc}"}
                return out
            finally:
                game.analysis_lock.release()

        try:
            out, _ = await run(work, timeout=game.time_limit)
        except asyncio.TimeoutError:
            raise WebError(504, "analysis_timeout", f"the analysis took longer than {game.time_limit:g} s") from None
        return out

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
    def _folder(folder: str) -> str:
        return allowed_path(folder, list(config.results_roots), "folder")

    @app.get("/api/tournaments", tags=["tournaments"], summary="Tournament folders under the allowed roots")
    async def tournaments():
        found = []
        for root in config.results_roots:
            if not os.path.isdir(root):
                continue
            for dirpath, dirnames, files in os.walk(root):
                if dirpath[len(root):].count(os.sep) >= 3:
                    dirnames[:] = []
                dirnames.sort()
                if "results.jsonl" in files:
                    found.append(dirpath)
        return {"roots": list(config.results_roots), "folders": found}

    @app.get("/api/tournaments/view", tags=["tournaments"], summary="Standings, plots and games of a folder")
    async def tournament(folder: str):
        path = _folder(folder)
        try:
            with open(os.path.join(path, "config.json")) as f:
                cfg = json.load(f)
        except (OSError, ValueError):
            cfg = None
        games = [{"id": r["id"], "first": r.get("first"), "second": r.get("second"), "scores": r.get("scores"),
                  "result_first": r.get("result_first"), "moves": len(r["moves"]),
                  "opening": len(r.get("opening") or [])} for r in _read_games(os.path.join(path, "results.jsonl"))]
        return {"folder": folder, "config": cfg, "elo": _read_csv(os.path.join(path, "elo.csv")),
                "pairs": _read_csv(os.path.join(path, "pairs.csv")),
                "plots": sorted(f for f in os.listdir(path) if f.endswith(".png")), "games": games}

    @app.get("/api/tournaments/plot", tags=["tournaments"], summary="A plot (PNG) of a tournament folder")
    async def tournament_plot(folder: str, name: str):
        path = _folder(folder)
        if not re.fullmatch(r"[\w.-]+\.png", name) or not os.path.isfile(os.path.join(path, name)):
            raise WebError(404, "not_found", f"no plot {name!r} in {folder!r}")
        return FileResponse(os.path.join(path, name), media_type="image/png")

    @app.get("/api/tournaments/game", tags=["tournaments"], summary="One game of a tournament, move by move")
    async def tournament_game(folder: str, id: str):
        path = _folder(folder)
        try:
            with open(os.path.join(path, "config.json")) as f:
                board = json.load(f)["board"]
        except (OSError, ValueError, KeyError, TypeError):
            raise WebError(404, "not_found", f"{folder!r} has no readable config.json (its board)") from None
        rows, cols = check_board(board)
        for rec in _read_games(os.path.join(path, "results.jsonl")):
            if rec["id"] == id:
                return {"board": f"{rows}x{cols}", "players": [str(rec.get("first")), str(rec.get("second"))],
                        "actions": rec["moves"], "opening": len(rec.get("opening") or []),
                        "frames": frames(rows, cols, rec["moves"])}
        raise WebError(404, "not_found", f"no game {id!r} in {folder!r}")

    app.add_middleware(_BodyLimit, limit=config.max_body)
    return app
