"""The engine protocol: lines, the server (``dnb engine``), engine programs as agents, and every way an
engine can fail a game."""

from __future__ import annotations

import io
import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from agents.arena import TournamentConfig
from agents.arena.play import GamePlayer
from agents.arena.schedule import game_ids, game_tasks
from agents.base import AgentFailure
from agents.engine import EngineAgent, EngineServer
from agents.engine.protocol import (MAX_LINE, GoLimits, ProtocolError, format_go, format_info, parse_boards,
                                    parse_go, parse_info, parse_move)
from agents.engine.server import move_info, read_lines
from dnb_env.core import GameState
from registry import make_agent
from registry.specs import (agent_boards, agent_from_spec, check_agent_spec, describe_spec, parse_agent_spec,
                            split_agents)
from registry.tournaments import run_tournament

FIXTURES = Path(__file__).parent / "fixtures"
TINY_PY = FIXTURES / "engine_tiny.py"
SERVED_GREEDY = f"{shlex.quote(sys.executable)} -m registry.cli engine greedy"
SIMPLE_PY = Path(__file__).parent.parent / "examples" / "simple_engine.py"


def _simple(*args) -> str:
    """The command of examples/simple_engine.py with ``args``."""
    return " ".join(shlex.quote(str(a)) for a in (sys.executable, SIMPLE_PY, *args))


def _py_engine(*args) -> str:
    return " ".join(shlex.quote(str(a)) for a in (sys.executable, TINY_PY, *args))


@pytest.fixture(scope="module")
def c_engine(tmp_path_factory) -> str:
    """The C engine of tests/fixtures, compiled with the machine's C compiler."""
    compiler = shutil.which("cc") or shutil.which("gcc")
    assert compiler, "a C compiler (cc or gcc) is needed: the project's C++ extension needs one too"
    exe = tmp_path_factory.mktemp("c_engine") / "engine_tiny"
    subprocess.run([compiler, "-O1", "-Wall", "-Werror", "-o", str(exe), str(FIXTURES / "engine_tiny.c")],
                   check=True, capture_output=True, text=True)
    return str(exe)


# ----------------------------------------------------------------------------------------- the lines
def test_protocol_lines():
    assert format_go(movetime=0.5) == "go movetime 500"
    assert format_go(movetime=0.25, left=30, inc=0.1) == "go movetime 250 left 30000 inc 100"
    assert format_go() == "go"
    assert parse_go(["movetime", "500", "left", "30000"]) == GoLimits(movetime=0.5, left=30.0)
    assert parse_go([]).budget() is None and GoLimits(left=20.0, inc=0.5).budget() == 2.5  # 20 / 10 + 0.5
    assert GoLimits(left=60.0, inc=0.5).budget(free_edges=60) == 2.5  # 60 s over 30 moves left, + 0.5
    with pytest.raises(ProtocolError, match="no key 'wtime'"):
        parse_go(["wtime", "5"])
    with pytest.raises(ProtocolError, match="integer"):
        parse_go(["movetime", "fast"])
    assert parse_move("move 17", 60) == 17
    for bad in ("move 60", "move -1", "move x", "moves 3", "17", "move 1 2"):
        with pytest.raises(ProtocolError):
            parse_move(bad, 60)
    assert parse_info("info depth 3 nodes 1200 time 40 value -0.5 unit win pv 17 18 2") == {
        "depth": 3, "nodes": 1200, "time": 0.04, "value": -0.5, "unit": "win", "pv": [17, 18, 2]}
    assert parse_info("info colour blue depth two string thinking hard") == {"string": "thinking hard"}
    line = format_info(depth=3, nodes=1200, time=0.04, value=-0.5, unit="win", pv=[17, 18, 2])
    assert line == "info depth 3 nodes 1200 time 40 value -0.5 unit win pv 17 18 2"  # what parse_info reads
    assert parse_info(line) == {"depth": 3, "nodes": 1200, "time": 0.04, "value": -0.5, "unit": "win",
                                "pv": [17, 18, 2]}
    assert format_info(time=0.0) == "info time 0" and format_info() is None
    assert format_info(time=0.003, unit="margin") == "info time 3"  # a unit without a value is not sent
    assert parse_boards(["3x3", "5x5", "3x3"]) == ("3x3", "5x5")
    for bad in ([], ["3x"], ["0x3"]):
        with pytest.raises(ProtocolError, match="id boards"):
            parse_boards(bad)


def test_agent_specs_with_quoted_commands():
    spec = 'engine:cmd="./eng --hash 64,x:y",name=mine'
    assert parse_agent_spec(spec) == ("engine", {"cmd": "./eng --hash 64,x:y", "name": "mine"})
    assert split_agents(f'random,{spec},greedy') == ("random", spec, "greedy")
    assert parse_agent_spec('engine:cmd="3"')[1] == {"cmd": "3"}  # quoted: a string as it stands
    with pytest.raises(ValueError, match="double quote is left open"):
        parse_agent_spec('engine:cmd="./eng')


