"""The replay buffer: the samples of the last ``buffer_iterations`` iterations, drawn with Dotsformer's
experience decay and mapped by a random board symmetry.

A batch is drawn with probability proportional to ``gamma_decay^(iteration - sample iteration)`` (the
weight ``w_b`` of Dotsformer eq. A6 applied by sampling instead of scaling the loss: the same expected
gradient, without tiny weights), then encoded with the model's encoder.

The training loop keeps one :class:`Replay` per board in a :class:`BoardReplays` (a single-board run: the
replay of its one board; multi-size training, ``boards`` of the run, a family that plays every board, one
for each): batches group samples of one size (no padding), and a gradient step draws its board in
proportion to the boards' decay-weighted sample counts (:meth:`BoardReplays.board_weights`). A multi-size
run's file is one ``.npz`` holding ``boards`` and every board's columns as ``"RxC.column"`` (a single-board
run saves its :class:`Replay`); :func:`load_replay` reads either kind.
"""

from __future__ import annotations

import io
import zipfile
import zlib

import numpy as np

from agents.training.samples import Samples
from dnb_env.core import geometry
from dnb_env.io import atomic_write
from dnb_env.observations import encode_batch, transform_planes
from dnb_env.symmetry import symmetries, transform_policy

__all__ = ["Replay", "BoardReplays", "ReplayError", "future_targets", "has_future_head", "load_replay"]


class ReplayError(ValueError):
    pass


def has_future_head(model_config) -> str | None:
    """The target of a model config's future head (any family): ``"safe_phase"`` or ``"nimstring"``
    (``model.future_target``), None without the head."""
    if not getattr(model_config, "future_head", False):
        return None
    return getattr(model_config, "future_target", "safe_phase")


def future_targets(states, kind: str = "safe_phase") -> tuple[np.ndarray, np.ndarray]:
    """float32 ``(values [n, A], mask [n, A])`` and 1 where known: ``kind`` ``"safe_phase"``, each move's
    safe-phase value over the number of boxes (:func:`dnb_env.features.safe_phase_values`);
    ``"nimstring"``, each move's Nimstring result, 1 if it wins and 0 if it loses
    (:func:`dnb_env.features.nimstring_move_wins`)."""
    from agents.models.common import FUTURE_TARGETS
    from dnb_env.features import nimstring_move_wins, safe_phase_values

    if kind not in FUTURE_TARGETS:
        raise ValueError(f"the future head's target is one of {FUTURE_TARGETS}, not {kind!r}")
    g = states[0].geometry
    values = np.zeros((len(states), g.num_actions), np.float32)
    mask = np.zeros_like(values)
    for i, state in enumerate(states):
        if kind == "nimstring":
            v = nimstring_move_wins(state)
        else:
            v = safe_phase_values(state)
            v = None if v is None else v / g.num_boxes
        if v is not None:
            known = ~np.isnan(v)
            values[i, known] = v[known]
            mask[i, known] = 1.0
    return values, mask


