"""The run folder, committed one iteration at a time.

::

    run/
      config.json                   the training config (to_dict); rewritten when a resume changes it
      manifest.json                 {"iteration": i, "dir": "iterations/000012"}: the last complete iteration
      iterations/000012/            everything of iteration i: checkpoint.pt (network, optimiser,
                                    curriculum), replay.npz, metrics.jsonl (every row up to i); a multi-size
                                    run (``boards``) keeps every board's replay in its replay.npz
                                    (BoardReplays) and every board's curriculum in the checkpoint
      checkpoint.pt, metrics.jsonl, training.png    copies for people and agents; never read on resume

An iteration is written under ``iterations/NNNNNN.partial``, renamed to ``iterations/NNNNNN`` and only
then named by ``manifest.json`` (replaced atomically). A run killed at any point resumes from the
iteration the manifest names, with exactly its replay and metrics; a partial or unnamed folder is
discarded. The previous iteration's folder is kept as well: to go back to it after damage to the newest,
point ``manifest.json`` at it (``{"iteration": i - 1, "dir": "iterations/<i-1>"}``).

One run writes a folder at a time (:meth:`RunStore.lock`, a :class:`dnb_env.io.RunLock` on ``run/.lock``):
a second is refused at once, naming the first. The run holding it first sweeps what a killed run left:
``iterations/*.partial`` and the temporary files (``*.tmp*``) of the folder and its iterations.
"""

from __future__ import annotations

import json
import math
import os
import shutil

from agents.checkpoint import CheckpointError, load_checkpoint, save_checkpoint
from agents.training import config as config_mod
from agents.training.curriculum import BoardCurricula, Curriculum, curriculum_from_dict
from agents.training.replay import BoardReplays, Replay, ReplayError, load_replay
from dnb_env.io import RunLock, atomic_write, parse_json
from dnb_env.io import read_json as io_read_json
from dnb_env.limits import is_int

__all__ = ["RunStore", "RunError", "Committed", "write_json_atomic", "read_json", "read_metrics", "export_weights"]

KEEP = 2  # committed iteration folders kept (the newest and the one before)


class RunError(ValueError):
    pass


def _fsync_dir(path: str) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_json_atomic(path: str, obj, lines: bool = False) -> None:
    """Write ``obj`` as JSON (``lines``: a list written one JSON document per line) atomically."""
    atomic_write(path, "".join(json.dumps(row) + "\n" for row in obj) if lines else json.dumps(obj, indent=2))


def read_json(path: str):
    """The JSON document in the file ``path``; a file that is not one (:func:`dnb_env.io.parse_json`) raises
    :class:`RunError` naming it. A missing file raises FileNotFoundError."""
    return io_read_json(path, error=RunError)


#: Fields of a metrics row that must be finite numbers where present (what exports and reports add up).
METRIC_NUMBERS = ("games", "positions", "self_play_s", "train_s", "iteration_s")


def _metrics_row_problem(row, key: str) -> str | None:
    """Why ``row`` (a parsed line) is not a metrics row with an integer ``key``, or None."""
    if not isinstance(row, dict) or isinstance(row.get(key), bool) or not isinstance(row.get(key), int):
        return f"not a metrics row (needs an integer {key!r})"
    for name in METRIC_NUMBERS:
        value = row.get(name, 0)
        if (isinstance(value, bool) or not isinstance(value, (int, float))
                or (isinstance(value, float) and not math.isfinite(value))):
            return f"its {name} is {json.dumps(value)[:40]}, not a finite number"
    return None


