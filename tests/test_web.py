"""The web app's JSON API (dnb_web) through FastAPI's test client: whole games against ``random`` that end
as the engine says, undo/resign, the insight view, records, tournament folders, and every kind of bad
input (a 4xx JSON error that changes nothing)."""

from __future__ import annotations

import json
import os
import random
import threading
import time

import pytest

from gates import FileGate

pytest.importorskip("fastapi", reason="the web extra (fastapi) is not installed: pip install 'dnb-env[web]'")
pytest.importorskip("httpx", reason="FastAPI's test client needs httpx")

from fastapi.testclient import TestClient  # noqa: E402

from dnb_env.core import GameState  # noqa: E402
from dnb_web import WebConfig, create_app  # noqa: E402
from registry.agents import register_agent  # noqa: E402

BASE = "http://127.0.0.1"  # the app answers only to its allowed hosts (TestClient's default is "testserver")


# ------------------------------------------------------------------------------ misbehaving agents
class _Crash:
    name = "web_test_crash"

    def reset(self):
        pass

    def select_action(self, state):
        raise RuntimeError("boom")


class _Slow:
    name = "web_test_slow"

    def __init__(self, delay):
        self.delay = delay

    def reset(self):
        pass

    def select_action(self, state):
        time.sleep(self.delay)
        return state.legal_actions()[0]


class _Illegal:
    name = "web_test_illegal"

    def reset(self):
        pass

    def select_action(self, state):
        return state.num_actions + 5


def _slow(*, board, seed, delay: float = 1.0):
    return _Slow(delay)


GATE = FileGate()  # web_test_block agents think until the test sets it


class _Blocked:
    """Thinks until GATE is set (at most 60 s): a move whose end the test decides, not the clock."""
    name = "web_test_block"

    def reset(self):
        pass

    def select_action(self, state):
        GATE.wait(60)
        return state.legal_actions()[0]


@pytest.fixture(autouse=True)
def misbehaving_agents(monkeypatch, tmp_path):
    """The agents above, registered for one test only (so that no other test sees them)."""
    from registry import agents

    GATE.path = str(tmp_path / "gate")

    monkeypatch.setattr(agents, "_FACTORIES", dict(agents._FACTORIES))
    register_agent("web_test_crash", lambda *, board, seed: _Crash())
    register_agent("web_test_slow", _slow)
    register_agent("web_test_illegal", lambda *, board, seed: _Illegal())
    register_agent("web_test_block", lambda *, board, seed: _Blocked())
    GATE.clear()
    yield
    GATE.set()  # no thread or worker is left thinking after the test


@pytest.fixture
def roots(tmp_path):
    results, runs = tmp_path / "results", tmp_path / "runs"
    results.mkdir()
    runs.mkdir()
    return str(results), str(runs)


@pytest.fixture
def client(roots):
    config = WebConfig(results_roots=(roots[0],), checkpoint_roots=(roots[1],), max_games=8, solver_nodes=200_000)
    with TestClient(create_app(config), base_url=BASE) as c:
        yield c


def new_game(client, board="2x2", opponent="random", human=0, seed=0, **extra) -> dict:
    r = client.post("/api/games", json=dict(board=board, opponent=opponent, human=human, seed=seed, **extra))
    assert r.status_code == 201, r.text
    return r.json()


def play_out(client, game: dict, rng: random.Random) -> dict:
    """Human plays random legal moves, the agent replies, until the end."""
    gid = game["id"]
    while game["turn"] != "over":
        if game["turn"] == "human":
            r = client.post(f"/api/games/{gid}/move", json={"action": rng.choice(game["legal"]), "ply": game["ply"]})
        else:
            r = client.post(f"/api/games/{gid}/agent-move")
        assert r.status_code == 200, r.text
        game = r.json()
    return game


def assert_error(r, status: int, code: str | None = None) -> dict:
    assert r.status_code == status, r.text
    body = r.json()
    assert isinstance(body.get("message"), str) and body["message"], body
    if code:
        assert body["error"] == code, body
    return body


# ------------------------------------------------------------------------------ whole games
@pytest.mark.parametrize("board,human", [("2x2", 0), ("2x2", 1), ("3x3", 0), ("3x3", 1)])
def test_full_game_against_random_ends_as_the_engine_says(client, board, human):
    game = play_out(client, new_game(client, board=board, human=human, seed=3), random.Random(7 + human))
    engine = GameState.from_actions(board, actions=game["history"])
    assert engine.is_terminal()
    assert game["scores"] == list(engine.scores)
    assert game["winner"] == engine.winner
    assert game["status"] == "over" and game["legal"] == []
    assert sum(game["scores"]) == engine.rows * engine.cols
    # who drew each edge, replayed by the engine
    s, owners = GameState.new(board), {}
    for a in game["history"]:
        owners[a] = s.current_player
        s = s.apply(a)
    assert game["edges"] == [owners[a] for a in range(engine.num_actions)]
    # the record and its replay agree with the engine too
    rec = client.get(f"/api/games/{game['id']}/record").json()
    assert rec["actions"] == game["history"] and rec["board"] == board and rec["scores"] == list(engine.scores)
    assert rec["players"][human] == "human" and rec["players"][1 - human] == "random"
    text = client.get(f"/api/games/{game['id']}/record?format=text")
    assert text.status_code == 200 and text.headers["content-type"].startswith("text/plain")
    assert ("actions: " + " ".join(map(str, game["history"]))) in text.text and str(engine) in text.text
    for body in ({"record": rec}, {"text": text.text}):
        frames = client.post("/api/records/replay", json=body).json()["frames"]
        assert len(frames) == len(game["history"]) + 1
        assert frames[-1]["scores"] == list(engine.scores) and frames[0]["history"] == []
        for k, f in enumerate(frames):
            assert f["history"] == game["history"][:k]


def test_seeded_agent_replies_repeat(client):
    def moves(seed):
        g = new_game(client, board="3x3", seed=seed)
        return play_out(client, g, random.Random(1))["history"]

    assert moves(5) == moves(5)
    assert moves(5) != moves(6)


def test_again_flag_after_a_completed_box(client):
    g = new_game(client, board="1x2", human=0, opponent="web_test_slow:delay=0.0")
    gid = g["id"]
    # human: h(0,0)=0; agent (first legal) ... steer to a box the human completes
    state = GameState.new("1x2")
    while True:
        g = client.get(f"/api/games/{gid}").json()
        if g["turn"] == "over":
            break
        if g["turn"] == "agent":
            g = client.post(f"/api/games/{gid}/agent-move").json()
            continue
        state = GameState.from_actions("1x2", actions=g["history"])
        scoring = [a for a in state.legal_actions() if state.apply(a).current_player == state.current_player
                   and not state.apply(a).is_terminal()]
        action = scoring[0] if scoring else state.legal_actions()[-1]
        g = client.post(f"/api/games/{gid}/move", json={"action": action}).json()
        if scoring:
            assert g["again"] and g["turn"] == "human"
            return
    pytest.fail("the human never had a box to complete with the game going on")


# ------------------------------------------------------------------------------ undo, resign, isolation
def test_undo_takes_back_to_before_the_humans_last_move(client):
    g = new_game(client, board="3x3", human=0, seed=1)
    gid = g["id"]
    assert_error(client.post(f"/api/games/{gid}/undo"), 409, "nothing_to_undo")
    g = client.post(f"/api/games/{gid}/move", json={"action": 0}).json()
    while g["turn"] == "agent":
        g = client.post(f"/api/games/{gid}/agent-move").json()
    before_second = g["history"]
    g = client.post(f"/api/games/{gid}/move", json={"action": g["legal"][0]}).json()
    while g["turn"] == "agent":
        g = client.post(f"/api/games/{gid}/agent-move").json()
    assert len(g["history"]) > len(before_second)
    g = client.post(f"/api/games/{gid}/undo").json()
    assert g["history"] == before_second and g["turn"] == "human"
    g = client.post(f"/api/games/{gid}/undo").json()
    assert g["history"] == [] and g["turn"] == "human"


