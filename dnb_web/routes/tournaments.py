"""The tournament folders under the allowed results roots, read only (:mod:`dnb_web.tournaments`): the list,
a folder's standings, plots and games, and one game move by move."""

from __future__ import annotations

from fastapi import APIRouter, Query
from fastapi.responses import FileResponse

from dnb_web import tournaments as folders
from dnb_web.checks import WebError
from dnb_web.context import WebContext
from dnb_web.paths import allowed_path

__all__ = ["router"]


def router(ctx: WebContext) -> APIRouter:
    """The tournament routes of the app ``ctx``."""
    api = APIRouter()
    config = ctx.config

    # plain defs: FastAPI runs them in its thread pool (file reading and parsing stay off the event loop)
    def _folder(folder: str, root: int | None) -> str:
        roots = list(config.results_roots)
        path = folders.find_folder(folder, roots, root)  # a root given: the folder must lie inside that one
        return allowed_path(path, roots if root is None else [roots[root]], "folder")

    FOLDER = Query(..., description="the folder's name relative to its results root (as GET /api/tournaments "
                                    "lists it), or its path")
    ROOT = Query(None, description="the index of its results root in 'roots' (default: the first root holding it)")

    played = folders.PlayedCounts()  # each results file read again only when it changed

    @api.get("/api/tournaments", tags=["tournaments"], summary="Tournament folders under the allowed roots")
    def tournaments():
        return {"roots": list(config.results_roots), "folders": folders.list_folders(config.results_roots, played)}

    @api.get("/api/tournaments/view", tags=["tournaments"], summary="Standings, plots and games of a folder")
    def tournament(folder: str = FOLDER, root: int | None = ROOT):
        return folders.folder_view(_folder(folder, root), folder)

    @api.get("/api/tournaments/plot", tags=["tournaments"], summary="A plot (PNG) of a tournament folder")
    def tournament_plot(folder: str = FOLDER, name: str = Query(...), root: int | None = ROOT):
        real = folders.plot_file(_folder(folder, root), name)
        if real is None:
            raise WebError(404, "not_found", f"no plot {name!r} in {folder!r}")
        return FileResponse(real, media_type="image/png")

    @api.get("/api/tournaments/game", tags=["tournaments"], summary="One game of a tournament, move by move")
    def tournament_game(folder: str = FOLDER, id: str = Query(...), root: int | None = ROOT):
        return folders.folder_game(_folder(folder, root), folder, id)

    return api
