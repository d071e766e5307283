"""The routes of the web app, one module per area, each a function of the app's :class:`~dnb_web.context.WebContext`
that returns an ``APIRouter``: :mod:`~dnb_web.routes.pages` (the page, its static files, the API reference),
:mod:`~dnb_web.routes.agents`, :mod:`~dnb_web.routes.games`, :mod:`~dnb_web.routes.analysis` (the insight view),
:mod:`~dnb_web.routes.records` (saved games and replays) and :mod:`~dnb_web.routes.tournaments`;
:mod:`~dnb_web.routes.errors` turns every error into its JSON answer.
"""

from __future__ import annotations

from fastapi import FastAPI
from fastapi.staticfiles import StaticFiles

from dnb_web.context import WebContext
from dnb_web.routes import agents, analysis, games, pages, records, tournaments

__all__ = ["include_routes"]


def include_routes(app: FastAPI, ctx: WebContext) -> None:
    """Every route of the app, in the order the API reference lists them, and the static files."""
    app.include_router(pages.router())
    app.mount("/static", StaticFiles(directory=pages.STATIC_DIR), name="static")
    for area in (agents, games, analysis, records, tournaments):
        app.include_router(area.router(ctx))
