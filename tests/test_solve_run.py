"""``dnb solve``: a whole board's exact value in slices of a node budget, saved and continued."""

from __future__ import annotations

import json
import os

import pytest

from dnb_env.core import GameState
from dnb_env.solver import Solver, native_available

pytestmark = pytest.mark.skipif(not native_available(), reason="the C++ extension dnb_env._native is not built")


def test_a_stopped_solve_continues_to_the_known_value(tmp_path):
    from dnb_env.solve_run import solve_board

    out = str(tmp_path / "solve")
    st = solve_board("3x3", out, slice_nodes=20_000, save_every=0, max_slices=2, progress=False)
    assert not st["done"] and st["slices"] == 2
    assert os.path.exists(os.path.join(out, "table.bin"))
    with open(os.path.join(out, "state.json")) as f:
        saved = json.load(f)
    assert saved["slices"] == 2 and saved["nodes"] == st["nodes"] > 0
    st = solve_board("3x3", out, slice_nodes=20_000, save_every=0, progress=False)
    assert st["done"] and st["value"] == -3  # the second player wins 3x3 by three boxes
    assert st["slices"] > 2 and st["lo"] == st["hi"] == -3
    # a finished folder answers at once
    assert solve_board("3x3", out, progress=False)["value"] == -3


def test_a_solve_after_moves_matches_the_solver(tmp_path):
    from dnb_env.solve_run import solve_board

    moves = [0, 7, 13]
    s = GameState.new("3x3")
    for a in moves:
        s = s.apply(a)
    st = solve_board("3x3", str(tmp_path / "s"), moves=moves, slice_nodes=5_000, save_every=1e9, progress=False)
    assert st["value"] == Solver().value(s)


def test_a_folder_of_another_problem_is_refused(tmp_path):
    from dnb_env.solve_run import solve_board

    out = str(tmp_path / "solve")
    solve_board("2x2", out, progress=False)
    before = open(os.path.join(out, "state.json")).read()
    with pytest.raises(ValueError, match="another problem"):
        solve_board("2x3", out, progress=False)
    with pytest.raises(ValueError, match="not legal"):
        solve_board("2x2", str(tmp_path / "x"), moves=[0, 0], progress=False)
    assert open(os.path.join(out, "state.json")).read() == before


def test_cli_solve_prints_the_value(tmp_path, capsys):
    from registry.cli import main

    assert main(["solve", "2x2", "--out", str(tmp_path / "s"), "--no-progress"]) == 0
    assert "value +2" in capsys.readouterr().out


def test_moves_that_end_the_game_give_a_finished_state_that_resumes(tmp_path):
    from dnb_env.solve_run import solve_board

    out = str(tmp_path / "over")
    for _ in range(2):  # the second run reads the state the first saved
        st = solve_board("1x1", out, moves=[0, 1, 2, 3], progress=False, tt_mb=1)
        assert st["done"] and st["value"] == 0 and st["lo"] == st["hi"] == 0
