"""Play and watch Dots-and-Boxes in the browser: ``dnb serve`` (extra ``[web]``: FastAPI + uvicorn).

=====================  ==================================================================================
page                   ``/``: board as SVG (click, tap or keyboard), scores, "again!" after a box, undo,
                       new game, resign; insight view; records; tournament folders. Static files are
                       package data (``dnb_web/static``); the page makes no request to another host.
API                    JSON under ``/api/`` (table in the README; OpenAPI at ``/openapi.json``, ``/docs``)
games                  :mod:`dnb_web.games`: ``Game`` (seat, opponent, position, undo, resign, record) and
                       ``GameStore`` (random ids from ``secrets.token_urlsafe``, a cap on live games);
                       :mod:`dnb_web.records` (the saved game, JSON or text), :mod:`dnb_web.positions`
                       (positions as JSON), :mod:`dnb_web.checks` and :mod:`dnb_web.paths` (what a request
                       may ask for)
insight                :mod:`dnb_web.insight`: move classes and chains (``dnb_env.analysis``), the exact
                       solver under a node budget, the agent's own view (its ``analyse``)
HTTP layer             :mod:`dnb_web.app`: ``create_app(WebConfig(...))``; the routes, one module per area, in
                       :mod:`dnb_web.routes`; bad input gets a 4xx JSON error and changes nothing
server                 :mod:`dnb_web.server`: each agent move in a process of its own, killed at the time
                       limit; analyses on a few daemon threads (503 at once when abandoned ones fill
                       them); body-size and Host-header middleware
options                :mod:`dnb_web.options`: the specs a request may name, time limits and search sizes
                       forced on agents, the specs offered for a board
tournaments            :mod:`dnb_web.tournaments`: tournament folders, read only, through the arena's
                       results reader (:func:`agents.arena.results.read_games`)
=====================  ==================================================================================

    dnb serve                          # http://127.0.0.1:8000
    dnb serve --port 8080 --results results --checkpoints runs

Version history: 0.1 (issue #17) first version. 0.2: bounded thinking time (daemon worker threads, forced
time limits, search caps per board), Host-header check, symlink-safe tournament files, idle sweep and LRU
eviction of games, insight for UCT / OpenSpiel MCTS / the solver, page race and retry fixes. 0.3: agent
moves in processes killed at their time limit (a move past it no longer keeps a slot), every search budget
capped (solver zones too; node budgets of 0 and non-finite options refused), 400 for unusable paths.
"""

from dnb_env._extras import requires_extra

with requires_extra("dnb_web"):
    import fastapi  # noqa: F401  (the web extra; uvicorn is imported by dnb serve itself)

from dnb_web.app import WebConfig, create_app

__all__ = ["WebConfig", "create_app"]
