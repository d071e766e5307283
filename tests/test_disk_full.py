"""A full disk at any write of a command that writes a run folder: one ``dnb: error:`` line naming the file,
the folder and what it holds, exit code 2; the same command run again (with ``--resume`` where the command
needs it) finishes the run as if the disk had never filled.

The disk is filled by a patched writer: :func:`dnb_env.io._write` (every file a run commits goes through it)
writes half of what it is given, then raises OSError ENOSPC at the chosen call, as a real full disk does;
the solver's table (written by the C++ solver) fails the same way through ``ExactSolver.save_table``.
"""

from __future__ import annotations

import errno
import json
import re

import numpy as np
import pytest

from dnb_env import _native
from dnb_env import io as dio
from registry.cli import main as cli

MESSAGE = re.compile(r"dnb: error: no space left on device while writing (?P<file>\S+); the run in (?P<folder>\S+) is "
                     r"intact up to (?P<item>.+), free some space and run the same command (?P<again>again|with --resume)")

COMMANDS = {
    "tournament": ["tournament", "--board", "2x2", "--agents", "random,greedy", "--games", "3", "--workers", "1",
                   "--bootstrap", "0", "--no-progress"],
    "teach": ["teach", "--board", "3x3", "--undrawn", "8-10", "--positions", "40", "--shard-size", "10",
              "--players", "greedy,random", "--no-progress"],
    "train": ["train", "--board", "2x2", "--iterations", "2", "--games", "2", "--simulations", "8", "--set",
              "eval_positions=0", "--set", "eval_games=0", "--set", "model.width=8", "--no-progress"],
    "solve": ["solve", "2x2", "--tt-mb", "1", "--save-every", "0", "--no-progress"],
}


class Writes:
    """Counts the writes of :func:`dnb_env.io._write` and fills the disk at write number ``fail_at``."""

    def __init__(self, fail_at: int | None = None):
        self.n, self.fail_at = 0, fail_at

    def __call__(self, f, data: bytes) -> None:
        self.n += 1
        if self.n == self.fail_at:
            f.write(bytes(data[: len(data) // 2]))  # a part gets written, then the disk is full
            raise OSError(errno.ENOSPC, "No space left on device")
        self.real(f, data)

    real = staticmethod(dio._write)


def _patch(monkeypatch, writes: Writes) -> None:
    monkeypatch.setattr(dio, "_write", writes)
    real_save = _native.ExactSolver.save_table

    def save_table(solver, path):
        writes.n += 1
        if writes.n == writes.fail_at:
            with open(path, "wb") as f:
                f.write(b"\0" * 100)
            raise OSError(errno.ENOSPC, "No space left on device", path)
        real_save(solver, path)

    monkeypatch.setattr(_native.ExactSolver, "save_table", save_table)


def _outcome(command: str, folder) -> object:
    """What a finished run of ``command`` made in ``folder``, without the times and other run-to-run noise."""
    if command == "tournament":
        rows = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]
        return sorted((r["id"], r["moves"], r["scores"]) for r in rows)
    if command == "teach":
        manifest = json.loads((folder / "manifest.json").read_text())
        arrays = []
        for entry in manifest["shards"]:
            with np.load(folder / entry["file"]) as z:
                arrays.append({k: z[k].tolist() for k in sorted(z.files) if k != "seconds"})  # label times vary
        return manifest["positions"], arrays
    if command == "train":
        rows = [json.loads(line) for line in (folder / "metrics.jsonl").read_text().splitlines()]
        return [{k: v for k, v in r.items() if not k.endswith("_s")} for r in rows]
    return {k: v for k, v in json.loads((folder / "state.json").read_text()).items() if k not in ("seconds",)}


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_full_disk_at_any_write_says_so_in_one_line_and_the_run_goes_on_when_run_again(
        command, tmp_path, monkeypatch, capsys):
    args = COMMANDS[command]
    counter = Writes()
    _patch(monkeypatch, counter)
    assert cli(args + ["--out", str(tmp_path / "clean")]) == 0
    capsys.readouterr()
    writes = counter.n
    assert writes >= 3, f"{command} made only {writes} writes"
    clean = _outcome(command, tmp_path / "clean")
    # the first write (the lock's holder), the last (the end of the run) and two between
    for at in sorted({1, 2, writes // 2, writes}):
        out = tmp_path / f"full{at}"
        _patch(monkeypatch, Writes(fail_at=at))
        assert cli(args + ["--out", str(out)]) == 2, f"{command}: write {at} of {writes}"
        err = capsys.readouterr().err
        lines = [line for line in err.splitlines() if line.startswith("dnb: error:")]
        assert len(lines) == 1 and "Traceback" not in err, err
        m = MESSAGE.fullmatch(lines[0])
        assert m, lines[0]
        assert m["folder"] == str(out) and m["file"].startswith(str(out) + "/")
        assert ".tmp" not in m["file"]  # the file the user knows, not its temporary stand-in
        again = ["--resume"] if m["again"] == "with --resume" else []
        _patch(monkeypatch, Writes())
        assert cli(args + ["--out", str(out)] + again) == 0, capsys.readouterr().err
        capsys.readouterr()
        assert _outcome(command, out) == clean, f"{command}: write {at} of {writes}"
        assert not [p for p in out.rglob("*") if dio.is_temporary(p.name)]


def test_the_message_says_what_the_folder_holds(tmp_path, monkeypatch, capsys):
    """A fault late in a tournament: the games written before it are named, and kept."""
    _patch(monkeypatch, Writes())
    assert cli(COMMANDS["tournament"] + ["--out", str(tmp_path / "a")]) == 0
    capsys.readouterr()
    _patch(monkeypatch, Writes(fail_at=5))  # the holder, config.json, two games, then the third game
    assert cli(COMMANDS["tournament"] + ["--games", "3", "--out", str(tmp_path / "b")]) == 2
    m = MESSAGE.fullmatch(capsys.readouterr().err.strip())
    assert m and m["item"] == "2 finished games" and m["file"].endswith("/results.jsonl")
    assert len((tmp_path / "b" / "results.jsonl").read_text().splitlines()) == 2  # the torn third line cut off


def test_export_and_a_full_disk_without_a_run_folder(tmp_path, monkeypatch, capsys):
    _patch(monkeypatch, Writes())
    assert cli(COMMANDS["train"] + ["--iterations", "1", "--out", str(tmp_path / "run")]) == 0
    _patch(monkeypatch, Writes(fail_at=1))
    capsys.readouterr()
    assert cli(["export", str(tmp_path / "run"), str(tmp_path / "w.pt")]) == 2
    err = capsys.readouterr().err.strip()
    assert err == (f"dnb: error: no space left on device while writing {tmp_path / 'w.pt'}; free some space and "
                   "run the same command again")
    assert not (tmp_path / "w.pt").exists() and not list(tmp_path.glob("w.pt.tmp*"))


def test_other_errors_are_not_taken_for_a_full_disk(monkeypatch):
    assert dio.disk_full(OSError(errno.EACCES, "denied")) is None
    inner = OSError(errno.ENOSPC, "full", "x")
    try:
        try:
            raise inner
        except OSError as exc:
            raise RuntimeError("wrapped") from exc
    except RuntimeError as outer:
        assert dio.disk_full(outer) is inner
    assert dio.written_name("run/table.bin.tmp123") == "run/table.bin"
    assert dio.written_name("run/training.png.tmp77.png") == "run/training.png"
    assert dio.written_name("run/metrics.jsonl") == "run/metrics.jsonl"
