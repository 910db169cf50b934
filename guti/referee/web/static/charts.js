// guti report, charts: the Elo, SPRT, tuning, clock and score charts, drawn as SVG with
// values on their axes and a title each (their accessible name).
function chart(width, height, xmin, xmax, ymin, ymax, xlabel, ylabel) {
  const m = { l: 48, r: 10, t: 10, b: 30 };
  const root = titled(svg("svg", { class: "chart", width, height, viewBox: `0 0 ${width} ${height}` }),
    `${ylabel} by ${xlabel}`);
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

