"""Arena: specs, openings, resumable JSONL, statistics, worker threads, CLI."""

from __future__ import annotations

import json
import math
import os
import warnings

import numpy as np
import pytest

from agents.arena import TournamentConfig, bradley_terry_elo, make_opening, wilson_interval
from dnb_env.analysis import MoveClass, move_classes
from dnb_env.limits import machine_cpus
from dnb_env.core import GameState, geometry
from registry.cli import main as cli_main
from registry.specs import parse_agent_spec, split_agents
from registry.tournaments import run_tournament


def test_parse_specs():
    assert parse_agent_spec("alphabeta:depth=3,time_limit=0.5,chain_eval=true") == (
        "alphabeta", {"depth": 3, "time_limit": 0.5, "chain_eval": True})
    assert parse_agent_spec("random") == ("random", {})
    with pytest.raises(ValueError):
        parse_agent_spec("alphabeta:depth")
    assert split_agents("random,alphabeta:depth=3,time_limit=1,prsboxes") == (
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


def test_paired_difference_counts_its_interval_covers_and_bad_input_is_refused():
    from agents.arena.ratings import paired_difference

    # 36 kept by both, 12 by the first only, 2 by the second only, none by neither
    first = [1] * 48 + [0] * 2
    second = [1] * 36 + [0] * 12 + [1] * 2
    d = paired_difference(first, second)
    assert (d.n, d.only_first, d.only_second) == (50, 12, 2)
    assert d.diff == pytest.approx(0.2)
    assert d.ci[0] < 0.2 < d.ci[1] and d.ci[0] > 0
    # exact McNemar: 2 * P(X <= 2), X ~ Binomial(14, 1/2)
    assert d.p == pytest.approx(2 * (1 + 14 + 91) / 2 ** 14)
    swapped = paired_difference(second, first)
    assert swapped.diff == pytest.approx(-0.2)
    assert swapped.ci == pytest.approx((-d.ci[1], -d.ci[0]))
    same = paired_difference(first, first)
    assert (same.diff, same.p) == (0.0, 1.0) and same.ci[0] <= 0.0 <= same.ci[1]
    # pairing narrows the interval when the two succeed on mostly the same items
    lo1, hi1 = wilson_interval(48, 50)
    lo2, hi2 = wilson_interval(38, 50)
    assert d.ci[1] - d.ci[0] < (hi1 - lo2) - (lo1 - hi2)
    # coverage near 95% on correlated pairs with rates 0.65 and 0.60
    rng = np.random.default_rng(0)
    covered = 0
    for _ in range(400):
        u = rng.random(300)
        x = (u < 0.65).astype(int)
        y = ((u < 0.55) | ((u >= 0.65) & (u < 0.70))).astype(int)
        lo, hi = paired_difference(x, y).ci
        covered += lo <= 0.05 <= hi
    assert 0.91 <= covered / 400 <= 0.99
    with pytest.raises(ValueError, match="one length"):
        paired_difference([1, 0], [1])
    with pytest.raises(ValueError, match="0/1"):
        paired_difference([1, 2], [1, 0])


def test_config_rejects_bad_values():
    with pytest.raises(ValueError):
        TournamentConfig(agents=("random",))
    with pytest.raises(ValueError):
        TournamentConfig(opening_mode="wild")
    with pytest.raises(ValueError, match="unknown"):
        TournamentConfig.from_json({"board": "3x3", "agents": ["random", "greedy"], "colour": 1})
    with pytest.raises(ValueError, match=r"openings must be in 0\.\.11 \(a 2x2 board has 12 edges\), got 12"):
        TournamentConfig(board="2x2", openings=12)  # no move would be left to play
    assert TournamentConfig(board="2x2", openings=11).openings == 11


def test_config_of_a_geometry_keeps_its_name():
    cfg = TournamentConfig(board=geometry(2, 3))
    assert cfg.board == "2x3" and json.loads(json.dumps(cfg.to_json()))["board"] == "2x3"
    for field in ("games", "workers", "threads"):
        with pytest.raises(ValueError, match=f"{field} must be >= ., got -1"):
            TournamentConfig(**{field: -1})
    for value in (-1, 10_001):
        with pytest.raises(ValueError, match=f"bootstrap must be in 0..10,000, got {value:,}"):
            TournamentConfig(bootstrap=value)
    for value in (-1, 2**63):
        with pytest.raises(ValueError, match="seed must be"):
            TournamentConfig(seed=value)


def test_a_folder_whose_free_settings_an_older_version_allowed_still_resumes(tmp_path):
    """Settings a resume may change (workers, threads, bootstrap, ...) are the new run's: a saved value out of
    today's range (bootstrap 20,000, once allowed) does not make the folder unreadable."""
    from agents.arena.results import check_or_save_config

    path = tmp_path / "config.json"
    saved = TournamentConfig(board="2x2", agents=("random", "greedy")).to_json() | {"bootstrap": 20_000}
    path.write_text(json.dumps(saved))
    check_or_save_config(str(path), TournamentConfig(board="2x2", agents=("random", "greedy")))
    path.write_text(json.dumps(saved | {"games": "seven"}))  # a setting that is not free is still checked
    with pytest.raises(ValueError, match="config.json is not a tournament config this code accepts"):
        check_or_save_config(str(path), TournamentConfig(board="2x2", agents=("random", "greedy")))


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
    with pytest.warns(UserWarning, match="moved 1 unreadable line"):
        again = run_tournament(cfg, out=str(tmp_path), progress=False, echo=None)
    lines2 = (tmp_path / "results.jsonl").read_text().splitlines()
    assert len(lines2) == 12 and lines2[:7] == kept
    assert (tmp_path / "results.jsonl.rejected").read_text() == lines[7][:20] + "\n"
    assert again.wdl.sum() == report.wdl.sum()
    for name in ("pairs.csv", "elo.csv", "tournament.png", "config.json"):
        assert (tmp_path / name).exists()
    with pytest.raises(ValueError, match="another config"):
        run_tournament(TournamentConfig(board="3x3", agents=("random", "greedy"), games=2), out=str(tmp_path),
                       progress=False, echo=None)


def test_a_larger_games_extends_a_tournament_with_the_same_first_games(tmp_path):
    import dataclasses

    cfg = TournamentConfig(board="3x3", agents=("random", "greedy"), games=4, openings=3, seed=5, bootstrap=0)
    run_tournament(cfg, out=str(tmp_path / "short"), progress=False, echo=None)
    short = {json.loads(x)["id"]: json.loads(x) for x in (tmp_path / "short" / "results.jsonl").read_text().splitlines()}
    longer = dataclasses.replace(cfg, games=10)
    report = run_tournament(longer, out=str(tmp_path / "short"), progress=False, echo=None)
    extended = [json.loads(x) for x in (tmp_path / "short" / "results.jsonl").read_text().splitlines()]
    assert report.games == 10 and len(extended) == 10 and len({r["id"] for r in extended}) == 10
    assert json.loads((tmp_path / "short" / "config.json").read_text())["games"] == 10
    # the games on file are the first games of the longer schedule, played the same way from scratch
    run_tournament(longer, out=str(tmp_path / "fresh"), progress=False, echo=None)
    fresh = {json.loads(x)["id"]: json.loads(x) for x in (tmp_path / "fresh" / "results.jsonl").read_text().splitlines()}
    assert set(fresh) == {r["id"] for r in extended}
    for gid, rec in short.items():
        assert fresh[gid]["moves"] == rec["moves"] and fresh[gid]["scores"] == rec["scores"]
    with pytest.raises(ValueError, match="may grow to extend it, not shrink"):
        run_tournament(dataclasses.replace(cfg, games=2), out=str(tmp_path / "short"), progress=False, echo=None)
    assert json.loads((tmp_path / "short" / "config.json").read_text())["games"] == 10  # unchanged


def test_one_run_per_folder_and_duplicates_count_once(tmp_path):
    from agents.arena.results import FolderLock

    cfg = TournamentConfig(board="2x2", agents=("random", "greedy"), games=4, seed=2, bootstrap=10)
    first = run_tournament(cfg, out=str(tmp_path), progress=False, echo=None)
    held = FolderLock(str(tmp_path))  # as if another run were writing there
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
                   "--threads", "2", "--out", str(tmp_path), "--no-progress", "--bootstrap", "10"])
    assert rc == 0 and "Elo" in capsys.readouterr().out
    assert json.loads((tmp_path / "config.json").read_text())["threads"] == 2
    assert cli_main(["tournament", "--board", "2x2", "--agents", "random,nobody", "--games", "2"]) == 2
    assert "known agents" in capsys.readouterr().err


