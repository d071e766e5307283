// The dnb web page: plain JS over the JSON API (/api/...). Board drawn as SVG; action numbers are
// OpenSpiel's dots_and_boxes numbering: h(r,c) = r*C + c, then v(r,c) = (R+1)*C + r*(C+1) + c.
"use strict";

const SVG = "http://www.w3.org/2000/svg";
const S = 60, PAD = 24;                  // spacing between dots and margin, in SVG units
const $ = (id) => document.getElementById(id);
// The opponent of the game that starts when the page opens (the person moves first, so nothing is computed
// until they do): a fair opponent that answers at once on 3x3.
const DEFAULT_OPPONENT = "alphabeta:depth=4";

let game = null;          // the last state of the live game (GET /api/games/{id})
let epoch = 0;            // grows with every new game: a loop or reply of an older game is dropped
let busy = false;         // a request of ours is in flight
let thinking = false;     // the agent is working on a move
let looping = false;      // agentLoop is asking the agent for moves
let insightOn = false;
let insightData = null;   // analysis of game.ply
let insightPly = -1;
let replay = null;        // {frames, players, title}
let replayIndex = 0;

// ------------------------------------------------------------------------------------------ API
async function api(method, url, body) {
  const opts = { method, headers: {} };
  if (body !== undefined) {
    opts.headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const r = await fetch(url, opts);
  let data = null;
  try { data = await r.json(); } catch (e) { data = { error: "bad_response", message: r.statusText }; }
  if (!r.ok) {
    const err = new Error((data && data.message) || r.statusText);
    err.status = r.status; err.data = data;
    throw err;
  }
  return data;
}
const sleep = (ms) => new Promise((res) => setTimeout(res, ms));

// A 503 `busy` means every slot of the server's pool is taken for a moment (agent lists asked for board
// after board, a new game beside them): api() again every half second, up to 20 times, while `current()`
// holds. Other errors (a 503 `too_many_games` too) are thrown at once; `again(e)` widens what is asked again
// (the insight view: an analysis of the same game still running).
async function apiAgain(method, url, body, current = () => true, again = () => false) {
  for (let attempt = 0; ; attempt++) {
    try {
      return await api(method, url, body);
    } catch (e) {
      const busy = e.status === 503 && e.data && e.data.error === "busy";
      if (!(busy || again(e)) || attempt >= 20 || !current()) throw e;
      await sleep(500);
      if (!current()) throw e;
    }
  }
}

// ------------------------------------------------------------------------------------------ geometry
function edgeEnds(a, R, C) {
  const numH = (R + 1) * C;
  if (a < numH) {
    const r = Math.floor(a / C), c = a % C;
    return [PAD + c * S, PAD + r * S, PAD + (c + 1) * S, PAD + r * S];
  }
  const k = a - numH, r = Math.floor(k / (C + 1)), c = k % (C + 1);
  return [PAD + c * S, PAD + r * S, PAD + c * S, PAD + (r + 1) * S];
}
function edgeName(a, R, C) {
  const numH = (R + 1) * C;
  if (a < numH) return `h ${Math.floor(a / C)} ${a % C}`;
  const k = a - numH;
  return `v ${Math.floor(k / (C + 1))} ${k % (C + 1)}`;
}
function boxCentre(b, C) { return [PAD + (b % C + 0.5) * S, PAD + (Math.floor(b / C) + 0.5) * S]; }
function el(name, attrs, parent) {
  const e = document.createElementNS(SVG, name);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  if (parent) parent.appendChild(e);
  return e;
}

// Draw a frame (state JSON) into an <svg>. opts: {legal: Set, onMove, insight, labels}
function drawBoard(svg, st, opts) {
  opts = opts || {};
  const R = st.rows, C = st.cols;
  svg.setAttribute("viewBox", `0 0 ${C * S + 2 * PAD} ${R * S + 2 * PAD}`);
  svg.style.maxWidth = `${Math.min(640, 2 * (C * S + 2 * PAD))}px`;   // small boards are not blown up
  svg.dataset.rows = R; svg.dataset.cols = C;
  svg.replaceChildren();
  const boxes = el("g", { class: "boxes" }, svg);
  st.boxes.forEach((o, b) => {
    const x = PAD + (b % C) * S, y = PAD + Math.floor(b / C) * S;
    el("rect", { class: `box ${o >= 0 ? "o" + o : ""}`, x: x + 3, y: y + 3, width: S - 6, height: S - 6, "data-box": b, "data-owner": o }, boxes);
    if (o >= 0) {
      const t = el("text", { class: "box-label", x: x + S / 2, y: y + S / 2 }, boxes);
      t.textContent = opts.labels ? opts.labels[o] : String(o);
    }
  });
  const ins = opts.insight;
  const under = el("g", { class: "insight-under" }, svg);
  if (ins && ins.structure) {
    for (const [a, cls] of Object.entries(ins.structure.move_classes)) {
      const [x1, y1, x2, y2] = edgeEnds(Number(a), R, C);
      el("line", { class: `cls ${cls}`, x1, y1, x2, y2, "data-class-of": a }, under);
    }
    for (const comp of ins.structure.components) {
      if (!comp.long) continue;
      for (const b of comp.boxes) {
        const x = PAD + (b % C) * S, y = PAD + Math.floor(b / C) * S;
        el("rect", { class: "chain-box", x: x + 8, y: y + 8, width: S - 16, height: S - 16 }, under);
      }
      const pts = comp.boxes.map((b) => boxCentre(b, C).join(","));
      if (comp.kind === "loop") pts.push(pts[0]);
      el("polyline", { class: "chain-path", points: pts.join(" ") }, under);
    }
  }
  const edges = el("g", { class: "edges" }, svg);
  const legal = opts.legal || new Set();
  for (let a = 0; a < st.num_actions; a++) {
    const [x1, y1, x2, y2] = edgeEnds(a, R, C);
    const owner = st.edges[a];
    const g = el("g", { class: "move" + (legal.has(a) ? " legal" : ""), "data-action": a, "data-drawn": owner >= 0 ? 1 : 0 }, edges);
    el("line", { class: `edge ${owner >= 0 ? "o" + owner : ""} ${st.last_move === a ? "last" : ""}`, x1, y1, x2, y2 }, g);
    const T = 14, M = 8;                   // hit area: 2T thick, ending M short of the dots (tap-friendly)
    if (y1 === y2) el("rect", { class: "hit", x: x1 + M, y: y1 - T, width: x2 - x1 - 2 * M, height: 2 * T, rx: 6 }, g);
    else el("rect", { class: "hit", x: x1 - T, y: y1 + M, width: 2 * T, height: y2 - y1 - 2 * M, rx: 6 }, g);
    if (legal.has(a) && opts.onMove) {
      g.setAttribute("tabindex", "0");
      g.setAttribute("role", "button");
      g.setAttribute("aria-label", `draw ${edgeName(a, R, C)} (action ${a})`);
      g.addEventListener("click", () => opts.onMove(a));
      g.addEventListener("keydown", (ev) => {
        if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); opts.onMove(a); }
      });
    }
  }
  const over = el("g", { class: "insight-over" }, svg);
  if (ins && ins.agent && ins.agent.values && !ins.agent.uniform) {   // uniform: no preference, no numbers
    const kind = ins.agent.kind, vals = ins.agent.values;
    const total = vals.reduce((s, v) => s + (v || 0), 0) || 1;
    vals.forEach((v, a) => {
      if (v === null || v === undefined || st.edges[a] >= 0) return;
      if (kind !== "values" && !v) return;            // exact values: 0 (a draw of the rest) is shown too
      const [x1, y1, x2, y2] = edgeEnds(a, R, C);
      const t = el("text", { class: "prob", x: (x1 + x2) / 2, y: (y1 + y2) / 2 + (y1 === y2 ? -11 : 0), dx: y1 === y2 ? 0 : 14, "data-prob-of": a }, over);
      t.textContent = kind === "visits" ? String(Math.round(v)) : kind === "values" ? fmt(v, 0) : String(Math.round(100 * v / total));
    });
  }
  if (ins && ins.solver && ins.solver.status === "solved") {
    for (const a of ins.solver.winning_moves) {
      const [x1, y1, x2, y2] = edgeEnds(a, R, C);
      const t = el("text", { class: "win-mark", x: (x1 + x2) / 2, y: (y1 + y2) / 2 + (y1 === y2 ? 12 : 0), dx: y1 === y2 ? 0 : -13, "data-win": a }, over);
      t.textContent = "\u2605";
    }
  }
  for (let r = 0; r <= R; r++) for (let c = 0; c <= C; c++) el("circle", { class: "dot", cx: PAD + c * S, cy: PAD + r * S, r: 5 }, svg);
}