def test_undo_when_the_agent_started(client):
    g = new_game(client, board="2x2", human=1, seed=2)
    gid = g["id"]
    assert g["turn"] == "agent"
    g = client.post(f"/api/games/{gid}/agent-move").json()
    opening = g["history"]
    assert g["turn"] == "human"
    g = client.post(f"/api/games/{gid}/move", json={"action": g["legal"][0]}).json()
    g = client.post(f"/api/games/{gid}/undo").json()
    assert g["history"] == opening


def test_resign_ends_the_game(client):
    g = new_game(client, board="2x2", human=0)
    gid = g["id"]
    g = client.post(f"/api/games/{gid}/resign").json()
    assert g["status"] == "resigned" and g["winner"] == 1 and g["turn"] == "over"
    assert_error(client.post(f"/api/games/{gid}/move", json={"action": 0}), 409, "game_over")
    assert_error(client.post(f"/api/games/{gid}/agent-move"), 409, "game_over")
    assert_error(client.post(f"/api/games/{gid}/resign"), 409, "game_over")
    assert_error(client.post(f"/api/games/{gid}/undo"), 409, "game_over")
    assert client.get(f"/api/games/{gid}/record").json()["resigned"] == 0


def test_games_are_isolated_with_random_ids(client):
    a, b = new_game(client, board="2x2"), new_game(client, board="3x3")
    assert a["id"] != b["id"] and len(a["id"]) >= 16 and len(b["id"]) >= 16
    client.post(f"/api/games/{a['id']}/move", json={"action": 3})
    assert client.get(f"/api/games/{b['id']}").json()["history"] == []
    client.post(f"/api/games/{b['id']}/move", json={"action": 5})
    assert client.get(f"/api/games/{a['id']}").json()["history"] == [3]
    assert client.delete(f"/api/games/{a['id']}").status_code == 200
    assert_error(client.get(f"/api/games/{a['id']}"), 404, "unknown_game")
    assert client.get(f"/api/games/{b['id']}").json()["history"] == [5]


def test_a_full_server_drops_only_finished_games_and_refuses_while_all_are_in_play(roots):
    with TestClient(create_app(WebConfig(results_roots=(roots[0],), max_games=2)), base_url=BASE) as c:
        g1, g2 = new_game(c), new_game(c)
        # both in play (one left alone for a while): the newcomer is refused, neither game is touched
        c.app.state.store.get(g1["id"]).touched -= 600
        before = {g["id"]: c.get(f"/api/games/{g['id']}").json() for g in (g1, g2)}
        r = c.post("/api/games", json={"board": "2x2"})
        assert_error(r, 503, "too_many_games")
        assert "2 games are being played" in r.json()["message"] and "try again later" in r.json()["message"]
        assert {g: c.get(f"/api/games/{g}").json() for g in before} == before
        # a finished game makes room (the least recently used finished one first)
        assert c.post(f"/api/games/{g2['id']}/resign").status_code == 200
        g3 = new_game(c)
        assert_error(c.get(f"/api/games/{g2['id']}"), 404, "unknown_game")
        assert set(c.app.state.store.games) == {g1["id"], g3["id"]}
        # a game in play idle past --idle is swept as before, which makes room
        c.app.state.store.get(g1["id"]).touched -= 3600
        g4 = new_game(c)
        assert set(c.app.state.store.games) == {g3["id"], g4["id"]}


def test_idle_games_are_swept(roots):
    with TestClient(create_app(WebConfig(results_roots=(roots[0],), idle_s=60)), base_url=BASE) as c:
        old, fresh = new_game(c), new_game(c)
        store = c.app.state.store
        store.get(old["id"]).touched -= 61  # a minute without requests
        store.get(fresh["id"]).touched -= 59
        assert c.get(f"/api/games/{fresh['id']}").status_code == 200  # every access sweeps, and touches
        assert set(store.games) == {fresh["id"]}
        assert_error(c.get(f"/api/games/{old['id']}"), 404, "unknown_game")
        assert store.get(fresh["id"]).solver is None
        c.get(f"/api/games/{fresh['id']}/analysis?agent=false")
        from dnb_web.insight import SOLVER_TT_MB

        assert store.get(fresh["id"]).solver.tt_mb == SOLVER_TT_MB <= 8  # a small table per game


# ------------------------------------------------------------------------------ bad input changes nothing
def test_bad_moves_change_nothing(client):
    g = new_game(client, board="2x2", human=0)
    gid = g["id"]
    g = client.post(f"/api/games/{gid}/move", json={"action": 4, "ply": 0}).json()
    assert g["turn"] == "agent"
    snapshot = client.get(f"/api/games/{gid}").json()
    assert_error(client.post(f"/api/games/{gid}/move", json={"action": 5}), 409, "not_your_turn")
    g = client.post(f"/api/games/{gid}/agent-move").json()
    while g["turn"] == "agent":
        g = client.post(f"/api/games/{gid}/agent-move").json()
    snapshot = client.get(f"/api/games/{gid}").json()
    url = f"/api/games/{gid}/move"
    cases = [
        ({"action": 4}, 400, "illegal_move"),  # already drawn: a repeated move
        ({"action": g["history"][-1]}, 400, "illegal_move"),
        ({"action": 12}, 400, "illegal_move"),  # out of range on 2x2
        ({"action": -1}, 400, "illegal_move"),
        ({"action": g["legal"][0], "ply": 0}, 409, "stale_ply"),  # a repeated (late) request
        ({"action": "3"}, 422, "bad_request"),
        ({"action": 3.0}, 422, "bad_request"),
        ({"action": True}, 422, "bad_request"),
        ({}, 422, "bad_request"),
        ({"action": g["legal"][0], "extra": 1}, 422, "bad_request"),
    ]
    for body, status, code in cases:
        assert_error(client.post(url, json=body), status, code)
    assert_error(client.post(url, content=b'{"action": ', headers={"content-type": "application/json"}), 400,
                 "malformed_json")
    assert_error(client.post(url, content=b"[1, 2]", headers={"content-type": "application/json"}), 422)
    assert_error(client.post(f"/api/games/{gid}/agent-move"), 409, "not_your_turn")
    assert client.get(f"/api/games/{gid}").json() == snapshot


def test_unknown_game_ids(client):
    for method, path in [("get", ""), ("delete", ""), ("post", "/move"), ("post", "/agent-move"), ("post", "/undo"),
                         ("post", "/resign"), ("get", "/analysis"), ("get", "/record")]:
        kwargs = {"json": {"action": 0}} if path == "/move" else {}
        assert_error(getattr(client, method)(f"/api/games/no-such-game{path}", **kwargs), 404, "unknown_game")
    assert_error(client.get("/api/nothing-here"), 404)


@pytest.mark.parametrize("body,status,code", [
    ({"board": "0x3"}, 400, "bad_board"),
    ({"board": "13x13"}, 400, "bad_board"),
    ({"board": "3x13"}, 400, "bad_board"),
    ({"board": "3x"}, 400, "bad_board"),
    ({"board": "axb"}, 400, "bad_board"),
    ({"board": 5}, 422, "bad_request"),
    ({"opponent": "no_such_agent"}, 400, "bad_agent"),
    ({"opponent": "alphabeta:depth=2.5"}, 400, "bad_agent"),
    ({"opponent": "alphabeta:depth=deep"}, 400, "bad_agent"),
    ({"opponent": "alphabeta:nodepth=3"}, 400, "bad_agent"),
    ({"opponent": "alphabeta:depth"}, 400, "bad_agent"),
    ({"opponent": "mcts:search=fast"}, 400, "bad_agent"),
    ({"opponent": ""}, 400, "bad_agent"),
    ({"opponent": "alphazero:checkpoint=/etc/passwd"}, 403, "forbidden_path"),
    ({"opponent": "alphazero:checkpoint=../../outside.pt"}, 403, "forbidden_path"),
    ({"board": "2x2", "opponent": "alphazero"}, 400, "agent_unavailable"),  # no shipped 2x2 weights
    ({"human": 2}, 422, "bad_request"),
    ({"human": "0"}, 422, "bad_request"),
    ({"seed": "x"}, 422, "bad_request"),
    ({"time_limit": 0}, 400, "bad_time_limit"),
    ({"time_limit": 10_000}, 400, "bad_time_limit"),
    ({"colour": "red"}, 422, "bad_request"),
])
def test_bad_new_game_requests(client, body, status, code):
    assert_error(client.post("/api/games", json=body), status, code)
    assert client.app.state.store.games == {}


