"""Damaged training files: every file a training command reads back (a ``dnb train`` run folder, a ``dnb fit``
run folder, exported playing weights), put through the corruption cases of tests/hostile.py, is refused by
the command that reads it with one ``dnb: error:`` line naming the file (never a traceback), and the
folder's other files are left as they were.

The metrics of a run (``metrics.jsonl``) are written whole at every commit, so a bad line in them is damage,
not a line a killed writer tore: it is refused like any other damage (nothing is moved aside).
"""

from __future__ import annotations

import io
import json
import os
import shutil

import numpy as np
import pytest
import torch

from dnb_env.io import HOLDER, LOCK
from hostile import BYTE_CASES, VALUE_CASES, damaged_json, json_document_cases, jsonl_line_cases
from registry import make_agent
from registry.cli import main as cli

ITERATION = "iterations/000001"
TRAIN = ["train", "--board", "2x2", "--iterations", "1", "--games", "2", "--simulations", "8", "--no-progress",
         "--set", "eval_positions=0", "--set", "eval_games=0", "--set", "model.width=8", "--set", "model.blocks=1",
         "--set", "epochs=1", "--set", "batch_size=16"]
FIT = ["fit", "--board", "2x2", "--steps", "2", "--eval-every", "1", "--batch-size", "8", "--device", "cpu",
       "--set", "model.width=8", "--set", "model.blocks=1", "--no-progress"]


# ---------------------------------------------------------------------------------------------- good files
@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The good folders, made once: a one-iteration ``dnb train`` run on 2x2, a two-step ``dnb fit`` run on
    a tiny teacher dataset, and the train run's exported weights (alone in a folder)."""
    from agents.training.teacher import TeachConfig, generate
    from registry.specs import agent_from_spec

    root = tmp_path_factory.mktemp("good")
    assert cli(TRAIN + ["--out", str(root / "train")]) == 0
    data = str(root / "data")
    generate(TeachConfig(board="2x2", undrawn_min=3, undrawn_max=8, margin_max=8, shard_size=12, per_game=3,
                         players=("greedy", "random"), positions=12, seed=3), data, agent_from_spec, progress=False)
    assert cli(FIT + ["--data", data, "--out", str(root / "fit")]) == 0
    os.mkdir(root / "weights")
    assert cli(["export", str(root / "train"), str(root / "weights" / "w.pt")]) == 0
    return {"train": str(root / "train"), "fit": str(root / "fit"), "weights": str(root / "weights"), "data": data}


def _commands(runs: dict) -> dict:
    """Each way of reading a folder: name -> (kind of folder, the command line for a copy at RUN)."""
    return {
        "train --resume": ("train", lambda run: TRAIN + ["--out", run, "--resume"]),
        "report": ("train", lambda run: ["report", run]),
        "report --plot": ("train", lambda run: ["report", run, "--plot", run + "-curves.png"]),
        "export train": ("train", lambda run: ["export", run, run + "-exported.pt"]),
        "fit --resume": ("fit", lambda run: FIT + ["--data", runs["data"], "--out", run, "--resume"]),
        "export fit": ("fit", lambda run: ["export", run, run + "-exported.pt"]),
        "tournament": ("weights", lambda run: ["tournament", "--board", "2x2", "--agents",
                                               f"alphazero:checkpoint={run}/w.pt,random", "--games", "2",
                                               "--workers", "1", "--bootstrap", "0", "--no-progress"]),
    }


def _files(folder: str) -> dict[str, bytes]:
    """Every file under ``folder`` (but the lock and its holder, which every writer rewrites) by path."""
    out = {}
    for where, _, names in os.walk(folder):
        for name in names:
            if name not in (LOCK, HOLDER):
                path = os.path.join(where, name)
                out[os.path.relpath(path, folder)] = open(path, "rb").read()
    return out


