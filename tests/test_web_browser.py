"""The web page in a real browser: Playwright's Python driver (pip package ``playwright``) drives the
system's headless Chromium (Debian's ``chromium``; nothing is downloaded at run time).

A 2x2 game against ``random`` played by clicking (and once by keyboard) ends with the score the engine
gives for the same moves; undo, the insight view and a phone-sized screen are exercised; the page makes
no request to any other host. A screenshot is saved (``DNB_WEB_SCREENSHOT=path.png`` also copies it
there: that is how ``docs/web-play.png`` is made). Skips, saying why, only where no browser exists.
"""

from __future__ import annotations

import json
import re
import os
import shutil
import socket
import threading
import time
import urllib.request

import pytest

from gates import FileGate

pytest.importorskip("fastapi", reason="the web extra (fastapi, uvicorn) is not installed: pip install 'dnb[web]'")
uvicorn = pytest.importorskip("uvicorn", reason="the web extra (uvicorn) is not installed: pip install 'dnb[web]'")
sync_api = pytest.importorskip("playwright.sync_api", reason="the Python package playwright is not installed")

from dnb_env.core import GameState  # noqa: E402
from dnb_web import WebConfig, create_app  # noqa: E402


def find_chromium() -> str | None:
    """The system's Chromium (or Chrome) binary; the real binary behind Debian's wrapper script if present."""
    for path in ("/usr/lib/chromium/chromium",):
        if os.access(path, os.X_OK):
            return path
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


CHROMIUM = find_chromium()
pytestmark = pytest.mark.skipif(
    CHROMIUM is None,
    reason="no Chromium on this machine (install Debian's `chromium` package, as .ci/run does where apt works)")


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    root = tmp_path_factory.mktemp("web")
    app = create_app(WebConfig(results_roots=(str(root),), checkpoint_roots=(str(root),)))
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    srv = uvicorn.Server(uvicorn.Config(app, log_level="warning", log_config=None))
    th = threading.Thread(target=srv.run, kwargs={"sockets": [sock]}, daemon=True)
    th.start()
    deadline = time.time() + 20
    while not srv.started and time.time() < deadline:
        time.sleep(0.05)
    assert srv.started, "the server did not start"
    yield f"http://127.0.0.1:{port}"
    srv.should_exit = True
    th.join(timeout=10)
    sock.close()


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=["--no-sandbox", "--disable-gpu"])
        yield b
        b.close()


HANDLED_STATUS = re.compile(r"^Failed to load resource: the server responded with a status of (409|503) ")


def watch(page, base: str):
    """Fail any request to another host (recorded), and collect the page's JS errors."""
    log = {"external": [], "errors": []}

    def route(r):
        if r.request.url.startswith(base):
            r.continue_()
        else:
            log["external"].append(r.request.url)
            r.abort()

    def console(msg):
        # the browser logs every 4xx/5xx it receives; 409 (analysis busy) and 503 (every slot busy, which a
        # loaded machine can reach) are answers the page handles by asking again, so they are not errors
        if msg.type == "error" and not HANDLED_STATUS.search(msg.text):
            log["errors"].append(msg.text)

    page.route("**/*", route)
    page.on("pageerror", lambda exc: log["errors"].append(str(exc)))
    page.on("console", console)
    return log


def agent_first_until_error(browser, server: str, spec: str):
    """A new page with a game where agent ``spec`` moves first, once the page shows an error; (page, log)."""
    page = browser.new_page()
    log = watch(page, server)
    page.goto(server + "/")
    page.fill("#spec", spec)
    page.select_option("#first", "1")
    page.click("#new-game")
    page.wait_for_selector("#error:not([hidden])", timeout=10_000)
    return page, log


def wait_settled(page, min_ply: int = 0):
    """Until the human is to move (or the game is over), the agent is not thinking and ``min_ply`` moves
    have been played."""
    page.wait_for_function(
        """(minPly) => { const g = document.getElementById('game');
            return !!g && !g.hidden && (g.dataset.turn === 'human' || g.dataset.turn === 'over')
                   && g.dataset.thinking === '0' && +g.dataset.ply >= minPly; }""", arg=min_ply, timeout=15_000)


def game_info(page) -> dict:
    return page.evaluate("() => ({id: game.id, ply: game.ply, turn: game.turn, legal: game.legal, history: game.history})")


def legal_edges(page) -> list[int]:
    return page.eval_on_selector_all("#board g.move.legal", "els => els.map(e => +e.dataset.action)")


