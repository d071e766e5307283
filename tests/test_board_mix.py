"""Multi-size training: the weighted board list (parsing, errors, the split of an iteration's games) and
runs over several boards (per-board rows, replays and curricula, batches of one board, kill and resume,
workers, init from another board, refusal for a family built for one board); the run on Ray is in
test_ray.py, beside the Ray instance its tests share."""

import json

import numpy as np
import pytest
import torch

from agents.checkpoint import load_checkpoint
from conftest import Killed, kill_at
from agents.training.boards import BoardMix
from agents.training.config import from_dict, make_train_config, to_dict
from agents.training.loop import train
from agents.training.replay import BoardReplays, load_replay


def test_parse_and_print():
    mix = BoardMix.parse("2x2:1, 3x3:2,4x4:2,5x5:4")
    assert mix.boards == ("2x2", "3x3", "4x4", "5x5")
    assert str(mix) == "2x2:1,3x3:2,4x4:2,5x5:4" and BoardMix.parse(str(mix)) == mix
    assert BoardMix.parse("3x4").entries == (("3x4", 1.0),)
    assert BoardMix.parse("2x2:0.5,3x3:1.5").shares() == {"2x2": 0.25, "3x3": 0.75}


@pytest.mark.parametrize("text, match", [
    ("", "a board mix is"),
    ("2x2:1,,3x3:2", "board mix entry ''"),
    ("2x:1", "malformed board name '2x'"),
    ("0x3:1", "must be in 1"),
    ("2x2:many", "the weight 'many' is not a number"),
    ("2x2:0", "must be a positive number"),
    ("2x2:-1", "must be a positive number"),
    ("2x2:nan", "must be a positive number"),
    ("2x2:1,2x2:3", "appears twice"),
])
def test_bad_mixes_are_refused(text, match):
    with pytest.raises(ValueError, match=match):
        BoardMix.parse(text)


def test_split_gives_every_game_a_board_in_proportion():
    mix = BoardMix.parse("2x2:1,3x3:2,4x4:2,5x5:4")
    assert mix.split(9) == {"2x2": 1, "3x3": 2, "4x4": 2, "5x5": 4}
    assert mix.split(32) == {"2x2": 4, "3x3": 7, "4x4": 7, "5x5": 14}
    assert mix.split(0) == {"2x2": 0, "3x3": 0, "4x4": 0, "5x5": 0}
    for games in range(1, 40):
        counts = mix.split(games)
        assert sum(counts.values()) == games
        assert all(abs(counts[b] - games * s) < 1 for b, s in mix.shares().items())
    with pytest.raises(ValueError, match="games must be an integer >= 0"):
        mix.split(-1)


def test_draw_is_seeded_and_follows_the_weights():
    mix = BoardMix.parse("2x2:1,5x5:3")
    a, b = mix.draw(np.random.default_rng(0), 4000), mix.draw(np.random.default_rng(0), 4000)
    assert a == b and set(a) == {"2x2", "5x5"}
    assert abs(a.count("5x5") / 4000 - 0.75) < 0.03


# ------------------------------------------------------------------------------------------------ multi-size runs

QUIET = dict(progress=False, echo=lambda *_: None)


def tiny_mix(**kw):
    """A 2x2 + 2x3 alphavit run a few seconds long: 5 games an iteration (2 on 2x2, 3 on 2x3)."""
    base = {"boards": "2x2:2,2x3:3", "board": "2x3", "iterations": 2, "games_per_iteration": 5, "simulations": 8,
            "eval_positions": 8, "eval_games": 2, "eval_every": 2, "model.dim": 16, "model.heads": 2,
            "model.layers": 1, "batch_size": 32, "epochs": 1}
    return make_train_config("alphavit", "cpu", **{**base, **kw})


@pytest.fixture(scope="module")
def mix_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("mix") / "run"
    rows = train(tiny_mix(), str(out), eval_simulations=8, **QUIET)
    return out, rows