// ------------------------------------------------------------------------------------------ play
function names() {
  if (!game) return ["player 0", "player 1"];
  return game.human === 0 ? ["You", game.opponent] : [game.opponent, "You"];
}

function render() {
  if (!game) return;
  $("game").hidden = false;
  const nm = names();
  $("name0").textContent = nm[0]; $("name1").textContent = nm[1];
  $("score0").textContent = game.scores[0]; $("score1").textContent = game.scores[1];
  document.querySelector(".player.p0").classList.toggle("to-move", game.turn !== "over" && game.current_player === 0);
  document.querySelector(".player.p1").classList.toggle("to-move", game.turn !== "over" && game.current_player === 1);
  const status = $("status");
  status.classList.toggle("thinking", thinking);
  let text;
  if (game.turn === "over") {
    if (game.status === "resigned") text = "You resigned";
    else if (game.winner === null) text = `Draw ${game.scores[0]}\u2013${game.scores[1]}`;
    else text = (game.winner === game.human ? "You win " : `${game.opponent} wins `) + `${game.scores[0]}\u2013${game.scores[1]}`;
  } else if (game.turn === "human") {
    text = "Your move";
  } else {
    text = thinking ? `${game.opponent} is thinking` : `${game.opponent} to move`;
  }
  status.replaceChildren(document.createTextNode(text));
  if (game.again && game.turn !== "over") {
    const s = document.createElement("span"); s.className = "again"; s.textContent = "again!"; status.appendChild(s);
  }
  status.dataset.turn = game.turn;
  status.dataset.ply = game.ply;
  $("game").dataset.gameId = game.id;
  $("game").dataset.turn = game.turn;
  $("game").dataset.ply = game.ply;
  $("game").dataset.thinking = thinking ? "1" : "0";
  const canMove = game.turn === "human" && !busy && !thinking;
  const legal = canMove ? new Set(game.legal) : new Set();
  const ins = insightOn && insightData && insightPly === game.ply ? insightData : null;
  drawBoard($("board"), game, { legal, onMove: humanMove, insight: ins, labels: game.human === 0 ? ["you", "ai"] : ["ai", "you"] });
  $("undo").disabled = busy || thinking || game.status === "resigned" || game.ply === 0;
  $("resign").disabled = game.turn === "over";
  $("retry-agent").hidden = !(game.turn === "agent" && !thinking && !looping && !busy);
  for (const id of ["new-game", "again-game"]) $(id).disabled = busy;
  renderInsightPanel(ins);
}

