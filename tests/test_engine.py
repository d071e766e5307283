"""The engine protocol: lines, the server (``dnb engine``), engine programs as agents, and every way an
engine can fail a game."""

from __future__ import annotations

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
from agents.engine.protocol import GoLimits, ProtocolError, format_go, parse_go, parse_info, parse_move
from dnb_env.core import GameState
from registry import make_agent
from registry.specs import agent_from_spec, check_agent_spec, parse_agent_spec, split_agents
from registry.tournaments import run_tournament

FIXTURES = Path(__file__).parent / "fixtures"
TINY_PY = FIXTURES / "engine_tiny.py"
SERVED_GREEDY = f"{shlex.quote(sys.executable)} -m registry.cli engine greedy"


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
    assert log.read_text().count("start: ") == 2  # restarted once, both runs in the log
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


def test_the_web_app_refuses_engines():
    from dnb_web.games import WebError, parse_spec

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
    from agents.engine.protocol import TIME_MARGIN

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
