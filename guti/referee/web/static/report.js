// guti report: renders the tournament data embedded in the page (#guti-data) with DOM calls
// only (textContent, never innerHTML of data), so any name an engine or a config gives shows
// as text. Positions are replayed from the move strings with the board's jump table; the
// board is drawn from the same geometry JSON the Python SVG renderer uses.
"use strict";
(function () {
  const DATA = JSON.parse(document.getElementById("guti-data").textContent);
  const GEO = DATA.geometry;
  const SVGNS = "http://www.w3.org/2000/svg";
  // Fields of a compact game (guti/referee/web/data.py compact_game).
  const G = { num: 0, round: 1, white: 2, black: 3, result: 4, reason: 5, detail: 6, start: 7,
    moves: 8, book: 9, clocks: 10, elapsed: 11, final: 12, date: 13, evals: 14 };
  const JUMPS = new Map(GEO.jumps.map(([a, b, c]) => [a + "," + c, b]));

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (k === "onclick") node.addEventListener("click", v); else node.setAttribute(k, v);
    }
    for (const c of children) node.append(c instanceof Node ? c : String(c));
    return node;
  }
  function titled(root, text) {  // an SVG's accessible name (and its tooltip)
    const t = document.createElementNS(SVGNS, "title");
    t.textContent = text;
    root.prepend(t);
    root.setAttribute("role", "img");
    return root;
  }
  function svg(tag, attrs) {
    const node = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    return node;
  }
  function clear(id) { const n = document.getElementById(id); n.replaceChildren(); return n; }
  function fmt(x, digits) {
    if (x === null || x === undefined) return "-";
    if (x === "inf") return "+inf"; if (x === "-inf") return "-inf";
    return (x > 0 && digits !== 0 ? "+" : "") + Number(x).toFixed(digits === undefined ? 1 : digits);
  }
  function table(heads, rows, nameCols) {
    const t = el("table");
    const tr = el("tr");
    heads.forEach((h, i) => tr.append(el("th", nameCols.includes(i) ? { class: "name" } : {}, h)));
    t.append(el("thead", {}, tr));
    const body = el("tbody");
    for (const row of rows) {
      const r = el("tr");
      row.forEach((c, i) => r.append(el("td", nameCols.includes(i) ? { class: "name" } : {}, c)));
      body.append(r);
    }
    t.append(body);
    return t;
  }

  // ---------------------------------------------------------------- positions
  function parseFen(fen) {
    const [cells, side, clock, move] = fen.trim().split(/\s+/);
    const out = [];
    for (const row of cells.split("/")) {
      for (const tok of row.match(/w|b|[0-9]+/g) || []) {
        if (tok === "w" || tok === "b") out.push(tok); else for (let i = 0; i < +tok; i++) out.push(null);
      }
    }
    return { cells: out, turn: side, clock: +(clock || 0), fullmove: +(move || 1) };
  }
  function formatFen(pos) {
    const rows = []; let p = 0;
    for (const size of GEO.rows) {
      let text = "", empty = 0;
      for (let i = p; i < p + size; i++) {
        if (pos.cells[i]) { if (empty) { text += empty; empty = 0; } text += pos.cells[i]; } else empty++;
      }
      if (empty) text += empty;
      rows.push(text); p += size;
    }
    return rows.join("/") + " " + pos.turn + " " + pos.clock + " " + pos.fullmove;
  }
  // Play one move string; returns {pos, path, captured} (the judged moves need no checking).
  function play(pos, text) {
    const capture = text.includes("x");
    const path = text.split(/[x-]/).map(Number);
    const cells = pos.cells.slice();
    const piece = cells[path[0] - 1];
    cells[path[0] - 1] = null;
    const captured = [];
    if (capture) {
      for (let i = 0; i + 1 < path.length; i++) {
        const over = JUMPS.get(path[i] + "," + path[i + 1]);
        if (over) { cells[over - 1] = null; captured.push(over); }
      }
    }
    cells[path[path.length - 1] - 1] = piece;
    const next = { cells, turn: pos.turn === "w" ? "b" : "w", clock: capture ? 0 : pos.clock + 1,
      fullmove: pos.turn === "b" ? pos.fullmove + 1 : pos.fullmove };
    return { pos: next, path, captured };
  }
  function positions(startFen, moves) {
    const out = [{ pos: parseFen(startFen || GEO.start_fen), path: [], captured: [] }];
    for (const m of moves) out.push(play(out[out.length - 1].pos, m));
    return out;
  }

  // ---------------------------------------------------------------- the board
  function xy(p) {
    const [x, y] = GEO.points[p - 1];
    return [x - GEO.bounds[0] + GEO.unit, GEO.bounds[3] - y + GEO.unit];
  }
  // numbers: point numbers (on a piece, or beside an empty point's dot, never over it);
  // small boards (the live cards) leave them out.
  function drawBoard(step, width, numbers = true) {
    const u = GEO.unit;
    const w = GEO.bounds[2] - GEO.bounds[0] + 2 * u, h = GEO.bounds[3] - GEO.bounds[1] + 2 * u;
    const root = svg("svg", { class: "guti-board", viewBox: `0 0 ${w} ${h}`, width: width,
      height: Math.round(width * h / w) });
    titled(root, "Board: " + formatFen(step.pos));
    root.append(svg("rect", { class: "background", x: 0, y: 0, width: w, height: h, fill: "#f3e3c3" }));
    const stroke = u * 0.04;
    for (const line of GEO.lines) {
      if (line.circle) {
        const [cx, cy, r] = line.circle;
        root.append(svg("circle", { class: "ring", cx: cx - GEO.bounds[0] + u, cy: GEO.bounds[3] - cy + u,
          r: r, fill: "none", stroke: "#6b4f2a", "stroke-width": stroke }));
      } else {
        root.append(svg(line.closed ? "polygon" : "polyline", { class: "line", fill: "none",
          points: line.points.map(p => xy(p).join(",")).join(" "), stroke: "#6b4f2a", "stroke-width": stroke }));
      }
    }
    if (step.path.length > 1) {
      root.append(svg("polyline", { class: "last-move", points: step.path.map(p => xy(p).join(",")).join(" "),
        fill: "none", stroke: "#2a7de1", "stroke-width": u * 0.08, "stroke-opacity": 0.8 }));
    }
    for (const p of step.captured) {
      const [x, y] = xy(p), d = u * 0.18;
      root.append(svg("path", { class: "captured", "data-point": p, stroke: "#d33", "stroke-width": u * 0.07,
        d: `M${x - d},${y - d}L${x + d},${y + d}M${x - d},${y + d}L${x + d},${y - d}` }));
    }
    step.pos.cells.forEach((piece, i) => {
      const [x, y] = xy(i + 1);
      root.append(svg("circle", { class: "point", "data-point": i + 1, cx: x, cy: y, r: u * 0.08, fill: "#6b4f2a" }));
      if (piece) {
        root.append(svg("circle", { class: "piece " + (piece === "w" ? "white" : "black"), "data-point": i + 1,
          cx: x, cy: y, r: u * 0.32, fill: piece === "w" ? "#fdfdf8" : "#222", stroke: "#333", "stroke-width": stroke }));
      }
      if (!numbers) return;
      const label = svg("text", piece
        ? { class: "label", x: x, y: y + u * 0.1, "font-size": u * 0.28, "text-anchor": "middle" }
        : { class: "label", x: x + u * 0.13, y: y - u * 0.13, "font-size": u * 0.22, "text-anchor": "start" });
      label.setAttribute("font-family", "sans-serif");
      label.setAttribute("fill", piece === "b" ? "#ddd" : "#555");
      label.textContent = String(i + 1);
      root.append(label);
    });
    return root;
  }

  // ---------------------------------------------------------------- charts
  function chart(width, height, xmin, xmax, ymin, ymax, xlabel, ylabel) {
    const m = { l: 48, r: 10, t: 10, b: 30 };
    const root = titled(svg("svg", { class: "chart", width, height }), `${ylabel} by ${xlabel}`);
    const sx = x => m.l + (x - xmin) / ((xmax - xmin) || 1) * (width - m.l - m.r);
    const sy = y => height - m.b - (y - ymin) / ((ymax - ymin) || 1) * (height - m.t - m.b);
    root.append(svg("line", { x1: m.l, y1: sy(ymin), x2: width - m.r, y2: sy(ymin), stroke: "#999" }));
    root.append(svg("line", { x1: m.l, y1: m.t, x2: m.l, y2: height - m.b, stroke: "#999" }));
    const text = (x, y, s, anchor) => {
      const t = svg("text", { x, y, "text-anchor": anchor || "middle" }); t.textContent = s; root.append(t);
    };
    if (ylabel) {
      text(m.l - 4, sy(ymax) + 4, String(Math.round(ymax * 10) / 10), "end");
      text(m.l - 4, sy(ymin), String(Math.round(ymin * 10) / 10), "end");
    }
    // Values at both ends of the x axis (and 0 between them when it is inside).
    const round = v => String(Math.round(v * 10) / 10);
    text(sx(xmin), height - m.b + 12, round(xmin), "start");
    text(sx(xmax), height - m.b + 12, round(xmax), "end");
    if (xmin < 0 && xmax > 0) text(sx(0), height - m.b + 12, "0");
    text(width / 2, height - 4, xlabel); text(m.l + 4, m.t + 8, ylabel, "start");
    return { root, sx, sy, text };
  }
  function finite(x, lo, hi) { return x === "inf" ? hi : x === "-inf" ? lo : x; }
  function eloChart(rows) {
    const rated = rows.filter(r => r.elo !== undefined && r.elo !== null);
    if (!rated.length) return el("p", { class: "note" }, "no games yet");
    const rowH = 26, width = 560, height = rated.length * rowH + 40;
    let lo = -100, hi = 100;
    for (const r of rated) {
      const e = finite(r.elo, -800, 800), mg = finite(r.margin, 0, 400) || 0;
      lo = Math.min(lo, e - mg); hi = Math.max(hi, e + mg);
    }
    lo = Math.max(lo, -800); hi = Math.min(hi, 800);
    const c = chart(width, height, lo, hi, 0, rated.length, "Elo ± 95 %", "");
    c.root.append(svg("line", { x1: c.sx(0), x2: c.sx(0), y1: 10, y2: height - 30, stroke: "#bbb", "stroke-dasharray": "3" }));
    rated.forEach((r, i) => {
      const y = 20 + i * rowH, e = Math.max(lo, Math.min(hi, finite(r.elo, lo, hi)));
      const mg = finite(r.margin, 0, hi - lo) || 0;
      c.root.append(svg("line", { class: "error-bar", x1: c.sx(Math.max(lo, e - mg)), x2: c.sx(Math.min(hi, e + mg)),
        y1: y, y2: y, stroke: "#2a7de1", "stroke-width": 2 }));
      c.root.append(svg("circle", { class: "elo-dot", cx: c.sx(e), cy: y, r: 4, fill: "#2a7de1" }));
      // Anchored away from the nearer edge, so no name is cut off.
      const at = c.sx(e), anchor = at < width / 3 ? "start" : at > 2 * width / 3 ? "end" : "middle";
      c.text(at, y - 6, r.name + " " + fmt(r.elo), anchor);
    });
    return c.root;
  }
  function sprtChart(s) {
    const pts = s.path.length ? s.path : [[0, 0]];
    const xmax = Math.max(1, pts[pts.length - 1][0]);
    const ymin = Math.min(s.lower, ...pts.map(p => p[1])), ymax = Math.max(s.upper, ...pts.map(p => p[1]));
    const c = chart(560, 240, 0, xmax, ymin, ymax, "games", "LLR");
    for (const b of [s.lower, s.upper]) {
      c.root.append(svg("line", { class: "bound", x1: c.sx(0), x2: c.sx(xmax), y1: c.sy(b), y2: c.sy(b), stroke: "#d33", "stroke-dasharray": "4" }));
    }
    c.root.append(svg("polyline", { class: "llr", fill: "none", stroke: "#2a7de1", "stroke-width": 2,
      points: [[0, 0], ...pts].map(([x, y]) => c.sx(x) + "," + c.sy(y)).join(" ") }));
    return c.root;
  }
  function tuningChart(t, k) {
    const p = t.params[k], values = t.history.map(theta => theta[k]);
    const lo = Math.min(p.min, ...values), hi = Math.max(p.max, ...values);
    const c = chart(360, 200, 0, Math.max(1, t.iterations), lo, hi, "iterations", p.name);
    c.root.append(svg("polyline", { class: "tuning-" + k, fill: "none", stroke: "#2a7de1", "stroke-width": 2,
      points: values.map((v, i) => c.sx(i) + "," + c.sy(v)).join(" ") }));
    const last = values[values.length - 1];
    c.text(c.sx(values.length - 1), c.sy(last) - 6, Number(last).toFixed(2), "end");
    return c.root;
  }
  function renderTuning() {
    const t = DATA.tuning;
    if (!t) return;
    document.getElementById("tuning").hidden = false;
    const box = clear("tuning-charts");
    t.params.forEach((_, k) => box.append(tuningChart(t, k)));
  }
  function clockChart(game, current) {
    const clocks = game[G.clocks];
    if (!clocks.some(v => v !== null)) return el("p", { class: "note" }, "no clock in this game");
    const first = parseFen(game[G.start] || GEO.start_fen).turn;
    const max = Math.max(...clocks.filter(v => v !== null)) / 1000;
    const c = chart(460, 200, 0, Math.max(1, clocks.length), 0, max || 1, "ply", "clock (s)");
    for (const [side, colour] of [["w", "#aa8800"], ["b", "#222"]]) {
      const pts = [];
      clocks.forEach((v, i) => {
        const mover = (i % 2 === 0) === (first === "w") ? "w" : "b";
        if (v !== null && mover === side) pts.push(c.sx(i + 1) + "," + c.sy(v / 1000));
      });
      c.root.append(svg("polyline", { class: "clock-" + side, fill: "none", stroke: colour, "stroke-width": 1.5, points: pts.join(" ") }));
    }
    // The legend: which line is whose clock.
    [["white", "#aa8800", 0], ["black", "#222", 1]].forEach(([who, colour, k]) => {
      const x = 460 - 70, y = 14 + k * 14;
      c.root.append(svg("line", { class: "legend", x1: x, x2: x + 16, y1: y - 4, y2: y - 4, stroke: colour, "stroke-width": 2 }));
      c.text(x + 20, y, who, "start");
    });
    c.root.append(svg("line", { class: "now", x1: c.sx(current), x2: c.sx(current), y1: 10, y2: 170, stroke: "#2a7de1" }));
    return c.root;
  }

  // Scores per ply from White's view, in centipieces (null: none reported), as a line over
  // the plies; the bound (+-10 pieces) is where forced results are drawn (data.py EVAL_BOUND).
  function evalChart(game, current) {
    const evals = game[G.evals] || [];
    if (!evals.some(v => v !== null)) return el("p", { class: "note" }, "no scores reported in this game");
    const top = Math.max(1, ...evals.filter(v => v !== null).map(v => Math.abs(v) / 100));
    const c = chart(460, 200, 0, Math.max(1, evals.length), -top, top, "ply", "score (pieces, White)");
    c.root.append(svg("line", { class: "zero", x1: c.sx(0), x2: c.sx(evals.length), y1: c.sy(0), y2: c.sy(0), stroke: "#bbb", "stroke-dasharray": "3" }));
    const pts = [];
    evals.forEach((v, i) => { if (v !== null) pts.push(c.sx(i + 1) + "," + c.sy(v / 100)); });
    c.root.append(svg("polyline", { class: "eval", fill: "none", stroke: "#2a7de1", "stroke-width": 1.5, points: pts.join(" ") }));
    c.root.append(svg("line", { class: "now", x1: c.sx(current), x2: c.sx(current), y1: 10, y2: 170, stroke: "#d33" }));
    return c.root;
  }

  // ---------------------------------------------------------------- sections
  function renderSettings() {
    const box = clear("settings");
    box.append(table(["setting", "value"], Object.entries(DATA.settings), [0, 1]));
    box.append(table(["engine", "command", "options", "limits"], DATA.engines.map(e =>
      [e.name, e.command, Object.entries(e.options).map(([k, v]) => k + "=" + v).join(" "), e.limits]), [0, 1, 2, 3]));
    // What each engine used (peak memory, CPU on and off its moves), when it was measured.
    if (DATA.resources && DATA.resources.length) {
      box.append(table(["engine", "games", "peak memory", "CPU per move", "off-move CPU per game",
        "most off-move CPU in a game"], DATA.resources, [0]));
    }
  }
  // "N/M games played", and why the games stopped early when an SPRT decided.
  function showProgress() {
    const sprt = DATA.tally && DATA.tally.sprt;
    const early = sprt && sprt.decision && DATA.finished < DATA.scheduled;
    document.getElementById("progress").textContent = `${DATA.finished}/${DATA.scheduled} games played` +
      (early ? `; stopped early: SPRT ${sprt.decision} accepted` : "");
  }
  function renderStandings(t) {
    DATA.tally = t;
    const box = clear("standings");
    const heads = ["#", "engine", "games", "points", "score", "draw", "Elo ± 95%", "LOS", "rules", "adjud", ...DATA.fault_columns];
    box.append(table(heads, t.rows.map((r, i) => [i + 1, r.name, r.games, r.points,
      r.games && r.score !== null ? Number(r.score).toFixed(1) + "%" : "-",
      r.games ? Number(r.draw_ratio).toFixed(1) + "%" : "-",
      r.games ? r.elo_text : "-",
      r.games && r.los !== null ? Number(r.los).toFixed(1) + "%" : "-", r.rules, r.adjudications ?? 0,
      ...DATA.fault_columns.map(c => r.faults[c])]), [1]));
    box.append(el("p", { class: "note" }, "Elo and LOS against the field met; rules = games ended by a rule; " +
      "adjud = games ended by adjudication; " +
      DATA.fault_columns.join("/") + " = games this engine lost by that fault" +
      (t.unfinished ? "; " + t.unfinished + " unfinished game(s) not counted" : "")));
    const rt = clear("ratings");
    if (t.ratings.error) rt.append(el("p", { class: "note" }, "Ratings not computed: " + t.ratings.error));
    else rt.append(table(["#", "engine", "Elo", "± 95%", "games", "points"], t.ratings.list.map((r, i) =>
      [i + 1, r.name, fmt(r.elo), fmt(r.margin).replace("+", ""), r.games, r.points]), [1]));
    const ct = clear("crosstable");
    ct.append(table(["engine", ...t.crosstable.order.map((_, i) => i + 1)], t.crosstable.cells.map((line, i) =>
      [(i + 1) + " " + t.crosstable.order[i], ...line.map(c => c === null ? "·" :
        (c[0] + c[1] + c[2]) ? (c[0] + c[1] / 2) + "/" + (c[0] + c[1] + c[2]) : "")]), [0]));
    clear("elo-chart").append(eloChart(t.rows));
    const pairs = clear("pairs");
    document.getElementById("pairs-section").hidden = !(t.pairs && t.pairs.length);
    if (t.pairs && t.pairs.length) {
      pairs.append(table(["encounter", "pairs", "LL", "LD", "DD+WL", "WD", "WW", "Elo ± 95% (pairs)"],
        t.pairs.map(p => [p.encounter, p.counts.reduce((a, b) => a + b, 0), ...p.counts, p.elo_text]), [0]));
    }
    const top = clear("sprt-top");
    top.hidden = !t.sprt;
    if (t.sprt) {
      const verdict = t.sprt.decision ? t.sprt.decision + " accepted" : "no verdict yet";
      top.append(el("strong", {}, "SPRT: " + verdict), ` - LLR ${t.sprt.llr.toFixed(2)} between the bounds ` +
        `${t.sprt.lower.toFixed(2)} (H0) and ${t.sprt.upper.toFixed(2)} (H1); ${t.sprt.describe}`);
    }
    const sp = clear("sprt");
    if (t.sprt) {
      sp.append(el("p", {}, `SPRT ${t.sprt.describe} (${t.sprt.unit}): LLR ${t.sprt.llr.toFixed(2)} ` +
        `[${t.sprt.lower.toFixed(2)}, ${t.sprt.upper.toFixed(2)}] ` + (t.sprt.decision ? t.sprt.decision + " accepted" : "continue")));
      sp.append(sprtChart(t.sprt));
    } else sp.append(el("p", { class: "note" }, "no SPRT in this tournament"));
    const en = clear("endings");
    const reasons = [...new Set(t.endings.flatMap(e => Object.keys(e.endings)))].sort();
    en.append(table(["engine", ...reasons.map(r => r + " W/D/L")], t.endings.map(e =>
      [e.name, ...reasons.map(r => (e.endings[r] || [0, 0, 0]).join("/"))]), [0]));
  }

  // ---------------------------------------------------------------- games list and viewer
  const LIMIT = 500;
  let matched = [], shown = 0, currentGame = null, steps = [], ply = 0;
  function setupFilters() {
    const engine = document.getElementById("f-engine"), result = document.getElementById("f-result"),
      reason = document.getElementById("f-reason");
    DATA.engines.forEach((e, i) => engine.append(el("option", { value: i }, e.name)));
    ["1-0", "0-1", "1/2-1/2", "*"].forEach(r => result.append(el("option", { value: r }, r)));
    [...new Set(DATA.games.map(g => g[G.reason]))].sort().forEach(r => reason.append(el("option", { value: r }, r || "unfinished")));
    for (const s of [engine, result, reason]) s.addEventListener("change", () => renderGames());
    document.getElementById("f-search").addEventListener("input", () => renderGames());
    setupSorting();
    // One listener for every row (a 10,000-game list has no 10,000 closures).
    document.getElementById("games-body").addEventListener("click", ev => {
      const row = ev.target.closest("tr");
      if (row) openGame(DATA.games[+row.dataset.index]);
    });
  }
  function gameRow(g) {
    const moves = g[G.moves] ? g[G.moves].split(" ").length : 0;
    const tr = el("tr", { "data-game": g[G.num], tabindex: 0 },
      el("td", {}, g[G.num]), el("td", {}, g[G.round]), el("td", { class: "name" }, name(g[G.white])),
      el("td", { class: "name" }, name(g[G.black])), el("td", {}, g[G.result]),
      el("td", { class: "name" }, g[G.reason] || "unfinished"), el("td", {}, moves));
    return tr;
  }
  // Search: every word must occur in the game's number, engines, result or reason.
  function searchable(g) {
    const text = ["#" + g[G.num], name(g[G.white]), name(g[G.black]), g[G.result], g[G.reason] || "unfinished",
      g[G.detail] || ""].join(" ").toLowerCase();
    return text;
  }
  const SORT_KEYS = [g => g[G.num], g => g[G.round], g => name(g[G.white]).toLowerCase(),
    g => name(g[G.black]).toLowerCase(), g => g[G.result], g => g[G.reason] || "",
    g => g[G.moves] ? g[G.moves].split(" ").length : 0];
  let sortColumn = 0, sortOrder = 1;
  function compare(x, y) { return x < y ? -1 : x > y ? 1 : 0; }
  function setupSorting() {
    document.querySelectorAll("#games-table thead th").forEach((th, i) => {
      const button = el("button", { class: "sort", type: "button" }, th.textContent);
      th.replaceChildren(button);
      th.setAttribute("aria-sort", i === sortColumn ? "ascending" : "none");
      button.addEventListener("click", () => {
        sortOrder = sortColumn === i ? -sortOrder : 1;
        sortColumn = i;
        document.querySelectorAll("#games-table thead th").forEach((h, j) =>
          h.setAttribute("aria-sort", j !== i ? "none" : sortOrder > 0 ? "ascending" : "descending"));
        renderGames();
      });
    });
  }
  function renderGames() {
    const engine = document.getElementById("f-engine").value, result = document.getElementById("f-result").value,
      reason = document.getElementById("f-reason").value;
    const words = document.getElementById("f-search").value.trim().toLowerCase().split(/\s+/).filter(w => w);
    matched = [];
    DATA.games.forEach((g, i) => {
      if ((engine === "" || g[G.white] === +engine || g[G.black] === +engine) &&
        (result === "" || g[G.result] === result) && (reason === "" || g[G.reason] === reason) &&
        (!words.length || words.every(w => searchable(g).includes(w)))) matched.push(i);
    });
    const key = SORT_KEYS[sortColumn];
    if (key) matched.sort((a, b) => sortOrder * compare(key(DATA.games[a]), key(DATA.games[b])) || a - b);
    clear("games-body");
    shown = 0;
    showMore();
  }
  function showMore() {
    const frag = document.createDocumentFragment();
    const upto = Math.min(matched.length, shown + LIMIT);
    for (let k = shown; k < upto; k++) {
      const row = gameRow(DATA.games[matched[k]]);
      row.dataset.index = matched[k];
      frag.append(row);
    }
    shown = upto;
    document.getElementById("games-body").append(frag);
    markCurrent();
    const note = clear("games-note");
    note.append(`${matched.length} of ${DATA.games.length} games match` +
      (shown < matched.length ? `, ${shown} listed ` : ""));
    if (shown < matched.length) {
      note.append(el("button", { id: "show-more", onclick: showMore }, `list ${Math.min(LIMIT, matched.length - shown)} more`));
    }
  }
  function markCurrent() {
    const index = currentGame === null ? -1 : DATA.games.indexOf(currentGame);
    for (const tr of document.querySelectorAll("#games-body tr")) {
      tr.classList.toggle("current", +tr.dataset.index === index);
    }
  }
  function name(i) { return DATA.engines[i] ? DATA.engines[i].name : "?"; }
  function openGame(g) {
    currentGame = g;
    steps = positions(g[G.start], g[G.moves] ? g[G.moves].split(" ") : []);
    ply = 0;
    document.getElementById("viewer").hidden = false;
    const head = clear("viewer-title");
    head.append(`Game ${g[G.num]} (round ${g[G.round]}): ${name(g[G.white])} (white) vs ${name(g[G.black])} (black): ` +
      `${g[G.result]} (${g[G.reason] || "unfinished"})` + (g[G.detail] ? " - " + g[G.detail] : ""));
    const list = clear("moves");
    const moves = g[G.moves] ? g[G.moves].split(" ") : [];
    moves.forEach((m, i) => {
      const clock = g[G.clocks][i], used = g[G.elapsed][i], score = (g[G.evals] || [])[i];
      const tip = i < g[G.book] ? "book" : (used !== null ? used + " ms used" : "") + (clock !== null ? ", " + (clock / 1000).toFixed(1) + " s left" : "") +
        (score !== undefined && score !== null ? ", score " + (score >= 0 ? "+" : "") + (score / 100).toFixed(2) + " (White)" : "");
      list.append(el("span", { class: "ply", "data-ply": i + 1, title: tip, tabindex: 0, onclick: () => show(i + 1) },
        (i + 1) + ". " + m + (i < g[G.book] ? " (book)" : clock !== null ? " [" + (clock / 1000).toFixed(1) + "s]" : "")), " ");
    });
    markCurrent();
    show(0);
    document.getElementById("viewer").scrollIntoView({ block: "nearest" });
  }
  function show(n) {
    if (!currentGame) return;
    ply = Math.max(0, Math.min(steps.length - 1, n));
    clear("board").append(drawBoard(steps[ply], 440));
    document.getElementById("fen").textContent = formatFen(steps[ply].pos);
    document.getElementById("ply").textContent = `ply ${ply} / ${steps.length - 1}`;
    for (const s of document.querySelectorAll("#moves span.ply")) s.classList.toggle("current", +s.dataset.ply === ply);
    clear("clock-chart").append(clockChart(currentGame, ply));
    clear("eval-chart").append(evalChart(currentGame, ply));
    // Every game and position has an address: #game=N&ply=K (copy it, or reload).
    const hash = `#game=${currentGame[G.num]}&ply=${ply}`;
    if (location.hash !== hash) history.replaceState(null, "", hash);
  }
  function openFromHash() {
    const m = /^#game=(\d+)(?:&ply=(\d+))?$/.exec(location.hash);
    if (!m) return;
    const g = DATA.games.find(x => x[G.num] === +m[1]);
    if (!g) return;
    if (g !== currentGame) openGame(g);
    show(m[2] === undefined ? 0 : +m[2]);
  }
  function setupViewer() {
    document.getElementById("first").addEventListener("click", () => show(0));
    document.getElementById("prev").addEventListener("click", () => show(ply - 1));
    document.getElementById("next").addEventListener("click", () => show(ply + 1));
    document.getElementById("last").addEventListener("click", () => show(steps.length - 1));
    // The games before and after this one in the list as it is filtered and sorted.
    const step = by => {
      const at = matched.indexOf(DATA.games.indexOf(currentGame));
      const to = matched[at + by];
      if (at >= 0 && to !== undefined) openGame(DATA.games[to]);
    };
    document.getElementById("prev-game").addEventListener("click", () => step(-1));
    document.getElementById("next-game").addEventListener("click", () => step(1));
    // The viewer's keys act only while it is open and has the focus (or nothing has):
    // elsewhere arrows, Home and End scroll and move as they always do.
    document.addEventListener("keydown", ev => {
      const viewer = document.getElementById("viewer");
      if (!currentGame || viewer.hidden || !(viewer.contains(ev.target) || ev.target === document.body)) return;
      const to = { ArrowRight: ply + 1, ArrowLeft: ply - 1, Home: 0, End: steps.length - 1 }[ev.key];
      if (to === undefined) return;
      ev.preventDefault();
      show(to);
    });
    // Rows and moves are reached with Tab and opened with Enter (or Space).
    document.getElementById("games-body").addEventListener("keydown", ev => {
      const row = ev.target.closest("tr");
      if (row && (ev.key === "Enter" || ev.key === " ")) { ev.preventDefault(); openGame(DATA.games[+row.dataset.index]); }
    });
    document.getElementById("moves").addEventListener("keydown", ev => {
      const span = ev.target.closest("span.ply");
      if (span && (ev.key === "Enter" || ev.key === " ")) { ev.preventDefault(); show(+span.dataset.ply); }
    });
  }

  document.title = DATA.title + " - guti report";
  document.getElementById("title").textContent = DATA.title;
  document.getElementById("generated").textContent = "generated " + DATA.generated + " by guti";
  showProgress();
  renderSettings();
  renderTuning();
  renderStandings(DATA.tally);
  setupFilters();
  renderGames();
  setupViewer();
  openFromHash();
  window.addEventListener("hashchange", openFromHash);
  // What the live page's script (live.js, added to served pages only) builds on.
  window.GUTI_REPORT = { DATA, G, el, clear, drawBoard, formatFen, play, positions, renderGames,
    renderStandings, showProgress };
})();
