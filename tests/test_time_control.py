"""Time controls in the arena: every move timed, overruns lost or listed, think times in the results; all on
fake clocks (no test here depends on the machine's speed)."""

from __future__ import annotations

import dataclasses
import json
import random

import numpy as np
import pytest

from agents.arena import TournamentConfig
from agents.arena.play import TimeControl, play_game
from agents.arena.ratings import summarise
from agents.engine import EngineAgent, EngineServer
from dnb_env.clock import BUDGET_SHARE, MeasuredRate
from dnb_env.core import GameState
from registry import make_agent
from registry.cli import main as cli_main
from registry.tournaments import run_tournament


class Clock:
    """A fake clock that moves only when an agent thinks."""

    def __init__(self):
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


class Timed:
    """Plays the lowest free edge, taking ``costs[k]`` seconds of the fake clock for its k-th move (the last
    cost for every later move)."""

    def __init__(self, name, clock, costs):
        self.name, self.clock, self.costs, self.k, self.told = name, clock, costs, 0, []

    def set_move_time(self, seconds):
        self.told.append(seconds)

    def reset(self):
        self.k = 0

    def select_action(self, state: GameState) -> int:
        self.clock.now += self.costs[min(self.k, len(self.costs) - 1)]
        self.k += 1
        return state.legal_actions()[0]


def test_a_timed_game_collects_garbage_before_its_clock_starts(monkeypatch):
    """With a time control the arena collects the last game's garbage before the first move (a collector pause
    inside a timed move cost first moves of 0.3 s on 12x12, 0.14 s after this), and not between moves; without
    one it does not."""
    import agents.arena.play as arena

    clock = Clock()
    fast, slow = Timed("fast", clock, [0.0]), Timed("slow", clock, [0.0])
    events = []
    monkeypatch.setattr(arena.gc, "collect", lambda *a: events.append(("gc", fast.k + slow.k)))
    play_game("2x2", fast, slow, time_control=TimeControl(1.0), clock=clock)
    assert events == [("gc", 0)]
    events.clear()
    play_game("2x2", fast, slow, clock=clock)
    assert events == []


def test_every_move_is_timed_and_an_overrun_loses_on_time():
    clock = Clock()
    fast, slow = Timed("fast", clock, [0.5]), Timed("slow", clock, [0.2, 0.3, 1.3])
    rec = play_game("2x2", fast, slow, time_control=TimeControl(1.0, margin=0.25), clock=clock)
    # moves: fast 0, slow 1, fast 2, slow 3, fast 4, slow 5 takes 1.3 s > 1.0 + 0.25: lost, not played
    assert rec["moves"] == [0, 1, 2, 3, 4]
    assert rec["forfeit"] == {"player": 1, "kind": "time", "reason": "agent 'slow' took 1.300 s for move 6, "
                                                                        "over 1 s a move and 0.25 s of tolerance"}
    assert rec["move_s"] == [0.5, 0.2, 0.5, 0.3, 0.5]
    assert rec["think_s"] == pytest.approx([1.5, 1.8]) and rec["max_s"] == pytest.approx([0.5, 1.3])
    assert rec["moves_by"] == [3, 3]  # the move lost on time was timed too
    assert fast.told == slow.told == [1.0]


def test_a_move_within_the_margin_stands_and_warn_lists_overruns():
    clock = Clock()
    edge = Timed("edge", clock, [1.25])  # exactly the limit plus the margin: no overrun
    slow = Timed("slow", clock, [0.1, 3.0, 0.1])
    rec = play_game("1x1", edge, slow, time_control=TimeControl(1.0, margin=0.25, overrun="warn"), clock=clock)
    assert "forfeit" not in rec and len(rec["moves"]) == 4
    assert rec["overruns"] == [[4, 1, 3.0]]  # move 4 (slow's second) took 3 s, and stood
    rec = play_game("1x1", Timed("a", clock, [9.0]), Timed("b", clock, [9.0]), clock=clock)
    assert "forfeit" not in rec and "overruns" not in rec  # no time control: timed, never judged


def test_time_control_settings_are_checked():
    for bad, message in ((dict(per_move=0), "positive"), (dict(per_move=1, margin=-1), "0 or more"),
                         (dict(per_move=1, overrun="ignore"), "'lose' or 'warn'")):
        with pytest.raises(ValueError, match=message):
            TimeControl(**bad)
    with pytest.raises(ValueError, match="positive"):
        TournamentConfig(time_per_move=-0.5)
    with pytest.raises(ValueError, match="'lose' or 'warn'"):
        TournamentConfig(overrun="maybe")
    assert TournamentConfig().time_control is None
    assert TournamentConfig(time_per_move=0.5, overrun="warn").time_control == TimeControl(0.5, 0.25, "warn")