@pytest.mark.parametrize("spec, named", [
    ("alphabeta:time_limit=nan,depth=24", "time_limit=nan is not a finite number"),  # nan slipped past min()
    ("alphabeta:time_limit=inf", "time_limit=inf is not a finite number"),
    ("mcts:uct_c=nan", "uct_c=nan is not a finite number"),
    ("alphazero:c_puct=-inf", "c_puct=-inf is not a finite number"),
    ("alphazero:solve_root=999", "solve_root=999 is more than the web app allows on 3x3 (at most 24)"),
    ("dotsformer:solve_leaf=999", "solve_leaf=999 is more than"),
    ("alphabeta:solve_leaf=999", "solve_leaf=999 is more than"),
    ("solver:max_undrawn=30", "max_undrawn=30 is more than"),
    ("prsboxes:solver_edges=999", "solver_edges=999 is more than"),
    ("prsboxes:search_safe=999", "search_safe=999 is more than"),
    ("solver:node_limit=0", "node_limit=0: a node budget must be at least 1"),  # 0 is the solver's unlimited
    ("prsboxes:solver_nodes=0", "solver_nodes=0: a node budget must be at least 1"),
    ("prsboxes:search_nodes=0", "search_nodes=0: a node budget must be at least 1"),
    ("alphazero:solve_nodes=0", "solve_nodes=0: a node budget must be at least 1"),
])
def test_runaway_agent_options_are_refused(client, spec, named):
    body = assert_error(client.post("/api/games", json={"board": "3x3", "opponent": spec, "human": 1, "time_limit": 1}),
                        400, "bad_agent")
    assert named in body["message"]
    assert client.app.state.store.games == {}


def test_paths_that_cannot_be_paths_are_400(client, roots):
    """A NUL byte in a folder or checkpoint path, or a lone surrogate in a checkpoint path (JSON can carry
    one): 400 (were 500s: os.path.realpath's ValueError)."""
    for folder in (roots[0] + "/\x00x", "\x00"):
        for url, extra in (("view", {}), ("plot", {"name": "a.png"}), ("game", {"id": "1-2-0"})):
            assert_error(client.get(f"/api/tournaments/{url}", params={"folder": folder, **extra}), 400, "bad_path")
    for path in (roots[1] + "/a\x00.pt", "\ud800.pt"):
        body = json.dumps({"board": "3x3", "opponent": f"alphazero:checkpoint={path}"})  # the surrogate as a \u escape
        body = assert_error(client.post("/api/games", content=body, headers={"content-type": "application/json"}),
                            400, "bad_path")
        assert "checkpoint" in body["message"]
    assert client.app.state.store.games == {}


def test_checkpoints_only_from_allowed_folders(client, roots):
    missing = os.path.join(roots[1], "missing.pt")
    assert_error(client.post("/api/games", json={"opponent": f"alphazero:checkpoint={missing}"}), 404, "not_found")
    junk = os.path.join(roots[1], "junk.pt")
    with open(junk, "wb") as f:
        f.write(b"not a checkpoint")
    assert_error(client.post("/api/games", json={"board": "3x3", "opponent": f"alphazero:checkpoint={junk}"}), 400,
                 "agent_unavailable")
    link = os.path.join(roots[1], "escape")
    os.symlink("/etc", link)
    assert_error(client.post("/api/games", json={"opponent": f"alphazero:checkpoint={link}/passwd"}), 403,
                 "forbidden_path")
    assert client.app.state.store.games == {}


def test_oversized_requests(client):
    g = new_game(client)
    snapshot = client.get(f"/api/games/{g['id']}").json()
    big = json.dumps({"action": 0, "pad": "x" * 100_000}).encode()
    assert_error(client.post(f"/api/games/{g['id']}/move", content=big, headers={"content-type": "application/json"}),
                 413, "body_too_large")

    def chunks():  # no Content-Length: the streamed body is counted
        yield b'{"action": 0, "pad": "'
        for _ in range(100):
            yield b"x" * 1024
        yield b'"}'

    assert_error(client.post(f"/api/games/{g['id']}/move", content=chunks(),
                             headers={"content-type": "application/json"}), 413, "body_too_large")
    assert_error(client.post("/api/games", content=big, headers={"content-type": "application/json"}), 413)
    assert client.get(f"/api/games/{g['id']}").json() == snapshot
    assert len(client.app.state.store.games) == 1


def test_bad_records(client):
    for body in ({"record": {"board": "2x2", "actions": [0, 0]}}, {"record": {"board": "2x2", "actions": [99]}},
                 {"record": {"board": "13x2", "actions": []}}, {"record": {"board": "2x2"}},
                 {"record": {"board": "2x2", "actions": ["0"]}}, {"text": "hello"}, {"text": "# dnb game 2x2\nactions: a"},
                 {}, {"record": {"board": "2x2", "actions": []}, "text": "x"}):
        assert_error(client.post("/api/records/replay", json=body), 400, "bad_record")
    assert_error(client.post("/api/records/replay", json={"record": [1]}), 422)


# ------------------------------------------------------------------------------ agents that misbehave
def test_crashing_agent_reports_an_error_and_the_server_goes_on(client):
    g = new_game(client, board="2x2", human=1, opponent="web_test_crash")
    gid = g["id"]
    body = assert_error(client.post(f"/api/games/{gid}/agent-move"), 500, "agent_failed")
    assert "boom" in body["message"]
    g = client.get(f"/api/games/{gid}").json()
    assert g["history"] == [] and "boom" in g["error"] and not g["thinking"] and g["turn"] == "agent"
    assert client.post(f"/api/games/{gid}/resign").json()["status"] == "resigned"
    new_game(client)  # the server still serves


def test_agent_choosing_an_illegal_move(client):
    g = new_game(client, board="2x2", human=1, opponent="web_test_illegal")
    assert_error(client.post(f"/api/games/{g['id']}/agent-move"), 500, "agent_failed")
    assert client.get(f"/api/games/{g['id']}").json()["history"] == []


def wait_until(predicate, timeout: float = 30.0):
    deadline = time.monotonic() + timeout
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting"
        time.sleep(0.02)


def test_slow_agent_times_out_and_its_move_is_ended(client):
    g = new_game(client, board="2x2", human=1, opponent="web_test_block", time_limit=0.5)
    gid = g["id"]
    body = assert_error(client.post(f"/api/games/{gid}/agent-move"), 504, "agent_timeout")
    assert "0.5" in body["message"] and not GATE.is_set()  # answered while the agent would still think
    g = client.get("/api/games/" + gid).json()  # the move was ended with its worker: the game is unchanged
    assert g["history"] == [] and not g["thinking"] and "time limit" in g["error"]
    other = new_game(client, board="2x2")  # other games go on
    assert client.post(f"/api/games/{other['id']}/move", json={"action": 0}).status_code == 200
    GATE.set()
    assert client.post(f"/api/games/{gid}/agent-move").json()["history"] == [0]  # asked again, it moves


def test_agent_replies_run_off_the_event_loop(client):
    """While one game's agent thinks, other requests are answered: checked by order, not by the clock (the
    agent cannot finish before the test lets it)."""
    g = new_game(client, board="2x2", human=1, opponent="web_test_block", time_limit=30)
    result = {}
    th = threading.Thread(target=lambda: result.setdefault("r", client.post(f"/api/games/{g['id']}/agent-move")))
    th.start()
    wait_until(lambda: client.get(f"/api/games/{g['id']}").json()["thinking"])
    assert_error(client.post(f"/api/games/{g['id']}/agent-move"), 409, "agent_thinking")  # one move at a time
    other = new_game(client, board="2x2")
    assert client.post(f"/api/games/{other['id']}/move", json={"action": 0}).status_code == 200
    assert "r" not in result and not GATE.is_set()  # the slow request is still running
    GATE.set()
    th.join()
    assert result["r"].status_code == 200 and result["r"].json()["history"] == [0]


