"""``GET /api/games/{id}/analysis``: the insight view of a game's position (:mod:`dnb_web.insight`), on a
daemon thread of the analysis pool, within the game's time limit."""

from __future__ import annotations

import asyncio
import time

from fastapi import APIRouter, Query

from dnb_web import insight
from dnb_web.checks import WebError
from dnb_web.context import WebContext
from dnb_web.server import wait_for

__all__ = ["router"]


def router(ctx: WebContext) -> APIRouter:
    """The analysis route of the app ``ctx``."""
    api = APIRouter()
    config, store, pool, build = ctx.config, ctx.store, ctx.pool, ctx.build

    @api.get("/api/games/{gid}/analysis", tags=["insight"],
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

    return api