def test_a_config_holds_its_time_control_and_saves_it_flat_as_before(monkeypatch, tmp_path):
    from agents.arena.results import check_or_save_config

    tc = TimeControl(per_game=60.0, increment=0.5, overrun="warn")
    cfg = TournamentConfig(time_control=tc)
    assert cfg == TournamentConfig(time_per_game=60.0, increment=0.5, overrun="warn")  # the keywords of before
    saved = cfg.to_json()
    assert {k: saved[k] for k in ("time_per_move", "time_margin", "overrun", "time_per_game", "increment")} == {
        "time_per_move": None, "time_margin": 0.25, "overrun": "warn", "time_per_game": 60.0, "increment": 0.5}
    assert "time_control" not in saved and TournamentConfig.from_json(saved) == cfg
    assert list(saved)[-5:] == ["time_per_move", "time_margin", "overrun", "time_per_game", "increment"]
    assert dataclasses.replace(cfg, games=4).time_control is tc
    with pytest.raises(ValueError, match="not both"):
        TournamentConfig(time_control=tc, time_per_move=1.0)
    assert (cfg.time_per_move, cfg.time_per_game, cfg.time_margin) == (None, 60.0, 0.25)  # read from it
    checks = []
    monkeypatch.setattr("dnb_env.clock.check_seconds", lambda *a, **k: checks.append(a))
    TournamentConfig(time_per_move=0.5)
    assert len(checks) == 3  # one check of the settings (time per move, increment, margin), not three checks
    monkeypatch.undo()
    # a folder saved with a margin but no clock (which the margin does not change) resumes
    path = tmp_path / "config.json"
    path.write_text(json.dumps({**TournamentConfig().to_json(), "time_margin": 0.5}))
    assert check_or_save_config(str(path), TournamentConfig(time_margin=0.5)) == ["random", "greedy"]


def test_results_show_mean_and_max_think_time_and_forfeits(tmp_path):
    labels = ["a", 'engine:cmd="./x --y",name=z']
    records = [
        {"first": "a", "second": labels[1], "result_first": 1.0, "think_s": [1.0, 3.0], "moves_by": [4, 3],
         "max_s": [0.5, 2.0], "forfeit": {"player": 1, "kind": "time", "reason": "late"}},
        {"first": labels[1], "second": "a", "result_first": 0.5, "think_s": [1.0, 1.0], "moves_by": [1, 4],
         "max_s": [1.0, 0.25]},
        {"first": "a", "second": labels[1], "result_first": 0.0},  # a game from before moves were timed
    ]
    report = summarise(labels, records, bootstrap=0)
    np.testing.assert_allclose(report.think, [[2.0 / 8, 0.5, 8, 0, np.nan], [4.0 / 4, 2.0, 4, 1, np.nan]])
    assert "s/move" in report.table() and "lost" in report.table()
    report.write_csv(str(tmp_path))
    rows = (tmp_path / "elo.csv").read_text().splitlines()
    assert rows[0] == "agent,elo,ci_low,ci_high,mean_move_s,max_move_s,moves,forfeits,min_clock_s"
    assert rows[2].startswith('"engine:cmd=""./x --y"",name=z",') and rows[2].endswith(",1.0000,2.0000,4,1,")
    import csv

    assert [r["agent"] for r in csv.DictReader(open(tmp_path / "elo.csv"))] == labels


def test_a_tournament_on_the_clock_saves_it_and_resumes_old_folders(tmp_path):
    cfg = TournamentConfig(board="2x2", agents=("random", "greedy"), games=2, workers=1, bootstrap=0,
                           time_per_move=30.0)
    run_tournament(cfg, out=str(tmp_path / "t"), progress=False, echo=None)
    saved = json.loads((tmp_path / "t" / "config.json").read_text())
    assert (saved["time_per_move"], saved["time_margin"], saved["overrun"]) == (30.0, 0.25, "lose")
    games = [json.loads(line) for line in open(tmp_path / "t" / "results.jsonl")]
    assert all(len(g["move_s"]) == 12 and sum(g["moves_by"]) == 12 for g in games)
    # a folder written before the clock settings existed resumes with their defaults
    old = TournamentConfig(board="2x2", agents=("random", "greedy"), games=2, workers=1, bootstrap=0)
    run_tournament(old, out=str(tmp_path / "old"), progress=False, echo=None)
    path = tmp_path / "old" / "config.json"
    data = json.loads(path.read_text())
    for key in ("time_per_move", "time_margin", "overrun"):
        del data[key]
    path.write_text(json.dumps(data))
    run_tournament(old, out=str(tmp_path / "old"), progress=False, echo=None)  # no error: the same tournament
    with pytest.raises(ValueError, match="another config"):
        run_tournament(cfg.__class__(**{**old.to_json(), "time_per_move": 1.0}), out=str(tmp_path / "old"),
                       progress=False, echo=None)


