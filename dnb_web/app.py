"""The HTTP layer: a FastAPI app with the JSON API under ``/api/`` and the page at ``/``.

    from dnb_web import WebConfig, create_app
    app = create_app(WebConfig(results_roots=("results",), max_games=64))
    # uvicorn.run(app, host="127.0.0.1", port=8000)   (what `dnb serve` does)

Game state lives in :class:`dnb_web.games.Game` objects owned by the app's :class:`GameStore`; positions
are :class:`dnb_env.core.GameState`; agents come from ``make_agent`` (default: :func:`registry.make_agent`).

Here the app is put together: its shared state (:class:`dnb_web.context.WebContext`), the routes, one module
per area (:mod:`dnb_web.routes`), their error answers and the middleware. The machinery lives beside them:
:mod:`dnb_web.server` (middleware, the move processes and analysis threads), :mod:`dnb_web.options` (agent
specs, option caps, offered specs), :mod:`dnb_web.tournaments` (tournament folders, read through the arena's
results reader), :mod:`dnb_web.insight` (the analysis).

Thinking time is bounded in three ways. (1) Each agent move runs in a process of its own, forked from the
server, which builds the agent from the game's spec (:class:`~dnb_web.server.MoveRunner`, ``workers`` moves
at once); a move still running at the game's time limit is killed with its process (504), so no request,
however slow its agent, keeps a slot past its deadline from the other games' moves. Moves wait in order for
a slot. Analyses run on daemon threads of a small pool of their own (:class:`~dnb_web.server.DaemonPool`,
``workers`` at once; they keep each game's solver and analyst between requests): a thread cannot be killed,
so an analysis past its limit keeps its slot until it ends, and when such analyses fill the pool, further
analyses get 503 at once instead of queueing; daemon threads never hold up the server's exit (Ctrl-C).
Building and listing agents has a pool of its own. (2) An agent that takes a ``time_limit`` option is given
0.8 x the game's limit (a spec cannot raise it or turn it off); one sized by node budgets (prsboxes, solver)
thinks to a clock of 0.8 x the limit less its build's seconds (:func:`~dnb_web.options.move_clock`). (3) The options that size a search
(``simulations``, ``rollouts``, ``depth``, ``node_limit``, the solver's zones, ...) are capped by the board
(:func:`~dnb_web.options.option_caps`), defaults included, node budgets of 0 (unlimited) and non-finite
numbers (nan, inf) in any option are refused, so that no single move runs away.

Every error is JSON ``{"error": code, "message": text}`` with a 4xx status for bad input (which changes
nothing), a 5xx status for an agent that crashed or ran out of time, and 500 ``internal_error`` for
anything unexpected. Requests whose ``Host`` header is not an allowed host get 400 ``bad_host`` (DNS
rebinding); files of tournament folders are read only when their real path lies inside the folder.
"""

from __future__ import annotations

import contextlib
from typing import Callable

from fastapi import FastAPI

from dnb_web.context import WebConfig, WebContext
from dnb_web.routes import include_routes
from dnb_web.routes.errors import add_error_handlers
from dnb_web.server import BodyLimit, HostCheck

__all__ = ["WebConfig", "create_app"]


def create_app(config: WebConfig = WebConfig(), make_agent: Callable | None = None) -> FastAPI:
    """The web app. ``make_agent(name, board=..., seed=..., **options)`` builds opponents (default: the
    registry's); tests pass their own to add misbehaving agents."""
    if make_agent is None:
        from registry import make_agent
    ctx = WebContext(config, make_agent)

    @contextlib.asynccontextmanager
    async def lifespan(app):
        try:
            yield
        finally:
            ctx.moves.close()  # the moves in progress end with the server

    app = FastAPI(
        title="dnb: play and watch Dots-and-Boxes",
        description="Play any registered agent, see its evaluation, the board's chains and the exact solver's "
                    "verdict; replay saved games and tournament folders. Actions use OpenSpiel's "
                    "dots_and_boxes numbering.",
        version="1",
        docs_url=None,  # FastAPI's Swagger UI loads from a CDN; /docs renders the schema locally
        redoc_url=None,
        lifespan=lifespan,
    )
    app.state.store, app.state.config, app.state.pools = ctx.store, config, (ctx.pool, ctx.builds, ctx.moves)
    add_error_handlers(app)
    include_routes(app, ctx)
    app.add_middleware(BodyLimit, limit=config.max_body)
    app.add_middleware(HostCheck, hosts=config.allowed_hosts)
    return app
