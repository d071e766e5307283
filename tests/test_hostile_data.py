"""Damaged teacher datasets, tournament folders and solve folders: the command that reads one back refuses
it with one ``dnb: error:`` line naming the damaged file and changes nothing, or, for a line of a tournament's
``results.jsonl``, moves the line aside with a warning and plays on to the right results.

Each good folder is made once per module (tiny: a 3x3 dataset of six positions, a 2x2 tournament of two
games, a 2x2 solve); each case damages one file of a copy and runs the command again on it through
:func:`registry.cli.main`. The damage comes from tests/hostile.py.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import re
import shutil

import numpy as np
import pytest
from hostile import BYTE_CASES, TRAVERSALS, VALUE_CASES, damaged_json, json_document_cases, jsonl_line_cases

from agents.arena.results import read_games
from registry.cli import main

TEACH = ["teach", "--board", "3x3", "--undrawn", "5-8", "--margin-max", "8", "--positions", "6", "--shard-size", "3",
         "--per-game", "2", "--players", "greedy,random", "--no-progress"]
TOURNAMENT = ["tournament", "--board", "2x2", "--agents", "random,greedy", "--games", "2", "--workers", "1",
              "--bootstrap", "0", "--no-progress"]
SOLVE = ["solve", "2x2", "--tt-mb", "1", "--no-progress"]
#: Files of the run folder's lock: rewritten by every run that takes it, refused or not.
LOCK_FILES = {".lock", ".lock.json"}


def _made(tmp_path_factory, name: str, argv: list[str]) -> str:
    out = str(tmp_path_factory.mktemp(name) / name)
    assert main([*argv, "--out", out]) == 0
    return out


@pytest.fixture(scope="module")
def teach_folder(tmp_path_factory):
    return _made(tmp_path_factory, "teach", TEACH)


@pytest.fixture(scope="module")
def tournament_folder(tmp_path_factory):
    return _made(tmp_path_factory, "tournament", TOURNAMENT)


@pytest.fixture(scope="module")
def solve_folder(tmp_path_factory):
    return _made(tmp_path_factory, "solve", SOLVE)


def _copy(folder: str, tmp_path) -> str:
    out = str(tmp_path / os.path.basename(folder))
    shutil.copytree(folder, out)
    return out


def _files(folder: str) -> dict[str, bytes]:
    """The bytes of every file of ``folder`` (the lock's files left out)."""
    return {name: open(os.path.join(folder, name), "rb").read() for name in sorted(os.listdir(folder))
            if name not in LOCK_FILES}


def _damage(folder: str, name: str, data: bytes) -> str:
    path = os.path.join(folder, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def _refused(argv: list[str], damaged: str, capsys, *folders: str, case: str = "") -> None:
    """``dnb argv`` exits with code 2 and one ``dnb: error:`` line naming the file ``damaged``, no traceback,
    and leaves every file of ``folders`` (default: the damaged file's) as it was; ``case`` names the damage in
    a failure's message."""
    folders = folders or (os.path.dirname(damaged),)
    before = {f: _files(f) for f in folders}
    capsys.readouterr()
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2, f"{case}: {err}"
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("dnb: error: "), f"{case}: {err}"
    assert damaged in lines[0], f"{case}: {err}"
    for f in folders:
        assert _files(f) == before[f], case


def _value_cases(doc: dict, field: str) -> list[str]:
    """The value cases that change ``field`` (dotted for nested keys) of ``doc``."""
    inner = doc
    for key in field.split("."):
        inner = inner[key]
    return [case for case, v in VALUE_CASES.items() if json.dumps(v) != json.dumps(inner)]


def _refused_with_values(folder: str, name: str, field: str, shape: dict, argv: list[str], tmp_path, capsys) -> None:
    """Every value case of ``field`` of the JSON file ``name``, in a copy of ``folder`` each, is refused by
    ``dnb argv --out COPY`` (:func:`_refused`); ``shape``: a document of the file's shape, for the cases."""
    for k, case in enumerate(_value_cases(shape, field)):
        out = _copy(folder, tmp_path / f"case{k}")
        doc = json.load(open(os.path.join(out, name)))
        path = _damage(out, name, damaged_json(doc, field, VALUE_CASES[case]))
        _refused([*argv, "--out", out], path, capsys, case=case)


# ---------------------------------------------------------------------------------------------- teacher datasets
TEACH_FIELDS = ["format", "version", "config", "shards", "positions", "next_job", "counts", "config.board",
                "config.positions", "config.players", "config.seed", "config.explore", "config.undrawn_min",
                "counts.games", "counts.label_seconds"]
#: A manifest of the shape ``dnb teach`` writes, for choosing the cases (the fixture's is read in the tests).
TEACH_SHAPE = {"format": "dnb-teacher", "version": 2, "config": {"board": "3x3", "positions": 6, "players": ["greedy"],
                                                                  "seed": 0, "explore": 0.1, "undrawn_min": 5},
               "shards": [], "positions": 6, "next_job": 2, "counts": {"games": 4, "label_seconds": 0.0}}


def _manifest(folder: str) -> dict:
    return json.load(open(os.path.join(folder, "manifest.json")))


def test_a_good_dataset_resumes(teach_folder, tmp_path, capsys):
    out = _copy(teach_folder, tmp_path)
    assert main([*TEACH, "--out", out]) == 0
    assert "resuming" in capsys.readouterr().out
    assert _files(out) == _files(teach_folder)


@pytest.mark.parametrize("case", BYTE_CASES)
def test_teach_refuses_a_damaged_manifest(teach_folder, tmp_path, capsys, case):
    out = _copy(teach_folder, tmp_path)
    path = _damage(out, "manifest.json", BYTE_CASES[case](open(os.path.join(out, "manifest.json"), "rb").read()))
    _refused([*TEACH, "--out", out], path, capsys)


@pytest.mark.parametrize("case", json_document_cases({}))
def test_teach_refuses_a_manifest_of_another_shape(teach_folder, tmp_path, capsys, case):
    out = _copy(teach_folder, tmp_path)
    path = _damage(out, "manifest.json", json_document_cases(_manifest(out))[case])
    _refused([*TEACH, "--out", out], path, capsys)


@pytest.mark.parametrize("field", TEACH_FIELDS)
def test_teach_refuses_a_manifest_field_of_a_wrong_value(teach_folder, tmp_path, capsys, field):
    _refused_with_values(teach_folder, "manifest.json", field, TEACH_SHAPE, TEACH, tmp_path, capsys)


@pytest.mark.parametrize("case", BYTE_CASES)
def test_teach_refuses_a_damaged_shard(teach_folder, tmp_path, capsys, case):
    out = _copy(teach_folder, tmp_path)
    name = _manifest(out)["shards"][1]["file"]
    path = _damage(out, name, BYTE_CASES[case](open(os.path.join(out, name), "rb").read()))
    _refused([*TEACH, "--out", out], path, capsys)


#: Values no teacher shard holds, put in one row of one column.
SHARD_DAMAGE = {"pi": np.nan, "z": np.inf, "q": -np.inf, "seconds": np.nan, "move": 99, "mover": 3, "kind": 9,
                "values": 100, "value": -77, "player": 50, "game": -1, "step": -3}


def _rewrite_shard(folder: str, column: str, value) -> str:
    """Put ``value`` in the last row of ``column`` of the first shard, with the manifest's checksum and
    nothing else changed (a shard that is well formed, but holds what no dataset holds); returns its path."""
    manifest = _manifest(folder)
    entry = manifest["shards"][0]
    path = os.path.join(folder, entry["file"])
    with np.load(path) as z:
        arrays = {k: z[k] for k in z.files}
    arrays[column].reshape(len(arrays["kind"]), -1)[-1, 0] = value
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    _damage(folder, entry["file"], buf.getvalue())
    entry["sha256"] = hashlib.sha256(buf.getvalue()).hexdigest()
    _damage(folder, "manifest.json", json.dumps(manifest).encode())
    return path


@pytest.mark.parametrize("column", SHARD_DAMAGE)
def test_teach_refuses_a_shard_of_impossible_values_with_its_checksum(teach_folder, tmp_path, capsys, column):
    out = _copy(teach_folder, tmp_path)
    path = _rewrite_shard(out, column, SHARD_DAMAGE[column])
    _refused([*TEACH, "--out", out], path, capsys)


@pytest.mark.parametrize("name", [*TRAVERSALS, *(t + ".npz" for t in TRAVERSALS), "shard\x00.npz", ".npz"])
def test_teach_never_reads_a_shard_outside_the_folder(teach_folder, tmp_path, capsys, name):
    out = _copy(teach_folder, tmp_path)
    manifest = _manifest(out)
    for target in ("outside", "outside.npz"):  # a good shard there, matching the checksum: still refused
        shutil.copy(os.path.join(out, manifest["shards"][0]["file"]), tmp_path / target)
    manifest["shards"][0]["file"] = name
    path = _damage(out, "manifest.json", json.dumps(manifest).encode())
    _refused([*TEACH, "--out", out], path, capsys)


@pytest.mark.parametrize("damage", ["garbage manifest", "nested manifest", "NaN shard"])
def test_exclude_and_fit_refuse_a_damaged_dataset(teach_folder, tmp_path, capsys, damage):
    held = _copy(teach_folder, tmp_path)
    if damage == "NaN shard":
        path = _rewrite_shard(held, "z", np.nan)
    else:
        data = BYTE_CASES["garbage"](b"") if damage == "garbage manifest" else json_document_cases({})["nested"]
        path = _damage(held, "manifest.json", data)
    new = str(tmp_path / "new")
    _refused([*TEACH, "--exclude", held, "--out", new], path, capsys, held)
    assert not os.path.exists(new)
    _refused(["fit", "--board", "3x3", "--data", held, "--steps", "1", "--out", new, "--no-progress"], path, capsys,
             held)
    assert not os.path.exists(new)


# ---------------------------------------------------------------------------------------------- tournaments
TOURNAMENT_FIELDS = ["board", "agents", "games", "openings", "opening_mode", "mode", "workers", "seed", "bootstrap",
                     "time_margin", "overrun", "time_per_game", "increment"]
#: The config ``TOURNAMENT`` saves, for choosing the cases.
TOURNAMENT_SHAPE = {"board": "2x2", "agents": ["random", "greedy"], "games": 2, "openings": 0, "opening_mode": "guided",
                    "mode": "round_robin", "workers": 1, "seed": 0, "bootstrap": 0, "time_margin": 0.25,
                    "overrun": "lose", "time_per_game": None, "increment": 0.0}


def _games(folder: str) -> dict[str, tuple]:
    """What decides each game on file: id -> (first, second, moves, scores, result)."""
    return {r["id"]: (r["first"], r["second"], r["moves"], r["scores"], r["result_first"])
            for r in read_games(os.path.join(folder, "results.jsonl"))}


def test_the_tournament_shape_is_the_saved_config(tournament_folder):
    saved = json.load(open(os.path.join(tournament_folder, "config.json")))
    assert {k: saved[k] for k in TOURNAMENT_SHAPE} == TOURNAMENT_SHAPE


def test_a_good_tournament_resumes(tournament_folder, tmp_path, capsys):
    out = _copy(tournament_folder, tmp_path)
    assert main([*TOURNAMENT, "--out", out]) == 0
    assert "resuming: 2 games on file, 0 to play" in capsys.readouterr().out
    assert _games(out) == _games(tournament_folder) and len(_games(out)) == 2


@pytest.mark.parametrize("case", BYTE_CASES)
def test_tournament_refuses_a_damaged_config(tournament_folder, tmp_path, capsys, case):
    out = _copy(tournament_folder, tmp_path)
    path = _damage(out, "config.json", BYTE_CASES[case](open(os.path.join(out, "config.json"), "rb").read()))
    _refused([*TOURNAMENT, "--out", out], path, capsys)


@pytest.mark.parametrize("case", json_document_cases({}))
def test_tournament_refuses_a_config_of_another_shape(tournament_folder, tmp_path, capsys, case):
    out = _copy(tournament_folder, tmp_path)
    doc = json.load(open(os.path.join(out, "config.json")))
    path = _damage(out, "config.json", json_document_cases(doc)[case])
    _refused([*TOURNAMENT, "--out", out], path, capsys)


@pytest.mark.parametrize("field", TOURNAMENT_FIELDS)
def test_tournament_refuses_a_config_field_of_a_wrong_value(tournament_folder, tmp_path, capsys, field):
    _refused_with_values(tournament_folder, "config.json", field, TOURNAMENT_SHAPE, TOURNAMENT, tmp_path, capsys)


def _resumed_with(out: str, lines: list[bytes], rejected: list[bytes], capsys) -> None:
    """``lines`` put in place of the first game of ``out``'s results: the resume moves ``rejected`` aside
    (with a warning naming the file they went to), keeps the others, plays what is missing, and every game
    on file is then that of the good folder (or of the row kept in its place)."""
    path = os.path.join(out, "results.jsonl")
    good = open(path, "rb").read().splitlines(keepends=True)
    _damage(out, "results.jsonl", b"".join(lines) + b"".join(good[1:]))
    config = open(os.path.join(out, "config.json"), "rb").read()
    if rejected:
        with pytest.warns(UserWarning, match=f"moved {len(rejected)} unreadable line.* to {re.escape(path)}.rejected"):
            code = main([*TOURNAMENT, "--out", out])
        assert open(path + ".rejected", "rb").read().splitlines(keepends=True) == rejected
    else:
        code = main([*TOURNAMENT, "--out", out])
        assert not os.path.exists(path + ".rejected")
    assert code == 0 and "Traceback" not in capsys.readouterr().err
    assert open(os.path.join(out, "config.json"), "rb").read() == config
    assert {k: v[4] for k, v in _games(out).items()} == {"0-1-0": 0.0, "0-1-1": 1.0}  # random vs greedy, both ways
    assert all(line in open(path, "rb").read() for line in lines if line not in rejected)


@pytest.mark.parametrize("case", jsonl_line_cases({}))
def test_tournament_moves_a_damaged_results_line_aside_and_plays_on(tournament_folder, tmp_path, capsys, case):
    out = _copy(tournament_folder, tmp_path)
    row = json.loads(open(os.path.join(out, "results.jsonl")).readline())
    line = jsonl_line_cases(row)[case]
    _resumed_with(out, [line], [line], capsys)
    assert _games(out) == _games(tournament_folder)  # the game moved aside is played again, the same


ROW_FIELDS = ["id", "first", "second", "moves", "scores", "result_first", "think_s", "moves_by", "max_s", "move_s",
              "opening", "forfeit"]
#: Damage that leaves a valid game record (two numbers where two are asked for; no scores, opening or forfeit;
#: any list of moves on the board, or of opening moves).
ROW_KEPT = {("moves", "wrong type: list"), ("scores", "wrong type: list"), ("think_s", "wrong type: list"),
            ("moves_by", "wrong type: list"), ("max_s", "wrong type: list"), ("move_s", "wrong type: list"),
            ("opening", "wrong type: list"), ("opening", "wrong type: null"), ("forfeit", "wrong type: null"),
            ("scores", "wrong type: null")}


@pytest.mark.parametrize("field", ROW_FIELDS)
def test_tournament_moves_a_results_row_of_wrong_values_aside(tournament_folder, tmp_path, capsys, field):
    out = _copy(tournament_folder, tmp_path)
    row = json.loads(open(os.path.join(out, "results.jsonl")).readline())
    lines = [damaged_json(row, field, v) + b"\n" for v in VALUE_CASES.values()]
    rejected = [line for line, case in zip(lines, VALUE_CASES) if (field, case) not in ROW_KEPT]
    _resumed_with(out, lines, rejected, capsys)


def test_a_reader_skips_damaged_lines_and_moves_nothing(tournament_folder, tmp_path):
    out = _copy(tournament_folder, tmp_path)
    path = os.path.join(out, "results.jsonl")
    row = json.loads(open(path).readline())
    data = b"".join(jsonl_line_cases(row).values()) + open(path, "rb").read()
    _damage(out, "results.jsonl", data)
    assert [r["id"] for r in read_games(path)] == ["0-1-0", "0-1-1"]
    assert open(path, "rb").read() == data and not os.path.exists(path + ".rejected")


# ---------------------------------------------------------------------------------------------- solve folders
SOLVE_FIELDS = ["format", "board", "moves", "rules", "lo", "hi", "guess", "nodes", "seconds", "slices", "tests",
                "done", "value", "table_sha256"]
#: The state ``SOLVE`` saves (2x2 from the empty board: +2), for choosing the cases.
SOLVE_SHAPE = {"format": 1, "board": "2x2", "moves": [], "rules": 31, "lo": 2, "hi": 2, "guess": 2, "nodes": 696,
               "seconds": 0.0, "slices": 4, "tests": 4, "done": True, "value": 2, "table_sha256": ["0" * 64]}


def test_a_good_solve_folder_answers_again(solve_folder, tmp_path, capsys):
    state = json.load(open(os.path.join(solve_folder, "state.json")))
    assert {k: state[k] for k in ("format", "board", "moves", "lo", "hi", "done", "value")} == \
        {k: SOLVE_SHAPE[k] for k in ("format", "board", "moves", "lo", "hi", "done", "value")}
    out = _copy(solve_folder, tmp_path)
    assert main([*SOLVE, "--out", out]) == 0
    assert "value +2" in capsys.readouterr().out
    assert _files(out) == _files(solve_folder)


@pytest.mark.parametrize("name", ["state.json", "table.bin"])
@pytest.mark.parametrize("case", BYTE_CASES)
def test_solve_refuses_a_damaged_file(solve_folder, tmp_path, capsys, name, case):
    out = _copy(solve_folder, tmp_path)
    path = _damage(out, name, BYTE_CASES[case](open(os.path.join(out, name), "rb").read()))
    _refused([*SOLVE, "--out", out], path, capsys)


@pytest.mark.parametrize("case", json_document_cases({}))
def test_solve_refuses_a_state_of_another_shape(solve_folder, tmp_path, capsys, case):
    out = _copy(solve_folder, tmp_path)
    path = _damage(out, "state.json", json_document_cases(json.load(open(os.path.join(out, "state.json"))))[case])
    _refused([*SOLVE, "--out", out], path, capsys)


@pytest.mark.parametrize("field", SOLVE_FIELDS)
def test_solve_refuses_a_state_field_of_a_wrong_value(solve_folder, tmp_path, capsys, field):
    _refused_with_values(solve_folder, "state.json", field, SOLVE_SHAPE, SOLVE, tmp_path, capsys)
