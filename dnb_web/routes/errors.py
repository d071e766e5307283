"""The JSON answer of every error: a :class:`~dnb_web.checks.WebError` with its own status and code, 400
``malformed_json`` or 422 ``bad_request`` for a body that does not fit, the HTTP errors of the framework
(404 ``not_found``, ...) and 500 ``internal_error`` (logged) for anything unexpected."""

from __future__ import annotations

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from starlette.exceptions import HTTPException as StarletteHTTPException

from dnb_web.checks import WebError
from dnb_web.server import error_response

__all__ = ["add_error_handlers"]


def add_error_handlers(app: FastAPI) -> None:
    """The app's exception handlers, one per kind of error."""
    log = logging.getLogger("dnb_web")

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