def test_boards_is_a_setting_of_any_board_families_only():
    cfg = tiny_mix()
    assert cfg.boards == "2x2:2,2x3:3" and str(cfg.board_mix()) == "2x2:2,2x3:3"
    assert from_dict(json.loads(json.dumps(to_dict(cfg)))) == cfg
    assert cfg.for_board("2x2").board == "2x2" and cfg.for_board("2x2").boards == ""
    assert make_train_config("alphavit", "cpu").boards == ""
    with pytest.raises(ValueError, match="needs a model family whose networks play every board.*resnet"):
        make_train_config("resnet", "cpu", board="2x2", boards="2x2:1,3x3:2")
    with pytest.raises(ValueError, match="the weight 'x' is not a number"):
        tiny_mix(boards="2x2:x")
    with pytest.raises(ValueError, match="takes no teacher dataset"):
        tiny_mix(**{"teacher.data": "somewhere"})


def test_a_resnet_with_boards_is_refused_by_dnb_train(tmp_path, capsys):
    from registry.cli import main as cli

    code = cli(["train", "--model", "resnet", "--board", "2x2", "--out", str(tmp_path / "r"), "--no-progress",
                "--set", "boards=2x2:1,3x3:2"])
    assert code != 0 and "play every board" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()


def test_a_two_board_run_trains_with_rows_and_replays_per_board(mix_run):
    out, rows = mix_run
    assert [r["iteration"] for r in rows] == [1, 2]
    for r in rows:
        assert r["games"] == 5 and r["games@2x2"] == 2 and r["games@2x3"] == 3
        assert r["start_step@2x2"] == 6 and r["start_step@2x3"] == 9 and r["start_step"] == 9  # 32/60 of the edges
        assert r["train_steps"] == r["train_steps@2x2"] + r["train_steps@2x3"]
        assert r["replay"] == r["replay@2x2"] + r["replay@2x3"] and r["replay@2x2"] > 0 and r["replay@2x3"] > 0
        assert {"raw_accuracy@2x2", "raw_accuracy@2x3", "root_accuracy@2x3", "epsilon@2x2"} <= set(r)
        assert "raw_accuracy" not in r and "start_step@3x3" not in r
    assert {"win_rate_vs_greedy@2x2", "win_rate_vs_random@2x3", "search_accuracy@2x3"} <= set(rows[1])
    assert "win_rate_vs_greedy@2x2" not in rows[0]  # evaluated every 2 iterations
    manifest = json.loads((out / "manifest.json").read_text())
    replay = load_replay(str(out / manifest["dir"] / "replay.npz"))
    assert isinstance(replay, BoardReplays) and replay.boards == ("2x2", "2x3")
    assert replay["2x2"].samples.pi.shape[1] == 12 and replay["2x3"].samples.pi.shape[1] == 17
    assert len(replay["2x2"]) == rows[-1]["replay@2x2"] and len(replay["2x3"]) == rows[-1]["replay@2x3"]
    payload = load_checkpoint(str(out / "checkpoint.pt"))
    assert payload["boards"] == ["2x2", "2x3"] and set(payload["extra"]["curriculum"]) == {"2x2", "2x3"}
    assert (out / "training.png").stat().st_size > 0


def test_tensorboard_shows_each_board_under_its_key(mix_run):
    pytest.importorskip("tensorboard", reason="the tensorboard extra is not installed")
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    out, rows = mix_run
    events = EventAccumulator(str(out / "tensorboard"))
    events.Reload()
    tags = set(events.Tags()["scalars"])
    assert {"curriculum/start_step", "curriculum/start_step/2x2", "accuracy/raw_accuracy/2x3",
            "score/vs_greedy/2x2", "loss/policy"} <= tags
    assert [p.value for p in events.Scalars("curriculum/start_step/2x2")] == [r["start_step@2x2"] for r in rows]


