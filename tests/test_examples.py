"""Smoke runs of every example with a tiny budget."""

from __future__ import annotations

import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]


def load(name):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_sb3_maskable_ppo_smoke(tmp_path):
    mod = load("sb3_maskable_ppo")
    summary = mod.main(["--board", "2x2", "--timesteps", "256", "--eval-games", "10", "--out", str(tmp_path)])
    assert summary["wins"] + summary["draws"] + summary["losses"] == 10
    assert 0.0 <= summary["ci95"][0] <= summary["score"] <= summary["ci95"][1] <= 1.0
    assert (tmp_path / "model.zip").exists() and (tmp_path / "summary.json").exists()


def test_wilson_interval():
    mod = load("sb3_maskable_ppo")
    lo, hi = mod.wilson(180, 200)
    assert 0.85 < lo < 0.9 < hi < 0.94


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
