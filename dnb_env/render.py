"""Drawing a state: ``ansi`` text, an ``rgb_array`` picture (numpy only) and a ``human`` pygame window.

The picture shows the dots, every drawn line in the colour of the player who drew it, claimed boxes
filled in their owner's lighter colour, and a header with each player's score (digits drawn from a small
built-in pixel font, so no font files are needed). pygame is imported only for ``human`` mode.
"""

from __future__ import annotations

import numpy as np

from dnb_env._extras import requires_extra
from dnb_env.core import GameState

__all__ = ["render_ansi", "render_rgb", "line_owners", "HumanWindow", "PLAYER_COLOURS"]

PLAYER_COLOURS = (np.array([214, 48, 49], np.uint8), np.array([9, 102, 214], np.uint8))  # red, blue
BOX_COLOURS = (np.array([246, 196, 196], np.uint8), np.array([190, 214, 246], np.uint8))
BACKGROUND = np.array([255, 255, 255], np.uint8)
DOT = np.array([30, 30, 30], np.uint8)
UNDRAWN = np.array([228, 228, 228], np.uint8)

# 3x5 pixel digits, rows top to bottom
_DIGITS = {
    "0": ("111", "101", "101", "101", "111"), "1": ("010", "110", "010", "010", "111"),
    "2": ("111", "001", "111", "100", "111"), "3": ("111", "001", "111", "001", "111"),
    "4": ("101", "101", "111", "001", "001"), "5": ("111", "100", "111", "001", "111"),
    "6": ("111", "100", "111", "101", "111"), "7": ("111", "001", "010", "010", "010"),
    "8": ("111", "101", "111", "101", "111"), "9": ("111", "101", "111", "001", "111"),
    ":": ("000", "010", "000", "010", "000"),
}


def render_ansi(state: GameState) -> str:
    return str(state)


def line_owners(state: GameState) -> dict[int, int]:
    """action -> the player who drew it, replayed from the history."""
    owners = {}
    s = GameState.new(state.rows, state.cols)
    for a in state.history:
        owners[a] = s.current_player
        s = s.apply(a)
    return owners


def _text(img: np.ndarray, text: str, y: int, x: int, scale: int, colour: np.ndarray) -> int:
    for ch in text:
        glyph = _DIGITS.get(ch)
        if glyph is not None:
            for gy, row in enumerate(glyph):
                for gx, bit in enumerate(row):
                    if bit == "1":
                        img[y + gy * scale: y + (gy + 1) * scale, x + gx * scale: x + (gx + 1) * scale] = colour
        x += 4 * scale
    return x


def render_rgb(state: GameState, cell: int = 48) -> np.ndarray:
    """``[H, W, 3]`` uint8 picture of the state (``cell`` pixels between dots)."""
    R, C = state.rows, state.cols
    g = state.geometry
    margin = cell // 2
    header = max(cell // 2, 24)
    thick = max(cell // 10, 3)
    H, W = header + 2 * margin + R * cell, 2 * margin + C * cell
    img = np.empty((H, W, 3), np.uint8)
    img[:] = BACKGROUND
    oy, ox = header + margin, margin
    for b in range(g.num_boxes):
        owner = state.box_owner(b)
        if owner is not None:
            r, c = divmod(b, C)
            img[oy + r * cell: oy + (r + 1) * cell, ox + c * cell: ox + (c + 1) * cell] = BOX_COLOURS[owner]
    drawn_by = line_owners(state)
    for a in range(g.num_actions):
        colour = PLAYER_COLOURS[drawn_by[a]] if a in drawn_by else UNDRAWN
        width = thick if a in drawn_by else max(thick // 3, 1)
        if a < g.num_h:
            r, c = divmod(a, C)
            y, x0 = oy + r * cell, ox + c * cell
            img[y - width // 2: y + (width + 1) // 2, x0: x0 + cell] = colour
        else:
            r, c = divmod(a - g.num_h, C + 1)
            y0, x = oy + r * cell, ox + c * cell
            img[y0: y0 + cell, x - width // 2: x + (width + 1) // 2] = colour
    d = thick + 1
    for r in range(R + 1):
        for c in range(C + 1):
            y, x = oy + r * cell, ox + c * cell
            img[y - d: y + d, x - d: x + d] = DOT
    # header: "s0" in red, "s1" in blue, and a marker under the player to move
    scale = max(header // 8, 2)
    s0, s1 = state.scores
    x = _text(img, str(s0), 3, margin, scale, PLAYER_COLOURS[0])
    x = _text(img, ":", 3, x, scale, DOT)
    _text(img, str(s1), 3, x, scale, PLAYER_COLOURS[1])
    if not state.is_terminal():
        mover = PLAYER_COLOURS[state.current_player]
        img[3: 3 + 5 * scale, W - margin - 5 * scale: W - margin] = mover
    return img


class HumanWindow:
    """A pygame window that shows :func:`render_rgb` pictures; created lazily on the first ``show``."""

    def __init__(self, title: str = "Dots and Boxes", fps: int = 4):
        self.title, self.fps = title, fps
        self._screen = None
        self._clock = None

    def show(self, state: GameState) -> None:
        with requires_extra("render_mode='human'"):
            import pygame
        img = render_rgb(state)
        if self._screen is None:
            pygame.init()
            pygame.display.set_caption(self.title)
            self._screen = pygame.display.set_mode((img.shape[1], img.shape[0]))
            self._clock = pygame.time.Clock()
        surface = pygame.surfarray.make_surface(np.transpose(img, (1, 0, 2)))
        self._screen.blit(surface, (0, 0))
        pygame.event.pump()
        pygame.display.flip()
        self._clock.tick(self.fps)

    def close(self) -> None:
        if self._screen is not None:
            import pygame

            pygame.display.quit()
            self._screen = None