THREAD_VARS = ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS")


def _thread_counts(_):
    """In a worker process: (BLAS thread counts, torch threads). BLAS from threadpoolctl where it is installed,
    else from the environment the process started with (/proc), which is what numpy's BLAS read as it loaded."""
    import torch

    try:
        from threadpoolctl import threadpool_info

        blas = {d["num_threads"] for d in threadpool_info() if d["user_api"] == "blas"}
    except ImportError:
        with open("/proc/self/environ", "rb") as f:
            env = dict(kv.split(b"=", 1) for kv in f.read().split(b"\0") if b"=" in kv)
        blas = {int(env.get(var.encode(), b"0")) for var in THREAD_VARS}
    return blas, torch.get_num_threads()


def test_worker_processes_start_with_the_thread_option(monkeypatch):
    import importlib.util

    from agents.arena.runners import worker_pool

    if importlib.util.find_spec("threadpoolctl") is None and not os.path.exists("/proc/self/environ"):
        pytest.skip("neither threadpoolctl nor /proc to read a worker's BLAS threads")
    for var in THREAD_VARS:
        monkeypatch.setenv(var, "3")  # the caller's own setting
    pool = worker_pool(1, 1, "2x2", ["random", "greedy"])
    try:
        assert all(os.environ[var] == "3" for var in THREAD_VARS)  # restored once the workers started
        assert pool.map(_thread_counts, [0]) == [({1}, 1)]
    finally:
        pool.terminate()
        pool.join()