def test_moves_past_their_time_limit_leave_no_worker_taken(roots):
    """However many moves run past their time limit, another game's move still gets a worker: each is
    ended with its worker process at its limit. (They were threads that kept their slots: four games of
    `alphabeta:time_limit=nan,depth=24` took every slot, and every later agent move got 503 until a restart.)"""
    config = WebConfig(results_roots=(roots[0],), checkpoint_roots=(roots[1],), workers=2)
    with TestClient(create_app(config), base_url=BASE) as c:
        stuck = [new_game(c, human=1, opponent="web_test_block", time_limit=0.3) for _ in range(4)]
        for g in stuck:
            assert_error(c.post(f"/api/games/{g['id']}/agent-move"), 504, "agent_timeout")
        g = new_game(c, human=1, opponent="random")
        r = c.post(f"/api/games/{g['id']}/agent-move")
        assert r.status_code == 200 and r.json()["ply"] == 1 and not GATE.is_set()
        assert c.get(f"/api/games/{g['id']}/analysis").status_code == 200
        # while two slow moves hold both workers, a third game's move waits for one (not 503) and is played
        slow = [new_game(c, human=1, opponent="web_test_block", time_limit=1.5) for _ in range(2)]
        results = {}
        threads = [threading.Thread(target=lambda gid=s["id"]: results.setdefault(gid, c.post(
            f"/api/games/{gid}/agent-move"))) for s in slow]
        for th in threads:
            th.start()
        wait_until(lambda: all(c.get(f"/api/games/{s['id']}").json()["thinking"] for s in slow))
        g = new_game(c, human=1, opponent="random")
        r = c.post(f"/api/games/{g['id']}/agent-move")
        assert r.status_code == 200 and r.json()["ply"] == 1
        for th in threads:
            th.join()
        assert all(r.status_code == 504 for r in results.values()) and not GATE.is_set()


def test_analysis_pool_refuses_at_once_when_full():
    """Analyses run on threads that cannot be ended: when every slot is taken, the next one is refused
    with 503 at once rather than queued behind jobs that may not end."""
    from dnb_web.server import DaemonPool as _Pool
    from dnb_web.checks import WebError

    pool, gate = _Pool(2, "analysis"), threading.Event()
    jobs = [pool.start(gate.wait, 30) for _ in range(2)]
    with pytest.raises(WebError, match="all 2 analysis slots are taken") as err:
        pool.start(gate.wait, 30)
    assert err.value.status == 503
    gate.set()
    assert all(j.result(timeout=30) for j in jobs)
    wait_until(lambda: pool.running == 0)
    assert pool.start(lambda: 7).result(timeout=30) == 7


def test_a_thinking_agent_does_not_hold_up_the_exit(tmp_path):
    """The process ends although an agent would think for 10 minutes: its move is ended with its worker
    process at the time limit, and the workers stop with the app (nothing is joined at exit that may not end)."""
    import subprocess
    import sys
    import textwrap

    script = tmp_path / "exit.py"
    script.write_text(textwrap.dedent(f"""
        import threading
        from fastapi.testclient import TestClient
        from dnb_web import WebConfig, create_app
        from registry.agents import register_agent

        class Stuck:
            def reset(self): pass
            def select_action(self, state):
                threading.Event().wait(600)

        register_agent("stuck", lambda *, board, seed: Stuck())
        with TestClient(create_app(WebConfig(results_roots=({str(tmp_path)!r},))), base_url={BASE!r}) as c:
            g = c.post("/api/games", json={{"board": "2x2", "human": 1, "opponent": "stuck", "time_limit": 0.2}}).json()
            print(c.post(f"/api/games/{{g['id']}}/agent-move").status_code, flush=True)
    """))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [os.path.dirname(os.path.dirname(__file__)),
                                                                     os.environ.get("PYTHONPATH")])))
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "504"


def test_time_limits_and_option_caps_are_forced_on_agents(client):
    gid = new_game(client, board="3x3", opponent="alphabeta:depth=6", time_limit=2)["id"]
    assert client.app.state.store.get(gid).agent.time_limit == 1.6  # 0.8 x the game's limit
    gid = new_game(client, board="3x3", opponent="alphabeta:time_limit=100", time_limit=2)["id"]
    assert client.app.state.store.get(gid).agent.time_limit == 1.6  # a spec cannot raise it
    gid = new_game(client, board="3x3", opponent="alphabeta:time_limit=0.5", time_limit=2)["id"]
    assert client.app.state.store.get(gid).agent.time_limit == 0.5  # nor is a smaller one raised
    for spec in ("alphabeta:time_limit=none", "alphabeta:time_limit=0", "mcts:simulations=10000000",
                 "openspiel_mcts:rollouts=1000", "solver:node_limit=100000000", "alphabeta:depth=99"):
        assert_error(client.post("/api/games", json={"board": "3x3", "opponent": spec}), 400, "bad_agent")
    gid = new_game(client, board="2x2", opponent="solver")["id"]  # a default over its cap is lowered
    from dnb_web.options import option_caps

    assert client.app.state.store.get(gid).agent.solver.node_limit == option_caps(2, 2)["node_limit"]
    assert option_caps(9, 9)["simulations"] >= 1000 and option_caps(9, 9)["simulations"] < option_caps(3, 3)["simulations"]
    # prsboxes' exact zone is the alpha-beta solver's where it takes the board, the retrograde table's beyond
    from dnb_env import native
    from dnb_env.solver import native_available

    assert option_caps(9, 9)["solver_edges"] == (38 if native_available() else 24)
    assert option_caps(12, 12)["solver_edges"] == (38 if native_available() and native.MAX_SIZE >= 12 else 24)
    assert option_caps(13, 13)["solver_edges"] == 24
    # agents sized by node budgets think to the game's clock (0.8 of its limit); the others keep their budgets
    for spec, told in (("prsboxes", 1.6), ("solver", 1.6), ("mcts:simulations=10", None), ("alphabeta:depth=2", None)):
        gid = new_game(client, board="2x2", opponent=spec, time_limit=2)["id"]
        assert client.app.state.store.get(gid).move_time == told, spec


def test_insight_alphabeta_deepens_until_its_deadline():
    from baselines.alphabeta import AlphaBetaAgent
    from dnb_web.insight import agent_view

    agent = AlphaBetaAgent(depth=60, seed=0, board=(5, 5))
    view = agent_view(agent, GameState.new(5, 5), deadline=time.perf_counter() + 0.3)  # depth 60: hours
    assert view["kind"] == "search" and view["move"] in range(60)
    reached = int(view["unit"].split("(")[1].split("-ply")[0])
    assert 1 <= reached < 60 and agent.deadline is None


# ------------------------------------------------------------------------------ insight
def test_analysis_of_a_known_position(client):
    # 2x2 after h(0,0), v(0,0), h(1,0): box 0 has three sides, the capture is edge v(0,1) = 7
    g = new_game(client, board="2x2", human=0, opponent="random")
    gid = g["id"]
    game = client.app.state.store.get(gid)
    game.state = GameState.from_actions("2x2", actions=[0, 6, 2])
    data = client.get(f"/api/games/{gid}/analysis").json()
    st = data["structure"]
    assert st["move_classes"]["7"] == "capture" and st["move_classes"]["1"] == "safe"
    assert set(st["move_classes"]) == {str(a) for a in game.state.legal_actions()}
    assert st["last_move"] == {"action": 2, "initiative": "neutral"}
    from conftest import BruteForce

    bf = BruteForce()
    sv = data["solver"]
    assert sv["status"] == "solved" and sv["value"] == bf.value(game.state)
    assert {int(a): v for a, v in sv["move_values"].items()} == bf.move_values(game.state)
    assert 7 in sv["best_moves"]
    ag = data["agent"]
    assert ag["kind"] == "probabilities" and abs(sum(ag["values"]) - 1) < 1e-9 and ag["values"][0] == 0
    assert ag["move"] is None  # uniform over the legal moves: it prefers none
    assert ag["uniform"] is True  # the page draws no numbers and says "no preference"


