"""research/frontier/learn.py: its labels are what the Nimstring search and the solver say, a stopped run
resumes without its partly written line, other settings are refused, and the targets and the AUC are right."""

from __future__ import annotations

import json
import sys

import pytest

from conftest import load_script
from dnb_env import native
from dnb_env.core import GameState

learn = load_script("research/frontier/learn.py")
needs_native = pytest.mark.skipif(not native.available(), reason="the Nimstring search needs the C++ extension")


def test_auc_counts_pairs_and_ties():
    assert learn.auc([0.9, 0.8, 0.1], [True, True, False]) == 1.0
    assert learn.auc([0.1, 0.9], [True, False]) == 0.0
    assert learn.auc([0.5, 0.5, 0.2], [True, False, False]) == pytest.approx(0.75)  # one tie, one win
    assert learn.auc([0.3, 0.4], [True, True]) is None


def test_targets_spread_over_the_winning_safe_moves_and_skip_what_is_unsettled():
    h = [0, 5, 12]
    rows = [{"history": h, "nim": {"1": True, "2": False, "3": True}, "won": True},
            {"history": h, "nim": {"1": None, "2": True}, "won": None},     # a move past the budget: no policy
            {"history": h, "nim": {"1": False, "2": False}, "won": False}]  # no winning move: no policy
    states, pi, has_pi, z, has_z, n_safe = learn.targets(rows)
    assert n_safe.tolist() == [3, 2, 2]
    assert len(states) == 3 and states[0] == GameState.from_actions("5x5", actions=h)
    assert has_pi.tolist() == [True, False, False] and pi[0, [1, 3]].tolist() == [0.5, 0.5] and pi[0].sum() == 1
    assert has_z.tolist() == [True, False, True] and z[[0, 2]].tolist() == [1.0, -1.0]


@needs_native
def test_a_run_labels_by_nimstring_and_the_solver_resumes_and_refuses_other_settings(tmp_path):
    from dnb_env.solver import Solver

    out = str(tmp_path / "d.jsonl")
    config = learn.DataConfig(steps="20", seconds=0.0001, node_limit=50_000_000)
    learn.make_data(config, out, echo=lambda *_: None)
    with open(out) as f:
        lines = f.read().splitlines()
    assert json.loads(lines[0]) == {"config": {k: v for k, v in vars(config).items() if k != "seconds"}}
    row = json.loads(lines[1])
    assert (row["kind"], row["game"], row["step"], len(row["history"])) == ("agents", 0, 20, 20)
    state = GameState.from_actions("5x5", actions=row["history"])
    assert row["won"] is not None and sum(v is not None for v in row["nim"].values()) >= 2
    nim = native._require().Nimstring(5, 5)  # its labels, asked again of a fresh search and solver
    for m, wins in row["nim"].items():
        if wins is not None:
            assert (nim.first_win(state.edges, [int(m)], 50_000_000) == int(m)) == wins
    assert Solver(60, node_limit=50_000_000).can_win(state) == row["won"]
    with open(out, "a") as f:  # a run killed mid-line
        f.write('{"kind": "alphabeta-greedy", "ga')
    learn.make_data(config, out, echo=lambda *_: None)
    rows = [json.loads(x) for x in open(out).read().splitlines()]
    assert [(r["kind"], r["game"]) for r in rows[1:]] == [("agents", 0), ("alphabeta-greedy", 0)]
    before = open(out).read()
    with pytest.raises(ValueError, match="other settings"):
        learn.make_data(learn.DataConfig(steps="19", seconds=0.0001), out, echo=lambda *_: None)
    assert open(out).read() == before


@needs_native
def test_workers_label_the_same_rows(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, learn.__name__, learn)  # the worker processes find _label by its module
    config = learn.DataConfig(steps="20", seconds=0.0001, node_limit=50_000_000)

    def rows(path):
        out = {}
        for line in open(path).read().splitlines()[1:]:
            r = json.loads(line)
            out[(r["kind"], r["game"])] = {k: v for k, v in r.items() if not k.endswith("_s")}  # times differ
        return out

    one, two = str(tmp_path / "one.jsonl"), str(tmp_path / "two.jsonl")
    learn.make_data(config, one, echo=lambda *_: None)
    learn.make_data(config, one, echo=lambda *_: None)  # resumed: the next game
    learn.make_data(config, two, echo=lambda *_: None, workers=2)  # two games side by side, then it stops
    assert list(rows(one)) == [("agents", 0), ("alphabeta-greedy", 0)]
    assert rows(two) == rows(one) and open(two).readline() == open(one).readline()
    with pytest.raises(ValueError, match="workers"):
        learn.make_data(config, str(tmp_path / "bad.jsonl"), workers=0)
    assert not (tmp_path / "bad.jsonl").exists()


def test_bad_steps_are_refused():
    with pytest.raises(ValueError, match="steps"):
        learn.DataConfig(steps="0,20").step_list()
    with pytest.raises(ValueError, match="steps"):
        learn.DataConfig(steps="").step_list()