function showError(e) {
  const box = $("error");
  if (!e) { box.hidden = true; box.textContent = ""; return; }
  box.hidden = false;
  box.textContent = e.message || String(e);
}

async function newGame(ev) {
  if (ev) ev.preventDefault();
  showError(null);
  const spec = $("spec").value.trim() || $("opponent").value;
  const body = { board: `${$("rows").value}x${$("cols").value}`, opponent: spec, human: Number($("first").value) === 0 ? 0 : 1,
                 time_limit: Number($("time-limit").value) || 10 };
  if (busy) return;
  const old = game;
  busy = true; setNewGameDisabled(true);
  let created;
  try {
    created = await apiAgain("POST", "/api/games", body);
  } catch (e) {
    showError(e);
    return;
  } finally {
    busy = false; setNewGameDisabled(false);
  }
  epoch += 1;                              // the old game's agent loop and replies are dropped from here on
  game = created; thinking = false; looping = false;
  insightData = null; insightPly = -1;
  if (old && old.id !== game.id) api("DELETE", `/api/games/${old.id}`).catch(() => {});
  render();
  await agentLoop();
}

function setNewGameDisabled(on) {
  for (const id of ["new-game", "again-game"]) $(id).disabled = on;
}

// A request about the game of `mine` (an epoch): its reply is used only while that game is still shown.
async function gameRequest(mine, method, url, body) {
  const data = await api(method, url, body);
  return mine === epoch ? data : null;
}

