"""Tiny-budget smoke runs of the benchmark scripts (the figures themselves are not asserted)."""

from __future__ import annotations

import importlib.util
import json
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]


def load(name):
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "benchmarks" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_engine_benchmark_runs():
    best = load("engine").main(["--games", "5", "--rounds", "1", "--board", "3x3"])
    assert set(best) == {"pyspiel", "ours", "inplace"} and all(v > 0 for v in best.values())


def test_encoder_benchmark_runs():
    from dnb_env.observations import list_encoders

    res = load("encoders").main(["--states", "20", "--rounds", "1"])
    assert res["pyspiel"] > 0 and set(res) == {"pyspiel", *list_encoders()}
    assert all(min(res[name]) > 0 for name in list_encoders())


def test_encoder_benchmark_by_board_runs():
    from dnb_env.observations import list_encoders

    res = load("encoders").main(["--boards", "3x3,10x10", "--board-states", "2"])
    assert set(res) == {(name, b) for name in list_encoders() for b in ("3x3", "10x10")}
    assert all(us > 0 and per_edge > 0 for us, per_edge in res.values())
    from dnb_env import native

    assert load("encoders").board_backend("10x10") == ("native" if native.MAX_SIZE >= 10 else "python")
    assert load("encoders").board_backend("13x13") == "python"  # past the native engine's 12x12


def test_env_benchmark_runs():
    res = load("envs").main(["--steps", "200", "--envs", "4", "--skip-pettingzoo"])
    assert all(res[k] > 0 for k in ("spiel", "gym", "sync", "native"))


def test_solver_benchmark_runs():
    out = load("solver").main(["--positions", "2", "--late", "6", "--compare", "1"])
    assert out["3x3"][0] == -3 and out["ratio_vs_openspiel"] > 0


def test_accuracy_benchmark_runs():
    out = load("accuracy").main(["--positions", "3", "--min", "10", "--max", "12"])
    assert out["n"] == 3 and all(0.0 <= v <= 1.0 for v in out["all"].values())


def test_search_benchmark_runs():
    res = load("search").main(["--simulations", "50", "--skip-self-play", "--reps", "1"])
    assert res["ours"] > 0 and res["openspiel"] > 0 and res["cpu_1"] > 0
    assert res["ours_middle"] > 0 and res["openspiel_middle"] > 0 and res["openspiel_gc_off_middle"] > 0


def test_alphazero_accuracy_benchmark_runs():
    out = load("alphazero").main(["--positions", "6", "--simulations", "20", "--opening", "4"])
    assert any(k.startswith("opening (4-8 moves)/") for k in out)
    assert all(v is None or 0.0 <= v <= 1.0 for v in out.values())
    # a move that reaches the best margin keeps the best result, so "winning" >= "optimal"
    assert out["middle+late/raw policy/winning"] >= out["middle+late/raw policy/optimal"]


def test_network_benchmark_runs():
    res = load("networks").main(["--board", "2x2", "--pairs", "cpu", "--reps", "1", "--games", "1", "--simulations", "4",
                                 "--threads", "1"])
    assert res["cpu/dotsformer/params"] > 0 and res["cpu/resnet/gflops"] > 0
    assert res["cpu/dotsformer/cpu/b64_ms"] > 0 and res["cpu/resnet/self_play"] > 0


def test_midgame_benchmark_runs_and_the_solver_is_always_right():
    res = load("midgame").main(["--board", "2x3", "--agents", "solver,random", "--positions", "8"])
    steps = load("midgame").midgame_steps("2x3")
    assert all(res[("solver", k)] == 1.0 for k in steps)
    assert min(res[("random", k)] for k in steps) < 1.0
    # --classes: every move lands in one class; the solver's are all right, random's not
    res = load("midgame").main(["--board", "2x3", "--agents", "solver,random", "--positions", "8", "--classes"])
    for agent in ("solver", "random"):
        for k in steps:
            tally = [res[(agent, k, c)] for c in ("safe", "conceding", "scoring")]
            assert sum(n for _, n in tally) == 8 and sum(r for r, _ in tally) == round(8 * res[(agent, k)])
    assert all(r == n for k in steps for c in ("safe", "conceding", "scoring") for r, n in [res[("solver", k, c)]])
    # --label chosen: the same positions, only the chosen moves labelled, the same scores
    chosen = load("midgame").main(["--board", "2x3", "--agents", "solver,random", "--positions", "8", "--label",
                                   "chosen"])
    first = load("midgame").main(["--board", "2x3", "--agents", "solver,random", "--positions", "8"])
    assert chosen == first