def read_metrics(path: str, key: str = "iteration") -> list[dict]:
    """The rows of a run's ``metrics.jsonl`` (each a mapping with an integer ``key``, ``"step"`` for a fit
    run). The file is written whole at every commit, so a line that is not such a row is damage, not a
    line a killed writer tore: :class:`RunError` names the file and the line, and nothing is moved."""
    rows = []
    with open(path, "rb") as f:
        lines = f.read().splitlines()
    for n, line in enumerate(lines, 1):
        if not line.strip():
            continue
        row, why = parse_json(line)
        if why is not None:
            raise RunError(f"{path}, line {n}: {why}")
        problem = _metrics_row_problem(row, key)
        if problem is not None:
            raise RunError(f"{path}, line {n}: {problem}")
        rows.append(row)
    return rows


def _check_extra(path: str, extra: dict) -> None:
    """A run's checkpoint records what resuming reads: its integer ``iteration``, its training ``config``
    and its curriculum (readable); else :class:`RunError` naming ``path``."""
    iteration = extra.get("iteration")
    if not isinstance(iteration, int) or isinstance(iteration, bool):
        raise RunError(f"{path} is corrupt: its iteration is {iteration!r}, not an integer")
    if not isinstance(extra.get("config"), dict):
        raise RunError(f"{path} is corrupt: it records no training config (extra.config)")
    try:
        curriculum_from_dict(extra["curriculum"])
    except (KeyError, TypeError, ValueError, AttributeError, OverflowError) as exc:
        raise RunError(f"{path} is corrupt: its curriculum cannot be read ({type(exc).__name__}: {exc})") from None


class Committed:
    """What resuming reads: the iteration, its checkpoint payload, replay and metrics."""

    def __init__(self, iteration: int, payload: dict, replay: Replay | BoardReplays, metrics: list[dict],
                 folder: str = ""):
        self.iteration, self.payload, self.replay, self.metrics = iteration, payload, replay, metrics
        self.folder = folder  # the iteration's folder in the run folder, "iterations/NNNNNN"

    @property
    def curriculum(self) -> Curriculum | BoardCurricula:
        """The run's :class:`Curriculum`, or per board (a multi-size run) its :class:`BoardCurricula`."""
        return curriculum_from_dict(self.payload["extra"]["curriculum"])


