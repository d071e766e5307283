"""One writer per run folder (dnb_env.io.RunLock) and the sweep of a killed run's temporary files, for
every command that writes a run folder: teach, fit, train, solve (the tournament's: tests/test_arena.py)."""

import dataclasses
import json
import os
import re
import socket
import subprocess
import sys
import time

import pytest

from dnb_env.io import HOLDER, LOCK, FolderBusy, RunLock, folder_locked, is_temporary, sweep_temporaries
from registry.cli import main as cli


def _snapshot(folder) -> dict:
    """Every file under ``folder`` with its bytes and modification time."""
    out = {}
    for root, _, files in os.walk(folder):
        for name in files:
            path = os.path.join(root, name)
            with open(path, "rb") as f:
                out[os.path.relpath(path, folder)] = (f.read(), os.stat(path).st_mtime_ns)
    return out


def test_a_second_writer_is_refused_naming_the_holder(tmp_path):
    out = str(tmp_path / "run")
    with RunLock(out, what="teach"):
        assert os.path.isfile(os.path.join(out, LOCK))
        holder = json.loads((tmp_path / "run" / HOLDER).read_text())
        assert holder["pid"] == os.getpid() and holder["what"] == "teach"
        if folder_locked(out) is not None:
            assert folder_locked(out) is True
        with pytest.raises(FolderBusy) as err:
            RunLock(out, what="fit")
        message = str(err.value)
        assert message.startswith(f"another teach is writing to {out} (pid {os.getpid()} on {socket.gethostname()}, since ")
        assert re.search(r"since \d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d{4}\)", message), message
        assert isinstance(err.value, ValueError)  # dnb prints it as `dnb: error: ...` and exits with 2
    with RunLock(out, what="fit"):  # released: the next writer takes it
        assert json.loads((tmp_path / "run" / HOLDER).read_text())["what"] == "fit"
    if folder_locked(out) is not None:
        assert folder_locked(out) is False


def test_sweep_removes_temporaries_and_partial_iterations_only(tmp_path):
    names = ["table.bin.tmp999", "checkpoint.pt.tmp12", "training.png.tmp7.png", "x.tmp", "iterations/000003.partial/checkpoint.pt",
             "iterations/000002/replay.npz.tmp5"]
    kept = ["table.bin", "state.json", "training.png", "notes.tmpl", "temporary.txt", LOCK, HOLDER,
            "iterations/000002/checkpoint.pt"]
    for name in names + kept:
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("x")
    removed = sweep_temporaries(str(tmp_path), "iterations")
    assert sorted(os.path.relpath(p, tmp_path) for p in removed) == sorted(
        [n for n in names if "partial" not in n] + ["iterations/000003.partial"])
    for name in names:
        assert not (tmp_path / name).exists(), name
    for name in kept:
        assert (tmp_path / name).exists(), name
    assert is_temporary("shard-000001.npz.tmp4242") and not is_temporary("shard-000001.npz")


# ---------------------------------------------------------------------------------------------- teach
TEACH = ["teach", "--board", "3x3", "--undrawn", "14-22", "--positions", "400", "--players", "alphabeta:depth=3,greedy",
         "--shard-size", "20", "--no-progress"]


def test_two_teach_processes_on_one_folder_leave_one_dataset_and_one_refusal(tmp_path):
    """Two real `dnb teach` runs on one --out: the second is refused (exit code 2, naming the first's pid)
    and the first's dataset reads back whole (the folder was overwritten by both before the lock)."""
    from agents.training.teacher import TeacherData

    out = str(tmp_path / "d")
    cmd = [sys.executable, "-m", "registry.cli", *TEACH, "--out", out]
    first = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while first.poll() is None and time.monotonic() < deadline:  # the second starts once the first writes
        try:
            if json.loads((tmp_path / "d" / HOLDER).read_text())["pid"] == first.pid:
                break
        except (OSError, ValueError, KeyError):
            pass
        time.sleep(0.02)
    second = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out2, err2 = second.communicate(timeout=120)
    out1, err1 = first.communicate(timeout=120)
    assert first.returncode == 0, err1
    assert second.returncode == 2, (out2, err2)
    assert err2.startswith(f"dnb: error: another teach is writing to {out} (pid {first.pid} on "), err2
    data = TeacherData.load(out)  # every shard matches its checksum
    assert len(data) == 400


def test_teach_sweeps_a_killed_runs_temporary_files(tmp_path):
    from agents.training.teacher import TeachConfig, TeacherData, generate
    from registry.specs import agent_from_spec

    cfg = TeachConfig(board="2x2", undrawn_min=3, undrawn_max=6, positions=8, shard_size=4,
                      players=("greedy", "random"))
    out = tmp_path / "d"
    generate(cfg, str(out), agent_from_spec, progress=False, max_jobs=1)
    planted = [out / "shard-000001.npz.tmp999", out / "manifest.json.tmp999"]
    for p in planted:
        p.write_bytes(b"half written")
    generate(cfg, str(out), agent_from_spec, progress=False, echo=lambda *a: None)
    assert not any(p.exists() for p in planted)
    assert len(TeacherData.load(str(out))) == 8