def test_dnb_report_and_export_read_a_multi_board_run(mix_run, tmp_path):
    from agents.training.report import rollback_report
    from agents.training.store import export_weights

    out, rows = mix_run
    assert rollback_report([str(out)]).splitlines()[:4] == [
        "| S | run@2x2 | run@2x3 |", "|---:|---:|---:|", "| 9 | - | (2, now) |", "| 6 | (2, now) | - |"]
    from agents.training.report import run_curves
    from registry.cli import main as cli

    curves = run_curves(str(out), "2x2")  # games and positions of every board, S and accuracy of 2x2's
    assert curves["games"] == list(np.cumsum([r["games"] for r in rows]))
    assert curves["start_step"] == [r["start_step@2x2"] for r in rows]
    assert curves["raw_accuracy"] == [r.get("raw_accuracy@2x2") for r in rows]
    with pytest.raises(ValueError, match="did not train on 5x5"):
        run_curves(str(out), "5x5")
    assert cli(["report", str(out), "--board", "2x3", "--plot", str(tmp_path / "curves.png")]) == 0
    assert (tmp_path / "curves.png").stat().st_size > 0
    info = export_weights(str(out), str(tmp_path / "w.pt"))
    assert info["self_play_games"] == 10 and set(info["curriculum"]) == {"2x2", "2x3"}
    assert info["self_play_positions"] == sum(r["positions"] for r in rows)
    assert load_checkpoint(str(tmp_path / "w.pt"))["boards"] == ["2x2", "2x3"]


def test_a_gradient_step_draws_one_board_by_its_decayed_sample_count():
    from agents.training.replay import Replay
    from agents.training.samples import Samples

    def samples(board, n):  # n empty positions of iteration 0
        empty = Samples.empty(board)
        return Samples(board, *(np.zeros((n, *getattr(empty, c).shape[1:]), getattr(empty, c).dtype)
                                for c in Samples.COLUMNS))

    a, b = samples("2x2", 10), samples("3x3", 30)
    b.iteration[:20] = 1  # 10 samples of iteration 0 and 20 of iteration 1 on 3x3
    replays = BoardReplays({"2x2": Replay(a), "3x3": Replay(b)})
    weights = replays.board_weights(1, 0.5)
    assert np.allclose(weights, [5 / 30, 25 / 30])
    rng = np.random.default_rng(0)
    drawn = [replays.draw(rng, 4, 1, 0.5, "chainloop6", 0.0, True)[0] for _ in range(300)]
    assert abs(drawn.count("3x3") / 300 - 25 / 30) < 0.07
    board, batch = replays.draw(np.random.default_rng(1), 4, 1, 0.5, "chainloop6", 0.0, True)
    assert batch["pi"].shape == (4, 12 if board == "2x2" else 24)
    with pytest.raises(ValueError, match="board outside the replay"):
        replays.add(Samples.empty("4x4"))
    # the decay weights are computed once per iteration, and again only when a board's samples change
    small = replays["2x2"]
    assert small.weights(1, 0.5) is small.weights(1, 0.5) and not small.weights(1, 0.5).flags.writeable
    before = small.weights(1, 0.5)
    replays.add(samples("2x2", 5))  # 15 samples of iteration 0 on 2x2 now
    assert small.weights(1, 0.5) is not before and np.allclose(small.weights(1, 0.5), 1 / 15)
    assert np.allclose(replays.board_weights(1, 0.5), [7.5 / 32.5, 25 / 32.5])
    assert small.weights(2, 0.5) is not small.weights(1, 0.5)  # another iteration: its own weights
    replays.keep_recent(2, 2)  # iteration 0 leaves the window: only 3x3's 20 samples of iteration 1
    assert len(small) == 0 and np.allclose(replays["3x3"].weights(2, 0.5), 1 / 20)


