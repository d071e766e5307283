"""Engines: programs that speak the project's line protocol (``docs/engine-protocol.md``), in both directions.

=====================  ==================================================================================
:mod:`.protocol`       the version, the lines and their parsing (``go`` limits, ``move``, ``info``)
:mod:`.server`         any Agent as an engine on stdin/stdout (``dnb engine SPEC``)
:mod:`.agent`          :class:`EngineAgent`: a program that speaks the protocol, as an Agent
                       (the registry's ``engine:cmd="...",name=...``)
=====================  ==================================================================================
"""

from agents.engine.agent import EngineAgent
from agents.engine.protocol import VERSION
from agents.engine.server import EngineServer, serve
from dnb_env.clock import TIME_MARGIN

__all__ = ["EngineAgent", "EngineServer", "serve", "VERSION", "TIME_MARGIN"]