# ---------------------------------------------------------------------------------------------- refusals
def _refused(capsys, folder, argv, holder="teach"):
    """Hold the lock of ``folder`` as a ``holder`` run, call ``dnb argv``: exit code 2, the holder named,
    and nothing in the folder changed."""
    with RunLock(str(folder), what=holder):
        before = _snapshot(folder)
        assert cli(argv) == 2
        err = capsys.readouterr().err
        assert err.startswith(f"dnb: error: another {holder} is writing to {folder} (pid {os.getpid()} on "), err
        assert _snapshot(folder) == before


def test_fit_is_refused_while_another_run_holds_the_folder(tmp_path, capsys):
    pytest.importorskip("torch")
    run = tmp_path / "fit"
    run.mkdir()
    (run / "config.json").write_text("{}")
    # the data is not even read: the refusal comes first
    _refused(capsys, run, ["fit", "--board", "2x3", "--data", str(tmp_path / "nowhere"), "--steps", "1",
                           "--out", str(run), "--resume", "--no-progress"], holder="fit")


def test_train_is_refused_while_another_run_holds_the_folder(tmp_path, capsys):
    pytest.importorskip("torch")
    run = tmp_path / "train"
    args = ["train", "--board", "1x1", "--iterations", "1", "--games", "1", "--simulations", "2", "--no-progress"]
    run.mkdir()
    _refused(capsys, run, [*args, "--out", str(run)], holder="train")
    (run / "config.json").write_text("{}")  # a run to resume: refused the same
    _refused(capsys, run, [*args, "--out", str(run), "--resume"], holder="train")


def test_solve_is_refused_while_another_run_holds_the_folder(tmp_path, capsys):
    from dnb_env.native import available

    if not available():
        pytest.skip("dnb solve needs the C++ extension")
    run = tmp_path / "solve"
    run.mkdir()
    (run / "table.bin.tmp999").write_bytes(b"left by a run that still holds the folder")
    _refused(capsys, run, ["solve", "2x2", "--out", str(run), "--no-progress"], holder="solve")


# ---------------------------------------------------------------------------------------------- sweeps
def test_solve_sweeps_a_killed_save(tmp_path):
    from dnb_env.native import available
    from dnb_env.solve_run import solve_board

    if not available():
        pytest.skip("dnb solve needs the C++ extension")
    out = tmp_path / "s"
    out.mkdir()
    (out / "table.bin.tmp999").write_bytes(b"\0" * 4096)  # a save killed half-way
    st = solve_board("2x2", str(out), tt_mb=1, progress=False)
    assert st["done"] and not (out / "table.bin.tmp999").exists()
    assert sorted(os.listdir(out)) == [LOCK, HOLDER, "state.json", "table.bin"]


def test_train_sweeps_partial_iterations_and_temporary_files(tmp_path):
    pytest.importorskip("torch")
    from agents.training.config import make_train_config
    from agents.training.loop import train

    cfg = make_train_config("resnet", "cpu", board="2x2", iterations=1, games_per_iteration=2, simulations=4,
                            eval_positions=0, eval_games=0, **{"model.width": 8})
    out = tmp_path / "r"
    train(cfg, str(out), progress=False, echo=lambda *_: None)
    planted = [out / "iterations" / "000002.partial" / "checkpoint.pt", out / "checkpoint.pt.tmp999",
               out / "training.png.tmp999.png", out / "metrics.jsonl.tmp999"]
    for p in planted:
        p.parent.mkdir(exist_ok=True)
        p.write_bytes(b"killed")
    rows = train(dataclasses.replace(cfg, iterations=2), str(out), resume=True, progress=False, echo=lambda *_: None)
    assert [r["iteration"] for r in rows] == [1, 2]
    assert not any(p.exists() for p in planted) and not (out / "iterations" / "000002.partial").exists()
    assert not [n for n in os.listdir(out) if is_temporary(n)]


def test_fit_sweeps_temporary_files(tmp_path):
    pytest.importorskip("torch")
    from agents.training.config import make_train_config
    from agents.training.supervised import FitConfig, fit
    from agents.training.teacher import TeachConfig, generate
    from registry.specs import agent_from_spec

    data = str(tmp_path / "data")
    generate(TeachConfig(board="2x3", undrawn_min=5, undrawn_max=12, margin_max=9, positions=20, shard_size=10,
                         players=("greedy", "random")), data, agent_from_spec, progress=False)
    tc = make_train_config("dotsformer", "cpu", board="2x3", **{"model.dim": 8, "model.heads": 1, "model.layers": 3})
    config = FitConfig(model=tc.model, loss=tc.loss, data=(data,), steps=2, eval_every=2, batch_size=8)
    out = tmp_path / "fit"
    fit(config, str(out), progress=False, echo=lambda *a: None)
    planted = [out / "checkpoint.pt.tmp999", out / "metrics.jsonl.tmp999", out / "config.json.tmp999"]
    for p in planted:
        p.write_bytes(b"killed")
    fit(config, str(out), resume=True, progress=False, echo=lambda *a: None)
    assert not any(p.exists() for p in planted)
