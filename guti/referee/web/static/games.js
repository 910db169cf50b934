// guti report, the games list: filters, search, sorting, and rows listed 500 at a time.
// A row opens its game in the viewer (viewer.js) by click, Enter or Space.
const LIMIT = 500;
let matched = [], shown = 0;
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
  const body = document.getElementById("games-body");
  body.addEventListener("click", ev => {
    const row = ev.target.closest("tr");
    if (row) openGame(DATA.games[+row.dataset.index]);
  });
  body.addEventListener("keydown", ev => {
    const row = ev.target.closest("tr");
    if (row && (ev.key === "Enter" || ev.key === " ")) { ev.preventDefault(); openGame(DATA.games[+row.dataset.index]); }
  });
}
function gameRow(g) {
  return el("tr", { "data-game": g[G.num], tabindex: 0 },
    el("td", {}, g[G.num]), el("td", {}, g[G.round]), el("td", { class: "name" }, name(g[G.white])),
    el("td", { class: "name" }, name(g[G.black])), el("td", {}, g[G.result]),
    el("td", { class: "name" }, g[G.reason] || "unfinished"), el("td", {}, moveList(g).length));
}
// Search: every word must occur in the game's number, engines, result or reason.
function searchable(g) {
  return ["#" + g[G.num], name(g[G.white]), name(g[G.black]), g[G.result], g[G.reason] || "unfinished",
    g[G.detail] || ""].join(" ").toLowerCase();
}
const SORT_KEYS = [g => g[G.num], g => g[G.round], g => name(g[G.white]).toLowerCase(),
  g => name(g[G.black]).toLowerCase(), g => g[G.result], g => g[G.reason] || "",
  g => moveList(g).length];
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
// The listed row of game g (DATA.games[index]); with listed, the rows are listed up to it
// first when it matches the filters but is not listed yet.
function rowOf(g, listed) {
  const index = DATA.games.indexOf(g);
  if (listed) { const at = matched.indexOf(index); while (at >= shown) showMore(); }
  return document.querySelector(`#games-body tr[data-index="${index}"]`);
}
function markCurrent() {
  const index = currentGame === null ? -1 : DATA.games.indexOf(currentGame);
  for (const tr of document.querySelectorAll("#games-body tr.current")) tr.classList.remove("current");
  const row = document.querySelector(`#games-body tr[data-index="${index}"]`);
  if (row) row.classList.add("current");
}