def test_cli_time_per_move(tmp_path, capsys):
    out = tmp_path / "cli"
    assert cli_main(["tournament", "--board", "2x2", "--agents", "random,alphabeta:depth=1", "--games", "2",
                     "--workers", "1", "--bootstrap", "0", "--no-progress", "--time-per-move", "20",
                     "--overrun", "warn", "--out", str(out)]) == 0
    assert "s/move" in capsys.readouterr().out
    saved = json.loads((out / "config.json").read_text())
    assert (saved["time_per_move"], saved["overrun"]) == (20.0, "warn")
    assert cli_main(["tournament", "--agents", "random,greedy", "--time-margin", "-1"]) == 2
    assert "--time-margin must be 0 or more" in capsys.readouterr().err


def test_alphabeta_on_a_clock_deepens_past_its_depth_to_the_end_of_the_game():
    # +---+   +
    # | 0 |          player 0 has both left boxes, five edges are left:
    # +---+   +      depth 1 plays 5, the search to the end of the game plays 3
    # | 0 |
    # +---+   +
    state = GameState.from_actions(2, 2, [9, 7, 10, 6, 0, 4, 2])
    shallow = make_agent("alphabeta", board="2x2", seed=0, depth=1)
    assert shallow.select_action(state) == 5
    shallow.set_move_time(60.0)  # generous: the end of the game stops the deepening long before
    assert shallow.select_action(state) == 3 == make_agent("alphabeta", board="2x2", seed=0, depth=8).select_action(state)


def test_served_agents_get_go_movetime():
    told = []

    class Agent:
        name, board = "clocked", None

        def set_move_time(self, seconds):
            told.append(seconds)

        def reset(self):
            pass

        def select_action(self, state):
            return state.legal_actions()[0]

    server = EngineServer(lambda board, seed: Agent(), "clocked")
    for line in ("dnbp 1", "newgame 2x2", "isready", "position", "go movetime 750", "go left 20000 inc 500", "go"):
        server.handle(line)
    # 20 s left on an empty 2x2 board (12 edges: 6 moves, at least 10): 20 / 10 + 0.5; plain go: untouched
    assert told == [0.75, 2.5]


@pytest.mark.parametrize("options", [dict(), dict(search="python", selection="puct"), dict(search="native")])
def test_mcts_on_a_clock_grows_one_tree_in_rounds_until_the_next_would_pass_it(options):
    if options.get("search") == "native":
        pytest.importorskip("dnb_env._native")
    clock = Clock()
    agent = make_agent("mcts", board="3x3", seed=0, simulations=5, **options)
    run = agent.search.run

    def timed_run(state):  # each simulation takes 0.01 s of the fake clock: 100 a second
        clock.now += 0.01 * agent.search.config.simulations
        return run(state)

    agent.search.run, agent.clock = timed_run, clock
    agent.set_move_time(0.35 / BUDGET_SHARE)  # a budget of 0.35 s
    state = GameState.from_actions(3, 3, [0, 5, 12])
    agent.action_probabilities(state)
    # the first round, before any rate is known, is one simulation (0.01 s); then rounds of 8 (0.08 s at 100
    # a second: within a quarter of the budget) end at 0.09, 0.17, 0.25 and 0.33 s; a fifth would end at 0.41
    assert clock.now == pytest.approx(0.33)
    assert agent.search.counts().sum() == 1 + 4 * agent.round_size()  # one tree, five rounds of visits
    assert agent.search.config.simulations == 5  # the agent's own settings are back after the move
    clock.now = 0.0
    assert state.is_legal(agent.select_action(state)) and clock.now == pytest.approx(0.32)  # four rounds of 8


def test_mcts_on_a_clock_shortens_rounds_that_would_take_much_of_its_budget():
    """A round of one batch that would take more than a quarter of the move's budget (a big network on a big
    board) is cut to the simulations that fit, at the rate of the earlier rounds."""
    clock = Clock()
    agent = make_agent("mcts", board="3x3", seed=0, simulations=5, search="python", selection="puct")
    run, sizes = agent.search.run, []

    def timed_run(state):  # 20 simulations a second: a round of 8 would take 0.4 s
        sizes.append(agent.search.config.simulations)
        clock.now += 0.05 * agent.search.config.simulations
        return run(state)

    agent.search.run, agent.clock = timed_run, clock
    agent.round_rate = MeasuredRate(20.0)
    agent.set_move_time(0.9 / BUDGET_SHARE)  # a budget of 0.9 s: rounds of 20 x 0.225 = 4.5, so 4 simulations
    agent.action_probabilities(GameState.from_actions(3, 3, [0, 5, 12]))
    assert sizes == [4, 4, 4, 4] and clock.now == pytest.approx(0.8)  # a fifth round would end at 1.0 s


