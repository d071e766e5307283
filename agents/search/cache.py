"""An evaluation cache in front of a network evaluator: a position evaluated once is not evaluated again.

==================  ==================================================================================
what                call
==================  ==================================================================================
wrap an evaluator   ``CachedEvaluator(evaluator, key="exact" | "canonical", max_entries=...)``: the
                    :class:`agents.search.api.Evaluator` interface (``evaluate(states)``) and the native
                    search's (``evaluate_planes(planes [L, C, H, W], masks [L, A])``, ``encoder``,
                    ``calls``), over any evaluator with ``evaluate_planes``
                    (:class:`agents.models.evaluator.NetworkEvaluator`, Ray's ``RemoteEvaluator``)
statistics          ``hits``, ``misses`` (rows evaluated), ``calls`` (the inner evaluator's calls)
the key of a row    :func:`canonical_rows` (which symmetric image is the canonical one)
==================  ==================================================================================

Keys. A row is its observation planes and its legal mask: the network sees nothing else, so two rows with
equal bytes get equal outputs.

* ``key="exact"``: the row's own bytes (a 128-bit BLAKE2b digest of planes and mask). A hit returns the
  priors and value computed for the same bytes before. The only numerical difference from evaluating every
  row: the network's output for a row depends on the other rows of its batch in the last bits (CPU
  convolutions pick their kernels by batch size; about 1e-6 of a logit on the 5x5 ResNet), and a hit keeps
  the bits of the batch that computed it.
* ``key="canonical"``: the board's symmetry class (8 images on a square board, 4 on a rectangle,
  :mod:`dnb_env.symmetry`). Every row is evaluated in its canonical image (the image with the smallest
  64-bit hash of its planes and mask; ties to the first symmetry of :func:`dnb_env.symmetry.symmetries`),
  and the image's priors are mapped back to the row's actions. The evaluation is then a function of the
  position's class: a position and its mirror image get mirrored priors and the same value, which the
  networks (not equivariant: free convolution kernels and position biases) do not give otherwise. So the
  moves differ from an uncached search wherever the network's asymmetry decides one; self-play benchmarks
  (``benchmarks/selfplay.py``) report by how much.

Within a call, rows with equal keys are evaluated once. The cache holds the outputs of one network's
weights: make a new one when the weights change (self-play makes one per iteration). ``max_entries``
bounds it (an entry of 5x5 takes about 600 bytes; a 32-game iteration of the 5x5 ``cpu`` preset stores about
90,000); the oldest entries go first.
"""

from __future__ import annotations

import functools
import hashlib

import numpy as np

from agents.search.evaluators import move_scope
from dnb_env.observations import encode_batch, transform_planes
from dnb_env.symmetry import action_permutation, symmetries

__all__ = ["CachedEvaluator", "canonical_rows", "CACHE_KEYS"]

CACHE_KEYS = ("off", "exact", "canonical")