def start_game(page, rows: int, cols: int, opponent: str = "random"):
    page.select_option("#rows", str(rows))
    page.select_option("#cols", str(cols))
    page.wait_for_function(f"() => [...document.querySelectorAll('#opponent option')].some(o => o.value === '{opponent}')"
                           " && !document.getElementById('opponent').disabled", timeout=30_000)
    page.select_option("#opponent", opponent)
    page.select_option("#first", "0")
    page.click("#new-game")
    wait_settled(page)


def test_play_a_2x2_game_by_clicking(server, browser, tmp_path):
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    log = watch(page, server)
    page.goto(server + "/")
    start_game(page, 2, 2)
    info = game_info(page)
    assert info["turn"] == "human" and info["ply"] == 0 and len(legal_edges(page)) == 12

    # hover shows the edge; the keyboard draws it
    first = legal_edges(page)[0]
    sel = f'#board g.move.legal[data-action="{first}"]'
    page.hover(sel)
    assert page.eval_on_selector(sel + " .edge", "e => getComputedStyle(e).stroke") == "rgb(138, 138, 138)"
    page.focus(sel)
    page.keyboard.press("Enter")
    wait_settled(page, min_ply=1)
    info = game_info(page)
    assert info["history"][0] == first

    # a second human move by clicking, then undo takes it (and the agent's replies) back
    before = info["history"]
    page.click(f'#board g.move.legal[data-action="{legal_edges(page)[0]}"]')
    wait_settled(page, min_ply=len(before) + 1)
    assert len(game_info(page)["history"]) > len(before)
    page.click("#undo")
    page.wait_for_function(f"() => game && game.ply === {len(before)}", timeout=10_000)
    wait_settled(page)
    assert game_info(page)["history"] == before
    assert page.eval_on_selector_all("#board g.move[data-drawn='1']", "els => els.length") == len(before)

    # insight on: move classes, the agent's probabilities and the solver's verdict are drawn
    page.check("#insight")
    page.wait_for_selector("#insight-summary .i-solver", timeout=15_000)
    page.wait_for_selector("#board line.cls", state="attached", timeout=5_000)
    assert page.eval_on_selector_all("#board [data-prob-of]", "els => els.length") == len(game_info(page)["legal"])
    assert "Solver:" in page.inner_text("#insight-summary") and "random" in page.inner_text("#insight-summary")
    shot = tmp_path / "web-play.png"
    page.screenshot(path=str(shot), full_page=True)
    assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 10_000
    if os.environ.get("DNB_WEB_SCREENSHOT"):
        shutil.copy(shot, os.environ["DNB_WEB_SCREENSHOT"])

    # play on to the end by clicking
    for _ in range(20):
        info = game_info(page)
        if info["turn"] == "over":
            break
        page.click(f'#board g.move.legal[data-action="{legal_edges(page)[-1]}"]')
        wait_settled(page, min_ply=info["ply"] + 1)
    info = game_info(page)
    assert info["turn"] == "over"
    with urllib.request.urlopen(f"{server}/api/games/{info['id']}") as r:
        api_state = json.load(r)
    engine = GameState.from_actions("2x2", actions=api_state["history"])
    assert engine.is_terminal() and api_state["history"] == info["history"]
    shown = [int(page.inner_text("#score0")), int(page.inner_text("#score1"))]
    assert shown == list(engine.scores)
    status = page.inner_text("#status")
    assert ("win" in status or "Draw" in status) and f"{engine.scores[0]}\u2013{engine.scores[1]}" in status
    owned = page.eval_on_selector_all("#board rect.box", "els => els.map(e => +e.dataset.owner)")
    assert owned == [engine.box_owner(b) for b in range(4)]
    assert log["external"] == [] and log["errors"] == []
    page.close()


def test_phone_sized_screen(server, browser):
    ctx = browser.new_context(viewport={"width": 375, "height": 740}, is_mobile=True, has_touch=True,
                              device_scale_factor=2)
    page = ctx.new_page()
    log = watch(page, server)
    page.goto(server + "/")
    start_game(page, 3, 3)
    box = page.eval_on_selector("#board", "e => e.getBoundingClientRect().toJSON()")
    assert 300 <= box["width"] <= 375
    assert page.evaluate("() => document.documentElement.scrollWidth <= window.innerWidth")
    edge = legal_edges(page)[5]
    page.tap(f'#board g.move.legal[data-action="{edge}"]')
    wait_settled(page, min_ply=1)
    assert game_info(page)["history"][0] == edge
    page.click("#resign")
    page.wait_for_function("() => game && game.turn === 'over'", timeout=5_000)
    assert "resigned" in page.inner_text("#status")
    assert log["external"] == [] and log["errors"] == []
    ctx.close()