def test_a_new_game_measures_its_round_rate_afresh():
    """The rate of a game's last rounds (leaves the solver settles, no network) does not size the next game's
    first round: after reset the first round is one simulation, and the rounds after it are cut to the
    budget at the rate it measured."""
    clock = Clock()
    agent = make_agent("mcts", board="3x3", seed=0, simulations=5, search="python", selection="puct")
    run, sizes = agent.search.run, []

    def timed_run(state):  # 20 simulations a second
        sizes.append(agent.search.config.simulations)
        clock.now += 0.05 * agent.search.config.simulations
        return run(state)

    agent.search.run, agent.clock = timed_run, clock
    agent.round_rate = MeasuredRate(10_000.0)  # the end of the last game: a round of 8 would seem to take 1 ms
    agent.reset()
    agent.set_move_time(0.9 / BUDGET_SHARE)  # a budget of 0.9 s
    agent.action_probabilities(GameState.from_actions(3, 3, [0, 5, 12]))
    assert sizes[0] == 1 and max(sizes) <= 4 and clock.now <= 0.9  # no round of 8 (0.4 s) sized by the old rate


@pytest.mark.parametrize("search", ["python", "native"])
def test_mcts_on_a_clock_keeps_the_garbage_collector_out_of_its_rounds(search):
    """On the Python search the rounds run with the collector paused, the agent collects at the end of the
    move inside its own time, and the rounds stop early by 1.5 times that collection's last duration; the
    native search leaves the collector alone."""
    import gc

    if search == "native":
        pytest.importorskip("dnb_env._native")
    clock = Clock()
    agent = make_agent("mcts", board="3x3", seed=0, simulations=5, search=search, selection="puct")
    run, seen = agent.search.run, []

    def timed_run(state):  # each round takes 0.1 s of the fake clock
        seen.append(gc.isenabled())
        clock.now += 0.1
        return run(state)

    def collect():  # a collection takes 0.15 s
        clock.now += 0.15

    agent.search.run, agent.clock, agent.collect_garbage = timed_run, clock, collect
    agent.round_rate = MeasuredRate(80.0)  # rounds of 8 simulations in 0.1 s, measured before
    agent.set_move_time(0.72 / BUDGET_SHARE)  # a budget of 0.72 s
    state = GameState.from_actions(3, 3, [0, 5, 12])
    assert gc.isenabled()
    agent.action_probabilities(state)
    if search == "python":
        # the first timed move measures a collection (0.15 s), then rounds end at 0.25, 0.35 and 0.45 s (a
        # fourth would end at 0.55 s, and 0.55 + 1.5 x 0.15 is past 0.72 s); the closing collection ends at 0.6
        assert seen == [False] * 3 and clock.now == pytest.approx(0.6)
        clock.now = 0.0
        agent.action_probabilities(state)  # the duration is known: no collection before the rounds
        assert seen == [False] * 7 and clock.now == pytest.approx(0.55)  # four rounds, then the collection
    else:  # seven rounds, the collector on throughout, no collection
        assert seen == [True] * 7 and clock.now == pytest.approx(0.7)
    assert gc.isenabled()  # the collector is back on after the move
    gc.disable()
    try:  # and stays off after a move when it was off before it
        agent.action_probabilities(state)
        assert not gc.isenabled()
    finally:
        gc.enable()


@pytest.mark.parametrize("search", ["python", "native"])
def test_mcts_on_a_clock_gives_its_solves_the_clock_too(search):
    """In the solver zone the root solve may take half the move time and the leaf solves stop at the
    move's deadline; a root solve out of time hands the rest of the clock to the search."""
    if search == "native":
        pytest.importorskip("dnb_env._native")
    clock = Clock()
    agent = make_agent("alphazero", board="3x3", seed=0, simulations=5, search=search, solve_root=24, solve_leaf=20)
    root, told = agent.search.exact_root, []
    policy, set_leaf = root.policy, agent.search.set_solve_deadline

    def slow_root(state, seconds=None):  # the root solve takes 0.3 s of the fake clock, then runs out
        told.append(("root", seconds))
        clock.now += 0.3
        return None

    def leaf_deadline(seconds):
        told.append(("leaf", seconds))
        set_leaf(seconds)

    run = agent.search.run

    def timed_run(state):
        clock.now += 0.1
        return run(state)

    root.policy, agent.search.set_solve_deadline, agent.search.run, agent.clock = slow_root, leaf_deadline, timed_run, clock
    agent.round_rate = MeasuredRate(80.0)  # rounds of 8 simulations in 0.1 s, measured before
    agent.set_move_time(0.75 / BUDGET_SHARE)  # a budget of 0.75 s
    state = GameState.from_actions(3, 3, [0, 5, 12])
    agent.action_probabilities(state)
    # the root solve got 0.375 s; the leaves the 0.45 s left; rounds end at 0.4, 0.5, 0.6 and 0.7 s
    assert told == [("root", pytest.approx(0.375)), ("leaf", pytest.approx(0.45)), ("leaf", None)]
    assert clock.now == pytest.approx(0.7)
    root.policy = policy  # the real root solve: exact within its deadline, nothing once it has passed
    assert root.policy(state, 60.0) is not None and root.policy(state) is not None
    assert root.policy(state, 0.0) is None
    agent.set_move_time(0.0)  # a move time of nothing: the solves stop at once, the search plays a round
    assert state.is_legal(agent.select_action(state))


