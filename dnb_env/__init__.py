"""Dots-and-Boxes for game-AI research: exact rules, chain/loop analysis and the papers' observations.

Importing the package registers the environments: Gymnasium ``DotsAndBoxes-{R}x{C}`` and
``DotsAndBoxes-v0``, PettingZoo ``dots_and_boxes_v0`` and the pyspiel game ``python_dots_and_boxes``
(each only where that library is installed).
"""

from dnb_env.core import GameState, IllegalActionError, MutableState, geometry, parse_board
from dnb_env.registration import register_all

__all__ = ["GameState", "IllegalActionError", "MutableState", "geometry", "parse_board", "REGISTERED"]
__version__ = "0.5.0.dev0"

REGISTERED = register_all()
