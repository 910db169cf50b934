// guti report, common part: the tournament data embedded in the page (#guti-data) and the
// DOM helpers every other part uses. Everything is put on the page with DOM calls only
// (textContent, never innerHTML of data), so any name an engine or a config gives shows
// as text. The report's parts share one function scope (guti/referee/web/report.py
// REPORT_SCRIPTS lists them in order).
const DATA = JSON.parse(document.getElementById("guti-data").textContent);
const GEO = DATA.geometry;
const SVGNS = "http://www.w3.org/2000/svg";
// Fields of a compact game (guti/referee/web/data.py compact_game).
const G = { num: 0, round: 1, white: 2, black: 3, result: 4, reason: 5, detail: 6, start: 7,
  moves: 8, book: 9, clocks: 10, elapsed: 11, final: 12, date: 13, evals: 14 };

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
function name(i) { return DATA.engines[i] ? DATA.engines[i].name : "?"; }
function moveList(g) { return g[G.moves] ? g[G.moves].split(" ") : []; }