def test_prsboxes_on_a_clock_deepens_both_searches_until_it():
    agent = make_agent("prsboxes", board="3x3", seed=0)
    agent.set_move_time(2.0)
    for search in (agent.searcher, agent.safe_searcher):  # each plans for the budget of the move time
        assert (search.move_time, search.time_limit, search.node_limit) == (2.0, 2.0 * BUDGET_SHARE, None)


def test_the_solver_on_a_clock_searches_half_of_it_whatever_its_node_budget():
    from baselines.solver import best_solver_moves
    from dnb_env.analysis import realistic_position
    from dnb_env.solver import Solver, SolverBudgetExceeded, native_available

    if not native_available():
        pytest.skip("the deadline is the C++ solver's")
    solver, seen = Solver(60, node_limit=1_000), []
    set_deadline, best_moves = solver.set_deadline, solver.best_moves
    solver.set_deadline = lambda seconds: (seen.append(("deadline", seconds)), set_deadline(seconds))
    solver.best_moves = lambda state: (seen.append(("nodes", solver.node_limit)), best_moves(state))[1]
    easy = realistic_position("5x5", 24, random.Random(0))
    assert best_solver_moves(solver, easy, 3600.0) == best_solver_moves(Solver(), easy)
    assert seen == [("deadline", 1800.0), ("nodes", 0), ("deadline", None)]  # no node budget on a clock
    assert solver.node_limit == 1_000 and not solver.past_deadline()  # both back after the move
    with pytest.raises(SolverBudgetExceeded, match="deadline"):
        best_solver_moves(solver, easy, 0.0)  # a clock already spent stops it at once
    agent = make_agent("solver", board="5x5", seed=0, max_undrawn=60)
    agent.set_move_time(0.0)
    hard = realistic_position("5x5", 44, random.Random(0))  # hours of search: only the clock stops it
    assert hard.is_legal(agent.select_action(hard)) and agent.fallbacks == 1


def test_a_measured_rate_of_simulations():
    from dnb_env.clock import MeasuredRate

    sims = MeasuredRate()  # openspiel_mcts: no guess, a quick search counts as a millisecond
    assert sims.work_in(1.0) is None
    sims.add(16, 0.0)
    assert sims.rate == 16_000 and sims.work_in(0.5) == 8_000
    sims.add(0, 1.0)  # no work: nothing measured
    sims.add(4_000, 1.0)
    assert sims.rate == 10_000
    guess = MeasuredRate(1_000)  # a first guess, moved halfway by the first measurement
    assert guess.work_in(2.0) == 2_000
    guess.add(3_000, 1.0)
    assert guess.rate == 2_000


def test_solver_and_prsboxes_on_a_clock_hand_the_rest_of_it_on():
    solver = make_agent("solver", board="2x2", seed=0)
    solver.set_move_time(1.0)
    state = GameState.from_actions(2, 2, [0, 1])
    assert state.is_legal(solver.select_action(state)) and solver.fallbacks == 0  # solved within the clock
    prs = make_agent("prsboxes", board="3x3", seed=0)
    prs.set_move_time(2.0)
    s3 = GameState.from_actions(3, 3, [0, 5, 12])
    assert s3.is_legal(prs.select_action(s3))
    for search in (prs.searcher, prs.safe_searcher):
        assert search.node_limit is None and 0 < search.time_limit <= 2.0


# ---------------------------------------------------------------- game clocks (time per game + increment)


def test_a_game_clock_loses_the_spent_seconds_gains_the_increment_and_is_recorded():
    clock = Clock()
    a, b = Timed("a", clock, [1.0]), Timed("b", clock, [2.0, 0.5])
    rec = play_game("1x1", a, b, time_control=TimeControl(per_game=10.0, increment=0.5), clock=clock)
    # 4 edges: a 0 (1 s), b 1 (2 s), a 2 (1 s), b 3 completes the box (0.5 s)
    assert rec["moves"] == [0, 1, 2, 3] and "forfeit" not in rec
    assert rec["clock_s"] == [[9.5, 10.0], [9.5, 8.5], [9.0, 8.5], [9.0, 8.5]]
    # the move time of an agent that thinks to a clock: its clock over max(10, ceil(free edges / 2)) moves
    # plus the increment: 10 / 10 + 0.5 before each side's first move, then 9.5 / 10 + 0.5 and 8.5 / 10 + 0.5
    assert a.told == pytest.approx([1.5, 1.45]) and b.told == pytest.approx([1.5, 1.35])


