// guti report, the game viewer: a dialog over the page (the page under it keeps its place,
// however far down the list the game was opened), the board at every ply, the moves, the
// clock and score charts, next and previous game in the list as filtered and sorted. Its
// keys (arrows, Home, End) act only inside it; Escape or "close" shuts it and gives the
// focus back to the row of the game last shown. Every game and position has an address:
// #game=N&ply=K (copy it, or reload).
let currentGame = null, steps = [], ply = 0, returnTo = null;
function viewer() { return document.getElementById("viewer"); }
// from: what gets the focus back on closing when g has no row (a live card's game).
function openGame(g, from) {
  const changed = g !== currentGame;
  if (!viewer().open) returnTo = from || null;
  currentGame = g;
  steps = positions(g[G.start], moveList(g));
  ply = 0;
  const head = clear("viewer-title");
  head.append(`Game ${g[G.num]}` + (g[G.round] !== "" ? ` (round ${g[G.round]})` : "") + `: ${name(g[G.white])} (white) vs ${name(g[G.black])} (black): ` +
    `${g[G.result]} (${g[G.reason] || "unfinished"})` + (g[G.detail] ? " - " + g[G.detail] : ""));
  const list = clear("moves");
  moveList(g).forEach((m, i) => {
    const clock = g[G.clocks][i], used = g[G.elapsed][i], score = (g[G.evals] || [])[i];
    const tip = i < g[G.book] ? "book" : (used !== null && used !== undefined ? used + " ms used" : "") +
      (clock !== null && clock !== undefined ? ", " + (clock / 1000).toFixed(1) + " s left" : "") +
      (score !== undefined && score !== null ? ", score " + (score >= 0 ? "+" : "") + (score / 100).toFixed(2) + " (White)" : "");
    list.append(el("span", { class: "ply", "data-ply": i + 1, title: tip, tabindex: 0, onclick: () => show(i + 1) },
      (i + 1) + ". " + m + (i < g[G.book] ? " (book)" : clock !== null && clock !== undefined ? " [" + (clock / 1000).toFixed(1) + "s]" : "")), " ");
  });
  markCurrent();
  gameChanged(g);
  show(0);
  if (!viewer().open) {
    viewer().showModal();
    // The title, not a button, takes the focus: a Space or Enter that opened the viewer
    // must not press one of its buttons when the key comes up.
    document.getElementById("viewer-title").focus();
  } else if (changed && DATA.games.includes(g)) {
    // Next/previous game: the list behind follows, so closing lands on this game's row.
    const row = rowOf(g, true);
    if (row) row.scrollIntoView({ block: "nearest" });
  }
}
function show(n) {
  if (!currentGame) return;
  ply = Math.max(0, Math.min(steps.length - 1, n));
  clear("board").append(drawBoard(steps[ply], 440));
  document.getElementById("fen").textContent = formatFen(steps[ply].pos);
  document.getElementById("ply").textContent = `ply ${ply} / ${steps.length - 1}`;
  for (const s of document.querySelectorAll("#moves span.ply.current")) s.classList.remove("current");
  const now = document.querySelector(`#moves span.ply[data-ply="${ply}"]`);
  if (now) now.classList.add("current");
  clear("clock-chart").append(clockChart(currentGame, ply));
  clear("eval-chart").append(evalChart(currentGame, ply));
  const hash = `#game=${currentGame[G.num]}&ply=${ply}`;
  if (location.hash !== hash) history.replaceState(null, "", hash);
}
function closeViewer() { if (viewer().open) viewer().close(); }
function openFromHash() {
  const m = /^#game=(\d+)(?:&ply=(\d+))?$/.exec(location.hash);
  if (!m) return;
  const g = DATA.games.find(x => x[G.num] === +m[1]);
  if (!g) return;
  if (g !== currentGame || !viewer().open) openGame(g);
  show(m[2] === undefined ? 0 : +m[2]);
}
function setupViewer() {
  document.getElementById("first").addEventListener("click", () => show(0));
  document.getElementById("prev").addEventListener("click", () => show(ply - 1));
  document.getElementById("next").addEventListener("click", () => show(ply + 1));
  document.getElementById("last").addEventListener("click", () => show(steps.length - 1));
  document.getElementById("close-viewer").addEventListener("click", closeViewer);
  // The games before and after this one in the list as it is filtered and sorted.
  const step = by => {
    const at = matched.indexOf(DATA.games.indexOf(currentGame));
    const to = matched[at + by];
    if (at >= 0 && to !== undefined) openGame(DATA.games[to]);
  };
  document.getElementById("prev-game").addEventListener("click", () => step(-1));
  document.getElementById("next-game").addEventListener("click", () => step(1));
  // Closed (Escape, or the close button): the address names no game any more, and the
  // focus goes back to the row of the game last shown, where the list was left.
  viewer().addEventListener("close", () => {
    if (location.hash) history.replaceState(null, "", location.pathname + location.search);
    const row = currentGame && DATA.games.includes(currentGame) ? rowOf(currentGame, true) : null;
    if (row) row.focus(); else if (returnTo && returnTo.isConnected) returnTo.focus();
  });
  // The viewer's keys act only while it is open and has the focus: elsewhere arrows,
  // Home and End scroll and move as they always do.
  document.addEventListener("keydown", ev => {
    if (!currentGame || !viewer().open || !viewer().contains(ev.target)) return;
    const to = { ArrowRight: ply + 1, ArrowLeft: ply - 1, Home: 0, End: steps.length - 1 }[ev.key];
    if (to === undefined) return;
    ev.preventDefault();
    show(to);
  });
  // Moves are reached with Tab and shown with Enter (or Space).
  document.getElementById("moves").addEventListener("keydown", ev => {
    const span = ev.target.closest("span.ply");
    if (span && (ev.key === "Enter" || ev.key === " ")) { ev.preventDefault(); show(+span.dataset.ply); }
  });
}