class Replay:
    """The samples of a run (one board), drawn by decay weight. The weights of an ``(iteration, gamma)``
    are computed once and kept until the samples change (:meth:`add`, :meth:`keep_recent`, or new
    ``samples`` assigned): every gradient step of an iteration draws with the same ones."""

    def __init__(self, samples: Samples):
        self.samples = samples
        self._decay: tuple | None = None  # (samples, iteration, gamma, weights, their sum): _decayed
        self._planes: tuple | None = None  # (encoder, samples, planes of their first rows): encoded

    @classmethod
    def empty(cls, board: str) -> "Replay":
        return cls(Samples.empty(board))

    def __len__(self) -> int:
        return len(self.samples)

    def add(self, samples: Samples) -> None:
        old, self.samples = self.samples, self.samples.concat(samples)
        if self._planes is not None and self._planes[1] is old:  # the encoded rows stay the first ones
            self._planes = (self._planes[0], self.samples, self._planes[2])

    def keep_recent(self, iteration: int, window: int) -> None:
        old, keep = self.samples, self.samples.iteration > iteration - window
        self.samples = self.samples.take(keep)
        if self._planes is not None and self._planes[1] is old:
            encoder, _, planes = self._planes
            self._planes = (encoder, self.samples, planes[keep[:len(planes)]])

    def encoded(self, encoder: str) -> np.ndarray:
        """``[len(self), C, H, W]``: every sample encoded by ``encoder``. A sample is encoded once and kept
        while the replay keeps it (:meth:`add` and :meth:`keep_recent` carry the rows already encoded), so
        the gradient steps only gather rows (1.02-1.17x a step on 5x5 under ``chainloop6_safe``, whose
        safe-phase searches :mod:`dnb_env.features` already caches: ``benchmarks/replay_encoding.py``);
        the price is the planes' memory, about 4.4 KB a 5x5 position under that encoder."""
        cached = self._planes
        planes = cached[2] if cached is not None and cached[0] == encoder and cached[1] is self.samples else None
        done = 0 if planes is None else len(planes)
        if planes is None or done < len(self):
            new = encode_batch(encoder, self.samples.states(np.arange(done, len(self))))
            planes = new if planes is None else np.concatenate([planes, new])
            self._planes = (encoder, self.samples, planes)
        return planes

    def _decayed(self, iteration: int, gamma: float) -> tuple[np.ndarray, float]:
        """``(weights [n], their sum)``: ``gamma^(iteration - sample iteration)`` of every sample over the
        sum; cached for the current samples (the key holds the samples object itself, which a change
        replaces)."""
        cached = self._decay
        if cached is None or cached[0] is not self.samples or cached[1] != iteration or cached[2] != gamma:
            w = gamma ** (iteration - self.samples.iteration).astype(np.float64)
            total = float(w.sum())
            w /= total
            w.flags.writeable = False
            self._decay = cached = (self.samples, iteration, gamma, w, total)
        return cached[3], cached[4]

    def weights(self, iteration: int, gamma: float) -> np.ndarray:
        """``[n]``: each sample's chance to be drawn, ``gamma^(iteration - sample iteration)`` normalised
        (read-only: cached until the samples change)."""
        return self._decayed(iteration, gamma)[0]

    def decayed_count(self, iteration: int, gamma: float) -> float:
        """The sum of ``gamma^(iteration - sample iteration)`` over the samples (cached like :meth:`weights`)."""
        return self._decayed(iteration, gamma)[1]

    def batch(self, idx: np.ndarray, encoder: str, q_mix: float, sym=None, future: bool | str | None = False,
              planes: np.ndarray | None = None,
              future_rows: tuple[np.ndarray, np.ndarray] | None = None) -> dict[str, np.ndarray]:
        """Rows ``idx`` as arrays: ``planes [n, C, H, W]``, ``pi [n, A]``, ``value [n]`` (the value target
        ``(1 - q_mix) z + q_mix q``; internal nodes: their Q), ``initiative [n]``, ``move_class [n, A]``;
        with ``future`` (the future head's target, :func:`has_future_head`; True: ``"safe_phase"``) also
        ``safe_phase [n, A]`` (:func:`future_targets` of that kind, 0 where unknown) and ``safe_phase_mask
        [n, A]`` (1 where known), the targets of a model's future head; mapped by the symmetry ``sym`` if given. ``planes``: every row of
        this replay already encoded by ``encoder`` (``[len(self), C, H, W]``, e.g. :func:`encode_all`), so
        that a batch only gathers them; ``future_rows``: the future head's targets of every row likewise
        (:func:`future_targets` of all the replay's states)."""
        s = self.samples
        for name, rows in (("planes", planes), ("future_rows", None if future_rows is None else future_rows[0])):
            if rows is not None and len(rows) != len(self):
                raise ValueError(f"{name} hold {len(rows)} rows, the replay {len(self)}")
        if planes is not None:
            states = s.states(idx) if future and future_rows is None else None
            planes = planes[idx]
        else:
            states = s.states(idx)
            planes = encode_batch(encoder, states)
        pi, classes = s.pi[idx], s.move_class[idx]
        extra = {}
        if future and future_rows is not None:
            extra["safe_phase"], extra["safe_phase_mask"] = future_rows[0][idx], future_rows[1][idx]
        elif future:
            extra["safe_phase"], extra["safe_phase_mask"] = future_targets(states, "safe_phase" if future is True else future)
        if sym is not None:
            rows, cols = geometry(s.board).size
            planes = transform_planes(sym, encoder, planes)
            pi = transform_policy(sym, pi, rows, cols)
            classes = transform_policy(sym, classes, rows, cols)
            extra = {k: transform_policy(sym, v, rows, cols) for k, v in extra.items()}
        value = np.where(s.node[idx], s.q[idx], (1 - q_mix) * s.z[idx] + q_mix * s.q[idx]).astype(np.float32)
        return {"planes": np.ascontiguousarray(planes), "pi": np.ascontiguousarray(pi), "value": value,
                "initiative": s.initiative[idx].astype(np.int64), "move_class": np.ascontiguousarray(classes, dtype=np.int64),
                **{k: np.ascontiguousarray(v) for k, v in extra.items()}}

    def draw(self, rng: np.random.Generator, size: int, iteration: int, gamma: float, encoder: str, q_mix: float,
             augment: bool, future: bool | str | None = False) -> dict[str, np.ndarray]:
        n = len(self)
        idx = rng.choice(n, size=min(size, n), p=self.weights(iteration, gamma))
        sym = None
        if augment:
            syms = symmetries(*geometry(self.samples.board).size)
            sym = syms[int(rng.integers(len(syms)))]
        return self.batch(idx, encoder, q_mix, sym, future, planes=self.encoded(encoder))

    # ------------------------------------------------------------------ files
    def save(self, path: str) -> None:
        """Write ``path`` (an ``.npz``) atomically (:func:`dnb_env.io.atomic_write`)."""
        buf = io.BytesIO()
        np.savez_compressed(buf, **self.samples.arrays())
        atomic_write(path, buf.getvalue())

    @classmethod
    def load(cls, path: str) -> "Replay":
        """Read a replay file; a missing, truncated or malformed file raises :class:`ReplayError` naming it."""
        replay = load_replay(path)
        if not isinstance(replay, Replay):
            raise ReplayError(f"replay file {path} holds the replays of several boards ({', '.join(replay.boards)})")
        return replay