class _Crash:
    name = "web_browser_crash"

    def reset(self):
        pass

    def select_action(self, state):
        raise RuntimeError("the agent fell over")


def test_crashing_agent_shows_an_error(server, browser, monkeypatch):
    from registry import agents

    monkeypatch.setattr(agents, "_FACTORIES", dict(agents._FACTORIES))  # registered for this test only
    agents.register_agent("web_browser_crash", lambda *, board, seed: _Crash())
    page, log = agent_first_until_error(browser, server, "web_browser_crash")
    assert "the agent fell over" in page.inner_text("#error")
    assert page.evaluate("() => game.ply") == 0 and page.get_attribute("#game", "data-thinking") == "0"
    assert log["external"] == []
    page.close()


def test_replay_a_saved_game_and_a_tournament_folder(server, browser):
    from agents.arena import TournamentConfig
    from registry.tournaments import run_tournament

    with urllib.request.urlopen(f"{server}/api/tournaments") as r:
        root = json.load(r)["roots"][0]
    out = os.path.join(root, "t2x2")
    run_tournament(TournamentConfig(board="2x2", agents=("random", "greedy"), games=2, bootstrap=0), out=out,
                   progress=False, echo=None)
    records = [json.loads(line) for line in open(os.path.join(out, "results.jsonl"))]
    page = browser.new_page()
    log = watch(page, server)
    page.goto(server + "/")

    # a saved record loaded from a file, stepped through
    rec = {"board": "2x2", "actions": records[0]["moves"], "players": ["a", "b"]}
    page.click("#tab-replay")
    page.set_input_files("#load-file", files=[{"name": "game.json", "mimeType": "application/json",
                                               "buffer": json.dumps(rec).encode()}])
    page.wait_for_selector("#replay:not([hidden])")
    assert page.get_attribute("#replay-info", "data-index") == "12"
    page.click("#r-first")
    assert page.eval_on_selector_all("#replay-board g.move[data-drawn='1']", "els => els.length") == 0
    page.click("#r-next")
    page.click("#r-next")
    assert page.eval_on_selector_all("#replay-board g.move[data-drawn='1']", "els => els.length") == 2
    assert page.eval_on_selector(f'#replay-board g.move[data-action="{rec["actions"][1]}"]', "e => e.dataset.drawn") == "1"

    # the tournament folder: standings, the plot, a game move by move
    page.click("#tab-tournaments")
    page.click(f'#t-folders button[data-folder="{out}"]')
    page.wait_for_selector("#t-view table")
    text = page.inner_text("#t-view")
    assert "Standings" in text and "greedy" in text and "random" in text
    page.wait_for_function("() => [...document.querySelectorAll('#t-view img.plot')].every(i => i.complete && i.naturalWidth > 0)")
    page.click(f'#t-view button[data-game-id="{records[1]["id"]}"]')
    page.wait_for_function("() => !document.getElementById('view-replay').hidden")
    final = GameState.from_actions("2x2", actions=records[1]["moves"])
    assert f"score {final.scores[0]}\u2013{final.scores[1]}" in page.inner_text("#replay-info")
    page.click("#r-prev")
    assert page.get_attribute("#replay-info", "data-index") == str(len(records[1]["moves"]) - 1)
    assert log["external"] == [] and log["errors"] == []
    page.close()


BROWSER_GATE = FileGate()  # web_browser_block agents think until the test sets it


class _Blocked:
    name = "web_browser_block"

    def reset(self):
        pass

    def select_action(self, state):
        BROWSER_GATE.wait(60)
        return state.legal_actions()[0]


FLAKY_FELL = FileGate()  # set by the first move of web_browser_flaky


class _Flaky:
    """Falls over on its first move, plays the first legal move after that (each move is built afresh in a
    process of its own, so the first move is marked by a file)."""
    name = "web_browser_flaky"

    def reset(self):
        pass

    def select_action(self, state):
        if not FLAKY_FELL.is_set():
            FLAKY_FELL.set()
            raise RuntimeError("a passing hiccup")
        return state.legal_actions()[0]


