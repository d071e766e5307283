"""The Ray backend: tournaments as Ray tasks, self-play actors, faults, and the errors made before any work.

All tests that need Ray share one local instance of 2 CPUs (started once for this module); the tests of
errors that Ray's absence or a bad address must give run without it.
"""

from __future__ import annotations

import json
import sys

import pytest

from agents.arena import TournamentConfig, run_tournament
from agents.ray_cluster import RaySession, check_reachable
from registry.cli import main as cli_main


@pytest.fixture(scope="module")
def ray_local():
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'dnb[ray]')")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    yield ray
    ray.shutdown()


@pytest.fixture
def no_ray(monkeypatch):
    """This process as if Ray were not installed (``import ray`` raises ImportError)."""
    monkeypatch.setitem(sys.modules, "ray", None)


def _games(folder):
    rows = [json.loads(line) for line in (folder / "results.jsonl").read_text().splitlines()]
    return {r["id"]: (r["moves"], r["scores"], r["result_first"], r["opening"]) for r in rows}


TOUR = dict(board="2x2", agents=("random", "greedy", "alphabeta:depth=1"), games=4, openings=2, seed=3, bootstrap=20)


def test_ray_tournament_plays_the_local_games_and_resumes_either_way(tmp_path, ray_local):
    local = run_tournament(TournamentConfig(**TOUR), out=str(tmp_path / "local"), progress=False, echo=None)
    ray = run_tournament(TournamentConfig(**TOUR, backend="ray"), out=str(tmp_path / "ray"), progress=False,
                         echo=None)
    assert len(_games(tmp_path / "ray")) == 12 and _games(tmp_path / "ray") == _games(tmp_path / "local")
    assert (ray.wdl == local.wdl).all() and (ray.elo == local.elo).all() and (ray.elo_ci == local.elo_ci).all()
    for name in ("pairs.csv", "elo.csv"):
        assert (tmp_path / "ray" / name).read_text() == (tmp_path / "local" / name).read_text()
    # a run killed after 7 games (the rest of its file lost), resumed on the other backend, and back
    for first, then in (("ray", "local"), ("local", "ray")):
        path = tmp_path / first / "results.jsonl"
        path.write_text("".join(path.read_text().splitlines(keepends=True)[:7]))
        seen = []
        run_tournament(TournamentConfig(**TOUR, backend=then), out=str(tmp_path / first), progress=False,
                       echo=seen.append)
        assert seen[0] == "resuming: 7 games on file, 5 to play"
        assert _games(tmp_path / first) == _games(tmp_path / ("local" if first == "ray" else "ray"))


def test_ray_tournament_cli_and_factories(tmp_path, ray_local, capsys):
    out = tmp_path / "cli"
    assert cli_main(["tournament", "--board", "2x2", "--agents", "random,greedy", "--games", "2", "--backend", "ray",
                     "--bootstrap", "0", "--out", str(out), "--no-progress"]) == 0
    assert len(_games(out)) == 2 and json.loads((out / "config.json").read_text())["backend"] == "ray"
    # (label, factory) entries travel to the Ray workers too
    from baselines.greedy import GreedyAgent

    cfg = TournamentConfig(board="2x2", agents=("mine", "random"), games=2, bootstrap=0, backend="ray")
    report = run_tournament(cfg, agents=[("mine", GreedyAgent), "random"], progress=False, echo=None)
    assert report.games == 2


def test_ray_tournament_bad_input_changes_nothing(tmp_path, ray_local, capsys):
    out = tmp_path / "t"
    with pytest.raises(ValueError, match="asks for 3 CPUs at once but the Ray cluster has 2"):
        run_tournament(TournamentConfig(**TOUR, backend="ray", threads=3), out=str(out), progress=False, echo=None)
    assert not out.exists()
    with pytest.raises(ValueError, match="backend must be one of local, ray"):
        TournamentConfig(**TOUR, backend="spark")
    with pytest.raises(ValueError, match="ray_address is used only with backend 'ray'"):
        TournamentConfig(**TOUR, ray_address="auto")


def test_unreachable_ray_address_is_an_error_before_any_work(tmp_path, capsys):
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'dnb[ray]')")
    out = tmp_path / "t"
    code = cli_main(["tournament", "--board", "2x2", "--agents", "random,greedy", "--games", "2", "--backend", "ray",
                     "--ray-address", "127.0.0.1:1", "--out", str(out), "--no-progress"])
    assert code == 2 and "cannot reach a Ray cluster at 127.0.0.1:1" in capsys.readouterr().err
    assert not out.exists()
    with pytest.raises(ValueError, match="auto or HOST:PORT"):
        check_reachable("10.0.0.5")
    check_reachable("auto")  # left to Ray: it looks for the cluster this machine joined


def test_ray_missing_names_the_extra(tmp_path, no_ray, capsys):
    with pytest.raises(ValueError, match=r"needs Ray, which is not installed .*pip install 'dnb\[ray\]'"):
        RaySession()
    out = tmp_path / "t"
    assert cli_main(["tournament", "--board", "2x2", "--agents", "random,greedy", "--games", "2", "--backend", "ray",
                     "--out", str(out), "--no-progress"]) == 2
    assert "pip install 'dnb[ray]'" in capsys.readouterr().err and not out.exists()