def _refused(runs, command: str, rel: str, damage, tmp_path, capsys) -> str:
    """Copy the good folder of ``command``, replace its file ``rel`` by ``damage(good bytes)``, run the
    command: it must exit with 2 and one ``dnb: error:`` line naming the file, without a traceback, leaving
    every other file as it was. Returns the error line."""
    kind, argv = _commands(runs)[command]
    run = str(tmp_path / "run")
    shutil.copytree(runs[kind], run)
    path = os.path.join(run, rel)
    with open(path, "rb") as f:
        bad = damage(f.read())
    with open(path, "wb") as f:
        f.write(bad)
    before = {k: v for k, v in _files(run).items() if k != rel}
    capsys.readouterr()
    code = cli(argv(run))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert code == 2, f"exit code {code}; stdout: {out[-300:]!r}; stderr: {err[-300:]!r}"
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dnb: error: "), err
    assert os.path.basename(rel) in lines[0], lines[0]
    after = _files(run)
    assert {k: after.get(k) for k in before} == before, "another file of the folder changed"
    return lines[0]


# ---------------------------------------------------------------------------------------------- cases
def _json(runs, kind: str, rel: str) -> dict:
    return json.loads(open(os.path.join(runs[kind], rel)).read())


def _torch_bytes(obj) -> bytes:
    buf = io.BytesIO()
    torch.save(obj, buf)
    return buf.getvalue()


def _first_weight(state: dict) -> str:
    return next(k for k, v in state.items() if v.is_floating_point() and v.dim() == 4)


def _set_first(value: float):
    def damage(p):
        w = p["state_dict"][_first_weight(p["state_dict"])]
        w.view(-1)[0] = value
    return damage


def _narrowed(p):
    key = _first_weight(p["state_dict"])
    p["state_dict"][key] = p["state_dict"][key][..., :1].clone()


def _retyped(p):
    key = _first_weight(p["state_dict"])
    p["state_dict"][key] = p["state_dict"][key].double()


#: Damage to a checkpoint's payload (in place): the fields, the weights' values, shapes and types.
PAYLOAD_CASES = {
    "model as string": lambda p: p.update(model="resnet"),
    "missing state_dict": lambda p: p.pop("state_dict"),
    "state_dict as list": lambda p: p.update(state_dict=[1, 2]),
    "board as number": lambda p: p.update(board=5),
    "extra as list": lambda p: p.update(extra=[1]),
    "wrong dtype": _retyped,
    "NaN weights": _set_first(float("nan")),
    "inf weights": _set_first(float("inf")),
    "wrong shapes": _narrowed,
    "unknown family": lambda p: p["model"].update(family="gpt"),
    "model field of another type": lambda p: p["model"].update(width="eight"),
}
#: And to a run's checkpoint (what resuming reads besides the network).
RUN_PAYLOAD_CASES = {
    "missing optimizer": lambda p: p["extra"].pop("optimizer"),
    "NaN optimizer state": lambda p: next(iter(p["extra"]["optimizer"]["state"].values()))["exp_avg"].fill_(float("nan")),
}
TRAIN_PAYLOAD_CASES = {
    "missing curriculum": lambda p: p["extra"].pop("curriculum"),
    "iteration as string": lambda p: p["extra"].update(iteration="1"),
}


def _payload_damage(change):
    def damage(data: bytes) -> bytes:
        payload = torch.load(io.BytesIO(data), weights_only=True)
        change(payload)
        return _torch_bytes(payload)
    return damage


def _replay_nan(data: bytes) -> bytes:
    with np.load(io.BytesIO(data)) as z:
        arrays = {k: z[k] for k in z.files}
    arrays["q"] = arrays["q"].copy()
    arrays["q"][0] = np.nan
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def _replaced(data: bytes):
    return lambda _: data


def _appended(line: bytes):
    return lambda data: data + line


GOOD_ROW = {"iteration": 1, "games": 2}
CASES = []  # (id, command, file, damage)
for name, damage in BYTE_CASES.items():
    for command, rel in [("train --resume", "config.json"), ("report", "config.json"),
                         ("train --resume", "manifest.json"), ("export train", "manifest.json"),
                         ("train --resume", f"{ITERATION}/checkpoint.pt"), ("report", f"{ITERATION}/checkpoint.pt"),
                         ("export train", f"{ITERATION}/checkpoint.pt"),
                         ("train --resume", f"{ITERATION}/replay.npz"), ("report", f"{ITERATION}/replay.npz"),
                         ("train --resume", f"{ITERATION}/metrics.jsonl"), ("export train", f"{ITERATION}/metrics.jsonl"),
                         ("fit --resume", "config.json"), ("fit --resume", "checkpoint.pt"),
                         ("export fit", "checkpoint.pt"), ("fit --resume", "metrics.jsonl"),
                         ("tournament", "w.pt")]:
        CASES.append((f"{command}-{rel}-{name}", command, rel, damage))