class _Shares:
    """An agent whose view is the given shares (``kind``: probabilities through ``action_probabilities``,
    visits through ``analyse``), to test where the insight view sees a preference."""

    def __init__(self, values, kind="probabilities"):
        self.values, self.kind = values, kind
        if kind == "visits":
            self.analyse = lambda state, deadline=None: {"kind": "visits", "values": list(self.values)}

    def action_probabilities(self, state):
        return list(self.values)


@pytest.mark.parametrize("values,kind,flat", [
    ([1 / 12] * 12, "probabilities", True),                             # random's: exactly uniform
    ([0.0864] * 6 + [0.08] * 6, "probabilities", True),                 # within 10% of 1/12 = 0.0833
    ([0.095] + [0.0823] * 11, "probabilities", False),                   # one move 14% above 1/12
    ([0.5] + [0.5 / 11] * 11, "probabilities", False),                  # a clear favourite
    ([42.0] * 6 + [41.0] * 6, "visits", True),                          # 500 simulations spread alike
    ([100.0] + [36.0] * 11, "visits", False),
    ([1.0] * 11 + [0.0], "visits", False),                              # a legal move never visited
    ([0.0] * 12, "visits", False),                                      # nothing to share
])
def test_agent_view_without_a_preference_is_uniform(values, kind, flat):
    from dnb_web.insight import agent_view

    view = agent_view(_Shares(values, kind), GameState.new("2x2"))
    assert view["kind"] == kind and view["uniform"] is flat
    assert (view["move"] is None) == flat or values == [0.0] * 12


def test_agent_view_uniform_counts_legal_moves_only():
    from dnb_web.insight import agent_view

    state = GameState.from_actions("2x2", actions=[0, 5])  # moves 0 and 5 drawn: their (zero) shares do not count
    probs = [0.1] * 12
    probs[0] = probs[5] = 0.0
    assert agent_view(_Shares(probs), state)["uniform"] is True
    state = GameState.from_actions("2x2", actions=[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10])  # one legal move left
    assert agent_view(_Shares([1.0] * 12), state)["uniform"] is False  # nothing to prefer between: its 100% shown
    exact = _Shares([1.0] * 12, "visits")  # exact values alike say something ("every move wins by one"):
    exact.analyse = lambda state, deadline=None: {"kind": "values", "values": [1.0] * 12}  # not shares
    assert agent_view(exact, GameState.new("2x2"))["uniform"] is False


def test_analysis_shows_long_chains_and_loops(client):
    g = new_game(client, board="1x3", human=0)
    game = client.app.state.store.get(g["id"])
    # 1x3: draw every horizontal edge: one chain of three boxes, both ends open to the border
    game.state = GameState.from_actions("1x3", actions=[0, 3, 1, 4, 2, 5])
    st = client.get(f"/api/games/{g['id']}/analysis?agent=false").json()["structure"]
    [chain] = st["components"]
    assert sorted(chain.pop("boxes")) == [0, 1, 2]
    assert chain == {"kind": "chain", "length": 3, "opened": False, "long": True}
    assert st["long_chains"] == 1 and st["simple_endgame"] and st["endgame_value"] == -3
    g = new_game(client, board="2x2", human=0)
    game = client.app.state.store.get(g["id"])
    game.state = GameState.from_actions("2x2", actions=[0, 1, 4, 5, 6, 8, 9, 11])  # the four inner edges undrawn
    st = client.get(f"/api/games/{g['id']}/analysis?agent=false").json()["structure"]
    assert [c["kind"] for c in st["components"]] == ["loop"] and st["components"][0]["long"]


def test_solver_has_a_budget(roots):
    config = WebConfig(results_roots=(roots[0],), solver_nodes=1_000)
    with TestClient(create_app(config), base_url=BASE) as c:
        g = new_game(c, board="5x5", human=0)
        t = time.perf_counter()
        data = c.get(f"/api/games/{g['id']}/analysis?agent=false").json()
        assert time.perf_counter() - t < 5
        assert data["solver"]["status"] in ("out_of_reach", "too_large")


@pytest.mark.parametrize("spec,kind", [("mcts:simulations=60,search=python", "visits"), ("alphabeta:depth=2", "search"),
                                       ("mcts:simulations=60", "visits"), ("openspiel_mcts:simulations=60", "visits"),
                                       ("solver", "values"), ("greedy", "none"), ("prsboxes", "none")])
def test_agent_views(client, spec, kind):
    if spec.startswith("openspiel"):
        pytest.importorskip("pyspiel", reason="openspiel_mcts needs OpenSpiel")
    g = new_game(client, board="2x2", human=0, opponent=spec)
    data = client.get(f"/api/games/{g['id']}/analysis?solver=false").json()
    ag = data["agent"]
    assert ag["kind"] == kind and data["solver"] is None
    if kind == "visits":
        assert 50 <= sum(v or 0 for v in ag["values"]) <= 60 and ag["move"] in range(12)
        assert spec in ("mcts:simulations=60", "openspiel_mcts:simulations=60") or ag["value"] is not None
    if kind == "values":  # the exact value (box margin for the mover) of each move
        from conftest import BruteForce

        bf = BruteForce()
        assert {a: v for a, v in enumerate(ag["values"])} == bf.move_values(GameState.new("2x2"))
        assert ag["value"] == bf.value(GameState.new("2x2")) and ag["move"] in range(12)
    if kind == "search":
        assert ag["value"] is not None and ag["move"] in range(12)
    # the analysis used its own agent: the game's position and agent are untouched
    assert client.get(f"/api/games/{g['id']}").json()["history"] == []


def test_network_agent_view_and_offered_specs(client, roots):
    pytest.importorskip("torch", reason="the network agents need torch")
    import shutil

    from agents.network_agent import shipped_checkpoint

    exported = os.path.join(roots[1], "az", "weights.pt")  # an exported checkpoint in an allowed folder
    os.makedirs(os.path.dirname(exported))
    shutil.copy(shipped_checkpoint("3x3", "alphazero"), exported)
    offered = [a["spec"] for a in client.get("/api/agents?board=3x3").json()["agents"]]
    assert {"random", "greedy", "alphabeta:depth=4", "prsboxes", "alphazero", "solver"} <= set(offered)
    assert f"alphazero:checkpoint={exported}" in offered and f"dotsformer:checkpoint={exported}" not in offered
    g = new_game(client, board="3x3", opponent=f"alphazero:checkpoint={exported},simulations=8")
    assert client.post(f"/api/games/{g['id']}/move", json={"action": 0}).status_code == 200
    assert client.post(f"/api/games/{g['id']}/agent-move").json()["ply"] == 2
    offered2 = [a["spec"] for a in client.get("/api/agents?board=2x2").json()["agents"]]
    assert "random" in offered2 and "alphazero" not in offered2  # no shipped 2x2 weights
    offered5 = [a["spec"] for a in client.get("/api/agents?board=5x5").json()["agents"]]
    assert "alphazero" in offered5 and "solver" not in offered5
    for board, offered_b in (("2x2", offered2), ("3x3", offered), ("5x5", offered5)):  # one network, every board
        assert {"alphavit", "alphavit:simulations=0"} <= set(offered_b), board
    from agents.checkpoint import BoardOutsideTrainingWarning

    with pytest.warns(BoardOutsideTrainingWarning, match="not 4x7: playing 4x7 outside its training set"):
        offered47 = [a["spec"] for a in client.get("/api/agents?board=4x7").json()["agents"]]
    assert {"alphavit", "alphavit:simulations=0"} <= set(offered47) and "alphazero" not in offered47
    assert_error(client.get("/api/agents?board=13x2"), 400, "bad_board")
    g = new_game(client, board="3x3", human=0, opponent="alphazero:simulations=0")
    ag = client.get(f"/api/games/{g['id']}/analysis?solver=false").json()["agent"]
    assert ag["kind"] == "policy" and abs(sum(ag["values"]) - 1) < 1e-4 and -1.01 <= ag["value"] <= 1.01
    g = new_game(client, board="3x3", human=0, opponent="alphazero:simulations=16")
    ag = client.get(f"/api/games/{g['id']}/analysis?solver=false").json()["agent"]
    assert ag["kind"] == "visits" and sum(ag["values"]) >= 15


