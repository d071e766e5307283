"""The page at ``/`` and the API reference at ``/docs`` (both static files of the package; the static files
themselves are mounted at ``/static`` by :func:`dnb_web.routes.include_routes`)."""

from __future__ import annotations

import os

from fastapi import APIRouter
from fastapi.responses import HTMLResponse

__all__ = ["STATIC_DIR", "router"]

STATIC_DIR = os.path.join(os.path.dirname(os.path.dirname(__file__)), "static")


def router() -> APIRouter:
    """The routes of the two pages."""
    api = APIRouter()

    @api.get("/", response_class=HTMLResponse, include_in_schema=False)
    async def page():
        with open(os.path.join(STATIC_DIR, "index.html"), encoding="utf-8") as f:
            return HTMLResponse(f.read())

    @api.get("/docs", response_class=HTMLResponse, include_in_schema=False)
    async def api_docs():
        """The API reference: /openapi.json rendered by static/api.js (nothing from other hosts)."""
        with open(os.path.join(STATIC_DIR, "api.html"), encoding="utf-8") as f:
            return HTMLResponse(f.read())

    return api
