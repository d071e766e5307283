"""Smoke runs of every example with a tiny budget."""

from __future__ import annotations

import importlib.util
import pathlib

import numpy as np

ROOT = pathlib.Path(__file__).resolve().parents[1]


def load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_sb3_maskable_ppo_smoke(tmp_path):
    mod = load("sb3_maskable_ppo")
    summary = mod.main(["--board", "2x2", "--timesteps", "256", "--eval-games", "10", "--out", str(tmp_path)])
    for name in ("random", "greedy"):
        s = summary[name]
        assert s["wins"] + s["draws"] + s["losses"] == 10
        assert 0.0 <= s["ci95"][0] <= s["score"] <= s["ci95"][1] <= 1.0
    assert (tmp_path / "model.zip").exists() and (tmp_path / "summary.json").exists()


def test_gauntlet_results_and_wilson_interval():
    from agents.arena import format_results, wilson_interval
    from registry.tournaments import gauntlet

    lo, hi = wilson_interval(180, 200)
    assert 0.85 < lo < 0.9 < hi < 0.94
    report = gauntlet("2x2", "greedy", ("random",), games=40, seed=3)
    r = report.results_of(0)["random"]
    assert r["wins"] + r["draws"] + r["losses"] == 40 and r["score"] > 0.6  # greedy beats random on 2x2
    assert r["ci95"] == list(wilson_interval(r["wins"] + 0.5 * r["draws"], 40))
    assert format_results(report.results_of(0)).startswith("vs random over 40 games:")


def test_openspiel_bots_smoke():
    score = load("openspiel_bots").main(["--board", "2x2", "--simulations", "20", "--games", "4"])
    assert 0.0 <= score <= 1.0


def test_play_rereads_bad_input_and_finishes():
    mod = load("play")
    typed = iter(["hello", "99", "h 9 9", "?"] + [str(a) for a in range(4)] + ["0", "1", "2", "3"] * 3)
    lines = []

    def ask(prompt):
        return next(typed)

    # 1x1: the human moves first; every bad or repeated entry is answered and asked again
    rc = mod.main(["--board", "1x1", "--agent", "random"], ask=ask, out=lines.append)
    assert rc == 0
    text = "\n".join(lines)
    assert "cannot read 'hello'" in text and "cannot read '99'" in text and "game over" in text


def test_play_quit():
    mod = load("play")
    assert mod.main(["--board", "2x2"], ask=lambda p: "q", out=lambda s: None) == 1


def test_pettingzoo_seat_env_rewards_the_learners_own_seat():
    from gymnasium.utils.env_checker import check_env

    mod = load("pettingzoo_maskable_ppo")
    env = mod.LearnerSeatEnv("2x2", "baseline4", opponent="greedy")
    check_env(env, skip_render_check=True)
    for seed in range(12):
        obs, info = env.reset(seed=seed)
        total, done = 0.0, False
        while not done:
            mask = env.action_masks()
            assert mask.any() and env.aec.agent_selection == env.learner
            obs, reward, done, _, _ = env.step(int(np.flatnonzero(mask)[0]))
            total += reward
        seat = env.aec.possible_agents.index(env.learner)
        s0, s1 = env.aec.unwrapped.state_.scores
        mine, theirs = (s0, s1) if seat == 0 else (s1, s0)
        assert total == (mine > theirs) - (mine < theirs)  # the learner's result, whoever moved last


def test_pettingzoo_maskable_ppo_smoke(tmp_path):
    mod = load("pettingzoo_maskable_ppo")
    summary = mod.main(["--board", "2x2", "--opponent", "mix", "--timesteps", "256", "--eval-games", "4",
                        "--out", str(tmp_path)])
    for name in ("random", "greedy"):
        s = summary[name]
        assert s["wins"] + s["draws"] + s["losses"] == 4
        assert s["ci95"][0] <= s["score"] <= s["ci95"][1]
    assert (tmp_path / "model.zip").exists() and (tmp_path / "summary.json").exists()