class RunStore:
    """``fault(stage)`` is called at every step of a commit (tests pass one that raises, to simulate a
    kill there); stages: checkpoint, replay, metrics, rename, manifest, views, prune."""

    def __init__(self, path: str, fault=None):
        self.path = path
        self.fault = fault or (lambda stage: None)

    def _p(self, *parts) -> str:
        return os.path.join(self.path, *parts)

    # ------------------------------------------------------------------ reading
    def has_run(self) -> bool:
        return os.path.exists(self._p("manifest.json")) or os.path.exists(self._p("config.json"))

    def read_config(self):
        path = self._p("config.json")
        try:
            data = read_json(path)
        except FileNotFoundError:
            raise RunError(f"{self.path} holds no training run (no config.json)") from None
        try:
            return config_mod.from_dict(data)
        except (TypeError, ValueError, KeyError) as exc:
            raise RunError(f"{path} is not a training config of this version: {exc}") from None

    def manifest(self) -> dict | None:
        path = self._p("manifest.json")
        if not os.path.exists(path):
            return None
        recover = f"point it at the last good folder under {self._p('iterations')} to recover"
        with open(path, "rb") as f:
            data, why = parse_json(f.read())
        if why is not None:
            raise RunError(f"{path} is damaged ({why}); {recover}")
        iteration, folder = (data.get("iteration"), data.get("dir")) if isinstance(data, dict) else (None, None)
        if not is_int(iteration) or iteration < 1 or not isinstance(folder, str):
            raise RunError(f"{path} is damaged (it holds {json.dumps(data)[:60]}, not an iteration of at least 1 and "
                           f"its folder); {recover}")
        top = os.path.realpath(self._p("iterations"))
        real = os.path.realpath(self._p(folder))
        if os.path.isabs(folder) or os.path.commonpath([real, top]) != top or real == top:
            raise RunError(f"{path} names the folder {folder!r}, which is not an iteration folder of the run "
                           f"(iterations/NNNNNN under {self.path}); point it at the last good one to recover")
        return {"iteration": iteration, "dir": folder}

    def load(self, board: str | None) -> Committed | None:
        """The last committed iteration, or None when no iteration was committed yet. ``board``: the run's
        (None: a multi-size run's, whose network plays every board). A multi-size run's replay is a
        :class:`BoardReplays` and its curriculum a :class:`BoardCurricula`."""
        m = self.manifest()
        if m is None:
            return None
        folder = self._p(m["dir"])
        try:
            payload = load_checkpoint(os.path.join(folder, "checkpoint.pt"), board=board)
            replay = load_replay(os.path.join(folder, "replay.npz"))
            metrics = read_metrics(os.path.join(folder, "metrics.jsonl"))
            _check_extra(os.path.join(folder, "checkpoint.pt"), payload["extra"])
        except (CheckpointError, ReplayError, RunError, FileNotFoundError) as exc:
            raise RunError(f"iteration {m['iteration']} of {self.path} cannot be read: {exc}. The folder of "
                           f"the iteration before it (if kept) can be named in manifest.json instead") from None
        if payload["extra"]["iteration"] != m["iteration"]:
            raise RunError(f"{folder}/checkpoint.pt is iteration {payload['extra']['iteration']}, "
                           f"{self._p('manifest.json')} says {m['iteration']}")
        last = f"ends at iteration {metrics[-1]['iteration']}" if metrics else "holds no row"
        if not metrics or metrics[-1]["iteration"] != m["iteration"]:
            raise RunError(f"{folder}/metrics.jsonl {last}, {self._p('manifest.json')} says iteration "
                           f"{m['iteration']}")
        return Committed(m["iteration"], payload, replay, metrics, m["dir"])

    # ------------------------------------------------------------------ writing
    def check_writable(self) -> None:
        """RunError unless the run folder is a folder that can be written, or can be made where it is named
        (its nearest existing ancestor is a writable folder). Creates nothing: called before a run starts."""
        probe = os.path.abspath(self.path)
        while not os.path.lexists(probe) and os.path.dirname(probe) != probe:
            probe = os.path.dirname(probe)
        if not os.path.isdir(probe):
            what = "is" if probe == os.path.abspath(self.path) else f"cannot be made: {probe} is"
            raise RunError(f"the run folder {self.path} {what} a file, not a folder; choose another --out")
        if not os.access(probe, os.W_OK | os.X_OK):
            raise RunError(f"cannot write the run folder {self.path}: permission denied ({probe})")

    def lock(self, what: str = "train") -> RunLock:
        """Lock the run folder (made if missing; :meth:`check_writable` first) for this process, or raise
        :class:`dnb_env.io.FolderBusy` naming the run that holds it; then sweep what a killed run left."""
        self.check_writable()
        try:
            return RunLock(self.path, what=what, partial_dirs="iterations")
        except OSError as exc:
            raise RunError(f"cannot write the run folder {self.path}: {exc.strerror or exc}") from None

    def write_config(self, config) -> None:
        try:
            os.makedirs(self.path, exist_ok=True)
            write_json_atomic(self._p("config.json"), config_mod.to_dict(config))
        except OSError as exc:  # what check_writable could not foresee (a read-only file system, ...)
            where = f" ({exc.filename})" if exc.filename and exc.filename != self.path else ""
            raise RunError(f"cannot write the run folder {self.path}: {exc.strerror or exc}{where}") from None

    def commit(self, iteration: int, net, optimizer, config, curriculum: Curriculum | BoardCurricula,
               replay: Replay | BoardReplays, metrics: list[dict], plot=None) -> None:
        name = f"{iteration:06d}"
        final = self._p("iterations", name)
        partial = final + ".partial"
        for stale in (partial, final):  # left by a commit that was killed before its manifest
            shutil.rmtree(stale, ignore_errors=True)
        os.makedirs(partial)
        extra = {"iteration": iteration, "optimizer": optimizer.state_dict(), "config": config_mod.to_dict(config),
                 "curriculum": curriculum.to_dict()}
        self.fault("checkpoint")
        save_checkpoint(os.path.join(partial, "checkpoint.pt"), net, extra=extra)
        self.fault("replay")
        replay.save(os.path.join(partial, "replay.npz"))
        self.fault("metrics")
        write_json_atomic(os.path.join(partial, "metrics.jsonl"), metrics, lines=True)
        _fsync_dir(partial)
        self.fault("rename")
        os.replace(partial, final)
        _fsync_dir(self._p("iterations"))
        self.fault("manifest")
        write_json_atomic(self._p("manifest.json"), {"iteration": iteration, "dir": f"iterations/{name}"})
        self.fault("views")
        self._views(final, metrics, plot)
        self.fault("prune")
        self._prune(name)

    def refresh_views(self, committed: Committed, plot=None) -> None:
        """Write the folder's copies (checkpoint, metrics, plot) again from the committed iteration: a run
        stopped after its manifest and before its copies (a kill, a full disk) gets them back on resume."""
        self._views(self._p(committed.folder), committed.metrics, plot)

    def _views(self, folder: str, metrics: list[dict], plot) -> None:
        tmp = self._p(f"checkpoint.pt.tmp{os.getpid()}")
        try:
            os.link(os.path.join(folder, "checkpoint.pt"), tmp)
        except OSError:
            try:
                shutil.copyfile(os.path.join(folder, "checkpoint.pt"), tmp)
            except OSError as exc:  # a full disk: the copy is named, and its part removed
                if os.path.exists(tmp):
                    os.remove(tmp)
                raise OSError(exc.errno, exc.strerror, self._p("checkpoint.pt")) from exc
        os.replace(tmp, self._p("checkpoint.pt"))
        if os.path.lexists(tmp):  # already the same file (a refresh): rename leaves both names
            os.remove(tmp)
        write_json_atomic(self._p("metrics.jsonl"), metrics, lines=True)
        if plot is not None:
            plot(metrics, self._p("training.png"))

    def _prune(self, newest: str) -> None:
        root = self._p("iterations")
        names = sorted(n for n in os.listdir(root) if n.isdigit() and n <= newest)
        for n in names[:-KEEP]:
            shutil.rmtree(os.path.join(root, n), ignore_errors=True)
        for n in os.listdir(root):  # iterations past the committed one: a run restarted from an older manifest
            if n.endswith(".partial") or (n.isdigit() and n > newest):
                shutil.rmtree(os.path.join(root, n), ignore_errors=True)


def export_weights(run: str, out: str) -> dict:
    """Write the network of the run folder ``run`` as a playing checkpoint ``out`` (atomically; no optimiser
    or replay), recording its training config, iterations, self-play games and seconds; returns the extra."""
    from agents.models import build_model, config_from_dict

    store = RunStore(run)
    if store.manifest() is None:
        raise RunError(f"{run} is not a training run folder (no manifest.json)")
    cfg = store.read_config()
    committed = store.load(None if cfg.boards else cfg.board)
    net = build_model(config_from_dict(committed.payload["model"]))
    net.load_state_dict(committed.payload["state_dict"])
    metrics = committed.metrics
    info = {"config": committed.payload["extra"]["config"], "iterations": committed.iteration,
            "self_play_games": sum(m.get("games", 0) for m in metrics),
            "self_play_positions": sum(m.get("positions", 0) for m in metrics),
            # the wall time of every iteration (older runs logged self-play and training only)
            "training_seconds": round(sum(m.get("iteration_s", m.get("self_play_s", 0) + m.get("train_s", 0))
                                          for m in metrics), 3),
            "curriculum": committed.payload["extra"]["curriculum"]}
    save_checkpoint(out, net, extra=info)
    return info

