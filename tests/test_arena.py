"""Arena: specs, openings, resumable JSONL, statistics, CLI."""

from __future__ import annotations

import json
import math
import os

import numpy as np
import pytest

from agents.arena import (
    TournamentConfig,
    bradley_terry_elo,
    make_opening,
    parse_agent_spec,
    run_tournament,
    wilson_interval,
)
from dnb_env.analysis import MoveClass, move_classes
from dnb_env.core import GameState
from registry.cli import _split_agents
from registry.cli import main as cli_main


def test_parse_specs():
    assert parse_agent_spec("alphabeta:depth=3,time_limit=0.5,chain_eval=true") == (
        "alphabeta", {"depth": 3, "time_limit": 0.5, "chain_eval": True})
    assert parse_agent_spec("random") == ("random", {})
    with pytest.raises(ValueError):
        parse_agent_spec("alphabeta:depth")
    assert _split_agents("random,alphabeta:depth=3,time_limit=1,prsboxes") == (
        "random", "alphabeta:depth=3,time_limit=1", "prsboxes")


def test_guided_openings_are_safe_and_reproducible():
    for seed in range(20):
        moves = make_opening("4x4", 10, "guided", seed)
        assert moves == make_opening("4x4", 10, "guided", seed) and len(moves) == 10
        s = GameState.new(4, 4)
        for a in moves:
            assert move_classes(s)[a] == MoveClass.SAFE
            s = s.apply(a)


def test_wilson_and_elo():
    lo, hi = wilson_interval(50, 100)
    assert lo < 0.5 < hi and abs((lo + hi) / 2 - 0.5) < 1e-9
    assert wilson_interval(0, 10)[0] == 0.0
    # A beats B 3 of 4 games: Elo difference = 400 log10(3) ~ 191 without the prior
    games = [(0, 1, 1.0)] * 3 + [(0, 1, 0.0)]
    elo = bradley_terry_elo(2, games, prior_draws=0.0)
    assert elo[0] - elo[1] == pytest.approx(400 * math.log10(3), abs=0.5)
    # an unbeaten agent stays finite thanks to the virtual draw
    assert np.isfinite(bradley_terry_elo(2, [(0, 1, 1.0)] * 10)).all()


def test_config_rejects_bad_values():
    with pytest.raises(ValueError):
        TournamentConfig(agents=("random",))
    with pytest.raises(ValueError):
        TournamentConfig(opening_mode="wild")
    with pytest.raises(ValueError, match="unknown"):
        TournamentConfig.from_json({"board": "3x3", "agents": ["random", "greedy"], "colour": 1})


def test_tournament_resumes_without_replaying(tmp_path):
    cfg = TournamentConfig(board="3x3", agents=("random", "greedy", "alphabeta:depth=2"), games=4,
                           openings=3, seed=1, bootstrap=20)
    report = run_tournament(cfg, out=str(tmp_path), progress=False, echo=None)
    lines = (tmp_path / "results.jsonl").read_text().splitlines()
    assert len(lines) == 12 and report.games == 12
    recs = [json.loads(x) for x in lines]
    # both colour assignments of a pair share each opening; first seat alternates
    by_pair = [r for r in recs if r["pair"] == [0, 1]]
    by_game = {r["game"]: r for r in by_pair}
    assert by_game[0]["opening"] == by_game[1]["opening"] and by_game[0]["first"] != by_game[1]["first"]
    # simulate a kill: drop the last 5 games and tear the final line
    kept = lines[:7]
    (tmp_path / "results.jsonl").write_text("\n".join(kept) + "\n" + lines[7][:20])
    again = run_tournament(cfg, out=str(tmp_path), progress=False, echo=None)
    lines2 = (tmp_path / "results.jsonl").read_text().splitlines()
    assert len(lines2) == 12 and lines2[:7] == kept
    assert again.wdl.sum() == report.wdl.sum()
    for name in ("pairs.csv", "elo.csv", "tournament.png", "config.json"):
        assert (tmp_path / name).exists()
    with pytest.raises(ValueError, match="another config"):
        run_tournament(TournamentConfig(board="3x3", agents=("random", "greedy"), games=2), out=str(tmp_path),
                       progress=False, echo=None)


def test_one_run_per_folder_and_duplicates_count_once(tmp_path):
    from agents.arena import _FolderLock

    cfg = TournamentConfig(board="2x2", agents=("random", "greedy"), games=4, seed=2, bootstrap=10)
    first = run_tournament(cfg, out=str(tmp_path), progress=False, echo=None)
    held = _FolderLock(str(tmp_path))  # as if another run were writing there
    with pytest.raises(ValueError, match="another tournament is writing"):
        run_tournament(cfg, out=str(tmp_path), progress=False, echo=None)
    held.close()
    path = tmp_path / "results.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines + lines[:2]) + "\n")  # two games written twice
    again = run_tournament(cfg, out=str(tmp_path), progress=False, echo=None)
    assert again.games == 4 and (again.wdl == first.wdl).all()


def test_stronger_agents_rank_higher(tmp_path):
    cfg = TournamentConfig(board="3x3", agents=("random", "solver"), games=6, seed=0, bootstrap=20, workers=2)
    report = run_tournament(cfg, out=str(tmp_path), progress=False, echo=None)
    assert report.elo[1] > report.elo[0] == 0.0
    assert report.score(1, 0)[0] >= 5 / 6


def test_cli_tournament(tmp_path, capsys):
    rc = cli_main(["tournament", "--board", "2x2", "--agents", "random,greedy", "--games", "2", "--workers", "1",
                   "--out", str(tmp_path), "--no-progress", "--bootstrap", "10"])
    assert rc == 0 and "Elo" in capsys.readouterr().out
    assert cli_main(["tournament", "--board", "2x2", "--agents", "random,nobody", "--games", "2"]) == 2
    assert "known agents" in capsys.readouterr().err


def test_workers_use_one_thread_each(monkeypatch):
    import torch

    from agents.arena import _worker_init

    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        monkeypatch.setenv(var, "8")
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        _worker_init()
        assert torch.get_num_threads() == 1
        assert all(os.environ[v] == "1" for v in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS"))
    finally:
        torch.set_num_threads(before)
