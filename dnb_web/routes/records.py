"""Saved games: a live game's record as JSON or text (a download), and the check and replay of a saved
record (every position)."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter
from fastapi.responses import JSONResponse, PlainTextResponse
from pydantic import Field, StrictStr

from dnb_env.core import geometry
from dnb_web.checks import WebError
from dnb_web.context import WebContext
from dnb_web.positions import frames
from dnb_web.records import read_record
from dnb_web.routes.games import Body

__all__ = ["Replay", "router"]


class Replay(Body):
    record: dict | None = Field(None, description="a JSON record (GET /api/games/{id}/record)")
    text: StrictStr | None = Field(None, description="or its text form")


def router(ctx: WebContext) -> APIRouter:
    """The record routes of the app ``ctx``."""
    api = APIRouter()
    store = ctx.store

    @api.get("/api/games/{gid}/record", tags=["records"], summary="The game as JSON or text (download)")
    async def record(gid: str, format: Literal["json", "text"] = "json"):
        game = store.get(gid)
        rec = game.record()
        name = f"dnb-{rec.board}-{gid[:6]}"
        if format == "text":
            return PlainTextResponse(rec.text(),
                                     headers={"Content-Disposition": f'attachment; filename="{name}.txt"'})
        return JSONResponse(rec.to_json(), headers={"Content-Disposition": f'attachment; filename="{name}.json"'})

    @api.post("/api/records/replay", tags=["records"], summary="Check a saved game and return every position")
    async def replay(body: Replay):
        if (body.record is None) == (body.text is None):
            raise WebError(400, "bad_record", "send either 'record' (JSON) or 'text'")
        rows, cols, actions, players = read_record(body.record if body.record is not None else body.text)
        return {"board": geometry(rows, cols).name, "players": players, "actions": actions,
                "frames": frames(rows, cols, actions)}

    return api