def test_the_move_time_rule_on_a_game_clock():
    from dnb_env.clock import clock_move_time

    assert clock_move_time(60.0, 1.0, free_edges=60) == pytest.approx(60 / 30 + 1)  # 30 moves left
    assert clock_move_time(60.0, 1.0, free_edges=8) == pytest.approx(60 / 10 + 1)  # at least 10 moves
    assert clock_move_time(1.0, 5.0, free_edges=8, margin=0.25) == pytest.approx(0.75)  # capped by clock - margin
    assert clock_move_time(0.3, 5.0, free_edges=8, margin=0.25) == pytest.approx(0.15)  # or half the clock
    assert clock_move_time(-2.0, 0.5, free_edges=8) == 0.01  # a clock below zero (warn): the least time
    assert TimeControl(per_game=5.0, increment=0.1, margin=0.2).move_time(5.0, 24) == pytest.approx(5 / 12 + 0.1)


def test_a_side_whose_clock_runs_out_loses_on_time_or_is_warned():
    clock = Clock()
    a, b = Timed("a", clock, [1.0]), Timed("b", clock, [3.0])
    tc = TimeControl(per_game=5.0, increment=0.0, margin=0.25)
    rec = play_game("1x1", a, b, time_control=tc, clock=clock)
    # b: 5 s, its first move takes 3 s (2 s left); its second takes 3 s > 2 + 0.25: lost on time, not played
    assert rec["moves"] == [0, 1, 2] and rec["clock_s"] == [[4.0, 5.0], [4.0, 2.0], [3.0, 2.0]]
    assert rec["forfeit"] == {"player": 1, "kind": "time", "reason": "agent 'b' took 3.000 s for move 4, with "
                                                                        "2.000 s on its clock and 0.25 s of tolerance"}
    clock.now = 0.0
    rec = play_game("1x1", Timed("a", clock, [1.0]), Timed("b", clock, [3.0]), clock=clock,
                    time_control=TimeControl(per_game=5.0, margin=0.25, overrun="warn"))
    assert "forfeit" not in rec and rec["overruns"] == [[4, 1, 3.0]]
    assert rec["clock_s"][-1] == [3.0, -1.0]  # the clock goes below zero, and the record shows it
    edge = Timed("edge", clock, [5.25, 0.0])  # exactly the clock plus the margin: no overrun
    rec = play_game("1x1", edge, Timed("b", clock, [0.0]), clock=clock, time_control=tc)
    assert "forfeit" not in rec


def test_an_engine_gets_its_game_clock_in_go():
    sent = []

    class Engine:
        name = "e"

        def set_clock(self, left, inc):
            sent.append((left, inc))

        def set_move_time(self, seconds):  # a game clock goes to set_clock alone
            raise AssertionError("not on a game clock")

        def reset(self):
            pass

        def select_action(self, state):
            return state.legal_actions()[0]

    clock = Clock()
    play_game("1x1", Engine(), Timed("b", clock, [1.0]), clock=clock,
              time_control=TimeControl(per_game=8.0, increment=2.0))
    assert sent == [(8.0, 2.0), (10.0, 2.0)]  # its moves took no time: each one gained the increment

    from agents.engine import EngineAgent
    from agents.engine.protocol import format_go

    agent = EngineAgent(["true"], name="x")
    agent.set_clock(59.25, 1.0)
    assert agent.game_clock == (59.25, 1.0) and format_go(left=59.25, inc=1.0) == "go left 59250 inc 1000"
    agent.set_move_time(0.5)
    assert agent.game_clock is None and agent.movetime == 0.5


def test_time_per_game_settings_are_checked():
    for bad, message in ((dict(per_move=1.0, per_game=60.0), "not both"), (dict(), "not neither"),
                         (dict(per_game=0.0), "positive"), (dict(per_game=60.0, increment=-1), "0 or more"),
                         (dict(per_move=1.0, increment=1.0), "time per game")):
        with pytest.raises(ValueError, match=message):
            TimeControl(**bad)
    with pytest.raises(ValueError, match="give one of them"):
        TournamentConfig(time_per_move=1.0, time_per_game=60.0)
    with pytest.raises(ValueError, match="needs time_per_game"):
        TournamentConfig(increment=1.0)
    assert TournamentConfig(time_per_game=60.0, increment=0.5).time_control == TimeControl(
        None, 0.25, "lose", 60.0, 0.5)