def test_a_one_board_mix_draws_the_batches_of_its_replay():
    """The loop trains a single board as the mix of that board alone: its batches, and the random numbers
    they use, are those of the board's own replay."""
    from agents.training.replay import Replay
    from agents.training.samples import Record, Samples
    from dnb_env.core import GameState

    states = [GameState.from_actions(2, 2, moves) for moves in ([], [0], [0, 5], [3, 7, 1])]
    records = [Record(s, s.legal_actions()[0], np.full(12, 1 / 12), 0.0, z=1.0) for s in states]
    replay = Replay(Samples.from_records("2x2", records, iteration=1))
    one = BoardReplays({"2x2": replay})
    a, b = np.random.default_rng(3), np.random.default_rng(3)
    for _ in range(3):
        board, batch = one.draw(a, 3, 2, 0.9, "chainloop6", 0.0, True)
        alone = replay.draw(b, 3, 2, 0.9, "chainloop6", 0.0, True)
        assert board == "2x2" and all(np.array_equal(batch[k], alone[k]) for k in alone)
    assert a.random() == b.random()  # the same random stream after the draws


STAGES = ("checkpoint", "replay", "metrics", "rename", "manifest", "views", "prune")



def _state(folder):
    payload = load_checkpoint(str(folder / "checkpoint.pt"))
    manifest = json.loads((folder / "manifest.json").read_text())
    replay = load_replay(str(folder / manifest["dir"] / "replay.npz"))
    arrays = {f"{b}.{k}": v for b in replay.boards for k, v in replay[b].samples.arrays().items()}
    metrics = [{k: v for k, v in row.items() if not k.endswith("_s")}
               for row in map(json.loads, (folder / "metrics.jsonl").read_text().splitlines())]
    return payload["state_dict"], arrays, metrics, payload["extra"]["curriculum"]


@pytest.mark.parametrize("stage", ["replay", "manifest", "prune"])
def test_a_killed_multi_board_run_resumes_to_the_same_run(tmp_path, stage, mix_run):
    fast = {"eval_positions": 0, "eval_games": 0, "curriculum.min_gap": 1, "curriculum.tau_root": 0.0,
            "curriculum.tau_step": 0.0}  # S moves every iteration
    cfg = tiny_mix(iterations=3, **fast)
    train(cfg, str(tmp_path / "clean"), **QUIET)
    with pytest.raises(Killed):  # at the second iteration's commit
        train(cfg, str(tmp_path / "killed"), fault=kill_at(stage), **QUIET)
    said = []
    train(cfg, str(tmp_path / "killed"), resume=True, progress=False, echo=said.append)
    assert any("first searched move 2x2:" in s for s in said)
    (w1, r1, m1, c1), (w2, r2, m2, c2) = _state(tmp_path / "clean"), _state(tmp_path / "killed")
    assert all(torch.equal(w1[k], w2[k]) for k in w1)
    assert r1.keys() == r2.keys() and all(np.array_equal(r1[k], r2[k]) for k in r1)
    assert m1 == m2 and [m["iteration"] for m in m2] == [1, 2, 3] and c1 == c2
    assert c1["2x2"]["start"] < 6 and c1["2x3"]["start"] < 9  # each board's own S moved (thresholds at 0)
    with pytest.raises(ValueError, match=r"differs in \['boards'\]"):
        train(tiny_mix(iterations=4, boards="2x2:1,2x3:1", **fast), str(tmp_path / "killed"), resume=True, **QUIET)


def test_worker_processes_play_each_board_s_games_as_one_process_does(tmp_path):
    """The games are numbered across the iteration's boards, so a split over processes changes nothing
    but the batching of the network calls (float rounding)."""
    one = train(tiny_mix(iterations=1, eval_positions=0, eval_games=0), str(tmp_path / "one"), **QUIET)[0]
    two = train(tiny_mix(iterations=1, eval_positions=0, eval_games=0, workers=2), str(tmp_path / "two"), **QUIET)[0]
    (_, x, _, _), (_, y, _, _) = _state(tmp_path / "one"), _state(tmp_path / "two")
    assert x.keys() == y.keys()
    for key in x:
        np.testing.assert_allclose(x[key], y[key], atol=1e-6) if x[key].dtype.kind == "f" else np.testing.assert_array_equal(x[key], y[key])
    assert [one[f"positions@{b}"] for b in ("2x2", "2x3")] == [two[f"positions@{b}"] for b in ("2x2", "2x3")]
    assert two["policy_loss"] == pytest.approx(one["policy_loss"], rel=1e-4)


