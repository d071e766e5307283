"""The Ray backend: tournaments as Ray tasks, self-play actors, faults, and the errors made before any work.

All tests that need Ray share one local instance of 2 CPUs (started once for this module); the tests of
errors that Ray's absence or a bad address must give run without it.
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys

import pytest

from agents.arena import TournamentConfig
from registry.tournaments import run_tournament
from agents.ray_cluster import RaySession, check_reachable
from registry.cli import main as cli_main
from conftest import Killed, kill_at


@pytest.fixture(scope="module")
def ray_local():
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'dnb-env[ray]')")
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


def _untimed(path) -> list[list[str]]:
    """The rows of a results CSV without its columns of seconds (``*_s``)."""
    import csv

    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    keep = [i for i, name in enumerate(rows[0]) if not name.endswith("_s")]
    assert len(keep) >= 4
    return [[row[i] for i in keep] for row in rows]


TOUR = dict(board="2x2", agents=("random", "greedy", "alphabeta:depth=1"), games=4, openings=2, seed=3, bootstrap=20)


def test_ray_tournament_plays_the_local_games_and_resumes_either_way(tmp_path, ray_local):
    local = run_tournament(TournamentConfig(**TOUR), out=str(tmp_path / "local"), progress=False, echo=None)
    ray = run_tournament(TournamentConfig(**TOUR, backend="ray"), out=str(tmp_path / "ray"), progress=False,
                         echo=None)
    assert len(_games(tmp_path / "ray")) == 12 and _games(tmp_path / "ray") == _games(tmp_path / "local")
    assert (ray.wdl == local.wdl).all() and (ray.elo == local.elo).all() and (ray.elo_ci == local.elo_ci).all()
    for name in ("pairs.csv", "elo.csv"):  # the same, but for the think times (seconds) that no two runs share
        assert _untimed(tmp_path / "ray" / name) == _untimed(tmp_path / "local" / name)
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


def test_a_game_whose_worker_dies_is_played_again_by_ray(tmp_path, ray_local):
    from baselines.greedy import GreedyAgent

    marker = str(tmp_path / "die")
    open(marker, "w").close()

    def mortal():  # greedy, but the first move made anywhere kills its worker process (once)
        import os

        class Mortal(GreedyAgent):
            def select_action(self, state):
                try:
                    os.rename(marker, marker + ".taken")
                except FileNotFoundError:
                    return super().select_action(state)
                os._exit(1)

        return Mortal()

    cfg = TournamentConfig(board="2x2", agents=("mortal", "random"), games=6, openings=2, seed=5, bootstrap=0)
    run_tournament(cfg, out=str(tmp_path / "local"), agents=[("mortal", GreedyAgent), "random"], progress=False,
                   echo=None)
    run_tournament(dataclasses.replace(cfg, backend="ray"), out=str(tmp_path / "ray"),
                   agents=[("mortal", mortal), "random"], progress=False, echo=None)
    assert os.path.exists(marker + ".taken")  # a worker died, and its game was played again whole
    assert _games(tmp_path / "ray") == _games(tmp_path / "local") and len(_games(tmp_path / "ray")) == 6


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
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'dnb-env[ray]')")
    out = tmp_path / "t"
    code = cli_main(["tournament", "--board", "2x2", "--agents", "random,greedy", "--games", "2", "--backend", "ray",
                     "--ray-address", "127.0.0.1:1", "--out", str(out), "--no-progress"])
    assert code == 2 and "cannot reach a Ray cluster at 127.0.0.1:1" in capsys.readouterr().err
    assert not out.exists()
    with pytest.raises(ValueError, match="auto or HOST:PORT"):
        check_reachable("10.0.0.5")
    check_reachable("auto")  # left to Ray: it looks for the cluster this machine joined


def test_ray_missing_names_the_extra(tmp_path, no_ray, capsys):
    with pytest.raises(ValueError, match=r"needs Ray, which is not installed .*pip install 'dnb-env\[ray\]'"):
        RaySession()
    out = tmp_path / "t"
    assert cli_main(["tournament", "--board", "2x2", "--agents", "random,greedy", "--games", "2", "--backend", "ray",
                     "--out", str(out), "--no-progress"]) == 2
    assert "pip install 'dnb-env[ray]'" in capsys.readouterr().err and not out.exists()


# ------------------------------------------------------------------------------------------ training
def tiny(**kw):
    from agents.training.config import make_train_config

    base = dict(board="2x2", iterations=2, games_per_iteration=5, simulations=16, eval_positions=0, eval_games=0,
                node_q=0.0, **{"model.width": 8})
    return make_train_config("resnet", "cpu", **{**base, **kw})


QUIET = dict(progress=False, echo=lambda *_: None)


def _replay(folder):
    from agents.training.replay import Replay

    manifest = json.loads((folder / "manifest.json").read_text())
    return Replay.load(str(folder / manifest["dir"] / "replay.npz")).samples.arrays()


def _assert_same_samples(x, y):
    import numpy as np

    assert x.keys() == y.keys() and len(x["step"]) == len(y["step"])
    for key in x:
        if x[key].dtype.kind == "f":
            np.testing.assert_allclose(x[key], y[key], atol=1e-6)
        else:
            np.testing.assert_array_equal(x[key], y[key])


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    """The reference: ``tiny()`` trained on the local backend (its folder and metrics rows)."""
    from agents.training.loop import train

    folder = tmp_path_factory.mktemp("local")
    return folder, train(tiny(), str(folder), **QUIET)


def test_ray_self_play_gives_the_local_samples_and_a_run_moves_between_backends(tmp_path, ray_local, local_run):
    """A run killed in iteration 2's commit resumes on the other backend, either way, to the local run's samples
    and counts (the two-node test below compares a whole Ray run with the local one)."""
    from agents.training.loop import train

    reference, local = local_run
    for first, then in (("ray", "local"), ("local", "ray")):
        out = tmp_path / f"{first}-killed"
        with pytest.raises(Killed):
            train(tiny(backend=first, workers=2), str(out), fault=kill_at("manifest"), **QUIET)
        assert json.loads((out / "manifest.json").read_text())["iteration"] == 1
        assert json.loads((out / "config.json").read_text())["backend"] == first
        rows = train(tiny(backend=then, workers=2), str(out), resume=True, **QUIET)
        assert [r["iteration"] for r in rows] == [1, 2]
        _assert_same_samples(_replay(out), _replay(reference))
        for a, b in zip(local, rows):  # iteration 1 played on one backend, iteration 2 on the other
            assert (a["games"], a["positions"], a["nodes"]) == (b["games"], b["positions"], b["nodes"])
            assert (a["games"], a["nodes"]) == (5, 0)
            assert b["policy_loss"] == pytest.approx(a["policy_loss"], rel=1e-4)


TWO_NODES = """
import json, sys
import ray
from ray.cluster_utils import Cluster
from agents.arena import TournamentConfig
from registry.tournaments import run_tournament
from agents.training.config import from_dict
from agents.training.loop import train