def test_midgame_benchmark_leaves_out_a_move_whose_label_is_past_the_node_limit(monkeypatch):
    midgame = load("midgame")
    steps = midgame.midgame_steps("2x3")
    asked = []

    def too_dear(self, move):  # every second label query runs out of nodes
        asked.append(move)
        if len(asked) % 2 == 0:
            raise midgame.SolverBudgetExceeded("node limit")
        return self.solver.keeps_win(self.state, move)

    monkeypatch.setattr(midgame.ChosenMoveLabels, "__contains__", too_dear)
    res = midgame.main(["--board", "2x3", "--agents", "solver", "--positions", "8", "--label", "chosen"])
    left_out = sum(res.get(("solver", k, "unlabelled"), 0) for k in steps)
    assert len(asked) == 8 * len(steps) and left_out == len(asked) // 2
    assert all(res[("solver", k)] == 1.0 for k in steps if ("solver", k) in res)


def _replay_file(path, board: str, games: int, seed: int) -> str:
    """A replay of ``games`` random games whose label (pi) at every position is the solver's move, in
    iterations 1 and 2."""
    import numpy as np

    from agents.training.replay import Replay
    from agents.training.samples import Record, Samples
    from dnb_env.core import GameState
    from registry import make_agent

    rng, solver = np.random.default_rng(seed), make_agent("solver", board=board, seed=seed)
    replay = Replay.empty(board)
    for game in range(games):
        s, records = GameState.new(board), []
        while not s.is_terminal():
            pi = np.zeros(s.num_actions, np.float32)
            pi[solver.select_action(s)] = 1.0
            move = int(rng.choice(s.legal_actions()))
            records.append(Record(s, move, pi, 0.0, z=0.0))
            s = s.apply(move)
        replay.add(Samples.from_records(board, records, iteration=1 + game % 2))
    replay.save(str(path))
    return str(path)


def test_midgame_benchmark_on_a_replay(tmp_path):
    midgame = load("midgame")
    path = _replay_file(tmp_path / "replay.npz", "2x3", games=40, seed=3)
    res = midgame.main(["--board", "2x3", "--agents", "solver,random", "--positions", "4", "--replay", path])
    steps = midgame.midgame_steps("2x3")
    # the replay's labels are the solver's moves: right in every winning position, like the solver itself
    assert all(res[(agent, k)] == 1.0 for agent in ("solver", midgame.REPLAY_LABEL) for k in steps)
    assert min(res[("random", k)] for k in steps) < 1.0
    # --iteration: only that iteration's played positions, a part of all of them
    from agents.training.replay import Replay

    samples = Replay.load(path).samples
    every, _ = midgame.replay_positions(samples, steps, 100)
    second, labels = midgame.replay_positions(samples, steps, 100, iteration=2)
    assert sum(map(len, second.values())) > 0 and any(len(second[k]) < len(every[k]) for k in steps)
    for k in steps:
        assert len(labels[k]) == len(second[k])
        assert {s.edges for s, _ in second[k]} <= {s.edges for s, _ in every[k]}
        assert all(len(s.history) == k for s, _ in every[k])
    with pytest.raises(SystemExit, match="no samples of iteration 3"):
        midgame.main(["--board", "2x3", "--agents", "random", "--replay", path, "--iteration", "3"])
    with pytest.raises(SystemExit, match="replay of 2x3, not of --board 3x3"):
        midgame.main(["--board", "3x3", "--agents", "random", "--replay", path])
    with pytest.raises(SystemExit, match="--iteration selects"):
        midgame.main(["--board", "2x3", "--agents", "random", "--iteration", "2"])


