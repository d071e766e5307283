"""The web page in a real browser: Playwright's Python driver (pip package ``playwright``) drives the
system's headless Chromium (Debian's ``chromium``; nothing is downloaded at run time).

The first screen shows a board (a 3x3 game against the default opponent starts as the page opens); a 2x2
game against ``random`` played by clicking (and once by keyboard) ends with the score the engine gives for
the same moves; undo, the insight view (no numbers where an agent has no preference) and a phone-sized
screen are exercised; the Tournaments tab names folders relative to the results folder, marks a running
one and ranks by Elo; the page makes no request to any other host. Screenshots are saved
(``DNB_WEB_SCREENSHOTS=docs`` also copies them there: that is how ``docs/web-first-screen.png``,
``docs/web-play.png`` and ``docs/web-insight.png`` are made). Skips, saying why, only where no browser
exists.
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

pytest.importorskip("fastapi", reason="the web extra (fastapi, uvicorn) is not installed: pip install 'dnb-env[web]'")
uvicorn = pytest.importorskip("uvicorn", reason="the web extra (uvicorn) is not installed: pip install 'dnb-env[web]'")
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
pytestmark = [
    pytest.mark.skipif(
        CHROMIUM is None,
        reason="no Chromium on this machine (install Debian's `chromium` package, as .ci/run does where apt works)"),
    # the page lists the agents of the boards it shows; the server's check that the shipped AlphaViT builds
    # on a board outside its training set gives that network's one expected warning
    pytest.mark.filterwarnings("ignore::agents.checkpoint.BoardOutsideTrainingWarning"),
]


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


def keep_screenshot(path, name: str):
    """Check the screenshot ``path`` is a PNG of some substance; copy it to ``$DNB_WEB_SCREENSHOTS/name``."""
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000
    if os.environ.get("DNB_WEB_SCREENSHOTS"):
        shutil.copy(path, os.path.join(os.environ["DNB_WEB_SCREENSHOTS"], name))


def open_page(page, server: str):
    """Open the page and wait for the game it starts by itself (the person to move)."""
    page.goto(server + "/")
    wait_settled(page)


def agent_first_until_error(browser, server: str, spec: str):
    """A new page with a game where agent ``spec`` moves first, once the page shows an error; (page, log)."""
    page = browser.new_page()
    log = watch(page, server)
    open_page(page, server)
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
    """A new game by the form (after the one the page started by itself), the person to move first."""
    wait_settled(page)
    old = page.evaluate("() => game.id")
    page.select_option("#rows", str(rows))
    page.select_option("#cols", str(cols))
    page.wait_for_function(f"() => [...document.querySelectorAll('#opponent option')].some(o => o.value === '{opponent}')"
                           " && !document.getElementById('opponent').disabled", timeout=30_000)
    page.select_option("#opponent", opponent)
    page.select_option("#first", "0")
    page.click("#new-game")
    page.wait_for_function(f"() => game && game.id !== '{old}'", timeout=15_000)
    wait_settled(page)


def test_the_first_screen_shows_a_board(server, browser, tmp_path):
    """A 3x3 game against the default opponent is there when the page opens, without "New game": every edge
    can be drawn, and one click plays a move."""
    page = browser.new_page(viewport={"width": 1000, "height": 760})
    log = watch(page, server)
    created = []
    page.on("request", lambda r: created.append(r.url) if r.method == "POST" and r.url.endswith("/api/games") else None)
    page.goto(server + "/")
    page.wait_for_function("() => document.querySelectorAll('#board g.move.legal').length === 24", timeout=15_000)
    assert page.is_visible("#board") and page.inner_text("#status") == "Your move"
    assert page.inner_text("#name1") == "alphabeta:depth=4" and len(created) == 1
    box = page.eval_on_selector("#board", "e => e.getBoundingClientRect().toJSON()")
    assert box["top"] + box["height"] <= 760  # the whole board on the first screen, no scrolling
    page.wait_for_function("() => !document.getElementById('opponent').disabled", timeout=30_000)
    shot = tmp_path / "web-first-screen.png"
    page.screenshot(path=str(shot))
    keep_screenshot(shot, "web-first-screen.png")
    edge = legal_edges(page)[3]
    page.click(f'#board g.move.legal[data-action="{edge}"]')
    wait_settled(page, min_ply=2)
    assert game_info(page)["history"][0] == edge and len(created) == 1
    assert log["external"] == [] and log["errors"] == []
    page.close()


def test_play_a_2x2_game_by_clicking(server, browser, tmp_path):
    page = browser.new_page(viewport={"width": 1100, "height": 900})
    log = watch(page, server)
    open_page(page, server)
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

    # insight on: move classes and the solver's verdict are drawn; random prefers no move: no numbers
    page.check("#insight")
    page.wait_for_selector("#insight-summary .i-solver", timeout=15_000)
    page.wait_for_selector("#board line.cls", state="attached", timeout=5_000)
    assert page.eval_on_selector_all("#board [data-prob-of]", "els => els.length") == 0
    assert "Solver:" in page.inner_text("#insight-summary") and "random" in page.inner_text("#insight-summary")
    assert page.inner_text("#insight-summary").count("no preference") == 1

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


def play_by_clicking(page, pick=lambda legal: legal[-1], until_ply: int = 10**9):
    """Click ``pick(legal edges)`` while it is the person's move, until the game is over or ``until_ply``."""
    while game_info(page)["turn"] != "over" and game_info(page)["ply"] < until_ply:
        ply = game_info(page)["ply"]
        page.click(f'#board g.move.legal[data-action="{pick(legal_edges(page))}"]')
        wait_settled(page, min_ply=ply + 1)


