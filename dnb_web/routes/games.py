"""The routes of a live game: create it against an agent, read it, the human's move, the agent's move (in a
process of its own, killed at the game's time limit), undo, resign and delete."""

from __future__ import annotations

import asyncio
from typing import Annotated

from fastapi import APIRouter
from pydantic import BaseModel, ConfigDict, Field, StrictFloat, StrictInt, StrictStr

from dnb_env.core import geometry
from dnb_web.checks import WebError, check_board
from dnb_web.context import WebContext
from dnb_web.games import Game
from dnb_web.options import limit_options, move_clock, parse_spec
from dnb_web.server import wait_for

__all__ = ["Body", "NewGame", "Move", "router"]


class Body(BaseModel):
    model_config = ConfigDict(extra="forbid")


class NewGame(Body):
    board: StrictStr = Field("3x3", description="'RxC' boxes, 1x1 .. 12x12")
    opponent: StrictStr = Field("random", description="agent spec, e.g. 'alphabeta:depth=4' (GET /api/agents)")
    human: StrictInt = Field(0, ge=0, le=1, description="the human's seat: 0 moves first")
    seed: Annotated[StrictInt, Field(ge=0, le=2**63 - 1)] | None = Field(
        None, description="seed of the agent, >= 0 (None: fresh randomness)")
    time_limit: StrictFloat | StrictInt | None = Field(None, description="seconds per agent move")


class Move(Body):
    action: StrictInt = Field(description="OpenSpiel action number")
    ply: StrictInt | None = Field(None, description="moves played before this one; a mismatch is refused (409)")


def router(ctx: WebContext) -> APIRouter:
    """The game routes of the app ``ctx``."""
    api = APIRouter()
    _add_game_routes(api, ctx)
    _add_play_routes(api, ctx)
    return api


def _game_json(game: Game) -> dict:
    """What a game route answers: the game's state (:meth:`Game.state_json`)."""
    return game.state_json()


def _add_game_routes(api: APIRouter, ctx: WebContext) -> None:
    """Add the routes that create a game against an agent, read it and delete it."""
    from registry.specs import check_spec

    config, store, builds, build = ctx.config, ctx.store, ctx.builds, ctx.build
    checkpoint_roots = ctx.checkpoint_roots

    @api.post("/api/games", status_code=201, tags=["games"], summary="Create a game against an agent")
    async def new_game(body: NewGame):
        rows, cols = check_board(body.board)
        name, kwargs = parse_spec(body.opponent, checkpoint_roots, config.allowed_engines)
        limit = config.time_limit_s if body.time_limit is None else float(body.time_limit)
        if not 0 < limit <= config.max_think_s:
            raise WebError(400, "bad_time_limit", f"time_limit must be in (0, {config.max_think_s}] seconds, got {limit}")
        factory = check_spec(name, kwargs)
        kwargs = limit_options(factory, kwargs, rows, cols, limit)
        store.check_room()  # 503 before an agent is built for nothing
        try:
            agent = await wait_for(builds.start(build, name, kwargs, rows, cols, body.seed), config.max_think_s)
        except asyncio.TimeoutError:
            raise WebError(503, "agent_unavailable", f"building {body.opponent!r} took too long") from None
        except Exception as exc:  # noqa: BLE001  (the registry could not build it for this board)
            raise WebError(400, "agent_unavailable", f"{body.opponent!r} cannot play {geometry(rows, cols).name}: {exc}") from None
        game = Game(rows=rows, cols=cols, opponent=body.opponent, human=body.human, agent=agent, seed=body.seed,
                    time_limit=limit, spec=(name, kwargs), move_time=move_clock(factory, limit))
        store.add(game)
        return _game_json(game)

    @api.get("/api/games/{gid}", tags=["games"], summary="The game's position, turn and scores")
    async def get_game(gid: str):
        return _game_json(store.get(gid))

    @api.delete("/api/games/{gid}", tags=["games"], summary="End a game and free its slot")
    async def delete_game(gid: str):
        store.remove(gid)
        return {"deleted": gid}


def _add_play_routes(api: APIRouter, ctx: WebContext) -> None:
    """Add the routes of play: the human's move, the agent's move, undo and resign."""
    store = ctx.store

    @api.post("/api/games/{gid}/move", tags=["games"], summary="The human draws an edge")
    async def human_move(gid: str, body: Move):
        game = store.get(gid)
        game.play(body.action, by="human", ply=body.ply)
        return _game_json(game)

    @api.post("/api/games/{gid}/agent-move", tags=["games"],
              summary="The agent plays one move (call again while it keeps the turn)")
    async def agent_move(gid: str):
        game = store.get(gid)
        game._check_open()
        if game.busy:
            raise WebError(409, "agent_thinking", "the agent is still thinking about this position (another "
                                                  "request asked for its move); try again in a moment")
        if game.turn != "agent":
            raise WebError(409, "not_your_turn", "it is the human's turn")
        generation = game.generation
        action = await _agent_action(game, ctx)
        if game.generation != generation:  # resigned meanwhile
            return _game_json(game)
        try:
            game.play(action, by="agent")
        except WebError as exc:
            game.error = f"the agent chose an illegal move: {exc.message}"
            raise WebError(500, "agent_failed", game.error) from None
        return _game_json(game)

    @api.post("/api/games/{gid}/undo", tags=["games"], summary="Take back to before the human's last move")
    async def undo(gid: str):
        game = store.get(gid)
        game.undo()
        return _game_json(game)

    @api.post("/api/games/{gid}/resign", tags=["games"], summary="The human resigns")
    async def resign(gid: str):
        game = store.get(gid)
        game.resign()
        return _game_json(game)


async def _agent_action(game: Game, ctx: WebContext) -> int:
    """The agent's move in ``game``, thought in a process of the app's move pool (the game busy
    meanwhile); WebError 503 when no slot came free in time, 504 when the agent overran the game's time
    limit, 500 when it crashed (the game's ``error`` says which)."""
    config, moves = ctx.config, ctx.moves
    fut = moves.start(game.spec, game.rows, game.cols, game.seed, game.state.history, game.time_limit,
                      move_time=game.move_time)
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
    return fut.result()
