"""Dots-and-Boxes for game-AI research: exact rules, chain/loop analysis and the papers' observations.

Importing the package registers the environments: Gymnasium ``DotsAndBoxes-{R}x{C}-v0`` and
``DotsAndBoxes-v0``, PettingZoo ``dots_and_boxes_v0`` and the pyspiel game ``python_dots_and_boxes``
(each only where that library is installed; :mod:`dnb_env.registration`). The modules of those libraries'
environments (``dnb_env.gym_env``, ``pettingzoo_env``, ``openspiel_game``) raise
:class:`~registry.extras.MissingExtra` naming the extra when imported without it.
"""

from dnb_env.core import DEFAULT_BOARD, GameState, IllegalActionError, MutableState, geometry, parse_board
from dnb_env.registration import register_all

__all__ = ["DEFAULT_BOARD", "GameState", "IllegalActionError", "MutableState", "geometry", "parse_board", "REGISTERED"]
__version__ = "0.5.0"

REGISTERED = register_all()