class BoardReplays:
    """The replays of a multi-size run, one :class:`Replay` per board (``boards`` in the mix's order);
    ``len`` is the total sample count."""

    def __init__(self, replays: dict[str, Replay]):
        self.replays = dict(replays)

    @classmethod
    def empty(cls, boards) -> "BoardReplays":
        return cls({b: Replay.empty(b) for b in boards})

    @property
    def boards(self) -> tuple[str, ...]:
        return tuple(self.replays)

    def __getitem__(self, board: str) -> Replay:
        return self.replays[board]

    def __len__(self) -> int:
        return sum(len(r) for r in self.replays.values())

    def add(self, samples: Samples) -> None:
        """``samples`` (of one board of the mix) join that board's replay."""
        if samples.board not in self.replays:
            raise ValueError(f"samples of {samples.board}, a board outside the replay's {', '.join(self.boards)}")
        self.replays[samples.board].add(samples)

    def keep_recent(self, iteration: int, window: int) -> None:
        for r in self.replays.values():
            r.keep_recent(iteration, window)

    def board_weights(self, iteration: int, gamma: float) -> np.ndarray:
        """``[len(boards)]``: each board's share of the decay-weighted samples (sum of
        ``gamma^(iteration - sample iteration)``), the probability that a gradient step draws from it;
        from each board's cached decay weights, computed again only when that board's samples change."""
        w = np.array([r.decayed_count(iteration, gamma) for r in self.replays.values()])
        return w / w.sum()

    def draw(self, rng: np.random.Generator, size: int, iteration: int, gamma: float, encoder: str, q_mix: float,
             augment: bool, future: bool | str | None = False) -> tuple[str, dict[str, np.ndarray]]:
        """``(board, batch)``: a board drawn by :meth:`board_weights` (one board: no draw, so that ``rng``
        gives the batch what it gives :meth:`Replay.draw`), then ``size`` of its samples as :meth:`Replay.draw`
        (that board's symmetries)."""
        if len(self.replays) == 1:
            board = self.boards[0]
        else:
            board = self.boards[int(rng.choice(len(self.replays), p=self.board_weights(iteration, gamma)))]
        return board, self.replays[board].draw(rng, size, iteration, gamma, encoder, q_mix, augment, future)

    def save(self, path: str) -> None:
        """Write ``path`` (an ``.npz``: ``boards`` and every board's columns as ``"RxC.column"``) atomically."""
        arrays = {"boards": np.array(self.boards)}
        for b, r in self.replays.items():
            arrays.update({f"{b}.{k}": v for k, v in r.samples.arrays().items() if k != "board"})
        buf = io.BytesIO()
        np.savez_compressed(buf, **arrays)
        atomic_write(path, buf.getvalue())


def load_replay(path: str) -> Replay | BoardReplays:
    """A replay file of either kind (:meth:`Replay.save`, :meth:`BoardReplays.save`); a missing, truncated
    or malformed file, or one whose numbers are not finite (NaN or infinity), raises :class:`ReplayError`
    naming it."""
    try:
        with open(path, "rb") as f:
            if f.read(4) != b"PK\x03\x04":
                raise zipfile.BadZipFile("not a zip archive")
        with np.load(path, allow_pickle=False) as data:
            arrays = {k: data[k] for k in data.files}
        for key, column in arrays.items():
            if column.dtype.kind == "f" and not np.isfinite(column).all():
                raise ReplayError(f"replay file {path} is corrupt: its column {key} holds NaN or infinity")
        if "boards" not in arrays:
            return Replay(Samples.from_arrays(arrays, source=path))
        replays = {}
        for b in (str(b) for b in arrays["boards"]):
            cols = {k[len(b) + 1:]: v for k, v in arrays.items() if k.startswith(b + ".")}
            replays[b] = Replay(Samples.from_arrays({"board": np.array(b), **cols}, source=f"{path} ({b})"))
        return BoardReplays(replays)
    except ReplayError:
        raise
    except FileNotFoundError:
        raise ReplayError(f"replay file {path} does not exist") from None
    except (zipfile.BadZipFile, zlib.error, OSError, EOFError) as exc:
        raise ReplayError(f"replay file {path} is corrupt ({type(exc).__name__}: {exc})") from None
    except ValueError as exc:
        raise ReplayError(f"replay file {path} is not a replay of this format: {exc}") from None