out, config, tour = sys.argv[1], from_dict(json.loads(sys.argv[2])), json.loads(sys.argv[3])
cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
cluster.add_node(num_cpus=1)  # a second raylet with its own object store: a two-machine cluster on one host
cluster.wait_for_nodes()
try:
    ray.init(address=cluster.address, log_to_driver=False, configure_logging=False)
    train(config, out + "/train", ray_address=cluster.address, progress=False, echo=lambda *_: None)
    run_tournament(TournamentConfig(**tour, backend="ray", ray_address=cluster.address), out=out + "/tour",
                   progress=False, echo=None)
    actors = [a for a in ray._private.state.actors().values() if a["ActorClassName"].endswith("SelfPlayActor")]
    nodes = {a["Address"]["NodeID"] for a in actors}
    print(json.dumps({"nodes": len(ray.nodes()), "actors": len(actors), "actor_nodes": len(nodes)}))
finally:
    ray.shutdown()
    cluster.shutdown()
"""


def test_a_two_node_cluster_plays_the_local_samples_and_games(tmp_path, ray_local, local_run):
    """`--ray-address` on a real multi-node Ray cluster (two raylets, two object stores, here on one host): one
    self-play actor per node, and the samples and tournament games of the local backend."""
    import subprocess

    from agents.training.config import to_dict

    config = json.dumps(to_dict(tiny(backend="ray", workers=2)))
    done = subprocess.run([sys.executable, "-c", TWO_NODES, str(tmp_path), config, json.dumps(TOUR)],
                          capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stderr[-3000:]
    placed = json.loads(done.stdout.strip().splitlines()[-1])
    assert placed == {"nodes": 2, "actors": 2, "actor_nodes": 2}
    _assert_same_samples(_replay(tmp_path / "train"), _replay(local_run[0]))
    local = run_tournament(TournamentConfig(**TOUR), out=str(tmp_path / "local"), progress=False, echo=None)
    assert _games(tmp_path / "tour") == _games(tmp_path / "local") and local.games == 12


def test_a_multi_board_run_on_ray_plays_the_local_games(tmp_path, ray_local):
    """A 2x2 + 2x3 run (test_board_mix.py's tiny_mix) on Ray: the local run's samples and evaluation scores."""
    import numpy as np

    from agents.training.loop import train
    from test_board_mix import _state, tiny_mix

    small = dict(iterations=1, eval_positions=0, eval_games=2, workers=2)
    local = train(tiny_mix(**small), str(tmp_path / "local"), **QUIET)[0]
    ray = train(tiny_mix(**small, backend="ray"), str(tmp_path / "ray"), **QUIET)[0]
    (_, x, _, _), (_, y, _, _) = _state(tmp_path / "local"), _state(tmp_path / "ray")
    assert x.keys() == y.keys()
    for key in x:
        np.testing.assert_allclose(x[key], y[key], atol=1e-6) if x[key].dtype.kind == "f" else np.testing.assert_array_equal(x[key], y[key])
    scores = [k for k in local if k.startswith("win_rate_vs_")]
    assert len(scores) == 4 and {k: ray[k] for k in scores} == {k: local[k] for k in scores}


def test_ray_evaluation_games_give_the_local_scores(tmp_path, ray_local):
    """With --backend ray the raw policy's games against random and greedy are played on a self-play actor,
    in the local order with the same generators: the same scores in every metrics row (2x2)."""
    from agents.training.loop import train

    cfg = dict(eval_games=6, eval_every=1, iterations=2)
    local = train(tiny(**cfg), str(tmp_path / "local"), **QUIET)
    ray = train(tiny(backend="ray", workers=2, **cfg), str(tmp_path / "ray"), **QUIET)
    keys = ("win_rate_vs_random", "win_rate_vs_greedy")
    assert [[r[k] for k in keys] for r in ray] == [[r[k] for k in keys] for r in local]
    assert len(ray) == 2 and len({tuple(r[k] for k in keys) for r in local}) == 2  # two networks, two scores


def test_ray_evaluation_shares_match_score_against_directly(ray_local):
    """The evaluation games split over two actors against the local function on the same network: the same
    scores; and a game's result depends on nothing but its task (any subset, in any order, gives the same)."""
    from agents.models import build_model
    from agents.models.evaluator import NetworkEvaluator
    from agents.network_agent import PolicyAgent
    from agents.training.evaluation import (default_opponents, evaluation_games, play_evaluation_games,
                                            score_against)
    from agents.training.selfplay_ray import RaySelfPlay

    cfg = tiny(backend="ray", workers=2)
    net = build_model(cfg.model).eval()
    pool = RaySelfPlay(cfg)
    try:
        for it in (1, 2):
            want = score_against(PolicyAgent(NetworkEvaluator(net, "cpu")), default_opponents(3), cfg.board, 5,
                                 seed=10 + it)
            got = pool.score_against(net, default_opponents(99), 5, seed=10 + it)  # the opponents' own seeds do not matter
            assert got == want and set(got) == {"win_rate_vs_random", "win_rate_vs_greedy"}
    finally:
        pool.close()
    tasks = evaluation_games(default_opponents(0), 6)
    player = PolicyAgent(NetworkEvaluator(net, "cpu"))
    full = play_evaluation_games(player, default_opponents(0), cfg.board, tasks, seed=4)
    backwards = play_evaluation_games(player, default_opponents(0), cfg.board, tasks[::-1], seed=4)
    assert backwards[::-1] == full and len(set(full)) > 1
    assert play_evaluation_games(player, default_opponents(0), cfg.board, tasks, seed=5) != full


def test_an_actor_killed_mid_iteration_is_restarted_and_its_share_replayed_whole(tmp_path, ray_local, local_run):
    from agents.training.loop import train

    before = set(ray_local.util.list_named_actors())
    killed = []

    def fault(stage):
        if stage == "self_play" and not killed:  # iteration 1: the shares are being played
            name = sorted(n for n in ray_local.util.list_named_actors() if n not in before)[0]
            ray_local.kill(ray_local.get_actor(name), no_restart=False)
            killed.append(name)

    rows = train(tiny(backend="ray", workers=2), str(tmp_path / "ray"), fault=fault, **QUIET)
    assert killed and [r["iteration"] for r in rows] == [1, 2]  # iteration 2 ran on the restarted actor
    _assert_same_samples(_replay(tmp_path / "ray"), _replay(local_run[0]))  # nothing twice, nothing cut


def test_an_actor_that_dies_after_playing_its_share_is_replayed_once(tmp_path, ray_local):
    from agents.models import build_model
    from agents.training.selfplay import self_play
    from agents.training.selfplay_ray import RaySelfPlay

    cfg = tiny(backend="ray", workers=2)
    net = build_model(cfg.model)
    marker = tmp_path / "die"
    marker.write_text("")
    pool = RaySelfPlay(cfg, crash_marker=str(marker))
    try:
        samples, stats = pool.play(net, 1, 6)
    finally:
        pool.close()
    assert (tmp_path / "die.taken").exists() and not marker.exists()  # one actor died, once
    expected, want = self_play(net, tiny(), 1, 6)
    _assert_same_samples(samples.arrays(), expected.arrays())
    assert (stats["games"], stats["positions"]) == (want["games"], want["positions"]) == (5, want["positions"])


def test_shared_inference_trains_and_gives_samples_of_the_local_count_and_shapes(tmp_path, ray_local, local_run):
    """``inference=shared``: one inference actor evaluates the self-play actors' leaf batches (here 1 actor and
    the inference actor, the test instance's 2 CPUs). Not compared with the local samples for equality: the
    forward passes run over other batches of rows, so the floats differ in their last bits and a search may
    play another move; the counts, keys, shapes and dtypes are the local run's. The option may change on
    resume, and without the ray backend it is an error."""
    from agents.models import build_model
    from agents.training.overrides import parse_settings
    from agents.training.loop import train
    from agents.training.selfplay_ray import RaySelfPlay

    reference, local = local_run
    out = tmp_path / "shared"
    rows = train(tiny(backend="ray", workers=1, inference="shared"), str(out), **QUIET)
    assert [r["iteration"] for r in rows] == [1, 2]
    assert json.loads((out / "manifest.json").read_text())["iteration"] == 2
    assert json.loads((out / "config.json").read_text())["inference"] == "shared"
    for a, b in zip(local, rows):
        assert (a["games"], a["positions"], a["nodes"]) == (b["games"], b["positions"], b["nodes"])
    got, want = _replay(out), _replay(reference)
    assert got.keys() == want.keys()
    for key in want:
        assert (got[key].shape, got[key].dtype) == (want[key].shape, want[key].dtype), key
    # resumed with per-actor inference for a third iteration
    rows = train(tiny(backend="ray", workers=2, iterations=3), str(out), resume=True, **QUIET)
    assert [r["iteration"] for r in rows] == [1, 2, 3]
    # the leaves went through the inference actor: one request per evaluator call
    cfg = tiny(backend="ray", workers=1, inference="shared")
    pool = RaySelfPlay(cfg)
    try:
        samples, stats = pool.play(build_model(cfg.model), 1, 0)
        counts = ray_local.get(pool.inference.counts.remote())
    finally:
        pool.close()
    assert stats["games"] == 5 and len(samples) == stats["positions"] == 5 * 12
    assert counts["requests"] == stats["network_calls"] > 0 and 0 < counts["forwards"] <= counts["requests"]
    assert parse_settings("resnet", ["inference=shared"]) == {"inference": "shared"}
    assert tiny(inference="shared").inference == "shared"  # on the local backend too: one inference process
    with pytest.raises(ValueError, match="inference must be 'local', 'shared' or 'auto'"):
        tiny(backend="ray", inference="gpu")


def test_ray_training_bad_input_changes_nothing(tmp_path, ray_local, monkeypatch, capsys):
    from agents.training.loop import train

    out = tmp_path / "run"
    with pytest.raises(ValueError, match=r"self-play \(3 actors x 1 threads\) asks for 3 CPUs at once but the Ray "
                                         r"cluster has 2"):
        train(tiny(backend="ray", workers=3), str(out), **QUIET)
    assert not out.exists()
    with pytest.raises(ValueError, match="a Ray address is used only with the ray backend"):
        train(tiny(), str(out), ray_address="auto", **QUIET)
    monkeypatch.setattr("torch.cuda.is_available", lambda: False)
    with pytest.raises(ValueError, match="device 'cuda' asked for, but torch sees no CUDA GPU"):
        train(tiny(backend="ray", device="cuda"), str(out), **QUIET)
    assert not out.exists()
    with pytest.raises(ValueError, match="backend must be 'local' or 'ray'"):
        tiny(backend="dask")


def test_train_cli_on_ray(tmp_path, ray_local, capsys):
    out = tmp_path / "run"
    assert cli_main(["train", "--board", "2x2", "--iterations", "1", "--games", "2", "--simulations", "8", "--out",
                     str(out), "--backend", "ray", "--set", "workers=2", "--set", "model.width=8", "--set",
                     "eval_positions=0", "--set", "eval_games=0", "--no-progress"]) == 0
    config = json.loads((out / "config.json").read_text())
    assert (config["backend"], config["workers"]) == ("ray", 2)
    assert [json.loads(x)["games"] for x in (out / "metrics.jsonl").read_text().splitlines()] == [2]


def test_train_cli_errors_before_any_work(tmp_path, capsys):
    pytest.importorskip("ray", reason="Ray is not installed (pip install 'dnb-env[ray]')")
    out = tmp_path / "run"
    code = cli_main(["train", "--board", "2x2", "--iterations", "1", "--out", str(out), "--backend", "ray",
                     "--ray-address", "127.0.0.1:1", "--no-progress"])
    assert code == 2 and "cannot reach a Ray cluster at 127.0.0.1:1" in capsys.readouterr().err
    assert not out.exists()


def test_train_without_ray_names_the_extra(tmp_path, no_ray, capsys):
    out = tmp_path / "run"
    assert cli_main(["train", "--board", "2x2", "--iterations", "1", "--out", str(out), "--backend", "ray",
                     "--no-progress"]) == 2
    assert "pip install 'dnb-env[ray]'" in capsys.readouterr().err and not out.exists()


# ------------------------------------------------------------------------------------------ RLlib
@pytest.fixture(scope="module")
def rllib_example():
    """``examples/rllib_ppo.py`` as a module (skips where RLlib's dependencies are missing)."""
    pytest.importorskip("ray.rllib.algorithms.ppo",
                        reason="RLlib's dependencies are not installed (pip install 'dnb-env[ray]')")
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[1] / "examples" / "rllib_ppo.py"
    spec = importlib.util.spec_from_file_location("rllib_ppo", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_rllib_ppo_example_smoke(tmp_path, ray_local, rllib_example):
    mod = rllib_example
    import numpy as np

    # RLlib's PettingZoo wrapper: the extra turn is the same agent observed again, with the mask renamed for RLlib
    env = mod.make_env({"board": "2x2"})
    obs, _ = env.reset(seed=0)
    for agent, action in [("player_0", 0), ("player_1", 6), ("player_0", 2), ("player_1", 4), ("player_0", 7)]:
        assert list(obs) == [agent]
        obs, rewards, terminated, _, _ = env.step({agent: action})
    assert list(obs) == ["player_0"] and not terminated["__all__"]
    mask = obs["player_0"]["action_mask"]
    assert mask.dtype == np.float32 and np.flatnonzero(mask == 0).tolist() == [0, 2, 4, 6, 7]
    assert obs["player_0"]["observations"].shape == env.observation_spaces["player_0"]["observations"].shape
    # the module: logits of masked moves at the float minimum, the others the network's
    import torch

    space = env.observation_spaces["player_0"]
    module = mod.masked_module_class()(observation_space=space, action_space=env.action_spaces["player_0"],
                                       model_config={"fcnet_hiddens": [8], "head_fcnet_hiddens": [8]})
    batch = {"obs": {k: torch.from_numpy(v[None]) for k, v in obs["player_0"].items()}}
    logits = module.forward_inference(batch)["action_dist_inputs"][0]
    assert (logits[mask == 0] == torch.finfo(torch.float32).min).all() and (logits[mask == 1].abs() < 1e3).all()
    summary = mod.main(["--board", "2x2", "--iterations", "2", "--batch", "200", "--minibatch", "64", "--epochs", "1",
                        "--hidden", "16", "--eval-games", "10", "--out", str(tmp_path)])
    assert [h["num_env_steps_sampled"] for h in summary["history"]] == [200, 200]
    for name in ("random", "greedy"):
        s = summary[name]
        assert s["wins"] + s["draws"] + s["losses"] == 10
        assert 0.0 <= s["ci95"][0] <= s["score"] <= s["ci95"][1] <= 1.0
    assert json.loads((tmp_path / "summary.json").read_text())["config"]["board"] == "2x2"
    assert ray_local.is_initialized()  # it joined the Ray of this process and left it running


def test_rllib_fixed_opponent_env_and_run(tmp_path, ray_local, rllib_example):
    mod = rllib_example
    import numpy as np

    env = mod.make_env({"board": "2x2", "opponent": "greedy", "seed": 3})
    for game in range(4):
        learner = ("player_0", "player_1")[game % 2]  # the learner's seat alternates
        obs, _ = env.reset()
        state = env.env.unwrapped.state_
        assert list(obs) == [learner] and state.current_player == game % 2
        if game % 2:  # greedy opened the game: one move on an empty board
            assert len(state.history) == 1
        rewards, terminated = {}, {"__all__": False}
        while not terminated["__all__"]:
            assert list(obs) == [learner] and env.env.unwrapped.state_.current_player == game % 2
            legal = np.flatnonzero(obs[learner]["action_mask"])
            before = env.env.unwrapped.state_
            obs, rewards, terminated, _, _ = env.step({learner: int(legal[-1])})
            after = env.env.unwrapped.state_
            # every opponent move in between is one a greedy player may make: it takes a box when it can
            replies = after.history[len(before.history) + 1:]
            s = before.apply(int(legal[-1]))
            for move in replies:
                assert s.current_player != game % 2
                if any(s.apply(a).scores[s.current_player] > s.scores[s.current_player] for a in s.legal_actions()):
                    assert s.apply(move).scores[s.current_player] > s.scores[s.current_player]
                s = s.apply(move)
            assert s.history == after.history
        final = env.env.unwrapped.state_
        assert final.is_terminal() and list(rewards) == [learner]
        assert rewards[learner] == final.returns()[game % 2]
    with pytest.raises(ValueError, match="not player_1's turn|game is over"):
        env.step({"player_1": 0})
    with pytest.raises(ValueError, match="unknown agent 'nobody'"):
        mod.main(["--board", "2x2", "--opponent", "nobody", "--out", str(tmp_path / "bad")])
    assert not (tmp_path / "bad").exists()
    summary = mod.main(["--board", "2x2", "--opponent", "greedy", "--iterations", "1", "--batch", "100",
                        "--minibatch", "50", "--epochs", "1", "--hidden", "16", "--eval-games", "4",
                        "--out", str(tmp_path)])
    assert summary["config"]["opponent"] == "greedy"
    assert summary["history"][0]["num_env_steps_sampled"] == 100  # the learner's moves only
    assert sum(summary["greedy"][k] for k in ("wins", "draws", "losses")) == 4


def test_the_ray_extra_is_in_all_and_leaves_gymnasium_alone():
    import pathlib
    import tomllib

    extras = tomllib.loads((pathlib.Path(__file__).parents[1] / "pyproject.toml").read_text())["project"][
        "optional-dependencies"]
    assert "ray" in extras["all"][0] and any(r.startswith("ray[default]") for r in extras["ray"])
    assert not any("rllib" in r or r.startswith("gymnasium") for r in extras["ray"])  # ray[rllib] pins gymnasium


def test_ray_scaling_benchmark_runs(ray_local, capsys):
    import importlib.util
    import pathlib

    path = pathlib.Path(__file__).resolve().parents[1] / "benchmarks" / "ray_scaling.py"
    spec = importlib.util.spec_from_file_location("bench_ray_scaling", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    out = mod.main(["--board", "2x2", "--games", "2", "--simulations", "8", "--iterations", "1", "--actors", "1",
                    "--local-workers", "1"])
    assert set(out["rates"]) == {"local x1", "ray x1"} and all(v > 0 for v in out["rates"].values())
    assert out["weights_bytes"]["dotsformer paper 5x5"] > 7 * 2**20  # ~1.93 M float32 parameters
    assert ray_local.is_initialized()


def test_the_cluster_launcher_example_follows_rays_schema():
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install 'dnb-env[ray]')")
    import pathlib

    jsonschema = pytest.importorskip("jsonschema", reason="ray[default] brings jsonschema")
    import yaml

    root = pathlib.Path(__file__).resolve().parents[1]
    config = yaml.safe_load((root / "examples" / "ray_cluster.yaml").read_text())
    schema = json.loads((pathlib.Path(ray.__file__).parent / "autoscaler" / "ray-schema.json").read_text())
    jsonschema.validate(config, schema)
    assert any("--head" in c for c in config["head_start_ray_commands"])
    assert any("--address=$RAY_HEAD_IP:6379" in c for c in config["worker_start_ray_commands"])


def test_teacher_dataset_over_ray_is_the_local_one(tmp_path, ray_local):
    import numpy as np

    from agents.training.teacher import TeachConfig, TeacherData, generate
    from registry.specs import agent_from_spec

    cfg = TeachConfig(board="2x3", undrawn_min=5, undrawn_max=12, margin_max=9, positions=24, shard_size=12,
                      players=("greedy", "random"), seed=5)
    generate(cfg, str(tmp_path / "local"), agent_from_spec, progress=False)
    generate(cfg, str(tmp_path / "ray"), agent_from_spec, progress=False, backend="ray", workers=2)
    here, there = TeacherData.load(str(tmp_path / "local")), TeacherData.load(str(tmp_path / "ray"))
    assert len(there) == 24
    for column in ("edges", "owners", "pi", "move"):
        assert np.array_equal(getattr(here.samples, column), getattr(there.samples, column))
    assert np.array_equal(here.values, there.values) and np.array_equal(here.game, there.game)