def test_a_tournament_on_a_game_clock_records_the_clocks_and_resumes(tmp_path, capsys):
    out = tmp_path / "g"
    args = ["tournament", "--board", "2x2", "--agents", "random,alphabeta:depth=1", "--games", "2", "--workers",
            "1", "--bootstrap", "0", "--no-progress", "--time-per-game", "600", "--increment", "1", "--out", str(out)]
    assert cli_main(args) == 0
    printed = capsys.readouterr().out
    assert "clock" in printed and "least seconds left on its game clock" in printed
    saved = json.loads((out / "config.json").read_text())
    assert (saved["time_per_game"], saved["increment"], saved["time_per_move"]) == (600.0, 1.0, None)
    games = [json.loads(line) for line in open(out / "results.jsonl")]
    for g in games:
        assert len(g["clock_s"]) == len(g["move_s"]) == 12
        assert all(590 < c <= 612 for pair in g["clock_s"] for c in pair)
    assert (out / "elo.csv").read_text().splitlines()[1].split(",")[-1] != ""
    assert cli_main(args) == 0  # the same tournament: resumed, nothing to play
    assert "resuming: 2 games on file, 0 to play" in capsys.readouterr().out
    with pytest.raises(ValueError, match="another config"):  # another clock is another tournament
        run_tournament(TournamentConfig.from_json({**saved, "increment": 2.0}), out=str(out), progress=False,
                       echo=None)
    # a folder written before game clocks existed resumes with their defaults
    old = TournamentConfig(board="2x2", agents=("random", "greedy"), games=2, workers=1, bootstrap=0)
    run_tournament(old, out=str(tmp_path / "old"), progress=False, echo=None)
    path = tmp_path / "old" / "config.json"
    data = json.loads(path.read_text())
    del data["time_per_game"], data["increment"]
    path.write_text(json.dumps(data))
    run_tournament(old, out=str(tmp_path / "old"), progress=False, echo=None)


def test_cli_game_clock_errors_change_nothing(tmp_path, capsys):
    out = tmp_path / "never"
    with pytest.raises(SystemExit):  # argparse: the two clocks exclude each other
        cli_main(["tournament", "--agents", "random,greedy", "--time-per-move", "1", "--time-per-game", "60",
                  "--out", str(out)])
    assert "not allowed with argument" in capsys.readouterr().err
    assert cli_main(["tournament", "--agents", "random,greedy", "--increment", "1", "--out", str(out)]) == 2
    assert "--increment is added to a game clock: it needs --time-per-game" in capsys.readouterr().err
    assert cli_main(["tournament", "--agents", "random,greedy", "--time-per-game", "-5", "--out", str(out)]) == 2
    assert "--time-per-game must be a positive number of seconds, got -5.0" in capsys.readouterr().err
    assert cli_main(["tournament", "--agents", "random,greedy", "--time-per-move", "1", "--time-margin", "-1",
                     "--out", str(out)]) == 2
    assert "--time-margin must be 0 or more seconds, got -1.0" in capsys.readouterr().err
    assert not out.exists()


def test_one_check_of_the_time_control_settings_in_each_ones_words():
    from dnb_env.clock import check_time_control
    from registry.specs import check_agent_spec

    assert check_time_control() is False and check_time_control(per_game=60.0, increment=1.0) is True
    # a bad time per move, then a bad margin: one check, each caller's names for the setting
    for control, words, config, engine, value in (
            ("per_move", "the time per move", "time_per_move", "movetime", -1.0),
            ("margin", "the time margin", "time_margin", "tolerance", -1.0)):
        with pytest.raises(ValueError, match=f"^{words} must be"):
            TimeControl(**{"per_move": 1.0, control: value})
        with pytest.raises(ValueError, match=f"^{config} must be"):
            TournamentConfig(**{"time_per_move": 1.0, config: value})
        with pytest.raises(ValueError, match=f"^engine option {engine} must be"):
            EngineAgent(["true"], **{engine: value})
        with pytest.raises(ValueError, match=f"^agent 'engine': option {engine} must be"):
            check_agent_spec(f'engine:cmd="true",{engine}={value}')


def _spiel_mcts_on_fake_clock(board: str):
    """``(agent, clock, asked)``: ``openspiel_mcts`` (7 simulations) whose searches run 1,000 simulations a
    second on the fake ``clock``; ``asked`` lists each search's simulations."""
    pytest.importorskip("pyspiel", reason="openspiel_mcts needs OpenSpiel")
    clock = Clock()
    agent = make_agent("openspiel_mcts", board=board, seed=0, simulations=7)
    agent.clock = clock
    search, asked = agent.bot.mcts_search, []

    def timed_search(ps):
        asked.append(agent.bot.max_simulations)
        clock.now += agent.bot.max_simulations / 1000
        return search(ps)

    agent.bot.mcts_search = timed_search
    return agent, clock, asked


