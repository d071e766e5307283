"""Dots-and-Boxes for game-AI research: exact rules, chain/loop analysis and the papers' observations."""

from dnb_env.core import GameState, IllegalActionError, MutableState, geometry, parse_board

__all__ = ["GameState", "IllegalActionError", "MutableState", "geometry", "parse_board"]
__version__ = "0.1.0"
