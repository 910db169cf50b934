// guti report, PDN downloads: every game, and the game in the viewer. A served page asks
// its server (games.pdn, games.pdn?game=N); a report file opened from disk has no server,
// so it carries the same PDN text itself (#guti-pdn: guti export's PDN, gzipped and in
// base64; DATA.pdn: each game's [number, first byte, end byte] in it), unpacked on the
// first download and given to the browser as a Blob.
const PACKED = document.getElementById("guti-pdn");
const SERVED = !!window.GUTI_LIVE;
const EMBEDDED = !SERVED && Array.isArray(DATA.pdn) && !!PACKED && PACKED.textContent.trim() !== "";
let pdnText = null, prepareGame = null;
async function unpackedPdn() {
  if (!pdnText) {
    const packed = Uint8Array.from(atob(PACKED.textContent.trim()), c => c.charCodeAt(0));
    const stream = new Blob([packed]).stream().pipeThrough(new DecompressionStream("gzip"));
    pdnText = new Uint8Array(await new Response(stream).arrayBuffer());
  }
  return pdnText;
}
// A link to a file made here: made when the pointer or the focus reaches the link, so that
// following it is an ordinary download; a click that comes first is held until the file
// is made, then the link is followed again (the click's user activation still holds).
function offer(link, bytes) {
  const prepare = async () => {
    if (link.dataset.ready === "1") return true;
    const wanted = link.dataset.wanted = String(+(link.dataset.wanted || 0) + 1);
    const data = await bytes();
    if (!data || link.dataset.wanted !== wanted) return false;  // another file is asked for now
    link.href = URL.createObjectURL(new Blob([data], { type: "application/x-pdn" }));
    link.dataset.ready = "1";
    return true;
  };
  link.addEventListener("pointerenter", prepare);
  link.addEventListener("focus", prepare);
  link.addEventListener("click", async ev => {
    if (link.dataset.ready === "1") return;
    ev.preventDefault();
    if (await prepare()) link.click();
  });
  return prepare;
}
function setupDownloads() {
  const all = document.getElementById("pdn-link"), one = document.getElementById("game-pdn");
  all.hidden = one.hidden = !(SERVED || EMBEDDED);
  if (!EMBEDDED) return;
  offer(all, unpackedPdn);
  prepareGame = offer(one, async () => {
    const range = currentGame && DATA.pdn.find(r => r[0] === currentGame[G.num]);
    return range ? (await unpackedPdn()).subarray(range[1], range[2]) : null;
  });
}
// The viewer shows game g: its own link names it (and no longer gives the game before).
function gameChanged(g) {
  const one = document.getElementById("game-pdn");
  one.download = `game-${g[G.num]}.pdn`;
  if (one.dataset.ready === "1") URL.revokeObjectURL(one.href);
  one.dataset.ready = "";
  one.dataset.wanted = String(+(one.dataset.wanted || 0) + 1);  // a file still being made is not this one
  one.href = SERVED ? "games.pdn?game=" + g[G.num] : "#";
  // A game stored after the page was made (the live page) is in the server's PDN only.
  one.hidden = !((SERVED && DATA.games.includes(g)) || (EMBEDDED && DATA.pdn.some(r => r[0] === g[G.num])));
  if (EMBEDDED && !one.hidden) prepareGame();  // ready before anyone follows it
}