async function humanMove(a) {
  if (!game || game.turn !== "human" || busy || thinking) return;
  const mine = epoch;
  busy = true;
  showError(null);
  try {
    const g = await gameRequest(mine, "POST", `/api/games/${game.id}/move`, { action: a, ply: game.ply });
    if (g) game = g;
  } catch (e) {
    if (mine === epoch) showError(e);
  } finally {
    busy = false;
  }
  if (mine !== epoch) return;
  render();
  await agentLoop();
}

// Ask the agent for moves while it has the turn. Stops (leaving `game` alone) as soon as another game is
// started; after an error the "Ask the agent again" button restarts it.
async function agentLoop() {
  if (looping) return;
  const mine = epoch;
  looping = true;
  let first = true;
  try {
    while (mine === epoch && game && game.turn === "agent") {
      if (!first) await sleep(300);        // so each of the agent's moves can be seen
      if (mine !== epoch) return;
      first = false;
      thinking = true; render();
      try {
        const g = await gameRequest(mine, "POST", `/api/games/${game.id}/agent-move`);
        if (!g) return;
        game = g;
      } catch (e) {
        if (mine !== epoch) return;
        thinking = false;
        showError(e.status === 409 && e.data && e.data.error === "agent_thinking"
          ? new Error(`${e.message} \u2014 press "Ask the agent again" in a moment`) : e);
        render();  // the error and the end of thinking show together, before the state is fetched again
        try { const g = await gameRequest(mine, "GET", `/api/games/${game.id}`); if (g) game = g; } catch (e2) { /* keep the last state */ }
        looping = false;
        if (mine === epoch) render();
        return;
      }
      thinking = false; render();
    }
  } finally {
    if (mine === epoch) { looping = false; thinking = false; }
  }
  if (mine !== epoch) return;
  render();
  await refreshInsight();
}

async function retryAgent() {
  if (!game || game.turn !== "agent" || busy || thinking || looping) return;
  showError(null);
  await agentLoop();
}

async function undo() {
  if (!game || busy || thinking) return;
  const mine = epoch;
  busy = true; showError(null);
  try {
    const g = await gameRequest(mine, "POST", `/api/games/${game.id}/undo`);
    if (g) game = g;
  } catch (e) { if (mine === epoch) showError(e); } finally { busy = false; }
  if (mine !== epoch) return;
  render();
  await agentLoop();
}

async function resign() {
  if (!game) return;
  const mine = epoch;
  showError(null);
  try {
    const g = await gameRequest(mine, "POST", `/api/games/${game.id}/resign`);
    if (g) game = g;
  } catch (e) { if (mine === epoch) showError(e); }
  if (mine === epoch) render();
}

async function refreshInsight() {
  if (!insightOn || !game || thinking) return;
  if (insightPly === game.ply && insightData) { render(); return; }
  const ply = game.ply, id = game.id;
  const current = () => insightOn && game && game.id === id && game.ply === ply;
  $("insight-summary").textContent = "analysing\u2026";
  try {
    // 409: an earlier analysis of this game is still running (asked again, as a 503 is)
    const data = await apiAgain("GET", `/api/games/${id}/analysis?agent=true&solver=true`, undefined, current,
                                (e) => e.status === 409 && e.data && e.data.error === "analysis_busy");
    if (current() && data.ply === ply) { insightData = data; insightPly = ply; }
  } catch (e) {
    if (current()) $("insight-summary").textContent = `analysis failed: ${e.message}`;
    return;
  }
  render();
}

function fmt(x, digits) { return x === null || x === undefined ? "\u2013" : (x > 0 ? "+" : "") + Number(x).toFixed(digits); }