def test_init_from_a_2x2_checkpoint_starts_a_3x3_run(tmp_path):
    small = dict(boards="", iterations=1, games_per_iteration=2, eval_positions=0, eval_games=0)
    train(tiny_mix(board="2x2", **small), str(tmp_path / "pre"), **QUIET)
    init = str(tmp_path / "pre" / "checkpoint.pt")
    assert load_checkpoint(init)["boards"] == ["2x2"]
    rows = train(tiny_mix(board="3x3", init=init, **small), str(tmp_path / "r"), **QUIET)
    assert rows[0]["games"] == 2
    payload = load_checkpoint(str(tmp_path / "r" / "checkpoint.pt"))
    assert payload["boards"] == ["2x2", "3x3"]  # its record of trained boards goes on
    # the curriculum plot counts the pretraining's self-play in: 2 games on 2x2, then 2 on 3x3
    from agents.training.report import pretraining, run_curves

    pre = json.loads((tmp_path / "pre" / "metrics.jsonl").read_text().splitlines()[0])
    assert pretraining(str(tmp_path / "r")) == (2, pre["positions"]) and pretraining(str(tmp_path / "pre")) == (0, 0)
    curves = run_curves(str(tmp_path / "r"))
    assert curves["board"] == "3x3" and curves["games"] == [4] and curves["positions"] == [pre["positions"] + rows[0]["positions"]]
    assert curves["start_step"] == [rows[0]["start_step"]] and curves["pretraining"] == 2
    with pytest.raises(ValueError, match="trained on 3x3, not 2x2"):
        run_curves(str(tmp_path / "r"), "2x2")
    mixed = train(tiny_mix(init=init, **{**small, "boards": "2x3:1,3x3:1"}), str(tmp_path / "m"), **QUIET)
    assert mixed[0]["games@2x3"] == 1 and mixed[0]["games@3x3"] == 1
    with pytest.raises(ValueError, match=r"differs in dim: 16 there, 32 here\)"):
        train(tiny_mix(board="3x3", init=init, **{**small, "model.dim": 32}), str(tmp_path / "s"), **QUIET)
    resnet = make_train_config("resnet", "cpu", board="2x2", init=init)
    with pytest.raises(ValueError, match="another model"):
        train(resnet, str(tmp_path / "t"), **QUIET)


def test_plot_runs_gives_each_run_one_colour_in_every_panel(tmp_path, monkeypatch):
    pytest.importorskip("matplotlib", reason="the plot extra is not installed")
    import agents.training.plots as plots

    saved = {}
    monkeypatch.setattr(plots, "_save", lambda fig, path: saved.setdefault("fig", fig))
    scratch = dict(name="scratch", board="5x5", pretraining=0, games=[32, 64], positions=[900, 1800],
                   start_step=[32, 31], raw_accuracy=[None, None])
    curriculum = dict(name="curriculum", board="5x5", pretraining=800, games=[832, 864], positions=[9000, 9900],
                      start_step=[32, 32], raw_accuracy=[0.7, 0.8])
    plots.plot_runs([scratch, curriculum], str(tmp_path / "runs.png"))
    s_games, _, accuracy = saved["fig"].axes
    assert [line.get_label() for line in accuracy.lines] == ["curriculum (after 800 games of pretraining)"]
    # the curriculum run's accuracy is drawn in its own colour, not the first colour of the panel
    assert accuracy.lines[0].get_color() == s_games.lines[1].get_color() != s_games.lines[0].get_color()