def test_openspiel_mcts_on_a_clock_takes_its_simulations_from_the_measured_rate():
    agent, clock, asked = _spiel_mcts_on_fake_clock("3x3")
    state = GameState.from_actions(3, 3, [0, 5, 12])
    assert state.is_legal(agent.select_action(state)) and asked == [7]  # no clock: its own simulations
    agent.set_move_time(0.5 / BUDGET_SHARE)  # a budget of 0.5 s
    clock.now = 0.0
    assert state.is_legal(agent.select_action(state))
    # a probe of 16 simulations measures 1,000 a second; 0.9 x 1000 x (0.5 - 0.016) = 435 more
    assert asked[1:] == [16, 435] and agent.bot.max_simulations == 7
    assert clock.now == pytest.approx(0.451)
    agent.select_action(state)  # the rate is known: no probe
    assert asked[3:] == [450]
    agent.measured = MeasuredRate()
    agent.set_move_time(0.01 / BUDGET_SHARE)  # the probe takes more than the budget: its tree gives the move
    clock.now = 0.0
    assert state.is_legal(agent.select_action(state)) and asked[4:] == [16]


def test_openspiel_mcts_probes_once_even_when_the_probe_takes_no_time():
    """A probe quicker than the clock's resolution still gives a rate (as if it took a millisecond), so the
    next clocked move searches at once instead of probing again."""
    pytest.importorskip("pyspiel", reason="openspiel_mcts needs OpenSpiel")
    clock = Clock()
    agent = make_agent("openspiel_mcts", board="2x2", seed=0, simulations=7)
    agent.clock = clock
    search, asked = agent.bot.mcts_search, []

    def instant_search(ps):  # the fake clock does not move
        asked.append(agent.bot.max_simulations)
        return search(ps)

    agent.bot.mcts_search = instant_search
    agent.set_move_time(0.01 / BUDGET_SHARE)  # a budget of 0.01 s
    state = GameState.from_actions(2, 2, [0])
    agent.select_action(state)
    assert asked == [16, 144]  # the probe's 16 in "a millisecond": 16,000 a second, 0.9 x 16,000 x 0.01
    rate = agent.rate
    assert rate == pytest.approx(0.5 * 16_000 + 0.5 * 144_000)
    agent.select_action(state)
    assert asked[2:] == [int(0.9 * rate * 0.01)]  # no second probe


def test_openspiel_mcts_measures_its_rate_in_prepare_before_the_clock_starts():
    """``prepare`` runs the probe before the game's clock, so the first timed move searches at once."""
    agent, clock, asked = _spiel_mcts_on_fake_clock("3x3")
    agent.set_move_time(0.5 / BUDGET_SHARE)
    state = GameState.new("3x3")
    agent.prepare(state)
    assert asked == [16] and agent.rate == pytest.approx(1000)
    agent.prepare(state)  # measured once
    assert asked == [16]
    clock.now = 0.0
    assert state.is_legal(agent.select_action(state))
    assert asked[1:] == [450] and clock.now == pytest.approx(0.45)  # no probe on the clock: 0.9 x 1000 x 0.5


class SlowToStart(Timed):
    """A :class:`Timed` agent that takes ``ready`` seconds of the fake clock to get ready for a game (an
    engine loading its networks at ``isready``), or fails to (``fail``: an engine past its start-up limit)."""

    def __init__(self, name, clock, costs, ready, fail=False):
        super().__init__(name, clock, costs)
        self.ready, self.fail, self.prepared = ready, fail, []

    def prepare(self, state: GameState) -> None:
        self.clock.now += self.ready
        self.prepared.append(list(state.history))
        if self.fail:
            from agents.base import AgentFailure

            raise AgentFailure("time", f"engine {self.name!r} did not answer isready within 1 s (its start-up "
                                       "limit, startup)")


def test_start_up_is_timed_apart_and_the_first_moves_clock_starts_when_the_agent_is_ready():
    clock = Clock()
    slow, fast = SlowToStart("slowready", clock, [0.1], ready=5.0), Timed("fast", clock, [0.1])
    rec = play_game("1x1", slow, fast, [0], time_control=TimeControl(0.5), clock=clock)
    assert "forfeit" not in rec and len(rec["moves"]) == 4
    assert slow.prepared == [[0]]  # told of the game from its opening, before the clock
    assert rec["ready_s"] == [5.0, 0.0] and rec["move_s"] == [0.1, 0.1, 0.1]
    assert rec["max_s"] == pytest.approx([0.1, 0.1])
    rec = play_game("1x1", Timed("a", clock, [0.1]), Timed("b", clock, [0.1]), clock=clock)
    assert "ready_s" not in rec  # no agent to get ready: records as before


def test_an_agent_that_fails_to_get_ready_loses_the_game_before_its_clock():
    clock = Clock()
    late = SlowToStart("late", clock, [0.1], ready=1.0, fail=True)
    fast = Timed("fast", clock, [0.1])
    rec = play_game("1x1", fast, late, time_control=TimeControl(0.5), clock=clock)
    assert rec["forfeit"] == {"player": 1, "kind": "time", "reason": "engine 'late' did not answer isready "
                                                                      "within 1 s (its start-up limit, startup)"}
    assert rec["moves"] == [] and rec["moves_by"] == [0, 0] and rec["ready_s"] == [0.0, 1.0]