def insight_shown(page):
    """Until the insight view is drawn for the position on the board."""
    page.wait_for_function("() => insightData && insightPly === game.ply && !!document.querySelector('#insight-summary .i-structure')",
                           timeout=30_000)


def test_no_numbers_where_the_agent_has_no_preference(server, browser):
    """Against random (uniform probabilities) no edge gets a number, at any position, and the summary says
    "no preference" once; against a search that prefers moves the numbers are there (so the check above can
    fail)."""
    page = browser.new_page(viewport={"width": 1000, "height": 900})
    log = watch(page, server)
    open_page(page, server)
    start_game(page, 3, 3, "random")
    page.check("#insight")
    for _ in range(3):
        insight_shown(page)
        assert page.eval_on_selector_all("#board line.cls", "els => els.length") == len(game_info(page)["legal"])
        assert page.eval_on_selector_all("#board [data-prob-of]", "els => els.length") == 0
        text = page.inner_text("#insight-summary")
        assert text.count("no preference") == 1 and "prefers" not in text and "%" not in page.text_content("#board")
        play_by_clicking(page, until_ply=game_info(page)["ply"] + 1)
    start_game(page, 3, 3, "mcts:simulations=1000")
    insight_shown(page)
    assert page.eval_on_selector_all("#board [data-prob-of]", "els => els.length") > 0
    assert "no preference" not in page.inner_text("#insight-summary")
    assert log["external"] == [] and log["errors"] == []
    page.close()