def test_replay_fit_trains_on_earlier_iterations_and_scores_the_held_one(tmp_path):
    path = _replay_file(tmp_path / "replay.npz", "2x3", games=40, seed=3)  # iterations 1 and 2
    fit = load("replay_fit")
    rows = fit.main(["--replay", path, "--held", "2", "--seen", "1", "--model", "resnet", "--set", "model.blocks=1",
                     "--set", "model.width=8", "--set", "batch_size=64", "--epochs", "2", "--positions", "20"])
    assert [r["epoch"] for r in rows] == [1, 2]
    samples_before_held = 20 * 17  # 20 games of iteration 1, one sample per move of 2x3
    assert all(r["train_steps"] == samples_before_held // 64 for r in rows)
    scores = [v for r in rows for k, v in r.items() if k.startswith(("held", "seen"))]
    assert scores and all(0.0 <= v <= 1.0 for v in scores)
    with pytest.raises(SystemExit, match="--held 3"):
        fit.main(["--replay", path, "--held", "3"])


def test_native_benchmark_runs():
    from dnb_env import native

    if not native.available():
        pytest.skip("the C++ extension is not built (no compiler?)")
    res = load("native").main(["--board", "3x3", "--games", "5", "--native-games", "200", "--batch", "8",
                               "--states", "10", "--rounds", "1"])
    assert all(v > 0 for v in res["playout_steps_per_s"].values())
    assert all(0 < v < float("inf") for v in res["chainloop6_us"].values())


def test_teacher_benchmark_runs():
    rows = load("teacher").main(["--board", "3x3", "--undrawn", "8-10", "--positions", "3", "--margin-max", "9"])
    assert [r["undrawn"] for r in rows] == [8, 9, 10] and [r["labels"] for r in rows] == ["margin", "margin", "win/loss"]
    assert all(r["n"] == 3 and r["per_core_second"] > 0 for r in rows)


def test_fit_curves_plots_run_folders(tmp_path):
    import json

    run = tmp_path / "fit-a"
    run.mkdir()
    (run / "config.json").write_text(json.dumps({"positions": 100}))
    rows = [{"step": 0, "agent": "greedy", "keep": 0.6, "keep_hard": 0.3},
            {"step": 10, "agent": "network", "keep": 0.7, "keep_hard": 0.4},
            {"step": 20, "agent": "network", "keep": 0.75, "keep_hard": 0.5}]
    (run / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    out = tmp_path / "curves.png"
    curves = load("fit_curves").main([str(run), "--out", str(out)])
    assert curves[str(run)]["keep_hard"] == [0.4, 0.5] and out.stat().st_size > 1000
    with pytest.raises(ValueError, match="not a fit run folder"):
        load("fit_curves").main([str(tmp_path / "missing"), "--out", str(out)])


def test_fit_curves_scaling_plot_takes_each_runs_last_score_and_its_dataset_size(tmp_path):
    import json

    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fit_curves = load("fit_curves")
    data = tmp_path / "data"
    data.mkdir()
    (data / "manifest.json").write_text(json.dumps({"positions": 5000}))
    model = {"family": "dotsformer", "dim": 32, "layers": 3}
    runs = {}
    for name, config, hard in (("small", {"positions": 100}, 0.4), ("all", {"positions": 0, "data": [str(data)]}, 0.6),
                               ("elsewhere", {"positions": 0, "data": [str(tmp_path / "gone")]}, 0.9)):
        runs[name] = ({**config, "model": model}, {"step": 30, "keep_hard": hard, "n_hard": 50})
    out = tmp_path / "scaling.png"
    series = fit_curves.plot_scaling(runs, str(out), plt)
    (points,) = series.values()
    assert [(p[0], p[1], p[5]) for p in points] == [(100, 0.4, "small"), (5000, 0.6, "all")]
    assert all(p[2] < p[1] < p[3] for p in points) and out.stat().st_size > 1000


def test_selfplay_benchmark_runs():
    res = load("selfplay").main(["--nets", "resnet", "--board", "3x3", "--games", "2", "--batches", "1,4", "--reps", "1",
                                 "--held-out", "3", "--variants", "off/eager,exact/eager,exact/eager/w2"])
    net = res["nets"]["resnet"]
    assert net["mflops"] > 0 and all(r["eager"] > 0 and r["matmul"] > 0 for r in net["flops"])
    assert set(net["held_out"]) == {"eager", "jit", "nnpack", "int8", "onnx"}
    old, new, pooled = net["self_play"]
    assert old["positions"] == new["positions"] == 2 * 24 and new["rows"] < old["rows"]
    assert new["identical_moves"] == 1.0
    # two processes, one game each: the same games, no rows counted in this process
    assert pooled["positions"] == 2 * 24 and pooled["identical_games"] == 1.0 and pooled["rows"] is None


def test_alphavit_batches_padded_gives_the_grouped_outputs():
    res = load("alphavit_batches").main(["--boards", "2x2:1,3x3:1", "--batch", "8", "--reps", "1"])
    assert res["max_difference"] < 1e-4
    assert set(res["grouped_ms_per_sample"]) == {"2x2", "3x3"} and res["padded_mix_ms"] > 0
    assert sum(res["share"].values()) == pytest.approx(1.0) and res["share"]["3x3"] > res["share"]["2x2"]


def test_checkpoint_accuracy_scores_a_network_on_its_run_evaluation_set():
    from agents.checkpoint import load_network
    from agents.training.evaluation import EVAL_SEED_OFFSET, accuracy, labelled_positions

    path = "agents/checkpoints/alphazero-3x3.pt"
    res = load("checkpoint_accuracy").main([path, "--board", "3x3", "--positions", "30", "--run-seed", "1"])
    net, _ = load_network(path)
    want = accuracy(net, labelled_positions("3x3", 30, seed=1 + EVAL_SEED_OFFSET))
    assert res[path] == (want["raw_accuracy"], want.get("raw_accuracy_greedy_hard"))
    assert set(res) == {"greedy", path} and 0 <= res["greedy"][0] <= 1
    with pytest.raises(SystemExit):
        load("checkpoint_accuracy").main([path, "--positions", "0"])
    with pytest.raises(SystemExit):
        load("checkpoint_accuracy").main([path, "--simulations", "-1"])


def test_checkpoint_accuracy_scores_the_searched_move_too():
    from agents.checkpoint import load_network
    from agents.training.evaluation import EVAL_SEED_OFFSET, accuracy, labelled_positions

    path = "agents/checkpoints/alphazero-3x3.pt"
    res = load("checkpoint_accuracy").main([path, "--board", "3x3", "--positions", "20", "--simulations", "16"])
    net, _ = load_network(path)
    want = accuracy(net, labelled_positions("3x3", 20, seed=EVAL_SEED_OFFSET), simulations=16)
    assert set(res) == {"greedy", path, f"{path} @16"}
    assert res[f"{path} @16"] == (want["search_accuracy"], want.get("search_accuracy_greedy_hard"))
    assert res[path] == (want["raw_accuracy"], want.get("raw_accuracy_greedy_hard"))


def test_safe_feature_benchmark_runs():
    res = load("safe_feature").main(["--games", "1", "--board", "4x4"])
    assert res and all(row["positions"] > 0 and row["differ"] == 0 for row in res.values())
    res = load("safe_feature").main(["--games", "1", "--board", "4x4", "--sacrifices", "2"])
    assert res and all(row["positions"] > 0 and row["differ"] == 0 for row in res.values())


def test_teacher_rules_benchmark_scores_each_sacrifice_budget(held_set):
    res = load("teacher_rules").main(["--held", str(held_set("teach5-held")), "--positions", "60",
                                      "--sacrifices", "0,2"])
    for row in ("greedy", "safe-phase search", "safe-phase search, 2 sacrifices"):
        assert 0 <= res[row]["keep"] <= 1, row
    for k in (0, 2):
        value = res[f"value, {k} sacrifices"]
        assert 0 < value["positions"] <= 60 and 0 <= value["sign"] <= 1 and 0 <= value["auc"] <= 1
    with pytest.raises(SystemExit):
        load("teacher_rules").main(["--held", str(held_set("teach5-held")), "--sacrifices", "-1"])


def test_teacher_rules_benchmark_scores_the_nimstring_rule(held_set):
    res = load("teacher_rules").main(["--held", str(held_set("teach5-held")), "--positions", "80",
                                      "--rules", "greedy,nimstring"])
    assert set(res) >= {"greedy", "Nimstring", "value, Nimstring"} and "long chain rule" not in res
    # Nimstring's winner gets control: the rule keeps far more wins than greedy on these midgame positions
    assert res["Nimstring"]["keep"] > res["greedy"]["keep"] + 0.05
    value = res["value, Nimstring"]
    assert 0 < value["positions"] <= 80 and value["auc"] > 0.7
    for bad in (["--rules", "greedy,magic"], ["--nim-positions", "0"]):
        with pytest.raises(SystemExit):
            load("teacher_rules").main(["--held", str(held_set("teach5-held"))] + bad)


def test_value_sign_benchmark_scores_a_network_against_exact_values():
    res = load("value_sign").main(["--board", "3x3", "--move", "12", "--positions", "6",
                                   f"az={ROOT / 'agents/checkpoints/alphazero-3x3.pt'}"])
    assert 0 <= res["mover_wins"] <= 1 and 0 <= res["az"]["sign"] <= 1 and res["az"]["mean_abs"] > 0


def test_replay_encoding_benchmark_draws_the_same_batches_both_ways(held_set):
    res = load("replay_encoding").main(["--data", str(held_set("teach5-held")), "--positions", "40", "--steps", "2",
                                        "--batch-size", "8", "--model", "resnet", "--cold"])
    assert res["same_batches"] and res["kept"] > 0 and res["every_batch"] > 0


def test_sacrifice_rules_benchmark_scores_each_search_on_the_midgame_positions():
    res = load("sacrifice_rules").main(["--board", "2x3", "--steps", "5,7", "--positions", "6",
                                        "--searches", "0:20000,2:20000,2:20000:0"])
    assert set(res) == {(k, s, 20000) for k in (5, 7) for s in (0, 2)} | {(5, 2, 20000, 0), (7, 2, 20000, 0)}
    assert res[(5, 2, 20000, 0)][0] == res[(7, 2, 20000, 0)][0] == 0  # no position has at most 0 safe moves searched
    for count, keep in res.values():
        assert 0 <= count <= 6 and (count == 0 or 0.0 <= keep <= 1.0)
    assert any(count for count, _ in res.values())
    with pytest.raises(SystemExit):
        load("sacrifice_rules").main(["--searches", "2"])


def test_think_times_gives_each_move_to_the_agent_that_made_it(tmp_path, capsys):
    """Two agents whose moves take 1 s and 2 s on a fake clock, extra turns included: the benchmark must
    give every 1 s move to the first agent and every 2 s move to the second, at the right move numbers."""
    import json

    from agents.arena.play import play_game
    from registry import make_agent

    now = [0.0]

    class Timed:
        def __init__(self, agent, cost):
            self.agent, self.cost, self.name = agent, cost, agent.name

        def reset(self):
            self.agent.reset()

        def select_action(self, state):
            now[0] += self.cost
            return self.agent.select_action(state)

    records = []
    for g in range(4):
        first = Timed(make_agent("greedy", board="2x3", seed=g), 1.0)
        second = Timed(make_agent("random", board="2x3", seed=g), 2.0)
        rec = play_game("2x3", first, second, opening=[g, 16 - g], clock=lambda: now[0])
        rec.update(first="greedy", second="random", opening=[g, 16 - g], id=f"0-1-{g}")
        records.append(rec)
    assert any(r["moves_by"][0] != r["moves_by"][1] for r in records)  # extra turns make the counts differ
    (tmp_path / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records) + '{"cut')
    (tmp_path / "config.json").write_text(json.dumps({"board": "2x3", "time_per_move": 1.5}))
    res = load("think_times").main([str(tmp_path), "--plot", str(tmp_path / "t.png")])
    assert res["games"] == 4 and (tmp_path / "t.png").stat().st_size > 0
    table = res["table"]
    for name, cost, seat in (("greedy", 1.0, 0), ("random", 2.0, 1)):
        assert all(mean == most == cost for mean, _, most in table[name].values())
        assert sum(n for _, n, _ in table[name].values()) == sum(r["moves_by"][seat] for r in records)
        assert min(table[name]) >= 2  # the opening's two moves are not timed
    assert "random" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        load("think_times").main([str(tmp_path / "missing")])


def test_nimstring_benchmark_compares_the_searches_on_the_same_positions(held_set):
    res = load("nimstring").main(["--held", str(held_set("teach5-held")), "--undrawn", "30-32",
                                  "--per-count", "3"])
    assert sorted(res) == [30, 31, 32]
    for row in res.values():
        assert row["positions"] == 3 and row["ratio"] > 0
        for search in ("plain", "reduced"):
            assert row[search]["finished"] == 3 and row[search]["mean_ms"] > 0  # cheap here: both finish
    with pytest.raises(SystemExit):
        load("nimstring").main(["--held", str(held_set("teach5-held")), "--undrawn", "50-55"])
    res = load("nimstring").main(["--games", "2", "--board", "3x3", "--undrawn", "10-12", "--per-count", "2",
                                  "--searches", "reduced,forms,first", "--seconds", "5"])
    assert sorted(res) == [10, 11, 12]
    assert all(row["forms"]["finished"] == row["first"]["finished"] == row["positions"] >= 1 for row in res.values())
    for bad in (["--games", "2", "--held", str(held_set("teach5-held"))], ["--games", "2", "--searches", "fast"],
                ["--games", "2", "--seconds", "0"], []):
        with pytest.raises(SystemExit):
            load("nimstring").main(bad)


def test_nimstring_table_benchmark_plays_the_same_positions_both_ways(held_set):
    res = load("nimstring_table").main(["--held", str(held_set("teach5-nfar-held")), "--undrawn", "39",
                                        "--per-count", "2", "--agents", "alphazero:simulations=8", "--rounds", "1"])
    row = res[("alphazero:simulations=8", 39)]
    assert row["without"][0] > 0 and row["with"][0] > 0 and 0 <= row["same"] <= 2
    import agents.search.agent as search_agent
    from agents.search.evaluators import move_scope
    assert search_agent.move_scope is move_scope  # restored after the runs without it
    with pytest.raises(SystemExit):
        load("nimstring_table").main(["--held", str(held_set("teach5-nfar-held")), "--undrawn", "50"])


def test_behaviour_fingerprints_repeat_and_compare():
    """Two seeded runs give the same fingerprints; a changed or missing one is reported and fails."""
    bench = load("behaviour")
    first = bench.fingerprints(["envs"], quick=True)
    assert first == bench.fingerprints(["envs"], quick=True) and len(first) >= 10
    changed = dict(first, **{"env/chainloop6": "0" * 64})
    del changed["env/edgequad4"]
    assert bench.compare(first, first) == []
    assert bench.compare(first, changed) == ["env/chainloop6: DIFFERENT", "env/edgequad4: missing after"]


# --------------------------------------------------------------------------------------------- frontier sets
FRONTIER_MAKE = ["make", "--board", "3x3", "--step", "14", "--per-kind", "2", "--seed", "5", "--node-limit", "1000000"]


def _frontier_won(state, brute) -> bool:
    """Whether the player to move wins the whole game (boxes owned included), by the tests' own negamax."""
    s0, s1 = state.scores
    owned = s0 - s1 if state.current_player == 0 else s1 - s0
    return owned + brute.value(state) > 0


def test_frontier_make_labels_positions_of_each_kind_and_resumes(tmp_path, monkeypatch, brute):
    from agents.arena import make_opening
    from dnb_env.core import GameState

    frontier = load("frontier")
    out = str(tmp_path / "sets" / "3x3-s14.json")
    data = frontier.main([*FRONTIER_MAKE, "--out", out])
    assert [(p["kind"], p["game"]) for p in data["positions"]] == [(k, g) for g in range(2) for k in frontier.KINDS]
    assert data["commands"] == [" ".join(["python", "benchmarks/frontier.py", *FRONTIER_MAKE, "--out", out])]
    for p in data["positions"]:
        state = GameState.from_actions("3x3", actions=p["history"])
        assert len(p["history"]) == 14 and p["label"] == ("won" if _frontier_won(state, brute) else "lost")
    guided = [p for p in data["positions"] if p["kind"] == "guided"]
    assert guided[1]["history"] == make_opening("3x3", 14, "guided", frontier.position_seed(5, "guided", 1))
    assert len({tuple(p["history"]) for p in data["positions"]}) == 6  # the kinds' seeds differ
    before = pathlib.Path(out).read_text()

    def no_solver(*args):
        raise AssertionError("a resumed make labelled a position it had")

    monkeypatch.setattr(frontier.Solver, "can_win", no_solver)
    frontier.main([*FRONTIER_MAKE, "--out", out])  # nothing to add: no label, the same positions
    assert pathlib.Path(out).read_text() == before
    monkeypatch.undo()
    # a run killed after two new positions keeps them (the file is written after each); the next one continues
    calls = []
    real = frontier.Solver.can_win

    def killed_after_two(self, state):
        calls.append(state)
        if len(calls) > 2:
            raise KeyboardInterrupt
        return real(self, state)

    monkeypatch.setattr(frontier.Solver, "can_win", killed_after_two)
    grow = [*FRONTIER_MAKE, "--out", out]
    grow[grow.index("--per-kind") + 1] = "4"
    with pytest.raises(KeyboardInterrupt):
        frontier.main(grow)
    assert len(frontier.load_set(out)["positions"]) == 8
    monkeypatch.undo()
    grown = frontier.main(grow)
    assert len(grown["positions"]) == 12 and grown["per_kind"] == 4 and grown["positions"][:6] == data["positions"]
    fresh = frontier.main([*grow[:-1], str(tmp_path / "fresh.json")])
    assert [p["history"] for p in fresh["positions"]] == [p["history"] for p in grown["positions"]]


def test_frontier_make_refuses_another_set_and_bad_input(tmp_path):
    frontier = load("frontier")
    out = tmp_path / "s.json"
    frontier.main([*FRONTIER_MAKE, "--per-kind", "1", "--out", str(out)])
    before = out.read_text()
    for flag, value in (("--seed", "6"), ("--step", "13"), ("--node-limit", "5"), ("--board", "3x4")):
        args = [*FRONTIER_MAKE, "--out", str(out)]
        args[args.index(flag) + 1] = value
        with pytest.raises(SystemExit, match="other parameters"):
            frontier.main(args)
        assert out.read_text() == before
    with pytest.raises(SystemExit, match="other parameters"):
        frontier.main([*FRONTIER_MAKE, "--kinds", "guided", "--out", str(out)])
    with pytest.raises(SystemExit, match="beyond 3x3"):
        frontier.main([*FRONTIER_MAKE, "--step", "24", "--out", str(tmp_path / "late.json")])
    with pytest.raises(SystemExit, match="kinds"):
        frontier.main([*FRONTIER_MAKE, "--kinds", "agents,selfplay", "--out", str(tmp_path / "k.json")])
    with pytest.raises(SystemExit, match="no such set file"):
        frontier.main(["score", "--sets", str(tmp_path / "missing.json"), "--agents", "greedy"])
    with pytest.raises(SystemExit, match="no set file matches"):
        frontier.main(["score", "--sets", str(tmp_path / "none-*.json"), "--agents", "greedy"])
    other = tmp_path / "other.json"
    frontier.main([*FRONTIER_MAKE, "--board", "2x3", "--step", "9", "--per-kind", "1", "--out", str(other)])
    with pytest.raises(SystemExit, match="several boards"):
        frontier.main(["score", "--sets", str(out), str(other), "--agents", "greedy"])
    broken = frontier.load_set(str(out))
    broken["positions"][0]["history"][3] = broken["positions"][0]["history"][2]  # an edge drawn twice
    frontier.write_json(str(tmp_path / "broken.json"), broken)
    with pytest.raises(SystemExit, match="position 0 is not a game of 3x3"):
        frontier.main(["score", "--sets", str(tmp_path / "broken.json"), "--agents", "greedy"])
    broken = frontier.load_set(str(out))
    del broken["positions"][1]["label"]
    frontier.write_json(str(tmp_path / "broken.json"), broken)
    with pytest.raises(SystemExit, match="malformed"):
        frontier.main(["score", "--sets", str(tmp_path / "broken.json"), "--agents", "greedy"])
    with pytest.raises(SystemExit, match="board '5x'"):
        frontier.main([*FRONTIER_MAKE, "--board", "5x", "--out", str(tmp_path / "b.json")])


def test_frontier_score_labels_the_chosen_moves_and_caches_them(tmp_path, monkeypatch):
    from dnb_env.core import GameState
    from dnb_env.solver import Solver

    frontier = load("frontier")
    out = str(tmp_path / "3x3-s14.json")
    frontier.main([*FRONTIER_MAKE, "--per-kind", "4", "--out", out])
    frontier.main([*FRONTIER_MAKE, "--per-kind", "3", "--step", "12", "--out", str(tmp_path / "3x3-s12.json")])
    rows = frontier.main(["score", "--sets", str(tmp_path / "3x3-s*.json"), "--agents", "greedy,random",
                          "--json", str(tmp_path / "table.json")])
    solver = Solver()
    chosen = {}
    for path in (out, str(tmp_path / "3x3-s12.json")):
        data = frontier.load_set(path)
        for p in data["positions"]:
            if p["label"] != "won":
                assert p["moves"] == {}
                continue
            state = GameState.from_actions("3x3", actions=p["history"])
            winning = solver.winning_moves(state)
            assert p["moves"] and all(int(m) in state.legal_actions() for m in p["moves"])
            assert {int(m): v["kept"] for m, v in p["moves"].items()} == {int(m): int(m) in winning for m in p["moves"]}
            chosen[(data["params"]["step"], p["kind"], p["game"])] = p["moves"]
    by = {(r["step"], r["agent"], r["kind"]): r for r in rows}
    for step in (12, 14):
        won = sum(k[0] == step for k in chosen)
        kept = sum(v["kept"] for k, moves in chosen.items() if k[0] == step for v in moves.values())
        assert by[(step, "greedy", "all")]["n"] == by[(step, "random", "all")]["n"] == won
        assert by[(step, "greedy", "all")]["kept"] + by[(step, "random", "all")]["kept"] >= kept
        assert sum(by[(step, "greedy", k)]["n"] for k in frontier.KINDS) == won
    assert min(by[(k, "random", "all")]["rate"] for k in (12, 14)) < 1.0  # the labels can say no
    table = json.loads((tmp_path / "table.json").read_text())
    assert table["rows"] == json.loads(json.dumps(rows)) and "score --sets" in table["command"]
    paired = {r["step"]: r for r in table["paired"]}  # greedy against random, position by position
    for step in (12, 14):
        g, r = by[(step, "greedy", "all")], by[(step, "random", "all")]
        assert paired[step]["n"] == g["n"] and paired[step]["second"] == "random"
        assert paired[step]["only_first"] - paired[step]["only_second"] == g["kept"] - r["kept"]
    assert {(m["step"], m["kind"], m["game"]) for m in table["moves"] if m["agent"] == "greedy"} == set(chosen)
    assert all(chosen[(m["step"], m["kind"], m["game"])][str(m["move"])]["kept"] == m["kept"] for m in table["moves"])

    calls = []
    real = frontier.Solver.keeps_win
    monkeypatch.setattr(frontier.Solver, "keeps_win", lambda self, s, m: calls.append(m) or real(self, s, m))
    again = frontier.main(["score", "--sets", out, str(tmp_path / "3x3-s12.json"), "--agents", "random,greedy"])
    assert calls == []  # every chosen move's label came from the files
    assert [r["agent"] for r in again if r["kind"] == "all"] == ["random", "greedy"] * 2
    assert {(r["step"], r["agent"], r["kind"]): (r["kept"], r["n"]) for r in again} == \
        {(r["step"], r["agent"], r["kind"]): (r["kept"], r["n"]) for r in rows}
    # another seed of random picks other moves: only those are labelled
    frontier.main(["score", "--sets", out, "--agents", "random", "--seed", "9"])
    new = {(p["kind"], p["game"]): len(p["moves"]) for p in frontier.load_set(out)["positions"] if p["label"] == "won"}
    assert len(calls) == sum(new.values()) - sum(len(v) for k, v in chosen.items() if k[0] == 14) > 0


def test_frontier_score_counts_unknown_labels_and_gives_timed_agents_the_move_time(tmp_path, monkeypatch):
    from dnb_env.clock import MoveTimed

    frontier = load("frontier")
    out = str(tmp_path / "s.json")
    frontier.main([*FRONTIER_MAKE, "--step", "6", "--node-limit", "1", "--out", out])
    assert frontier.summary(frontier.load_set(out))["unknown"] == 6  # 18 undrawn edges: past one node each
    rows = frontier.main(["score", "--sets", out, "--agents", "greedy"])
    assert rows[0]["unlabelled"] == 6 and rows[0]["n"] == 0 and rows[0]["rate"] is None
    frontier.main([*FRONTIER_MAKE, "--step", "7", "--out", out + "2"])  # 17 undrawn: won for the mover
    times = []
    monkeypatch.setattr(MoveTimed, "set_move_time", lambda self, seconds: times.append(seconds))
    choices = {}
    rows = frontier.score_sets([out + "2"], ["greedy", "alphabeta:depth=1"], time_per_move=0.25, node_limit=1,
                               log=lambda *a: None, choices=choices)
    assert times == [0.25]  # alphabeta thinks to a clock, greedy does not
    cached = [m for p in frontier.load_set(out + "2")["positions"] for m in p["moves"].values()]
    unknown = sum(m["kept"] is None for m in cached)
    assert unknown > 0 and all(m["budget"] == 1 for m in cached)
    # each agent's row counts its own moves past the budget (two agents may choose the same move)
    for spec in ("greedy", "alphabeta:depth=1"):
        row = next(r for r in rows if r["kind"] == "all" and r["agent"] == spec)
        assert row["unknown"] == sum(kept is None for _, kept in choices[spec].values()) > 0
    chosen = {(key, move) for picks in choices.values() for key, (move, kept) in picks.items() if kept is None}
    assert len(chosen) == unknown  # the distinct moves past the budget are the cached unknown labels
    # a larger budget labels the moves left unknown
    rows = frontier.main(["score", "--sets", out + "2", "--agents", "greedy"])
    assert rows[0]["unknown"] == 0 and rows[0]["n"] == rows[0]["positions"] > 0


def test_frontier_make_and_score_side_by_side_keep_each_others_work(tmp_path):
    frontier = load("frontier")
    out = str(tmp_path / "s.json")
    frontier.main([*FRONTIER_MAKE, "--out", out])  # 2 games of each kind

    def score_meanwhile(line):  # a score of the set runs while make grows it
        if line.startswith("[1/"):
            frontier.score_sets([out], ["greedy"], log=lambda *a: None)

    grown = frontier.make_set(out, "3x3", 14, list(frontier.KINDS), 4, 5, 1_000_000, command="grow",
                              log=score_meanwhile)
    final = frontier.load_set(out)
    assert len(final["positions"]) == 12 and final["commands"][-1] == "grow" and final == grown
    seen = [p for p in final["positions"][:7] if p["label"] == "won"]  # the positions there when score ran
    assert seen and all(len(p["moves"]) == 1 for p in seen)
    # a score that read the set before a make added positions writes its labels and keeps the new positions
    stale = frontier.load_set(out)
    frontier.make_set(out, "3x3", 14, list(frontier.KINDS), 5, 5, 1_000_000, command="grow again", log=lambda *a: None)
    won = next(p for p in stale["positions"] if p["label"] == "won")
    move = next(m for m in range(24) if str(m) not in won["moves"] and m not in won["history"])
    won["moves"][str(move)] = {"kept": False, "nodes": 1, "seconds": 0.0, "budget": 1_000_000}
    frontier.save_set(out, stale)
    final = frontier.load_set(out)
    assert len(final["positions"]) == 15 and final["commands"][-2:] == ["grow", "grow again"]
    assert final["positions"][stale["positions"].index(won)]["moves"][str(move)]["kept"] is False


def test_time_keeping_benchmark_times_each_agent_on_each_board(capsys):
    rows = load("time_keeping").main(["--boards", "2x2,7x7", "--moves", "3", "--agents", "alphabeta,alphazero",
                                      "--time-per-move", "0.05", "--load", "1"])
    assert rows[("alphabeta", "2x2")]["n"] == rows[("alphabeta", "7x7")]["n"] == 3
    assert rows[("alphabeta", "7x7")]["max_s"] > 0 and rows[("alphabeta", "7x7")]["error"] is None
    assert "refused" in rows[("alphazero", "7x7")]  # no shipped weights for 7x7
    out = capsys.readouterr().out
    assert "| alphabeta | 7x7 |" in out and "over 0.3 s" in out  # the move time plus the arena's margin