def _board(planes: np.ndarray, num_actions: int) -> tuple[int, int]:
    """(rows, cols) of planes ``[L, C, H, W]`` of a grid encoder ((2R+1) x (2C+1)) or a box encoder (R x C)."""
    H, W = planes.shape[-2:]
    for rows, cols in (((H - 1) // 2, (W - 1) // 2), (H, W)):
        if rows >= 1 and cols >= 1 and 2 * rows * cols + rows + cols == num_actions:
            return rows, cols
    raise ValueError(f"planes of shape {planes.shape} do not fit a board with {num_actions} actions")


@functools.lru_cache(maxsize=None)
def _hash_constants(n: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng([n, 20240611])  # fixed: the same canonical image in every process
    return tuple(rng.integers(1, 2**63, n, dtype=np.uint64) | np.uint64(1) for _ in range(2))


def _hash64(rows: np.ndarray) -> np.ndarray:
    """A 64-bit hash of each row of ``rows [..., nbytes]`` (uint8, nbytes a multiple of 4), vectorised."""
    words = rows.view(np.uint32).astype(np.uint64)
    a, b = _hash_constants(words.shape[-1])
    return (words * a).sum(axis=-1) ^ ((words ^ (words >> np.uint64(7))) * b).sum(axis=-1)


def canonical_rows(encoder: str, planes: np.ndarray, masks: np.ndarray):
    """The canonical image of each row: ``(images [L, C, H, W], image_masks [L, A], perms [L, A])`` with
    ``perms[i][a]`` the image's action for row ``i``'s action ``a`` (module docstring)."""
    L, A = masks.shape
    rows, cols = _board(planes, A)
    syms = symmetries(rows, cols)
    perms = np.stack([action_permutation(s, rows, cols) for s in syms])  # [S, A]
    images = np.stack([transform_planes(s, encoder, planes) for s in syms])  # [S, L, C, H, W]
    image_masks = np.empty((len(syms), L, A), dtype=np.uint8)
    for k, perm in enumerate(perms):
        image_masks[k][:, perm] = masks
    flat = np.concatenate([images.reshape(len(syms), L, -1).view(np.uint8),
                           np.zeros((len(syms), L, (-A) % 4), np.uint8), image_masks], axis=-1)
    best = np.argmin(_hash64(np.ascontiguousarray(flat)), axis=0)  # [L], first minimum on ties
    pick = np.arange(L)
    return images[best, pick], image_masks[best, pick].astype(bool), perms[best]


class CachedEvaluator:
    """``evaluator`` with an evaluation cache (module docstring). ``key``: ``"exact"`` or ``"canonical"``."""

    def __init__(self, evaluator, key: str = "exact", max_entries: int = 200_000):
        if key not in ("exact", "canonical"):
            raise ValueError(f"cache key must be 'exact' or 'canonical', not {key!r}")
        if not hasattr(evaluator, "evaluate_planes"):
            raise TypeError("an evaluation cache needs an evaluator with evaluate_planes, got "
                            f"{type(evaluator).__name__}")
        if key == "canonical" and getattr(evaluator, "symmetrize", False):
            raise ValueError("a symmetrized evaluator is invariant already: cache it with key='exact'")
        if max_entries < 1:
            raise ValueError(f"max_entries must be >= 1, got {max_entries}")
        self.inner, self.key, self.max_entries = evaluator, key, int(max_entries)
        self.encoder = evaluator.encoder
        self.table: dict[bytes, tuple[np.ndarray, float]] = {}
        self.hits = self.misses = 0

    @property
    def calls(self) -> int:
        return self.inner.calls

    def clear(self) -> None:
        self.table.clear()

    def move_scope(self):
        """The inner evaluator's block of one move's search (:func:`agents.search.evaluators.move_scope`)."""
        return move_scope(self.inner)

    def evaluate(self, states):
        planes = encode_batch(self.encoder, states)
        masks = np.stack([s.legal_mask() for s in states]).astype(bool)
        return self.evaluate_planes(planes, masks)

    def evaluate_planes(self, planes: np.ndarray, masks: np.ndarray):
        """``(priors [L, A], values [L])`` for ``planes [L, C, H, W]`` and legal ``masks [L, A]``, as the
        inner evaluator gives them (``canonical``: evaluated in the canonical image, mapped back)."""
        planes = np.ascontiguousarray(planes, dtype=np.float32)
        masks = np.asarray(masks).astype(bool)
        L, A = masks.shape
        if L == 0:
            return self.inner.evaluate_planes(planes, masks)
        if self.key == "canonical":
            images, image_masks, perms = canonical_rows(self.encoder, planes, masks)
        else:
            images, image_masks, perms = planes, masks, None
        keys = [hashlib.blake2b(images[i].tobytes() + image_masks[i].tobytes(), digest_size=16).digest()
                for i in range(L)]
        table = self.table
        found = [table.get(k) for k in keys]
        todo: dict[bytes, int] = {}  # key -> the first row of this call with it
        for i, k in enumerate(keys):
            if found[i] is None and k not in todo:
                todo[k] = i
        fresh: dict[bytes, tuple] = {}
        if todo:
            rows = list(todo.values())
            priors, values = self.inner.evaluate_planes(images[rows], image_masks[rows])
            fresh = {k: (priors[j], values[j]) for j, k in enumerate(todo)}
            self.misses += len(rows)
        self.hits += L - len(todo)
        results = [f if f is not None else fresh[k] for f, k in zip(found, keys)]
        out_p = np.stack([p if perms is None else p[perms[i]] for i, (p, _) in enumerate(results)])
        out_v = np.array([v for _, v in results], dtype=np.asarray(results[0][1]).dtype)
        for k, entry in fresh.items():
            if len(table) >= self.max_entries:
                del table[next(iter(table))]
            table[k] = entry
        return out_p, out_v