@pytest.fixture
def test_agents(monkeypatch, tmp_path):
    from registry import agents

    BROWSER_GATE.path, FLAKY_FELL.path = str(tmp_path / "gate"), str(tmp_path / "flaky-fell")
    monkeypatch.setattr(agents, "_FACTORIES", dict(agents._FACTORIES))  # registered for one test only
    agents.register_agent("web_browser_block", lambda *, board, seed: _Blocked())
    agents.register_agent("web_browser_flaky", lambda *, board, seed: _Flaky())
    BROWSER_GATE.clear()
    yield
    BROWSER_GATE.set()


def test_new_game_while_the_agent_thinks(server, browser, test_agents):
    """The old game's agent loop ends when a new game starts: its late reply does not replace the new game."""
    page = browser.new_page()
    log = watch(page, server)
    replies = []
    page.on("response", lambda r: replies.append(r.url) if "/agent-move" in r.url else None)
    page.goto(server + "/")
    page.fill("#spec", "web_browser_block")
    page.select_option("#first", "1")
    page.click("#new-game")
    page.wait_for_function("() => document.getElementById('game').dataset.thinking === '1'", timeout=10_000)
    old = page.evaluate("() => game.id")
    page.fill("#spec", "")
    page.select_option("#opponent", "random")
    page.select_option("#first", "0")
    page.click("#again-game")
    page.wait_for_function(f"() => game && game.id !== '{old}'", timeout=10_000)
    wait_settled(page)
    new = page.evaluate("() => game.id")
    assert not BROWSER_GATE.is_set()
    BROWSER_GATE.set()  # the old agent now answers its (abandoned) request
    deadline = time.time() + 15
    while not any(old in url for url in replies) and time.time() < deadline:
        page.wait_for_timeout(50)
    assert any(old in url for url in replies), "the old game's agent never answered"
    page.wait_for_timeout(300)
    info = game_info(page)
    assert info["id"] == new and info["ply"] == 0 and info["turn"] == "human"
    assert page.get_attribute("#game", "data-thinking") == "0" and page.get_attribute("#game", "data-game-id") == new
    assert legal_edges(page) == info["legal"] and len(info["legal"]) == 24  # 3x3, nothing drawn
    assert log["external"] == [] and log["errors"] == []
    page.close()


def test_new_game_button_sends_one_request(server, browser):
    page = browser.new_page()
    log = watch(page, server)
    created = []
    page.on("request", lambda r: created.append(r.url) if r.method == "POST" and r.url.endswith("/api/games") else None)
    page.goto(server + "/")
    page.wait_for_function("() => !document.getElementById('opponent').disabled")
    page.evaluate("() => { const b = document.getElementById('new-game'); b.click(); b.click(); b.click(); }")
    wait_settled(page)
    page.wait_for_timeout(300)
    assert len(created) == 1
    assert log["external"] == [] and log["errors"] == []
    page.close()


def test_ask_the_agent_again_after_an_error(server, browser, test_agents):
    page, log = agent_first_until_error(browser, server, "web_browser_flaky")
    assert "a passing hiccup" in page.inner_text("#error")
    page.wait_for_selector("#retry-agent:not([hidden])", timeout=5_000)
    page.click("#retry-agent")
    wait_settled(page, min_ply=1)
    assert page.evaluate("() => game.ply") == 1 and page.is_hidden("#error") and page.is_hidden("#retry-agent")
    assert log["external"] == []
    page.close()


def test_insight_asks_again_while_an_analysis_is_busy(server, browser):
    page = browser.new_page()
    log = watch(page, server)
    answered = []

    def busy_once(route):
        answered.append(route.request.url)
        if len(answered) == 1:
            route.fulfill(status=409, content_type="application/json",
                          body=json.dumps({"error": "analysis_busy", "message": "an analysis is still running"}))
        else:
            route.continue_()

    page.goto(server + "/")
    page.route("**/analysis?*", busy_once)
    start_game(page, 2, 2)
    page.check("#insight")
    page.wait_for_selector("#insight-summary .i-solver", timeout=15_000)
    assert len(answered) >= 2 and "analysis failed" not in page.inner_text("#insight-summary")
    assert log["external"] == []
    page.close()


def test_api_reference_page_renders_the_schema_locally(server, browser):
    """/docs lists every API operation from /openapi.json without contacting another host."""
    page = browser.new_page()
    log = watch(page, server)
    page.goto(f"{server}/docs")
    page.wait_for_selector("section.op")
    titles = page.eval_on_selector_all("section.op h3", "els => els.map(e => e.textContent)")
    assert "POST/api/games" in titles and "POST/api/games/{gid}/move" in titles
    assert len(titles) >= 10
    assert log["external"] == [] and log["errors"] == []
    page.close()
