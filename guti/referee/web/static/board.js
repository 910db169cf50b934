// guti report, positions and the board: positions are replayed from the move strings
// with the board's jump table; the board is drawn from the same geometry JSON the Python
// SVG renderer uses (guti/referee/web/geometry.py).
const JUMPS = new Map(GEO.jumps.map(([a, b, c]) => [a + "," + c, b]));

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
