// guti report, the start: fill every section from the embedded data, then open the game
// the address names, if any.
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
setupDownloads();
openFromHash();
window.addEventListener("hashchange", openFromHash);
// What the live page's script (live.js, added to served pages only) builds on.
window.GUTI_REPORT = { DATA, G, el, clear, drawBoard, formatFen, play, positions, renderGames,
  renderStandings, showProgress, openGame, show };