def _first_legal():
    from agents.base import FunctionAgent

    return FunctionAgent(lambda s: s.legal_actions()[0], name="first")


def _last_legal():
    from agents.base import FunctionAgent

    return FunctionAgent(lambda s: s.legal_actions()[-1], name="last")


def test_a_second_run_builds_its_own_agents(tmp_path):
    cfg = TournamentConfig(board="2x2", agents=("me", "random"), games=2, bootstrap=0)
    for name, factory in (("a", _first_legal), ("b", _last_legal)):
        run_tournament(cfg, out=str(tmp_path / name), agents=[("me", factory), "random"], progress=False, echo=None)
    first = {}
    for name in "ab":
        rec = json.loads((tmp_path / name / "results.jsonl").read_text().splitlines()[0])
        assert rec["id"] == "0-1-0" and rec["first"] == "me"
        first[name] = rec["moves"][0]
    assert first == {"a": 0, "b": 11}  # the same label, a new factory: run b plays its own agent


def test_long_specs_fit_the_plot(tmp_path):
    """A spec with a checkpoint path is shortened on the plot's axes (matplotlib warned that the margins could
    not hold it); the CSV files keep it whole."""
    pytest.importorskip("matplotlib")
    from agents.arena.output import plot

    spec = "me:checkpoint=" + "/a/long/folder" * 8 + "/checkpoint.pt,simulations=4"
    cfg = TournamentConfig(board="2x2", agents=(spec, "random"), games=2, bootstrap=0)
    report = run_tournament(cfg, out=str(tmp_path), agents=[(spec, _first_legal), "random"], progress=False,
                            echo=None)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        plot(report, str(tmp_path / "again.png"))
    assert (tmp_path / "again.png").read_bytes()[:4] == b"\x89PNG" and spec in (tmp_path / "elo.csv").read_text()


def _resumed(cfg, folder, extra: list[str], at: int):
    """Play ``cfg`` in ``folder``, insert ``extra`` lines at line ``at`` of results.jsonl and resume, which must
    warn once; returns the lines of the first run, the report of the resumed one and the warning."""
    run_tournament(cfg, out=str(folder), progress=False, echo=None)
    path = folder / "results.jsonl"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:at] + extra + lines[at:]) + "\n")
    with pytest.warns(UserWarning) as caught:
        report = run_tournament(cfg, out=str(folder), progress=False, echo=None)
    assert len(caught) == 1 and str(folder / "results.jsonl.rejected") in str(caught[0].message)
    return lines, report, str(caught[0].message)


