// The live page (served by guti serve and -serve, never in a report file): the boards of
// the games being played, and the stored games and standings as they come, from the
// server's event stream. Built on the report's functions (report.js, GUTI_REPORT).
"use strict";
(function () {
  const { DATA, G, el, clear, drawBoard, formatFen, play, positions, renderGames,
    renderStandings, showProgress, openGame, show } = window.GUTI_REPORT;
  const live = new Map();
  function liveCard(id) {
    const g = live.get(id);
    let card = document.getElementById("live-" + id);
    if (!card) {
      card = el("div", { class: "live-game", id: "live-" + id, tabindex: 0, role: "button",
        "aria-label": `game ${id} being played: open it`, title: "open this game (Enter)" });
      card.addEventListener("click", () => openLive(id, card));
      card.addEventListener("keydown", ev => {
        if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); openLive(id, card); }
      });
      document.getElementById("live-games").append(card);
    }
    const step = g.steps[g.steps.length - 1];
    card.replaceChildren(el("div", { class: "live-title" }, `Game ${id}: ${g.white} (white) vs ${g.black} (black)`),
      drawBoard(step, 300, false),
      el("div", { class: "live-ply" }, `ply ${g.moves.length}` + (g.moves.length ? ": " + g.moves[g.moves.length - 1] : "")),
      el("div", { class: "live-info" }, liveInfo(g)),
      el("div", { class: "live-fen", style: "font-family: monospace; font-size: 0.8em" }, formatFen(step.pos)));
  }
  // A running game in the viewer, as it stands now (the card keeps following it): its
  // moves, with the clocks known so far at the last ply.
  function openLive(id, card) {
    const g = live.get(id);
    if (!g) return;
    const engine = n => DATA.engines.findIndex(e => e.name === n);
    const plies = g.moves.length, none = g.moves.map(() => null);
    const clocks = none.slice();
    if (plies) clocks[plies - 1] = g.clocks[g.steps[plies - 1].pos.turn] ?? null;
    openGame([id, "", engine(g.white), engine(g.black), "*", "being played", `as of ply ${plies}`,
      g.start || "", g.moves.join(" "), 0, clocks, none, "", "", []], card);
    show(plies);
  }
  function liveInfo(g) {  // both clocks, the last score (White's view) and depth
    const secs = ms => ms === undefined ? "-" : (ms / 1000).toFixed(1) + " s";
    const parts = [`clocks: white ${secs(g.clocks.w)}, black ${secs(g.clocks.b)}`];
    if (g.score !== undefined) parts.push(`score ${g.score >= 0 ? "+" : ""}${(g.score / 100).toFixed(2)} (White)`);
    if (g.depth !== undefined) parts.push(`depth ${g.depth}`);
    return parts.join("; ");
  }
  function liveStart(g) {
    const moves = g.moves ? g.moves.split(" ") : [];
    live.set(g.id, { white: g.white, black: g.black, moves, start: g.start_fen, steps: positions(g.start_fen, moves),
      clocks: g.clocks || {}, score: g.score, depth: g.depth });
    liveCard(g.id);
  }
  function addReason(r) {
    const reason = document.getElementById("f-reason");
    if (![...reason.options].some(o => o.value === r)) reason.append(el("option", { value: r }, r || "unfinished"));
  }
  function showState(status, msg) {
    const over = document.getElementById("live-over");
    if (msg.state === "live") { status.textContent = "connected"; over.hidden = true; return; }
    status.textContent = msg.state === "over" ? "tournament over" : "no tournament running";
    const text = msg.state === "over"
      ? "The tournament is over" + (msg.stopped ? " (" + msg.stopped + ")" : "") + ": this page now shows its final results."
      : "No guti is playing this database now: the results below are all there is.";
    over.replaceChildren(el("span", {}, text));
    if (msg.report) {
      // each segment encoded: a "#" or "?" in a folder or file name is part of the path
      const href = "file://" + msg.report.split("/").map(encodeURIComponent).join("/");
      const link = el("a", { href }, msg.report);
      over.append(" The final report: ", link);
    }
    over.hidden = false;
  }
  let gamesPending = false;
  function gamesChanged() {  // at most one re-render of the list per frame, however many games came
    if (gamesPending) return;
    gamesPending = true;
    requestAnimationFrame(() => { gamesPending = false; renderGames(); });
  }
  function setupLive() {
    document.getElementById("live").hidden = false;
    const status = document.getElementById("live-status");
    if (DATA.live) showState(status, DATA.live);
    const source = new EventSource("events?since=" + (DATA.seq || 0));
    source.addEventListener("hello", ev => {
      const msg = JSON.parse(ev.data);
      live.clear(); clear("live-games");
      msg.running.forEach(liveStart);
      showState(status, msg);
      if (msg.state === "over") source.close();
    });
    source.addEventListener("start", ev => liveStart(JSON.parse(ev.data)));
    source.addEventListener("move", ev => {
      const m = JSON.parse(ev.data), g = live.get(m.id);
      if (!g) return;
      g.moves.push(m.move);
      g.steps.push(play(g.steps[g.steps.length - 1].pos, m.move));
      if (m.clock !== undefined && (m.side === "w" || m.side === "b")) g.clocks[m.side] = m.clock;
      if (m.score !== undefined) g.score = m.score;
      if (m.depth !== undefined) g.depth = m.depth;
      liveCard(m.id);
    });
    source.addEventListener("end", ev => {
      const m = JSON.parse(ev.data), id = m.game[G.num];
      live.delete(id);
      const card = document.getElementById("live-" + id); if (card) card.remove();
      if (m.seq <= (DATA.seq || 0)) return;  // already on the page
      DATA.seq = m.seq;
      DATA.games.push(m.game);
      DATA.finished += 1;
      addReason(m.game[G.reason]);
      gamesChanged();
      showProgress();
    });
    source.addEventListener("tally", ev => {
      const m = JSON.parse(ev.data);
      if (!m.tally) return;
      if (m.scheduled) DATA.scheduled = m.scheduled;
      renderStandings(m.tally);
      showProgress();
    });
    source.addEventListener("state", ev => {
      const msg = JSON.parse(ev.data);
      if (msg.state !== "live") { live.clear(); clear("live-games"); }
      showState(status, msg);
      if (msg.state === "over") source.close();
    });
    source.onerror = () => {
      if (source.readyState !== EventSource.CLOSED) status.textContent = "disconnected (reconnecting)";
    };
  }

  setupLive();
})();