# ------------------------------------------------------------------------------ tournament folders
def test_tournament_folder_browsing(client, roots):
    from agents.arena import TournamentConfig
    from registry.tournaments import run_tournament

    out = os.path.join(roots[0], "t2x2")
    run_tournament(TournamentConfig(board="2x2", agents=("random", "greedy"), games=4, openings=2, bootstrap=0),
                   out=out, progress=False, echo=None)
    folders = client.get("/api/tournaments").json()["folders"]
    assert folders == [{"name": "t2x2", "root": 0, "played": 4, "scheduled": 4, "in_progress": False, "complete": True}]
    view = client.get("/api/tournaments/view", params={"folder": out}).json()
    assert view["config"]["board"] == "2x2" and len(view["games"]) == 4
    assert client.get("/api/tournaments/view", params={"folder": "t2x2"}).json() == dict(view, folder="t2x2")
    assert {r["agent"] for r in view["elo"]} == {"random", "greedy"} and view["pairs"]
    records = [json.loads(line) for line in open(os.path.join(out, "results.jsonl"))]
    assert view["plots"] == ["tournament.png"]  # run_tournament draws it: the check below cannot pass vacuously
    r = client.get("/api/tournaments/plot", params={"folder": out, "name": view["plots"][0]})
    assert r.status_code == 200 and r.content[:8] == b"\x89PNG\r\n\x1a\n"
    for rec in records:
        d = client.get("/api/tournaments/game", params={"folder": out, "id": rec["id"]}).json()
        assert d["actions"] == rec["moves"] and d["players"] == [rec["first"], rec["second"]]
        assert d["frames"][-1]["scores"] == rec["scores"] == list(GameState.from_actions("2x2", actions=rec["moves"]).scores)
        assert d["opening"] == 2
    before = open(os.path.join(out, "results.jsonl")).read()
    with open(os.path.join(out, "results.jsonl"), "a") as f:
        f.write("{torn\n")
    assert len(client.get("/api/tournaments/view", params={"folder": out}).json()["games"]) == 4
    assert open(os.path.join(out, "results.jsonl")).read() == before + "{torn\n"  # browsing moves nothing aside
    # a damaged config.json (nested too deeply to read, a list, garbage): listed as a folder without a config,
    # a clear answer for the view, no internal error
    for damage in ("[" * 100_000 + "]" * 100_000, "[1, 2]", "\x00garbage"):
        with open(os.path.join(out, "config.json"), "w") as f:
            f.write(damage)
        assert client.get("/api/tournaments").status_code == 200
        r = client.get("/api/tournaments/view", params={"folder": out})
        assert r.status_code < 500, (damage[:10], r.status_code, r.text[:200])
        assert client.get("/api/tournaments/game", params={"folder": out, "id": records[0]["id"]}).status_code < 500


def _tournament_folder(root: str, name: str, board: str = "2x2", games: int = 2, played: int = 0) -> str:
    """A tournament folder ``root/name`` as ``dnb tournament --out`` writes it: random vs greedy, ``games`` a
    pair scheduled, the first ``played`` of them on file."""
    from agents.arena import TournamentConfig

    out = os.path.join(root, name)
    os.makedirs(out)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(TournamentConfig(board=board, agents=("random", "greedy"), games=games).to_json(), f)
    with open(os.path.join(out, "results.jsonl"), "w") as f:
        for g in range(played):
            f.write(json.dumps({"id": f"0-1-{g}", "first": "random", "second": "greedy", "moves": [0, 1],
                                "scores": [0, 0], "result_first": 0.5}) + "\n")
    return out


def test_the_list_reads_a_results_file_again_only_when_it_changed(client, roots, monkeypatch):
    from dnb_web import tournaments

    out = _tournament_folder(roots[0], "t", games=3, played=2)
    reads = []
    real_read = tournaments.read_games
    monkeypatch.setattr(tournaments, "read_games", lambda path: reads.append(path) or real_read(path))
    for _ in range(3):
        assert client.get("/api/tournaments").json()["folders"][0]["played"] == 2
    assert len(reads) == 1  # the first list read it; the next two kept its count
    with open(os.path.join(out, "results.jsonl"), "a") as f:  # a run appends a game: the file grows
        f.write(json.dumps({"id": "0-1-2", "first": "greedy", "second": "random", "moves": [0, 1],
                            "scores": [0, 0], "result_first": 0.5}) + "\n")
    [entry] = client.get("/api/tournaments").json()["folders"]
    assert (entry["played"], entry["complete"], len(reads)) == (3, True, 2)
    assert client.get("/api/tournaments/view", params={"folder": "t"}).json()["played"] == 3


def test_tournaments_are_listed_by_their_name_under_the_root(roots, tmp_path):
    """Names relative to their results root ("/"-separated, nested ones too), never the server's absolute
    paths; each root's folders say which root (an index into "roots") they are under."""
    other = str(tmp_path / "older")
    os.makedirs(other)
    _tournament_folder(roots[0], "b", played=2)
    _tournament_folder(roots[0], os.path.join("5x5", "a"), played=2)
    _tournament_folder(other, "b", played=1)  # the same name under the second root
    with TestClient(create_app(WebConfig(results_roots=(roots[0], other))), base_url=BASE) as c:
        listed = c.get("/api/tournaments").json()
        assert [(f["name"], f["root"]) for f in listed["folders"]] == [("5x5/a", 0), ("b", 0), ("b", 1)]
        assert str(tmp_path) not in json.dumps(listed["folders"])
        assert len(c.get("/api/tournaments/view", params={"folder": "5x5/a"}).json()["games"]) == 2
        assert len(c.get("/api/tournaments/view", params={"folder": "b"}).json()["games"]) == 2  # the first root's
        assert len(c.get("/api/tournaments/view", params={"folder": "b", "root": 1}).json()["games"]) == 1
        assert c.get("/api/tournaments/game", params={"folder": "b", "root": 1, "id": "0-1-0"}).json()["actions"] == [0, 1]
        for root in (2, -1):
            assert_error(c.get("/api/tournaments/view", params={"folder": "b", "root": root}), 400, "bad_root")
        assert_error(c.get("/api/tournaments/view", params={"folder": "b", "root": "x"}), 422)
        for name in ("..", "../older/b", "b/../../older"):  # a name cannot climb out of its root
            assert_error(c.get("/api/tournaments/view", params={"folder": name, "root": 0}), 403, "forbidden_path")
        assert_error(c.get("/api/tournaments/view", params={"folder": "nope"}), 404, "not_found")


def test_a_running_tournament_is_marked_in_progress(client, roots):
    """A run holds the folder's lock while it plays (agents.arena.results.FolderLock): the list and the view
    say "in progress" while it is held, and no longer once it is released; a folder with fewer games on file
    than its config asks for is not complete."""
    from agents.arena.results import FolderLock, folder_locked

    if folder_locked(roots[0]) is None or not os.path.exists("/proc/locks"):
        pytest.skip("no /proc/locks on this system: whether a run holds a lock cannot be told")
    out = _tournament_folder(roots[0], "t", games=3, played=2)
    listed = client.get("/api/tournaments").json()["folders"]
    assert listed == [{"name": "t", "root": 0, "played": 2, "scheduled": 3, "in_progress": False, "complete": False}]
    lock = FolderLock(out)  # what a run of `dnb tournament --out` holds while it plays
    try:
        [entry] = client.get("/api/tournaments").json()["folders"]
        assert entry["in_progress"] is True and not entry["complete"]
        view = client.get("/api/tournaments/view", params={"folder": "t"}).json()
        assert view["in_progress"] is True and view["played"] == len(view["games"]) == 2 and view["scheduled"] == 3
        with pytest.raises(ValueError, match="another tournament"):  # reading the state did not take the lock
            FolderLock(out)
    finally:
        lock.close()
    assert client.get("/api/tournaments").json()["folders"][0]["in_progress"] is False
    assert os.path.exists(os.path.join(out, ".lock"))  # the lock file stays: its presence alone means nothing