def test_engine_spec_errors_are_clear():
    with pytest.raises(ValueError, match="needs the program to run"):
        check_agent_spec("engine:name=x")
    with pytest.raises(ValueError, match="cannot find the program 'no-such-engine-here'"):
        check_agent_spec('engine:cmd="no-such-engine-here --fast"')
    with pytest.raises(ValueError, match="timeout must be a positive number"):
        check_agent_spec(f'engine:cmd="{SERVED_GREEDY}",timeout=-1')
    with pytest.raises(ValueError, match="cannot split"):
        check_agent_spec("engine:cmd=\"it's\"")


# ------------------------------------------------------------------------------------------ the server
def test_server_session_reads_like_the_docs():
    """The example session of docs/engine-protocol.md, on the server in process."""
    built = []

    def build(board, seed):
        built.append((board, seed))
        return make_agent("greedy", board=board, seed=seed)

    server = EngineServer(build, "greedy")
    talk = {line: server.handle(line) for line in (
        "dnbp 1", "newgame 2x2", "seed 7", "isready", "position 0 6 2")}
    assert talk == {"dnbp 1": ["id name greedy", "id author dnb", "dnbp ok 1"], "newgame 2x2": [],
                    "seed 7": [], "isready": ["readyok"], "position 0 6 2": []}
    replies = server.handle("go movetime 1000")
    assert replies[0].startswith("info time ") and replies[-1] == "move 7"  # the 4th side of box (0, 0)
    assert built == [("2x2", 7)]
    assert server.handle("position 0 0") == ["error not a game on 2x2: action 0 (h 0 0) is already drawn"]
    assert server.handle("go wtime 3") == ["error go has no key 'wtime'; its keys: movetime, left, inc "
                                           "(milliseconds)"]
    assert server.handle("newgame 0x3")[0].startswith("error ")
    assert server.handle("dnbp 2") == ["error this engine speaks protocol version 1, not 2"]
    assert server.handle("castle")[0] == ("error unknown command 'castle'; commands: dnbp, newgame, seed, "
                                          "isready, position, go, quit")
    assert server.handle("quit") is None


