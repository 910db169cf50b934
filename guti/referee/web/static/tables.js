// guti report, the tables: settings, progress, standings, ratings, crosstable, game
// pairs, SPRT and endings (renderStandings again whenever the live page gets a tally).
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