def test_a_corrupt_line_is_moved_aside_and_every_game_kept(tmp_path):
    cfg = TournamentConfig(board="2x2", agents=("random", "greedy"), games=6, seed=3, bootstrap=0)
    lines, report, warning = _resumed(cfg, tmp_path, ['{"id": "0-1-2", "sco'], at=2)
    assert "moved 1 unreadable line(s)" in warning and "line 3: not valid JSON" in warning
    # no game lost and none replayed: the file holds exactly the first run's lines
    assert report.games == 6 and (tmp_path / "results.jsonl").read_text().splitlines() == lines
    assert (tmp_path / "results.jsonl.rejected").read_text() == '{"id": "0-1-2", "sco\n'


def test_records_of_the_wrong_shape_are_moved_aside(tmp_path):
    cfg = TournamentConfig(board="2x2", agents=("random", "greedy"), games=4, seed=4, bootstrap=0)
    game0 = {"id": "0-1-0", "first": "random", "second": "greedy", "result_first": 0.0}
    bad = ["[1, 2, 3]", "{}", '"0-1-0"', json.dumps({"id": "0-1-0"}), json.dumps({**game0, "id": "0-1-9"}),
           json.dumps({**game0, "first": "greedy", "second": "random"}), json.dumps({**game0, "result_first": 2})]
    lines, report, warning = _resumed(cfg, tmp_path, bad, at=1)
    assert "moved 7 unreadable line(s)" in warning and "line 2: a JSON list, not a game record" in warning
    assert report.games == 4 and (tmp_path / "results.jsonl").read_text().splitlines() == lines
    assert (tmp_path / "results.jsonl.rejected").read_text().splitlines() == bad
    # the rejected lines stay aside: the next resume has nothing to warn about
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert run_tournament(cfg, out=str(tmp_path), progress=False, echo=None).games == 4


def test_cli_out_that_cannot_be_written(tmp_path, capsys):
    mine = tmp_path / "file.txt"
    mine.write_text("mine\n")
    for out in (mine, mine / "sub"):
        rc = cli_main(["tournament", "--board", "2x2", "--agents", "random,greedy", "--games", "2", "--workers", "1",
                       "--no-progress", "--out", str(out)])
        captured = capsys.readouterr()
        assert rc == 2 and captured.out == ""  # an error, and no game played
        assert f"dnb: error: cannot write results to the folder {out}: " in captured.err and "Traceback" not in captured.err
    assert mine.read_text() == "mine\n"


@pytest.mark.parametrize("flags, message", [
    (["--openings", "50"], "openings must be in 0..11 (a 2x2 board has 12 edges), got 50"),
    (["--openings", "12:pure"], "openings must be in 0..11 (a 2x2 board has 12 edges), got 12"),
    (["--bootstrap", "-1"], "bootstrap must be in 0..10,000, got -1"),
    (["--games", "-2"], "games must be >= 1, got -2"),
    (["--workers", "-1"], "--workers must be at least 1, got -1"),
    (["--threads", "0"], "--threads must be at least 1, got 0"),
    # refused before the schedule is built (1e12 games grew to 1.5 GB in 8 s) or a process is spawned
    (["--games", "1000000000000"], "at most 1,000,000 games in all (pairs x games per pair), got 1 pair x "
                                   "1,000,000,000,000 games"),
    (["--games", "2000000", "--agents", "random,greedy,alphabeta"], "got 3 pairs x 2,000,000 games"),
    (["--workers", "100000"], f"--workers must be at most {machine_cpus()} (the CPUs of this machine), got 100,000"),
    (["--threads", "100000"], f"--threads must be at most {machine_cpus()} (the CPUs of this machine), got 100,000"),
    (["--workers", "100000", "--backend", "ray"], "workers must be at most 1024, got 100000"),
    # what only building the agent finds, found before the results folder is made
    (["--agents", "random,dotsformer:checkpoint=nowhere.pt"], "checkpoint nowhere.pt does not exist"),
    (["--agents", f"random,dotsformer:checkpoint={os.path.dirname(__file__)}/../agents/checkpoints/dotsformer-3x3.pt"],
     "is for board 3x3, not 2x2"),
])
def test_cli_rejects_tournaments_that_cannot_be_played(flags, message, capsys, monkeypatch, tmp_path):
    import agents.arena.runners

    monkeypatch.setattr(agents.arena.runners, "worker_pool", lambda *a: pytest.fail("a worker pool was started"))
    out = tmp_path / "t"
    assert cli_main(["tournament", "--board", "2x2", "--agents", "random,greedy", "--no-progress", "--out", str(out),
                     *flags]) == 2
    assert message in capsys.readouterr().err
    assert not out.exists()