def test_folder_locked_reads_the_kernels_lock_table(tmp_path):
    from agents.arena.results import folder_locked

    locks = tmp_path / "locks"
    assert folder_locked(str(tmp_path), locks=str(locks)) is False  # no lock file: never locked
    (tmp_path / ".lock").write_text("")
    inode = os.stat(tmp_path / ".lock").st_ino
    assert folder_locked(str(tmp_path), locks=str(locks)) is None   # no table: cannot be told
    locks.write_text(f"1: POSIX  ADVISORY  WRITE 10 fe:00:{inode} 0 EOF\n"      # a POSIX lock, not a flock
                     f"2: FLOCK  ADVISORY  WRITE 11 fe:00:{inode + 1} 0 EOF\n"  # another file's
                     f"2: -> FLOCK  ADVISORY  WRITE 12 fe:00:{inode} 0 EOF\n")  # a waiter, not a holder
    assert folder_locked(str(tmp_path), locks=str(locks)) is False
    locks.write_text(locks.read_text() + f"3: FLOCK  ADVISORY  WRITE 13 08:11:{inode} 0 EOF\n")
    assert folder_locked(str(tmp_path), locks=str(locks)) is True


def test_the_elo_table_is_sorted_by_elo(client, roots):
    out = _tournament_folder(roots[0], "t", played=2)
    with open(os.path.join(out, "elo.csv"), "w") as f:  # as the arena writes it: in the order of the agents
        f.write("agent,elo,ci_low,ci_high\nrandom,-180.5,-220.0,-140.0\nbroken,,,\ngreedy,0.0,-30.0,30.0\n"
                "alphabeta,95.2,60.0,130.0\nmcts,1000.0,900.0,1100.0\nweak,-1000.0,-1100.0,-900.0\n")
    elo = client.get("/api/tournaments/view", params={"folder": "t"}).json()["elo"]
    assert [r["agent"] for r in elo] == ["mcts", "alphabeta", "greedy", "random", "weak", "broken"]
    assert elo[0] == {"agent": "mcts", "elo": "1000.0", "ci_low": "900.0", "ci_high": "1100.0"}


def test_tournament_paths_stay_inside_the_roots(client, roots):
    os.makedirs(os.path.join(roots[0], "t"))
    outside = os.path.dirname(roots[0])
    for folder in ("/etc", outside, os.path.join(roots[0], ".."), os.path.join(roots[0], "t", "..", "..")):
        assert_error(client.get("/api/tournaments/view", params={"folder": folder}), 403, "forbidden_path")
        assert_error(client.get("/api/tournaments/game", params={"folder": folder, "id": "0-1-0"}), 403)
    assert_error(client.get("/api/tournaments/view", params={"folder": os.path.join(roots[0], "nope")}), 404)
    t = os.path.join(roots[0], "t")
    for name in ("../../etc/passwd", "x.png", "config.json"):
        assert_error(client.get("/api/tournaments/plot", params={"folder": t, "name": name}), 404)
    assert_error(client.get("/api/tournaments/game", params={"folder": t, "id": "0-1-0"}), 404)


def test_symlinks_inside_a_tournament_folder_do_not_escape(client, roots, tmp_path):
    secret = tmp_path / "secret.txt"  # outside every allowed root
    secret.write_text("agent,elo,ci_low,ci_high\nSECRET,1,2,3\n")
    t = os.path.join(roots[0], "t")
    os.makedirs(t)
    with open(os.path.join(t, "results.jsonl"), "w") as f:
        f.write(json.dumps({"id": "0-1-0", "first": "a", "second": "b", "moves": [0, 1], "scores": [0, 0]}) + "\n")
    good_png = b"\x89PNG\r\n\x1a\n" + b"\0" * 16
    with open(os.path.join(t, "real.png"), "wb") as f:
        f.write(good_png)
    os.symlink("/etc/passwd", os.path.join(t, "leak.png"))
    os.symlink(str(secret), os.path.join(t, "elo.csv"))
    os.symlink(str(secret), os.path.join(t, "pairs.csv"))
    secret_cfg = tmp_path / "config.json"
    secret_cfg.write_text(json.dumps({"board": "2x2", "secret": "SECRET"}))
    os.symlink(str(secret_cfg), os.path.join(t, "config.json"))
    view = client.get("/api/tournaments/view", params={"folder": t})
    assert view.status_code == 200 and "SECRET" not in view.text and "root:" not in view.text
    assert view.json()["plots"] == ["real.png"] and view.json()["elo"] == [] and view.json()["config"] is None
    assert_error(client.get("/api/tournaments/plot", params={"folder": t, "name": "leak.png"}), 404, "not_found")
    assert client.get("/api/tournaments/plot", params={"folder": t, "name": "real.png"}).content == good_png
    assert_error(client.get("/api/tournaments/game", params={"folder": t, "id": "0-1-0"}), 404)  # no config of its own
    # a results.jsonl that is a link out of the folder is neither listed nor read
    u = os.path.join(roots[0], "u")
    os.makedirs(u)
    outside = tmp_path / "results.jsonl"
    outside.write_text(json.dumps({"id": "SECRET", "moves": []}) + "\n")
    os.symlink(str(outside), os.path.join(u, "results.jsonl"))
    assert [f["name"] for f in client.get("/api/tournaments").json()["folders"]] == ["t"]  # "u" is not listed
    assert client.get("/api/tournaments/view", params={"folder": "u"}).json()["games"] == []


def test_results_lines_of_the_wrong_types_are_skipped(client, roots):
    t = os.path.join(roots[0], "t")
    os.makedirs(t)
    good = {"id": "0-1-0", "first": "a", "second": "b", "moves": [0, 1], "scores": [1, 0], "opening": [0],
            "result_first": 1.0}
    bad = [dict(good, opening=5), dict(good, moves=["0"]), dict(good, moves=[True]), dict(good, scores=[1]),
           dict(good, scores="1-0"), dict(good, first=3), dict(good, result_first="win"), dict(good, id=5), [1, 2]]
    with open(os.path.join(t, "results.jsonl"), "w") as f:
        for rec in [good] + bad:
            f.write(json.dumps(rec) + "\n")
    with open(os.path.join(t, "config.json"), "w") as f:
        json.dump({"board": "2x2"}, f)
    view = client.get("/api/tournaments/view", params={"folder": t})
    assert view.status_code == 200 and [g["id"] for g in view.json()["games"]] == ["0-1-0"]
    assert view.json()["games"][0]["opening"] == 1
    assert client.get("/api/tournaments/game", params={"folder": t, "id": "0-1-0"}).json()["actions"] == [0, 1]


def test_unexpected_errors_are_json(roots, monkeypatch):
    from dnb_web import insight

    def broken(state):
        raise KeyError("a bug")

    monkeypatch.setattr(insight, "structure", broken)
    with TestClient(create_app(WebConfig(results_roots=(roots[0],))), base_url=BASE,
                    raise_server_exceptions=False) as c:
        g = new_game(c)
        r = c.get(f"/api/games/{g['id']}/analysis")
        assert r.headers["content-type"].startswith("application/json")
        assert_error(r, 500, "internal_error")
        assert c.get(f"/api/games/{g['id']}").status_code == 200  # and the server goes on


def test_only_allowed_host_headers_are_answered(roots):
    with TestClient(create_app(WebConfig(results_roots=(roots[0],))), base_url=BASE) as c:
        for host in ("127.0.0.1", "127.0.0.1:8000", "localhost:8000", "LOCALHOST", "[::1]:8000", "[::1]"):
            assert c.get("/api/tournaments", headers={"host": host}).status_code == 200, host
        for host in ("evil.example", "evil.example:8000", "127.0.0.1.evil.example", "", "[::2]:8000"):
            r = c.get("/api/tournaments", headers={"host": host})
            assert_error(r, 400, "bad_host")
        assert_error(c.post("/api/games", json={}, headers={"host": "evil.example"}), 400, "bad_host")
        assert c.app.state.store.games == {}
    config = WebConfig(results_roots=(roots[0],), allowed_hosts=("*",))
    with TestClient(create_app(config), base_url="http://evil.example") as c:
        assert c.get("/api/tournaments").status_code == 200