def test_dnb_engine_serves_over_stdin_and_stdout():
    session = "dnbp 1\nnewgame 3x3\nseed 1\nisready\nposition\ngo movetime 2000\nquit\n"
    out = subprocess.run([sys.executable, "-m", "registry.cli", "engine", "alphabeta:depth=1"], input=session,
                         capture_output=True, text=True, timeout=120, check=True).stdout.splitlines()
    assert out[:4] == ["id name alphabeta:depth=1", "id author dnb", "dnbp ok 1", "readyok"]
    assert out[-1].startswith("move ") and 0 <= int(out[-1].split()[1]) < 24
    bad = subprocess.run([sys.executable, "-m", "registry.cli", "engine", "alphabeta:depht=1"], input="quit\n",
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "has no option(s) depht" in bad.stderr and bad.stdout == ""


# ---------------------------------------------------------------------------------- engines as agents
def _games(path) -> list[dict]:
    return [json.loads(line) for line in open(os.path.join(path, "results.jsonl"))]


def test_python_and_c_engines_play_a_tournament(c_engine, tmp_path):
    agents = (f'engine:cmd="{_py_engine()}",name=tiny-py', f"engine:cmd={c_engine},name=tiny-c", "greedy")
    cfg = TournamentConfig(board="3x3", agents=agents, games=4, openings=2, workers=1, bootstrap=0)
    report = run_tournament(cfg, out=str(tmp_path), progress=False, echo=None)
    games = _games(tmp_path)
    assert len(games) == 12 and report.wdl.sum() == 24
    for rec in games:
        assert "forfeit" not in rec and len(rec["moves"]) == 24 and sum(rec["scores"]) == 9
        assert len(rec["move_s"]) == 24 - 2 and all(t >= 0 for t in rec["move_s"])


def test_c_engine_takes_boxes_else_the_lowest_free_edge(c_engine, tmp_path):
    agent = make_agent("engine", board="2x2", seed=0, cmd=c_engine, log=str(tmp_path / "c.log"))
    try:
        agent.reset()
        assert agent.select_action(GameState.from_actions(2, 2, [0, 6, 2])) == 7   # completes box (0, 0)
        assert agent.select_action(GameState.from_actions(2, 2, [0, 1])) == 2
        assert agent.name == "tiny-c" and agent.analysis == {"depth": 0, "pv": [2]}
    finally:
        agent.close()
    assert agent.proc is None


def test_served_greedy_plays_the_same_games_as_greedy_in_process():
    """``dnb engine greedy`` as an ``engine:`` agent against greedy: the games of greedy against greedy in
    process, seat for seat, for the seeds of a tournament's schedule (each game's seed reaches the engine
    through ``seed``)."""
    spec = f'engine:cmd="{SERVED_GREEDY}",name=served'
    cfg = TournamentConfig(board="3x3", agents=(spec, "greedy"), games=8, openings=3, seed=5)
    tasks = game_tasks(cfg, game_ids(cfg), set())
    served = GamePlayer("3x3", [spec, "greedy"], agent_from_spec)
    local = GamePlayer("3x3", ["greedy", "greedy"], agent_from_spec)
    try:
        for task in tasks:
            a, b = served.play(task), local.play(task)
            assert "forfeit" not in a
            assert (a["moves"], a["scores"], a["result_first"]) == (b["moves"], b["scores"], b["result_first"])
        assert len({tuple(local.play(t)["moves"]) for t in tasks}) > 2  # the seeds make different games
    finally:
        served.close()


# ----------------------------------------------------------------------------------- failure kinds
FAILURES = {  # misbehaviour -> (kind, part of the reason)
    "crash": ("crash", "exit code 3; last line of its standard error: 'boom: a simulated crash'"),
    "hang": ("time", "gave no move within 0.4 s"),
    "silence": ("time", "gave no move within 0.4 s"),
    "illegal": ("illegal", "illegal move"),
    "garbage": ("protocol", "answered 'hello, I am not an engine' to go"),
    "exit": ("crash", "closed its output (exit code 0"),
    "error": ("error", "answered an error to go: out of ideas"),
}


@pytest.mark.parametrize("mode", list(FAILURES))
def test_a_failing_engine_loses_that_game_and_plays_the_next(mode, tmp_path):
    """The engine misbehaves at its first move of game 0 (the engine's first seat): that game is lost with
    the reason recorded, the program is restarted, and game 1 (its second seat) is played to the end."""
    kind, reason = FAILURES[mode]
    log = tmp_path / "engine.log"
    cmd = _py_engine("--misbehave", mode, "--once", tmp_path / "marker")
    spec = f'engine:cmd="{cmd}",name=tiny,movetime=0.2,tolerance=0.2,log={log}'
    cfg = TournamentConfig(board="2x2", agents=(spec, "greedy"), games=2, workers=1, bootstrap=0)
    report = run_tournament(cfg, out=str(tmp_path / "out"), progress=False, echo=None)
    lost, played = sorted(_games(tmp_path / "out"), key=lambda r: r["game"])
    assert lost["forfeit"]["player"] == 0 and lost["result_first"] == 0.0 and lost["moves"] == []
    assert lost["forfeit"]["kind"] == kind and reason in lost["forfeit"]["reason"]
    assert lost["forfeit"]["reason"].startswith("engine 'tiny' ")
    assert "forfeit" not in played and len(played["moves"]) == 12
    assert report.wdl[0, 1].tolist() == [played["result_first"] == 0.0, played["scores"][0] == played["scores"][1],
                                         1 + (played["result_first"] == 1.0)]
    # started to check its boards before any game, then for game 0, restarted once: every run in the log
    assert log.read_text().count("start: ") == 3
    if mode == "crash":
        assert "boom: a simulated crash" in log.read_text()


def test_an_engine_that_fails_its_handshake_loses_every_game(tmp_path):
    script = tmp_path / "mute.py"
    script.write_text("import sys\nfor line in sys.stdin:\n    print('bonjour', flush=True)\n")
    agent = EngineAgent([sys.executable, str(script)], name="mute", log=str(tmp_path / "mute.log"))
    for _ in range(2):
        with pytest.raises(AgentFailure, match="answered 'bonjour' to the handshake") as info:
            agent.select_action(GameState.new(2, 2))
        assert info.value.kind == "protocol" and agent.proc is None


def test_engines_are_stopped_at_the_end_and_on_ctrl_c(tmp_path):
    pids = tmp_path / "pid"

    class Interrupt:
        name = "interrupt"

        def reset(self):
            pass

        def select_action(self, state):
            raise KeyboardInterrupt

    spec = f'engine:cmd="{_py_engine("--pidfile", pids)}",name=tiny'
    run_tournament(TournamentConfig(board="2x2", agents=(spec, "greedy"), games=2, workers=1, bootstrap=0),
                   progress=False, echo=None)
    _assert_gone(int(pids.read_text()))
    with pytest.raises(KeyboardInterrupt):
        run_tournament(TournamentConfig(board="2x2", agents=(spec, "interrupt"), games=2, workers=1, bootstrap=0),
                       agents=[spec, ("interrupt", Interrupt)], progress=False, echo=None)
    _assert_gone(int(pids.read_text()))


def _assert_gone(pid: int) -> None:
    with pytest.raises(ProcessLookupError):
        os.kill(pid, 0)


def _running(pid: int) -> bool:
    """Whether the process ``pid`` runs (a zombie, ended but not yet reaped by its parent, does not)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
    except OSError:  # no /proc: ask the kernel
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return False
        return True


HELPER_PY = FIXTURES / "engine_helper.py"


def _helper_tournament(tmp_path, *engine_args) -> tuple[list[dict], list[int]]:
    """``dnb tournament`` of greedy against tests/fixtures/engine_helper.py (an engine that forks a helper at
    start-up, holding its output) with ``engine_args``, in a process of its own (a hang fails the test):
    the games, and the pids of every engine and helper it started."""
    pids = tmp_path / "pids"
    cmd = " ".join(shlex.quote(str(a)) for a in (sys.executable, HELPER_PY, "--pids", pids, *engine_args))
    spec = f'engine:cmd="{cmd}",name=h,log={tmp_path / "h.log"}'
    run = subprocess.run([sys.executable, "-m", "registry.cli", "tournament", "--board", "2x2", "--agents",
                          f"greedy,{spec}", "--games", "2", "--workers", "1", "--time-per-move", "0.5",
                          "--out", str(tmp_path / "out")], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    return _games(tmp_path / "out"), [int(p) for p in pids.read_text().split()]


def test_an_engine_that_forks_a_helper_plays_its_games_and_leaves_no_process(tmp_path):
    """The helper keeps the engine's output open after the engine has quit: the controller ends the engine's
    whole process group and never waits on its output."""
    games, pids = _helper_tournament(tmp_path)
    assert len(games) == 2 and not any("forfeit" in g for g in games)
    assert len(pids) == 4  # an engine and its helper, started for the boards check and again for the games
    assert [pid for pid in pids if _running(pid)] == []


def test_an_engine_that_exits_mid_game_behind_a_helper_loses_that_game_only(tmp_path):
    """The engine exits at its first move while its helper holds its output: that game is a crash, the next
    is played, and nothing is left running."""
    games, pids = _helper_tournament(tmp_path, "--misbehave", "crash", "--once", tmp_path / "marker")
    lost, played = sorted(games, key=lambda g: g["game"])
    assert lost["forfeit"]["kind"] == "crash" and "exit code 3" in lost["forfeit"]["reason"]
    assert lost["forfeit"]["reason"].startswith("engine 'h' ")
    assert "forfeit" not in played and len(played["moves"]) == 12
    assert [pid for pid in pids if _running(pid)] == []


def test_an_agent_stopped_mid_move_ends_its_helpers(tmp_path):
    """An engine that hangs with a helper: it loses on time, and its process group is gone at once."""
    pids = tmp_path / "pids"
    agent = EngineAgent([sys.executable, str(HELPER_PY), "--pids", str(pids), "--misbehave", "hang", "--once",
                         str(tmp_path / "marker")], name="h", movetime=0.2, tolerance=0.1,
                        log=str(tmp_path / "h.log"))
    with pytest.raises(AgentFailure, match="gave no move within 0.3 s") as info:
        agent.select_action(GameState.new(2, 2))
    assert info.value.kind == "time" and agent.proc is None
    started = [int(p) for p in pids.read_text().split()]
    assert len(started) == 2 and [pid for pid in started if _running(pid)] == []
    assert 0 <= agent.select_action(GameState.new(2, 2)) < 12  # started again, and it plays
    agent.close()
    started = [int(p) for p in pids.read_text().split()]
    assert len(started) == 4 and [pid for pid in started if _running(pid)] == []


def test_the_web_app_refuses_engines():
    from dnb_web.checks import WebError
    from dnb_web.options import parse_spec

    with pytest.raises(WebError) as info:
        parse_spec(f'engine:cmd="{SERVED_GREEDY}"', [])
    assert info.value.status == 403 and "start programs on the server" in info.value.message


def test_an_engine_drawing_a_drawn_edge_loses_with_that_reason(tmp_path):
    cmd = [sys.executable, str(TINY_PY), "--misbehave", "illegal", "--once", str(tmp_path / "marker")]
    agent = EngineAgent(cmd, name="tiny", log=str(tmp_path / "tiny.log"))
    state = GameState.from_actions(2, 2, [5, 1])
    with pytest.raises(AgentFailure, match=r"answered the illegal move 5 \(an edge already drawn\)") as info:
        agent.select_action(state)
    assert info.value.kind == "illegal" and agent.proc is None
    assert state.is_legal(agent.select_action(state))  # restarted, and playing
    agent.close()


def test_the_command_is_never_run_by_a_shell(tmp_path):
    """Shell syntax in cmd reaches the program as plain arguments: nothing is run or redirected."""
    touched = tmp_path / "touched"
    spec = f'engine:cmd="{_py_engine()} ; touch {touched} > {tmp_path / "out"}",name=tiny'
    agent = agent_from_spec(spec, "2x2", seed=0)
    try:
        assert agent.argv[-5:] == [";", "touch", str(touched), ">", str(tmp_path / "out")]
        assert GameState.new(2, 2).is_legal(agent.select_action(GameState.new(2, 2)))
    finally:
        agent.close()
    assert not touched.exists() and not (tmp_path / "out").exists()


# ----------------------------------------------------------------------------------------- late engines
def _late_engine_game(tmp_path, **clock) -> dict:
    """One 1x1 game of an engine whose first move comes a second late (0.05 s a move) against greedy."""
    cmd = _py_engine("--misbehave", "late", "--once", tmp_path / "marker")
    spec = f'engine:cmd="{cmd}",name=tiny,log={tmp_path / "engine.log"}'
    cfg = TournamentConfig(board="1x1", agents=(spec, "greedy"), games=1, workers=1, bootstrap=0,
                           time_per_move=0.05, **clock)
    run_tournament(cfg, out=str(tmp_path / "out"), progress=False, echo=None)
    (game,) = _games(tmp_path / "out")
    return game


def test_with_overrun_warn_a_late_engine_is_waited_for_and_only_listed(tmp_path):
    """A second late is past the engine's old 0.5 s tolerance: with warn it stands, and is listed."""
    game = _late_engine_game(tmp_path, overrun="warn")
    assert "forfeit" not in game and len(game["moves"]) == 4
    (overrun,) = game["overruns"]
    assert overrun[:2] == [1, 0] and overrun[2] >= 1.0


def test_with_overrun_lose_a_late_engine_loses_at_the_tournaments_margin(tmp_path):
    game = _late_engine_game(tmp_path)  # the default margin, TIME_MARGIN: the engine gives up at 0.3 s
    assert game["forfeit"]["kind"] == "time" and "gave no move within 0.3 s" in game["forfeit"]["reason"]
    game = _late_engine_game(tmp_path / "wide", time_margin=5.0)  # the tournament's margin reaches the engine
    assert "forfeit" not in game and "overruns" not in game and len(game["moves"]) == 4


def test_one_time_margin_and_a_hard_cap_for_a_hung_engine(tmp_path):
    from agents.arena.play import TimeControl
    from dnb_env.clock import TIME_MARGIN

    assert TournamentConfig().time_margin == TimeControl(1.0).margin == TIME_MARGIN
    assert EngineAgent(["true"]).tolerance == TIME_MARGIN
    cmd = [sys.executable, str(TINY_PY), "--misbehave", "hang", "--once", str(tmp_path / "marker")]
    agent = EngineAgent(cmd, name="tiny", movetime=0.05, timeout=0.5, tolerance=9.0, log=str(tmp_path / "log"))
    agent.set_overrun(0.25, "lose")
    assert agent.move_limit() == pytest.approx(0.3)
    agent.set_overrun(0.25, "warn")  # waited for up to timeout past the move time, then lost on time
    assert agent.move_limit() == pytest.approx(0.55)
    with pytest.raises(AgentFailure, match=r"gave no move within 0.55 s") as info:
        agent.select_action(GameState.new(1, 1))
    assert info.value.kind == "time" and agent.proc is None
    with pytest.raises(ValueError, match="'lose' or 'warn'"):
        agent.set_overrun(0.25, "ignore")


# ------------------------------------------------------------------------------ labels and identity
def test_a_spec_is_labelled_by_its_name_and_identified_without_its_log():
    spec = 'engine:cmd="./eng --hash 64,x",name=mine,log=/tmp/a.log,movetime=0.5'
    assert describe_spec(spec) == ("mine", 'engine:cmd="./eng --hash 64,x",name=mine,movetime=0.5')
    assert describe_spec('engine:cmd="./eng",log=/tmp/b.log') == ('engine:cmd="./eng"',) * 2
    assert describe_spec("alphabeta:depth=3") == ("alphabeta:depth=3",) * 2  # no name, nothing neutral
    assert describe_spec("no-such-agent:x=1") == ("no-such-agent:x=1",) * 2


def _csv_agents(path) -> set[str]:
    return {line.split(",")[0] for line in open(path).read().splitlines()[1:]}


def test_name_labels_an_engine_everywhere_and_another_log_resumes_its_tournament(tmp_path):
    out, lines = tmp_path / "out", []

    def spec(log):
        return f'engine:cmd="{_simple("--boards", "2x2", "3x3")}",name=mine,log={tmp_path / log}'

    cfg = TournamentConfig(board="2x2", agents=(spec("a.log"), "greedy"), games=2, bootstrap=0)
    report = run_tournament(cfg, out=str(out), progress=False, echo=lines.append)
    assert report.labels == ["mine", "greedy"]
    assert {(r["first"], r["second"]) for r in _games(out)} == {("mine", "greedy"), ("greedy", "mine")}
    assert _csv_agents(out / "pairs.csv") == _csv_agents(out / "elo.csv") == {"mine", "greedy"}
    table = lines[-1]
    rows = table.splitlines()
    assert "cmd=" not in table and any(r.endswith("  mine") for r in rows)
    assert any(r.startswith("mine ") and "vs greedy" in r for r in rows)
    assert json.load(open(out / "config.json"))["agents"][0] == spec("a.log")  # the spec that was played
    # another log: the same tournament, extended; the games on file are kept
    lines.clear()
    cfg = TournamentConfig(board="2x2", agents=(spec("b.log"), "greedy"), games=4, bootstrap=0)
    report = run_tournament(cfg, out=str(out), progress=False, echo=lines.append)
    assert lines[0] == "resuming: 2 games on file, 2 to play" and report.wdl.sum() == 8
    assert len(_games(out)) == 4 and not (out / "results.jsonl.rejected").exists()
    assert (tmp_path / "b.log").exists()
    # another name or another program is another tournament
    for other in (spec("b.log").replace("name=mine", "name=yours"), spec("b.log").replace("2x2 3x3", "2x2")):
        with pytest.raises(ValueError, match="holds a tournament with another config"):
            run_tournament(TournamentConfig(board="2x2", agents=(other, "greedy"), games=4, bootstrap=0),
                           out=str(out), progress=False, echo=None)


def test_records_that_name_an_engine_by_its_spec_resume_under_its_label(tmp_path):
    """A folder whose records name the engine by its whole spec (as before labels) resumes: its games count
    under the label, and none is moved aside."""
    out = tmp_path / "out"
    spec = f'engine:cmd="{_simple()}",name=mine'
    run_tournament(TournamentConfig(board="1x1", agents=(spec, "greedy"), games=2, bootstrap=0), out=str(out),
                   progress=False, echo=None)
    old = [{**r, **{side: spec for side in ("first", "second") if r[side] == "mine"}} for r in _games(out)]
    (out / "results.jsonl").write_text("".join(json.dumps(r) + "\n" for r in old))
    report = run_tournament(TournamentConfig(board="1x1", agents=(spec, "greedy"), games=3, bootstrap=0),
                            out=str(out), progress=False, echo=None)
    assert report.wdl.sum() == 6 and report.labels == ["mine", "greedy"]
    assert not (out / "results.jsonl.rejected").exists()


def test_two_agents_with_one_label_are_refused_before_anything_is_written(tmp_path):
    engine = f'engine:cmd="{_simple()}"'
    for agents, label in (((f"{engine},name=greedy", "greedy"), "greedy"),
                          ((f"{engine},name=x", f"{engine},name=x,log={tmp_path / 'l'}"), "x"),
                          ((engine, f"{engine},log={tmp_path / 'l'}"), engine)):
        cfg = TournamentConfig(board="2x2", agents=agents, games=2, bootstrap=0)
        with pytest.raises(ValueError, match=f"two agents of the tournament are labelled {label!r}.*name= of its own"):
            run_tournament(cfg, out=str(tmp_path / "out"), progress=False, echo=None)
        assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------------------------------ start-up
def test_start_up_is_not_the_first_moves_time(tmp_path):
    """An engine that takes a second to answer isready plays at 0.2 s a move without losing on time: its
    start-up is timed apart, under its own limit."""
    spec = f'engine:cmd="{_simple("--startup-delay", 1)}",name=slowready,movetime=0.2'
    cfg = TournamentConfig(board="1x1", agents=(spec, "greedy"), games=2, time_per_move=0.2, bootstrap=0)
    run_tournament(cfg, out=str(tmp_path), progress=False, echo=None)
    first, second = sorted(_games(tmp_path), key=lambda r: r["game"])
    assert "forfeit" not in first and "forfeit" not in second
    assert first["ready_s"][0] >= 1.0 and second["ready_s"][1] < 1.0  # loaded once, for its first game


def test_an_engine_slower_than_its_start_up_limit_forfeits_with_that_reason(tmp_path):
    spec = f'engine:cmd="{_simple("--startup-delay", 30)}",name=slowready,startup=0.3,log={tmp_path / "log"}'
    cfg = TournamentConfig(board="1x1", agents=(spec, "greedy"), games=2, bootstrap=0)
    report = run_tournament(cfg, out=str(tmp_path / "out"), progress=False, echo=None)
    games = _games(tmp_path / "out")
    assert len(games) == 2 and report.wdl[0, 1].tolist() == [0, 0, 2]
    for rec in games:
        assert rec["forfeit"]["kind"] == "time" and rec["moves"] == []
        assert rec["forfeit"]["reason"] == ("engine 'slowready' did not answer isready within 0.3 s (its start-up "
                                            "limit, startup)")


# ------------------------------------------------------------------------------------------ boards
def test_a_tournament_on_a_board_an_engine_does_not_declare_is_refused(tmp_path):
    spec = f'engine:cmd="{_simple("--boards", "3x3")}",name=simple'
    cfg = TournamentConfig(board="4x4", agents=(spec, "greedy"), games=2, bootstrap=0)
    with pytest.raises(ValueError, match=r"^engine 'simple' plays only the board 3x3 \(its 'id boards'\), not 4x4$"):
        run_tournament(cfg, out=str(tmp_path / "out"), progress=False, echo=None)
    assert not (tmp_path / "out").exists()
    spec = f'engine:cmd="{_simple("--boards", "3x3", "5x5")}",name=simple'
    with pytest.raises(ValueError, match=r"plays only the boards 3x3 and 5x5 \(its 'id boards'\), not 4x4"):
        run_tournament(TournamentConfig(board="4x4", agents=(spec, "greedy"), games=2), progress=False, echo=None)


def test_an_engine_that_declares_boards_is_not_asked_for_others(tmp_path):
    agent = EngineAgent([sys.executable, str(SIMPLE_PY), "--boards", "2x2"], log=str(tmp_path / "log"))
    try:
        assert GameState.new(2, 2).is_legal(agent.select_action(GameState.new(2, 2)))
        assert agent.boards == ("2x2",) and agent.name == "simple"
        agent.reset()
        with pytest.raises(AgentFailure, match=r"engine 'simple' plays only the board 2x2 \(its 'id boards'\), "
                                               "not 3x3") as info:
            agent.select_action(GameState.new(3, 3))
        assert info.value.kind == "error"
    finally:
        agent.close()
    everything = EngineAgent([sys.executable, str(SIMPLE_PY)], log=str(tmp_path / "log"))
    everything.check_board("7x3")  # no 'id boards': every board
    assert everything.boards is None
    everything.close()


def test_a_bad_boards_line_fails_the_handshake(tmp_path):
    script = tmp_path / "bad.py"
    script.write_text("import sys\nfor line in sys.stdin:\n    print('id boards 3x3 huge', flush=True)\n"
                      "    print('dnbp ok 1', flush=True)\n")
    agent = EngineAgent([sys.executable, str(script)], name="bad", log=str(tmp_path / "log"))
    with pytest.raises(AgentFailure, match=r"answered 'id boards 3x3 huge' to the handshake: 'id boards' lists "
                                           "boards as RxC") as info:
        agent.select_action(GameState.new(3, 3))
    assert info.value.kind == "protocol"


def test_the_server_declares_its_boards_and_refuses_others():
    server = EngineServer(lambda board, seed: make_agent("greedy", board=board, seed=seed), "greedy",
                          boards=["3x3", "5x5"])
    assert server.handle("dnbp 1") == ["id name greedy", "id author dnb", "id boards 3x3 5x5", "dnbp ok 1"]
    assert server.handle("newgame 4x4") == ["error cannot play 4x4: this engine plays only 3x3 and 5x5"]
    assert server.handle("go") == ["error go before newgame: send 'newgame RxC' first"]  # nothing changed
    assert server.handle("newgame 5x5") == []
    with pytest.raises(ProtocolError, match="lists boards as RxC"):
        EngineServer(lambda board, seed: None, "x", boards=["big"])


def test_the_server_takes_no_command_before_the_handshake():
    server = EngineServer(lambda board, seed: make_agent("greedy", board=board, seed=seed), "greedy")
    assert server.handle("newgame 2x2") == ["error the handshake comes first: send 'dnbp 1' before 'newgame'"]
    assert server.handle("dnbp 2") == ["error this engine speaks protocol version 1, not 2"]
    assert server.handle("isready") == ["error the handshake comes first: send 'dnbp 1' before 'isready'"]
    assert server.handle("dnbp 1")[-1] == "dnbp ok 1"
    assert server.handle("newgame 2x2") == [] and server.handle("isready") == ["readyok"]


@pytest.mark.parametrize("value, error", [
    ("9" * 400, "go movetime must be 0..2147483647, got 999999999999...999999 (400 characters)"),
    ("2147483648", "go movetime must be 0..2147483647, got 2147483648"),
    ("-5", "go movetime must be 0..2147483647, got -5"),
    ("1e400", "go movetime must be an integer, got '1e400'"),
    ("nan", "go movetime must be an integer, got 'nan'"),
])
def test_the_server_answers_a_bad_number_in_its_own_words(value, error):
    server = EngineServer(lambda board, seed: make_agent("greedy", board=board, seed=seed), "greedy")
    for line in ("dnbp 1", "newgame 2x2", "isready", "position"):
        server.handle(line)
    assert server.handle(f"go movetime {value}") == [f"error {error}"]
    assert server.handle("go movetime 100")[-1].startswith("move ")  # nothing changed: it plays on


def test_a_line_over_64_kib_is_read_in_pieces_and_discarded():
    class Endless:
        """1 MiB of one line (no newline), then ``isready``; it records the size of every read."""

        def __init__(self):
            self.left, self.sizes, self.rest = 1 << 20, [], io.BytesIO(b"\nisready\n")

        def readline(self, size):
            self.sizes.append(size)
            if self.left > 0:
                self.left -= size
                return b"x" * size
            return self.rest.readline(size)

    stream = Endless()
    assert list(read_lines(stream)) == [None, "isready\n"]
    assert max(stream.sizes) == MAX_LINE and len(stream.sizes) > (1 << 20) // MAX_LINE
    assert list(read_lines(io.StringIO("a" * (MAX_LINE - 1) + "\nb\n"))) == ["a" * (MAX_LINE - 1) + "\n", "b\n"]
    session = "dnbp 1\n" + "y" * (3 * MAX_LINE) + "\nnewgame 2x2\nisready\nquit\n"
    out = subprocess.run([sys.executable, "-m", "registry.cli", "engine", "greedy"], input=session,
                         capture_output=True, text=True, timeout=120, check=True).stdout.splitlines()
    assert out[-2:] == ["error a line is at most 65536 bytes (64 KiB): this one was longer and is discarded",
                        "readyok"]


def test_served_agents_declare_the_boards_of_their_weights():
    from agents.network_agent import SHIPPED_DIR

    assert agent_boards("greedy") is None and agent_boards("alphabeta:depth=2") is None
    shipped = agent_boards("alphazero")
    assert "3x3" in shipped and all(os.path.exists(os.path.join(SHIPPED_DIR, f"alphazero-{b}.pt")) for b in shipped)
    assert "4x4" not in shipped
    assert agent_boards(f"alphazero:checkpoint={FIXTURES / 'alphazero-5x5-v1.pt'}") == ("5x5",)
    assert agent_boards("alphavit") is None  # one network for every board


def test_an_engine_of_an_agent_without_a_network_starts_without_torch():
    # serving alphabeta or prsboxes needs no network: the boards it declares come without importing torch (about
    # three seconds of an engine's start)
    code = ("import sys; from registry.specs import agent_boards; "
            "assert agent_boards('alphabeta:depth=3') is None and agent_boards('prsboxes') is None; "
            "print('torch' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "False"


def test_simple_engine_plays_the_protocol_and_refuses_undeclared_boards():
    session = "dnbp 1\nnewgame 4x4\nnewgame 2x2\nseed 3\nisready\nposition 0 6 2\ngo movetime 100\nquit\n"
    out = subprocess.run([sys.executable, str(SIMPLE_PY), "--boards", "2x2", "3x3"], input=session,
                         capture_output=True, text=True, timeout=60, check=True).stdout.splitlines()
    assert out[:3] == ["id name simple", "id boards 2x2 3x3", "dnbp ok 1"]
    assert out[3] == "error cannot play 4x4: this engine plays only 2x2 3x3"
    assert out[4] == "readyok" and out[5].startswith("info time ") and out[6] == "move 7"  # completes box (0, 0)
    bad = subprocess.run([sys.executable, str(SIMPLE_PY), "--boards", "big"], input="", capture_output=True,
                         text=True, timeout=60)
    assert bad.returncode == 2 and "--boards takes boards as RxC" in bad.stderr


# ------------------------------------------------------------------------------------------ info lines
def test_dnb_engine_sends_what_the_agent_knows_and_the_client_reads_it(tmp_path):
    """``dnb engine alphabeta`` sends depth, nodes, value (a final margin), unit and pv before each move;
    the ``engine:`` agent reads the same keys back."""
    server = EngineServer(lambda board, seed: make_agent("alphabeta", board=board, seed=seed, depth=2), "ab")
    for line in ("dnbp 1", "newgame 2x2", "seed 1", "isready", "position 0 6 2"):
        server.handle(line)
    info, move = server.handle("go")
    assert move == "move 7"
    read = parse_info(info)
    assert set(read) == {"depth", "nodes", "time", "value", "unit", "pv"}
    assert read["depth"] == 2 and read["nodes"] > 0 and read["unit"] == "margin" and read["pv"][0] == 7
    greedy = EngineServer(lambda board, seed: make_agent("greedy", board=board, seed=seed), "greedy")
    for line in ("dnbp 1", "newgame 2x2", "isready", "position"):
        greedy.handle(line)
    assert greedy.handle("go")[0].split()[:2] == ["info", "time"] and len(greedy.handle("go")[0].split()) == 3
    agent = make_agent("engine", board="3x3", seed=0, cmd=f"{shlex.quote(sys.executable)} -m registry.cli engine "
                       "alphabeta:depth=2", name="ab", log=str(tmp_path / "log"))
    try:
        move = agent.select_action(GameState.new(3, 3))
        assert set(agent.analysis) == {"depth", "nodes", "time", "value", "unit", "pv"}
        assert agent.analysis["pv"][0] == move and agent.analysis["depth"] == 2
    finally:
        agent.close()


def test_dnb_engine_sends_a_tree_searchs_visits_and_value():
    """The PUCT/UCT agents report the root's visits as nodes and its value in the search's unit; in the exact
    root zone, the solver's value as a final margin."""
    mcts = EngineServer(lambda board, seed: make_agent("mcts", board=board, seed=seed, simulations=64), "mcts")
    for line in ("dnbp 1", "newgame 3x3", "seed 1", "isready", "position"):
        mcts.handle(line)
    read = parse_info(mcts.handle("go")[0])
    assert read["nodes"] == 64 and read["unit"] == "win" and -1 <= read["value"] <= 1
    net = EngineServer(lambda board, seed: make_agent("alphazero", board=board, seed=seed, simulations=16,
                                                      solve_root=0, solve_leaf=0), "az")
    for line in ("dnbp 1", "newgame 3x3", "seed 1", "isready", "position"):
        net.handle(line)
    read = parse_info(net.handle("go")[0])
    assert read["nodes"] == 16 and read["unit"] in ("win", "margin")
    assert abs(read["value"]) <= (1 if read["unit"] == "win" else 9)
    exact = EngineServer(lambda board, seed: make_agent("alphazero", board=board, seed=seed, simulations=16), "az")
    state, moves = GameState.new(3, 3), []
    while state.num_actions - state.edges.bit_count() > 8:          # 8 undrawn edges: the exact root zone
        moves.append(min(state.legal_actions()))
        state = state.apply(moves[-1])
    for line in ("dnbp 1", "newgame 3x3", "seed 1", "isready", "position " + " ".join(map(str, moves))):
        exact.handle(line)
    read = parse_info(exact.handle("go")[0])
    assert "nodes" not in read and read["unit"] in ("win", "margin") and read["value"] == read["value"]


def test_an_agents_report_that_cannot_be_read_gives_the_time_alone():
    class Odd:
        def search_info(self):
            return {"depth": "deep", "pv": [1]}

    class Counted:
        nodes = 12

    assert move_info(Odd(), 0.5) == {"time": 0.5}
    assert move_info(Counted(), 0.5) == {"time": 0.5, "nodes": 12}
    assert move_info(object(), 0.5) == {"time": 0.5}