for command, rel in [("train --resume", f"{ITERATION}/checkpoint.pt"), ("fit --resume", "checkpoint.pt"),
                     ("tournament", "w.pt")]:
    cases = dict(PAYLOAD_CASES)
    if command != "tournament":
        cases |= RUN_PAYLOAD_CASES
    if command == "train --resume":
        cases |= TRAIN_PAYLOAD_CASES
    for name, change in cases.items():
        CASES.append((f"{command}-{rel}-{name}", command, rel, _payload_damage(change)))
CASES.append(("train --resume-replay NaN", "train --resume", f"{ITERATION}/replay.npz", _replay_nan))
for command, rel, key in [("train --resume", f"{ITERATION}/metrics.jsonl", "iteration"),
                          ("report --plot", "metrics.jsonl", "iteration"),  # the run's copy, read for the plot
                          ("fit --resume", "metrics.jsonl", "step")]:
    for name, line in jsonl_line_cases({key: 1, "games": 2}).items():
        CASES.append((f"{command}-{rel}-{name}", command, rel, _appended(line)))


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_damaged_file_is_refused(runs, case, tmp_path, capsys):
    _, command, rel, damage = case
    _refused(runs, command, rel, damage, tmp_path, capsys)


# the JSON documents: whole-document damage, and each important field given a wrong value
JSON_FILES = [("train --resume", "train", "config.json", ["iterations", "seed", "model.width", "replay.gamma_decay"]),
              ("train --resume", "train", "manifest.json", ["iteration", "dir"]),
              ("fit --resume", "fit", "config.json", ["seed", "batch_size", "lr", "model.width"])]
DOC_CASES = [(command, kind, rel, case) for command, kind, rel, _ in JSON_FILES
             for case in json_document_cases({"a": 1})]
FIELD_CASES = [(command, kind, rel, field, case) for command, kind, rel, fields in JSON_FILES
               for field in fields for case in VALUE_CASES]


@pytest.mark.parametrize("command,kind,rel,case", DOC_CASES, ids=["-".join(c) for c in DOC_CASES])
def test_damaged_json_document_is_refused(runs, command, kind, rel, case, tmp_path, capsys):
    bad = json_document_cases(_json(runs, kind, rel))[case]
    _refused(runs, command, rel, _replaced(bad), tmp_path, capsys)


@pytest.mark.parametrize("command,kind,rel,field,case", FIELD_CASES, ids=["-".join(c) for c in FIELD_CASES])
def test_wrong_value_in_a_json_field_is_refused(runs, command, kind, rel, field, case, tmp_path, capsys):
    bad = damaged_json(_json(runs, kind, rel), field, VALUE_CASES[case])
    line = _refused(runs, command, rel, _replaced(bad), tmp_path, capsys)
    assert any(what in line for what in (field.rsplit(".", 1)[-1], "manifest.json is damaged", "names the folder")), line


def test_checkpoint_with_nan_weights_is_refused_by_make_agent(runs, tmp_path):
    """Refused on loading (it used to load and fail mid-game: "priors must be finite")."""
    from agents.checkpoint import CheckpointError

    good = os.path.join(runs["weights"], "w.pt")
    bad = str(tmp_path / "nan.pt")
    with open(good, "rb") as f:
        data = _payload_damage(_set_first(float("nan")))(f.read())
    with open(bad, "wb") as f:
        f.write(data)
    with pytest.raises(CheckpointError, match=r"nan.pt is corrupt: its weights are not finite \(.* holds NaN"):
        make_agent("alphazero", board="2x2", checkpoint=bad)
    make_agent("alphazero", board="2x2", checkpoint=good)  # the good file still loads


def test_good_copies_are_read(runs, tmp_path, capsys):
    """The good folders pass the same commands (so a refusal above is the damage's doing)."""
    for command in _commands(runs):
        kind, argv = _commands(runs)[command]
        run = str(tmp_path / command.replace(" ", "_"))
        shutil.copytree(runs[kind], run)
        assert cli(argv(run)) == 0, (command, capsys.readouterr().err)