def test_agent_listing_is_one_shared_job_per_board_until_a_checkpoint_changes(roots):
    from registry import make_agent

    built = []

    def counting(name, **kwargs):
        built.append(name)
        return make_agent(name, **kwargs)

    config = WebConfig(results_roots=(roots[0],), checkpoint_roots=(roots[1],))
    with TestClient(create_app(config, make_agent=counting), base_url=BASE) as c:
        results = []
        threads = [threading.Thread(target=lambda: results.append(c.get("/api/agents?board=2x2").json()))
                   for _ in range(3)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert len(results) == 3 and all(r == results[0] for r in results)
        once = len(built)
        assert once and "random" in [a["spec"] for a in results[0]["agents"]]
        c.get("/api/agents?board=2x2")
        assert len(built) == once  # cached
        junk = os.path.join(roots[1], "new.pt")
        with open(junk, "wb") as f:
            f.write(b"not a checkpoint")
        c.get("/api/agents?board=2x2")
        assert len(built) > once  # a new checkpoint: listed again
        again = len(built)
        os.utime(junk, ns=(0, 10**18))  # touched: listed again
        c.get("/api/agents?board=2x2")
        assert len(built) > again


def test_strict_fields_of_a_new_game(client):
    for body in ({"human": True}, {"human": False}, {"human": 1.0}, {"seed": -1}, {"seed": True}, {"seed": 2**64}):
        assert_error(client.post("/api/games", json=body), 422, "bad_request")
    assert client.app.state.store.games == {}
    assert new_game(client, human=1, seed=0)["human"] == 1


def test_capture_colour_differs_from_the_players_colours():
    import pathlib
    import re as re_

    css = (pathlib.Path(__file__).parents[1] / "dnb_web" / "static" / "app.css").read_text()
    colour = {k: tuple(int(v[i:i + 2], 16) for i in (0, 2, 4))
              for k, v in re_.findall(r"--([\w-]+):\s*#([0-9a-fA-F]{6})", css)}
    for player in ("p0", "p1"):
        distance = sum((a - b) ** 2 for a, b in zip(colour["capture"], colour[player])) ** 0.5
        assert distance > 120, (player, colour["capture"], colour[player])


# ------------------------------------------------------------------------------ page, OpenAPI, CLI
def test_page_and_static_files_make_no_external_requests(client):
    page = client.get("/")
    assert page.status_code == 200 and 'id="board"' in page.text
    for path in ("/static/app.js", "/static/app.css"):
        r = client.get(path)
        assert r.status_code == 200 and len(r.text) > 1000
        text = r.text.replace("http://www.w3.org/2000/svg", "")
        assert "http://" not in text and "https://" not in text and "//cdn" not in text
    assert "http" not in page.text.replace("http://www.w3.org", "")


def test_openapi_documents_the_api(client):
    paths = client.get("/openapi.json").json()["paths"]
    for p in ("/api/games", "/api/games/{gid}", "/api/games/{gid}/move", "/api/games/{gid}/agent-move",
              "/api/games/{gid}/undo", "/api/games/{gid}/resign", "/api/games/{gid}/analysis",
              "/api/games/{gid}/record", "/api/records/replay", "/api/agents", "/api/tournaments"):
        assert p in paths
    docs = client.get("/docs")
    assert docs.status_code == 200 and '<script src="/static/api.js">' in docs.text
    assert "https://" not in docs.text and "http://" not in docs.text  # no CDN: the page renders /openapi.json
    assert client.get("/redoc").status_code == 404
    assert "fetch(\"/openapi.json\")" in client.get("/static/api.js").text


def test_cli_serve_prints_the_address_and_warns_off_loopback(monkeypatch, capsys):
    import uvicorn

    from registry.cli import main

    started = []

    def run(self, sockets=None):
        [sock] = sockets  # bound before the address was printed
        started.append((self.config.host, sock.getsockname()[1], self.config.app.state.config.allowed_hosts))

    monkeypatch.setattr(uvicorn.Server, "run", run)
    assert main(["serve", "--port", "0"]) == 0
    out = capsys.readouterr()
    port = started[-1][1]
    assert port > 0 and f"http://127.0.0.1:{port}/" in out.out and "warning" not in out.err
    assert started[-1][2] == ("127.0.0.1", "localhost", "::1", "127.0.0.1")
    assert main(["serve", "--host", "0.0.0.0", "--port", "0"]) == 0
    out = capsys.readouterr()
    assert "warning" in out.err and "0.0.0.0" in out.err
    assert started[-1][0] == "0.0.0.0" and started[-1][2] == ("*",)  # any host, with the warning
    assert main(["serve", "--port", "70000"]) == 2
    for option in ("--max-games", "--max-think", "--time-limit", "--idle"):
        for value in ("0", "-1"):
            assert main(["serve", option, value]) == 2
            assert f"{option} must be more than 0" in capsys.readouterr().err
    assert len(started) == 2


def test_static_files_are_package_data():
    import fnmatch
    import pathlib

    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    root = pathlib.Path(__file__).parents[1]
    tool = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"]
    assert any(fnmatch.fnmatch("dnb_web.static", pat) for pat in tool["packages"]["find"]["include"])
    patterns = tool["package-data"]["dnb_web.static"]  # the wheel itself: tests/test_packaging.py
    files = [p.name for p in (root / "dnb_web" / "static").iterdir()]
    assert {"index.html", "app.js", "app.css"} <= set(files)
    assert all(any(fnmatch.fnmatch(f, pat) for pat in patterns) for f in files), files
    extras = tomllib.loads((root / "pyproject.toml").read_text())["project"]["optional-dependencies"]
    assert any(r.startswith("fastapi") for r in extras["web"]) and "web" in extras["all"][0]


# ---------------------------------------------------------------------------------------- engines
TINY_ENGINE = os.path.join(os.path.dirname(__file__), "fixtures", "engine_tiny.py")


def test_engines_are_refused_unless_their_program_is_on_the_allow_list(roots, tmp_path):
    import shlex
    import sys

    cmd = " ".join(shlex.quote(str(a)) for a in (sys.executable, TINY_ENGINE))
    spec = f'engine:cmd="{cmd}",name=tiny'
    with TestClient(create_app(WebConfig(results_roots=(roots[0],))), base_url=BASE) as c:  # the default
        r = c.post("/api/games", json=dict(board="2x2", opponent=spec, human=0, seed=0))
        assert r.status_code == 403 and "--allow-engine" in r.json()["message"]
    allowed = WebConfig(results_roots=(roots[0],), allowed_engines=(sys.executable,))
    with TestClient(create_app(allowed), base_url=BASE) as c:
        game = new_game(c, board="2x2", opponent=spec, human=0, seed=0)
        game = play_out(c, game, random.Random(0))  # every agent move: the engine program, started and stopped
        assert sum(game["scores"]) == 4
        for bad, status, words in (
                (f'engine:cmd="/bin/{os.path.basename(sys.executable)} {TINY_ENGINE}"', 403, "not on this server"),
                (f'engine:cmd="{sys.executable}x {TINY_ENGINE}"', 403, "not on this server"),  # exactly, no prefix
                ('engine:cmd="/no/such/program"', 403, "not on this server"),  # refused before it is looked for
                (f'engine:cmd="{cmd}",log=/tmp/x.log', 403, "option(s) log"),
                ('engine:cmd="\'open quote"', 400, "cannot split")):
            r = c.post("/api/games", json=dict(board="2x2", opponent=bad, human=0, seed=0))
            assert r.status_code == status and words in r.json()["message"], (bad, r.text)


def test_cli_serve_allow_engine(monkeypatch, capsys):
    import uvicorn

    from registry.cli import main

    started = []
    monkeypatch.setattr(uvicorn.Server, "run",
                        lambda self, sockets=None: started.append(self.config.app.state.config.allowed_engines))
    assert main(["serve", "--port", "0"]) == 0 and started[-1] == ()  # off by default
    assert main(["serve", "--port", "0", "--allow-engine", "./eng", "--allow-engine", "/usr/bin/other"]) == 0
    assert started[-1] == ("./eng", "/usr/bin/other")
    assert main(["serve", "--port", "0", "--allow-engine", " "]) == 2
    assert "--allow-engine needs the engine's program" in capsys.readouterr().err and len(started) == 2