def test_workers_are_capped_at_the_games_to_play(monkeypatch, capsys):
    import agents.arena.runners

    asked = []
    real = agents.arena.runners.worker_pool
    monkeypatch.setattr(agents.arena.runners, "worker_pool",
                        lambda workers, *rest: asked.append(workers) or real(workers, *rest))
    monkeypatch.setattr("dnb_env.limits.machine_cpus", lambda: 64)  # a machine with 64 CPUs
    assert cli_main(["tournament", "--board", "1x1", "--agents", "random,greedy", "--games", "2", "--workers", "64",
                     "--no-progress"]) == 0
    assert asked == [2]  # two processes for a two-game run, not 64


def test_read_jsonl_keeps_good_lines_and_ends_the_last_one(tmp_path):
    from dnb_env.io import read_jsonl

    path = tmp_path / "rows.jsonl"
    path.write_bytes(b'{"a": 1}\n\n{"a": 2}')  # a valid last line without its newline
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # nothing to move aside, nothing to warn about
        assert read_jsonl(str(path)) == [{"a": 1}, {"a": 2}]
    assert path.read_bytes() == b'{"a": 1}\n\n{"a": 2}\n' and not (tmp_path / "rows.jsonl.rejected").exists()
    assert read_jsonl(str(tmp_path / "none.jsonl")) == []


def test_one_worker_plays_in_process_with_the_thread_option_and_restores_it(monkeypatch):
    import torch

    from agents.base import FunctionAgent

    seen = []

    def spy():
        def move(s):
            seen.append((torch.get_num_threads(), os.environ["OMP_NUM_THREADS"]))
            return s.legal_actions()[0]

        return FunctionAgent(move, name="spy")

    monkeypatch.setenv("OMP_NUM_THREADS", "7")
    before = torch.get_num_threads()
    target = 2 if before != 2 else 3
    cfg = TournamentConfig(board="1x1", agents=("spy", "random"), games=2, workers=1, threads=target, bootstrap=0)
    run_tournament(cfg, agents=[("spy", spy), "random"], progress=False, echo=None)
    assert seen and set(seen) == {(target, str(target))}
    assert torch.get_num_threads() == before and os.environ["OMP_NUM_THREADS"] == "7"


def test_the_arena_takes_factories_and_builds_specs_only_with_a_builder():
    """agents.arena knows no names: spec entries need the builder the registry passes."""
    import agents.arena
    from baselines.greedy import GreedyAgent
    from baselines.random_agent import RandomAgent
    from registry.specs import agent_from_spec

    cfg = TournamentConfig(board="2x2", agents=("random", "greedy"), games=4, bootstrap=0)
    with pytest.raises(ValueError, match="builder"):
        agents.arena.run_tournament(cfg, progress=False, echo=None)
    built = agents.arena.run_tournament(cfg, progress=False, echo=None, build=agent_from_spec)
    named = run_tournament(cfg, progress=False, echo=None)
    assert (built.wdl == named.wdl).all()
    pairs = agents.arena.run_tournament(cfg, agents=[("random", RandomAgent), ("greedy", GreedyAgent)],
                                        progress=False, echo=None)
    assert pairs.games == 4
    with pytest.raises(ValueError, match="unknown agent"):
        run_tournament(TournamentConfig(board="2x2", agents=("random", "nobody"), games=2), progress=False, echo=None)


def test_heatmap_numbers_contrast_with_their_cells(tmp_path, monkeypatch):
    """White numbers on the dark ends of the colour map (scores near 0 or 1), black on the light middle."""
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    from agents.arena.output import plot

    cfg = TournamentConfig(board="2x2", agents=("greedy", "random"), games=4, bootstrap=0)
    report = run_tournament(cfg, out=str(tmp_path), progress=False, echo=None)
    figures = []
    monkeypatch.setattr(plt, "close", figures.append)
    plot(report, str(tmp_path / "again.png"))
    texts = figures[0].axes[1].texts
    assert texts
    for t in texts:
        score = float(t.get_text())
        assert t.get_color() == ("white" if abs(score - 0.5) > 0.3 else "black"), (score, t.get_color())