function renderInsightPanel(ins) {
  const panel = $("insight-panel");
  panel.hidden = !insightOn;
  if (!insightOn) return;
  const out = $("insight-summary");
  if (!ins) { if (!out.textContent) out.textContent = game && game.turn === "over" ? "game over" : "analysing\u2026"; return; }
  out.replaceChildren();
  const p = (text, cls) => { const e = document.createElement("p"); e.textContent = text; if (cls) e.className = cls; out.appendChild(e); return e; };
  const nm = names();
  const st = ins.structure;
  const longs = st.components.filter((c) => c.long);
  p(`Structure: ${st.components.length} chains/loops, ${longs.length} long (${st.long_chains} unopened long chains)` +
    (st.simple_endgame ? `; simple endgame, value ${fmt(st.endgame_value, 0)} for the mover` : "") +
    (st.last_move ? `; last move: ${st.last_move.initiative}` : ""), "i-structure");
  const sv = ins.solver;
  if (sv) {
    if (sv.status === "solved") {
      const you = nm[sv.player] === "You";
      const verb = { win: you ? "win" : "wins", draw: you ? "draw" : "draws", loss: you ? "lose" : "loses" }[sv.outcome];
      p(`Solver: ${nm[sv.player]} ${verb} with best play ` +
        `(final margin ${fmt(sv.final_margin, 0)}); winning moves: ${sv.winning_moves.length ? sv.winning_moves.join(", ") : "none"}`, "i-solver");
    } else if (sv.status === "out_of_reach") {
      p(`Solver: out of reach within its node budget` + (sv.bounds ? ` (value in [${sv.bounds.join(", ")}])` : ""), "i-solver");
    } else if (sv.status === "too_large") {
      p("Solver: position too large", "i-solver");
    }
  }
  const ag = ins.agent;
  if (ag) {
    if (ag.kind === "error") p(`Agent: ${ag.error}`, "i-agent");
    else if (ag.kind === "none") p(`Agent (${game.opponent}): no evaluation from this agent` + (ag.message ? ` (${ag.message})` : ""), "i-agent");
    else {
      const what = { visits: "visit counts", policy: "policy (%)", probabilities: "move probabilities (%)", search: "search",
                     values: "exact value of each move" }[ag.kind];
      p(`Agent (${game.opponent}): ${what}` + (ag.value !== null ? `; evaluation for ${nm[ag.player]}: ${fmt(ag.value, 2)} (${ag.unit})` : "") +
        (ag.uniform ? `; no preference (every legal move alike)` : ag.move !== null ? `; prefers ${ag.move}` : ""), "i-agent");
    }
  }
}

// ------------------------------------------------------------------------------------------ records
async function download(format) {
  if (!game) return;
  try {
    const r = await fetch(`/api/games/${game.id}/record?format=${format}`);
    if (!r.ok) throw new Error((await r.json()).message);
    const blob = await r.blob();
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = `dnb-${game.board}-${game.id.slice(0, 6)}.${format === "text" ? "txt" : "json"}`;
    document.body.appendChild(a); a.click(); a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  } catch (e) { showError(e); }
}

function showReplay(data, title) {
  replay = { frames: data.frames, players: data.players, title };
  replayIndex = 0;
  $("replay").hidden = false;
  $("replay-error").hidden = true;
  $("replay-title").textContent = `${title} \u2014 ${data.board}: player 0 = ${data.players[0]}, player 1 = ${data.players[1]}`;
  $("r-slider").max = data.frames.length - 1;
  stepTo(data.frames.length - 1);
  switchView("replay");
}

function stepTo(i) {
  if (!replay) return;
  replayIndex = Math.max(0, Math.min(replay.frames.length - 1, i));
  const f = replay.frames[replayIndex];
  drawBoard($("replay-board"), f, {});
  $("r-slider").value = replayIndex;
  let info = `move ${replayIndex} of ${replay.frames.length - 1}; score ${f.scores[0]}\u2013${f.scores[1]}`;
  if (f.last_move !== null) info += `; last: ${f.last_move} (${edgeName(f.last_move, f.rows, f.cols)})` + (f.again ? " \u2014 again!" : "");
  info += f.terminal ? "; game over" : `; player ${f.current_player} to move`;
  $("replay-info").textContent = info;
  $("replay-info").dataset.index = replayIndex;
}

async function loadFile(ev) {
  const file = ev.target.files[0];
  if (!file) return;
  const text = await file.text();
  let body;
  try { body = { record: JSON.parse(text) }; } catch (e) { body = { text }; }
  try {
    showReplay(await api("POST", "/api/records/replay", body), file.name);
  } catch (e) {
    $("replay-error").hidden = false; $("replay-error").textContent = e.message;
  }
}

