"""Uniformly random legal moves (seeded): the registry's ``random``, the default opponent of the Gymnasium envs,
which live beside it in :mod:`dnb_env.opponents`."""

from __future__ import annotations

from dnb_env.opponents import RandomAgent

__all__ = ["RandomAgent"]
