"""``GET /api/agents``: the agent specs that can be built for a board (each built once to find out, in the
build pool; one build job per board and set of checkpoints, shared by concurrent requests)."""

from __future__ import annotations

import concurrent.futures
import threading

from fastapi import APIRouter, Query

from dnb_env.core import geometry
from dnb_web.checks import WebError, check_board
from dnb_web.context import WebContext
from dnb_web.options import REFUSED, candidates, find_checkpoints, limit_options

__all__ = ["router"]


def router(ctx: WebContext) -> APIRouter:
    """The agents route of the app ``ctx``."""
    from agents.models import family_agents
    from registry import list_agents
    from registry.specs import check_spec, parse_agent_spec

    api = APIRouter()
    config, builds, build = ctx.config, ctx.builds, ctx.build
    offered: dict[tuple[int, int], tuple[tuple, concurrent.futures.Future]] = {}  # board -> (checkpoints, job)
    offered_lock = threading.Lock()

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

    @api.get("/api/agents", tags=["agents"], summary="Agent specs that can be built for a board")
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
        return {"board": geometry(rows, cols).name, "agents": [{"spec": s} for s in ok],
                "names": [n for n in list_agents() if n not in REFUSED]}

    return api