async function replayCurrent() {
  if (!game) return;
  try {
    const rec = await api("GET", `/api/games/${game.id}/record`);
    showReplay(await api("POST", "/api/records/replay", { record: rec }), "this game");
  } catch (e) { showError(e); }
}

// ------------------------------------------------------------------------------------------ tournaments
function table(rows, cols) {
  const t = document.createElement("table");
  const head = t.createTHead().insertRow();
  for (const c of cols) { const th = document.createElement("th"); th.textContent = c; head.appendChild(th); }
  const body = t.createTBody();
  for (const r of rows) { const tr = body.insertRow(); for (const c of cols) tr.insertCell().textContent = r[c] ?? ""; }
  return t;
}

async function loadTournaments() {
  const box = $("t-folders");
  try {
    const data = await api("GET", "/api/tournaments");
    box.replaceChildren();
    const h = document.createElement("p");
    h.textContent = data.folders.length ? "Tournament folders:" : `No tournament folders under ${data.roots.join(", ")} (dnb tournament --out results/NAME).`;
    box.appendChild(h);
    for (const f of data.folders) {
      const b = document.createElement("button"); b.type = "button"; b.dataset.folder = f.name; b.dataset.root = f.root;
      b.textContent = data.roots.length > 1 ? `${f.name} (${data.roots[f.root]})` : f.name;
      const mark = progressText(f);
      if (mark) {
        const s = document.createElement("span"); s.className = "t-progress" + (f.in_progress ? " running" : "");
        s.textContent = mark; b.appendChild(s);
      }
      b.addEventListener("click", () => openTournament(f.name, f.root));
      box.appendChild(b);
    }
  } catch (e) { box.textContent = e.message; }
}

// "in progress, 12 of 40 games" while a run holds the folder; "unfinished, ..." for one that stopped early.
function progressText(f) {
  const count = f.scheduled !== null ? `${f.played} of ${f.scheduled} games` : `${f.played} games`;
  if (f.in_progress) return `in progress, ${count}`;
  if (f.scheduled !== null && !f.complete) return `unfinished, ${count}`;
  return "";
}

async function openTournament(folder, root) {
  const view = $("t-view");
  view.textContent = "loading\u2026";
  const where = `folder=${encodeURIComponent(folder)}&root=${root}`;
  let data;
  try { data = await api("GET", `/api/tournaments/view?${where}`); } catch (e) { view.textContent = e.message; return; }
  view.replaceChildren();
  const h = document.createElement("h2"); h.textContent = folder; view.appendChild(h);
  const mark = progressText(data);
  if (mark) {
    const s = document.createElement("span"); s.className = "t-progress" + (data.in_progress ? " running" : "");
    s.textContent = mark; h.appendChild(s);
  }
  if (data.config) {
    const p = document.createElement("p");
    p.textContent = `${data.config.board}, ${data.config.games} games per pair, ${data.config.mode}, openings ${data.config.openings}`;
    view.appendChild(p);
  }
  if (data.elo.length) {   // the server sends them by Elo, best first
    view.appendChild(Object.assign(document.createElement("h3"), { textContent: "Standings (Elo)" + (data.in_progress ? " as of the last finished run" : "") }));
    const t = table(data.elo.map((r, k) => ({ "#": k + 1, ...r })), ["#", "agent", "elo", "ci_low", "ci_high"]);
    t.id = "t-elo"; view.appendChild(t);
  }
  if (data.pairs.length) {
    view.appendChild(Object.assign(document.createElement("h3"), { textContent: "Pairs" }));
    const w = document.createElement("div"); w.className = "t-table-wrap";
    w.appendChild(table(data.pairs, ["agent", "opponent", "wins", "draws", "losses", "score", "ci_low", "ci_high"])); view.appendChild(w);
  }
  for (const name of data.plots) {
    const img = document.createElement("img"); img.className = "plot"; img.alt = name;
    img.src = `/api/tournaments/plot?${where}&name=${encodeURIComponent(name)}`;
    view.appendChild(img);
  }
  view.appendChild(Object.assign(document.createElement("h3"), { textContent: `Games (${data.games.length})` }));
  const w = document.createElement("div"); w.className = "t-table-wrap";
  const t = table([], ["id", "first", "second", "score", "moves", ""]);
  for (const g of data.games) {
    const tr = t.tBodies[0].insertRow();
    for (const v of [g.id, g.first, g.second, g.scores ? g.scores.join("\u2013") : "", g.moves]) tr.insertCell().textContent = v;
    const b = document.createElement("button"); b.type = "button"; b.textContent = "replay"; b.dataset.gameId = g.id;
    b.addEventListener("click", async () => {
      try {
        const d = await api("GET", `/api/tournaments/game?${where}&id=${encodeURIComponent(g.id)}`);
        showReplay(d, `${folder} game ${g.id}`);
      } catch (e) { view.prepend(Object.assign(document.createElement("p"), { textContent: e.message })); }
    });
    tr.insertCell().appendChild(b);
  }
  w.appendChild(t); view.appendChild(w);
}