def _paired_match_module():
    from conftest import load_script

    return load_script("benchmarks/paired_match.py")


def test_paired_match_compares_two_runs_of_one_schedule_game_by_game(tmp_path, capsys):
    bench = _paired_match_module()
    # the same schedule (seed, openings, games); only random's opponent changes
    for name, opponent in (("a", "greedy"), ("b", "alphabeta:depth=2")):
        cfg = TournamentConfig(board="2x2", agents=("random", opponent), games=30, openings=2, seed=3, bootstrap=0)
        run_tournament(cfg, out=str(tmp_path / name), progress=False, echo=None)
    recs = {n: {json.loads(x)["id"]: json.loads(x) for x in (tmp_path / n / "results.jsonl").read_text().splitlines()}
            for n in "ab"}
    assert recs["a"].keys() == recs["b"].keys()

    def score(r):
        return r["result_first"] if r["first"] == "random" else 1 - r["result_first"]

    xs = [score(recs["a"][i]) for i in recs["a"]]
    ys = [score(recs["b"][i]) for i in recs["a"]]
    r = bench.main([str(tmp_path / "a"), str(tmp_path / "b"), "--agent", "random",
                    "--json", str(tmp_path / "r.json")])
    decided = [(x, y) for x, y in zip(xs, ys) if x in (0, 1) and y in (0, 1)]
    assert r["games"] == 30 and r["score_a"] == pytest.approx(sum(xs) / 30)
    assert r["score_b"] == pytest.approx(sum(ys) / 30)
    assert r["only_a"] == sum(1 for x, y in decided if x == 1 and y == 0)
    assert r["only_b"] == sum(1 for x, y in decided if x == 0 and y == 1)
    assert r["draws_left_out"] == 30 - len(decided)
    assert json.loads((tmp_path / "r.json").read_text())["games"] == 30
    assert "paired difference" in capsys.readouterr().out
    # swapping the runs flips the difference
    back = bench.compare(bench._games(str(tmp_path / "b")), bench._games(str(tmp_path / "a")), "random")
    assert back["difference"] == pytest.approx(-r["difference"]) and back["only_a"] == r["only_b"]
    # an agent that is not exactly one player of every game, and runs of other schedules, are refused
    with pytest.raises(SystemExit, match="exactly one of the two players"):
        bench.main([str(tmp_path / "a"), str(tmp_path / "b"), "--agent", "mcts"])
    other = TournamentConfig(board="2x2", agents=("random", "greedy"), games=30, openings=2, seed=4, bootstrap=0)
    run_tournament(other, out=str(tmp_path / "c"), progress=False, echo=None)
    with pytest.raises(SystemExit, match="another opening"):
        bench.main([str(tmp_path / "a"), str(tmp_path / "c"), "--agent", "random"])
    with pytest.raises(SystemExit, match="no results"):
        bench.main([str(tmp_path / "a"), str(tmp_path / "missing"), "--agent", "random"])


def test_paired_match_keeps_the_games_against_one_opponent(tmp_path):
    bench = _paired_match_module()
    for name, last in (("a", "alphabeta:depth=2"), ("b", "alphabeta:depth=1")):
        cfg = TournamentConfig(board="2x2", agents=("random", "greedy", last), games=10, openings=2, seed=3,
                               bootstrap=0, mode="gauntlet")
        run_tournament(cfg, out=str(tmp_path / name), progress=False, echo=None)
    games = {n: bench._games(str(tmp_path / n)) for n in "ab"}
    assert bench.compare(games["a"], games["b"], "random")["games"] == 20
    vs_greedy = bench.compare(games["a"], games["b"], "random", "greedy")
    vs_ab = bench.compare(games["a"], games["b"], "random", "alphabeta")  # the family: both runs' opponents
    assert vs_greedy["games"] == 10 and vs_ab["games"] == 10
    # against the same opponent, same openings and seeds: the same games, so no game differs
    assert vs_greedy["only_a"] == vs_greedy["only_b"] == 0
    mine = [g for g in games["a"] if "greedy" in (g["first"], g["second"])]
    assert vs_greedy["score_a"] == pytest.approx(
        sum(g["result_first"] if g["first"] == "random" else 1 - g["result_first"] for g in mine) / 10)
    with pytest.raises(ValueError, match="no game in common"):
        bench.compare(games["a"], games["b"], "random", "alphabeta:depth=2")