def test_screenshots_of_a_game_with_insight(server, browser, tmp_path):
    """A 3x3 game against MCTS with the insight view on, in the middle (the agent's visit counts, move
    classes, the solver's winning moves) and at its end (the person playing the solver's moves from the
    middle on)."""
    page = browser.new_page(viewport={"width": 1000, "height": 1000})
    log = watch(page, server)
    open_page(page, server)
    start_game(page, 3, 3, "mcts:simulations=1000")
    page.check("#insight")
    play_by_clicking(page, pick=lambda legal: legal[len(legal) // 2], until_ply=8)
    if game_info(page)["turn"] != "over":
        insight_shown(page)
        page.wait_for_selector("#insight-summary .i-solver", timeout=30_000)
        shot = tmp_path / "web-play.png"
        page.screenshot(path=str(shot), full_page=True)
        keep_screenshot(shot, "web-play.png")
    while game_info(page)["turn"] != "over":  # from here on the person plays a best move of the solver's
        insight_shown(page)
        best = page.evaluate("() => insightData.solver && insightData.solver.status === 'solved' ? insightData.solver.best_moves : []")
        play_by_clicking(page, pick=lambda legal: best[0] if best else legal[len(legal) // 2],
                         until_ply=game_info(page)["ply"] + 1)
    insight_shown(page)
    status = page.inner_text("#status")
    assert game_info(page)["turn"] == "over" and ("win" in status or "Draw" in status)
    assert page.eval_on_selector_all("#board rect.box.o0, #board rect.box.o1", "els => els.length") == 9
    shot = tmp_path / "web-insight.png"
    page.screenshot(path=str(shot), full_page=True)
    keep_screenshot(shot, "web-insight.png")
    assert log["external"] == [] and log["errors"] == []
    page.close()


def test_phone_sized_screen(server, browser):
    ctx = browser.new_context(viewport={"width": 375, "height": 740}, is_mobile=True, has_touch=True,
                              device_scale_factor=2)
    page = ctx.new_page()
    log = watch(page, server)
    open_page(page, server)
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
    with open(os.path.join(out, "elo.csv")) as f:  # in the order of the agents; the page ranks them
        elo = sorted(((float(r.split(",")[1]), r.split(",")[0]) for r in f.read().splitlines()[1:]), reverse=True)
    page = browser.new_page()
    log = watch(page, server)
    open_page(page, server)

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
    page.wait_for_selector('#t-folders button[data-folder="t2x2"]')
    assert root not in page.inner_text("#t-folders")  # named relative to the results folder
    page.click('#t-folders button[data-folder="t2x2"]')
    page.wait_for_selector("#t-view table")
    text = page.inner_text("#t-view")
    assert "Standings" in text and "greedy" in text and "random" in text and "in progress" not in text
    ranked = page.eval_on_selector_all("#t-elo tbody tr", "rows => rows.map(r => r.cells[1].textContent)")
    assert ranked == [name for _, name in elo]
    page.wait_for_function("() => [...document.querySelectorAll('#t-view img.plot')].every(i => i.complete && i.naturalWidth > 0)")
    page.click(f'#t-view button[data-game-id="{records[1]["id"]}"]')
    page.wait_for_function("() => !document.getElementById('view-replay').hidden")
    final = GameState.from_actions("2x2", actions=records[1]["moves"])
    assert f"score {final.scores[0]}\u2013{final.scores[1]}" in page.inner_text("#replay-info")
    page.click("#r-prev")
    assert page.get_attribute("#replay-info", "data-index") == str(len(records[1]["moves"]) - 1)
    assert log["external"] == [] and log["errors"] == []
    page.close()


def test_a_running_tournament_is_marked_in_progress(server, browser):
    from agents.arena import TournamentConfig
    from agents.arena.results import FolderLock, folder_locked

    with urllib.request.urlopen(f"{server}/api/tournaments") as r:
        root = json.load(r)["roots"][0]
    if folder_locked(root) is None:
        pytest.skip("no /proc/locks on this system: whether a run holds a lock cannot be told")
    out = os.path.join(root, "running", "3x3")
    os.makedirs(out)
    with open(os.path.join(out, "config.json"), "w") as f:
        json.dump(TournamentConfig(board="3x3", agents=("random", "greedy"), games=10).to_json(), f)
    with open(os.path.join(out, "results.jsonl"), "w") as f:
        f.write(json.dumps({"id": "0-1-0", "first": "random", "second": "greedy", "moves": [0], "scores": [0, 0]}) + "\n")
    page = browser.new_page()
    log = watch(page, server)
    open_page(page, server)
    lock = FolderLock(out)  # as a run holds it while it plays
    try:
        page.click("#tab-tournaments")
        button = '#t-folders button[data-folder="running/3x3"]'
        page.wait_for_selector(button)
        assert page.inner_text(button).startswith("running/3x3")
        assert page.inner_text(button + " .t-progress.running") == "in progress, 1 of 10 games"
        page.click(button)
        page.wait_for_selector("#t-view h2 .t-progress.running")
        assert "in progress" in page.inner_text("#t-view h2")
    finally:
        lock.close()
    page.click("#tab-play")
    page.click("#tab-tournaments")
    page.wait_for_function("(sel) => { const b = document.querySelector(sel); return !!b && !b.textContent.includes('in progress'); }",
                           arg=button, timeout=15_000)
    assert "unfinished, 1 of 10 games" in page.inner_text(button)
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
    open_page(page, server)
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
    open_page(page, server)
    assert len(created) == 1  # the game the page starts by itself
    first = page.evaluate("() => game.id")
    page.wait_for_function("() => !document.getElementById('opponent').disabled", timeout=30_000)
    page.evaluate("() => { const b = document.getElementById('new-game'); b.click(); b.click(); b.click(); }")
    page.wait_for_function(f"() => game && game.id !== '{first}'", timeout=15_000)
    wait_settled(page)
    page.wait_for_timeout(300)
    assert len(created) == 2
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

    open_page(page, server)
    page.route("**/analysis?*", busy_once)
    start_game(page, 2, 2)
    page.check("#insight")
    page.wait_for_selector("#insight-summary .i-solver", timeout=15_000)
    assert len(answered) >= 2 and "analysis failed" not in page.inner_text("#insight-summary")
    assert log["external"] == []
    page.close()


def test_agent_lists_and_new_games_ask_again_while_the_builds_are_busy(server, browser):
    """A 503 (every build slot taken: a reader changing the board's rows, then its columns, as the page opens)
    is asked again: the 2x2 list arrives and a 2x2 game starts, with no error shown."""
    page = browser.new_page()
    log = watch(page, server)
    refused = []

    def busy_once(route):
        if route.request.url in refused:
            route.continue_()
        else:
            refused.append(route.request.url)
            route.fulfill(status=503, content_type="application/json",
                          body=json.dumps({"error": "busy", "message": "all 2 build slots are taken"}))

    open_page(page, server)
    page.route("**/api/agents?board=2x2", busy_once)
    page.route("**/api/games", lambda route: busy_once(route) if route.request.method == "POST" else route.continue_())
    start_game(page, 2, 2)
    info = game_info(page)
    assert info["turn"] == "human" and len(info["legal"]) == 12
    assert len(refused) == 2 and page.is_hidden("#error")
    # the live-game cap is no passing moment: its 503 is shown at once, after one request
    capped = []
    page.unroute("**/api/games")
    page.route("**/api/games", lambda route: (capped.append(1), route.fulfill(
        status=503, content_type="application/json",
        body=json.dumps({"error": "too_many_games", "message": "the cap of live games is reached"})))
        if route.request.method == "POST" else route.continue_())
    page.click("#new-game")
    page.wait_for_selector("#error:not([hidden])", timeout=5_000)
    assert "cap of live games" in page.inner_text("#error")
    page.wait_for_timeout(700)
    assert capped == [1]
    assert log["external"] == [] and log["errors"] == []
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