// ------------------------------------------------------------------------------------------ setup
function switchView(name) {
  for (const v of ["play", "replay", "tournaments"]) {
    $(`view-${v}`).hidden = v !== name;
    $(`tab-${v}`).classList.toggle("active", v === name);
    $(`tab-${v}`).setAttribute("aria-selected", v === name ? "true" : "false");
  }
  if (name === "tournaments") loadTournaments();
}

let agentsAsked = 0;      // grows with every request for the agent list: only the latest one's answer is used

async function loadAgents() {
  const board = `${$("rows").value}x${$("cols").value}`;
  const sel = $("opponent");
  const mine = ++agentsAsked;
  sel.disabled = true;
  try {
    const data = await apiAgain("GET", `/api/agents?board=${board}`, undefined, () => mine === agentsAsked);
    if (mine !== agentsAsked) return;     // another board's list is on its way
    const keep = sel.value;               // the choice as it is now, not as it was when the list was asked for
    sel.replaceChildren();
    for (const a of data.agents) {
      const o = document.createElement("option"); o.value = a.spec; o.textContent = a.spec; sel.appendChild(o);
    }
    if ([...sel.options].some((o) => o.value === keep)) sel.value = keep;
  } catch (e) { if (mine === agentsAsked) showError(e); } finally { if (mine === agentsAsked) sel.disabled = false; }
}

function init() {
  for (const id of ["rows", "cols"]) {
    const s = $(id);
    // 1 .. MAX_BOARD of dnb_web/checks.py
    for (let n = 1; n <= 12; n++) { const o = document.createElement("option"); o.value = n; o.textContent = n; s.appendChild(o); }
    s.value = 3;
    s.addEventListener("change", loadAgents);
  }
  $("setup").addEventListener("submit", newGame);
  $("again-game").addEventListener("click", () => newGame());
  $("undo").addEventListener("click", undo);
  $("retry-agent").addEventListener("click", retryAgent);
  $("resign").addEventListener("click", resign);
  $("insight").addEventListener("change", (ev) => { insightOn = ev.target.checked; render(); refreshInsight(); });
  $("save-json").addEventListener("click", () => download("json"));
  $("save-text").addEventListener("click", () => download("text"));
  $("to-replay").addEventListener("click", replayCurrent);
  $("load-file").addEventListener("change", loadFile);
  $("r-first").addEventListener("click", () => stepTo(0));
  $("r-prev").addEventListener("click", () => stepTo(replayIndex - 1));
  $("r-next").addEventListener("click", () => stepTo(replayIndex + 1));
  $("r-last").addEventListener("click", () => stepTo(Infinity));
  $("r-slider").addEventListener("input", (ev) => stepTo(Number(ev.target.value)));
  document.addEventListener("keydown", (ev) => {
    if ($("view-replay").hidden || ev.target.tagName === "INPUT") return;
    if (ev.key === "ArrowLeft") stepTo(replayIndex - 1);
    if (ev.key === "ArrowRight") stepTo(replayIndex + 1);
  });
  for (const b of document.querySelectorAll(".tab")) b.addEventListener("click", () => switchView(b.dataset.view));
  $("opponent").replaceChildren(Object.assign(document.createElement("option"), { value: DEFAULT_OPPONENT, textContent: DEFAULT_OPPONENT }));
  loadAgents();
  newGame();   // a board on the first screen: a 3x3 game against the default opponent, the person to move
}

init();