def _labelled(spec: str) -> tuple[str, str]:
    """A describer for the arena, the registry's way: ``greedy:tag=T`` is labelled ``T``, and its option
    ``note`` does not change play (left out of its identity)."""
    name, _, rest = spec.partition(":")
    options = dict(p.split("=") for p in rest.split(",") if p)
    identity = name + "".join(f",{k}={v}" for k, v in options.items() if k != "note")
    return options.get("tag", identity), identity


def _build_tagged(spec: str, board: str, seed: int):
    from registry.specs import agent_from_spec

    return agent_from_spec(spec.partition(":")[0], board, seed)


def test_the_arena_labels_specs_as_described_and_resumes_by_their_identity(tmp_path):
    from agents.arena import run_tournament as arena_tournament

    def play(entries, games):
        cfg = TournamentConfig(board="2x2", agents=entries, games=games, bootstrap=0)
        return arena_tournament(cfg, out=str(tmp_path), progress=False, echo=None, build=_build_tagged,
                                describe=_labelled)

    report = play(("greedy:tag=g1,note=a", "random"), 2)
    assert report.labels == ["g1", "random"]
    games = [json.loads(line) for line in open(tmp_path / "results.jsonl")]
    assert {r["first"] for r in games} | {r["second"] for r in games} == {"g1", "random"}
    report = play(("greedy:tag=g1,note=b", "random"), 4)  # another note: the same tournament, extended
    assert report.wdl.sum() == 8 and len(open(tmp_path / "results.jsonl").readlines()) == 4
    with pytest.raises(ValueError, match="another config"):
        play(("greedy:tag=g2,note=b", "random"), 4)
    with pytest.raises(ValueError, match="two agents of the tournament are labelled 'random'"):
        play(("greedy:tag=random", "random"), 4)


class _BreaksOnThirdMove:
    """An agent whose third move of a game raises (a bug inside an agent of this process)."""

    name = "breaks"

    def __init__(self):
        self.moves = 0

    def reset(self) -> None:
        self.moves = 0

    def select_action(self, state):
        self.moves += 1
        if self.moves == 3:
            raise ValueError("out of ideas")
        return state.legal_actions()[0]


@pytest.mark.parametrize("workers", [1, 2])
def test_an_agent_that_raises_loses_its_game_by_forfeit_and_the_run_goes_on(tmp_path, workers):
    cfg = TournamentConfig(board="3x3", agents=("breaks", "greedy"), games=4, seed=0, bootstrap=0, workers=workers)
    report = run_tournament(cfg, out=str(tmp_path), agents=[("breaks", _BreaksOnThirdMove), "greedy"],
                            progress=False, echo=None)
    records = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert report.games == len(records) == 4
    for rec in records:
        seat = 0 if rec["first"] == "breaks" else 1
        assert rec["forfeit"] == {"player": seat, "kind": "error", "reason": "ValueError: out of ideas"}
        assert rec["moves_by"][seat] == 3 and rec["result_first"] == (0.0 if seat == 0 else 1.0)
    assert report.think[0, 3] == 4 and report.think[1, 3] == 0  # the forfeits the report counts
    assert (tmp_path / "elo.csv").read_text().splitlines()[1].split(",")[7] == "4"


@pytest.mark.parametrize("error", [MemoryError, KeyboardInterrupt, SystemExit])
def test_running_out_of_memory_or_an_interrupt_inside_an_agent_still_stops_the_run(error):
    from agents.arena.play import play_game
    from agents.base import FunctionAgent

    def move(state):
        raise error()

    with pytest.raises(error):
        play_game("2x2", FunctionAgent(move, name="stops"), _first_legal())


def test_a_tournament_on_a_board_beyond_the_native_solver_plays_its_games(tmp_path):
    """prsboxes on 13x3 (past the 12x12 of the alpha-beta solver) plays instead of failing every game."""
    cfg = TournamentConfig(board="13x3", agents=("prsboxes:search_nodes=2000,search_depth=4", "greedy"), games=2,
                           seed=0, bootstrap=0, workers=1)
    report = run_tournament(cfg, out=str(tmp_path), progress=False, echo=None)
    records = [json.loads(line) for line in (tmp_path / "results.jsonl").read_text().splitlines()]
    assert report.games == 2 and not any("forfeit" in rec for rec in records)
