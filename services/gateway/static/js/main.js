// The page's router: one document for every path the gateway serves it at.
//   /                              the lobby
//   /games/{id}[?v=N]              a game's board, replay and live view
//   /games/{id}/audit/{command}    the audit of one command (a link to share)
//   /open[#v=N | #audit=command]   a game file opened in the browser (drag and drop or choose)
//   /fairness                      how to check a game's dice and shuffles yourself

import { FileSource, GameSource } from "./api.js";
import { clear, h } from "./dom.js";
import { showGame } from "./game.js";
import { showLobby } from "./lobby.js";

const main = document.getElementById("main");
let leave = () => {};
// Every file opened while the page lives, by number: each /open history entry names its file in its
// state ({load, file: n}), so that Back and Forward show the file an entry was made for, and a file
// that fails to open loses none opened before it. `load` tells this page load's entries from those
// a reload left in the history, whose files are gone (their numbers would name this load's files).
// `openedN` is the last file that opened, for an /open reached without a file (a link, an address).
const LOAD = `${Date.now()}-${Math.random()}`;
const files = new Map();
let openedN = 0;

let routed = 0;
// A view whose answers come after the user has moved on (a slow gateway, a Back pressed while it
// loads) must not draw over the view routed since nor rewrite its URL: each view gets a ticket
// that says whether it is still the one shown and hands the router its way out, which is called
// at once when a newer view has come since.
function ticket() {
  const mine = ++routed;
  const hand = (done) => {
    if (mine === routed) leave = done;
    else done();
  };
  return { routed: mine, current: () => mine === routed, hand };
}

async function route() {
  leave();
  leave = () => {};
  const t = ticket();
  const path = location.pathname;
  const game = path.match(/^\/games\/([^/]+)(?:\/audit\/([^/]+))?\/?$/);
  if (game) {
    const id = decodeURIComponent(game[1]);
    const version = new URLSearchParams(location.search).get("v");
    const audit = game[2] ? decodeURIComponent(game[2]) : null;
    t.hand(await showGame(main, new GameSource(id), { version, audit, ...t }));
  } else if (path === "/open") {
    const source = entryFile();
    if (source) await openSource(source, { t });
    else showOpen();
  } else if (path === "/fairness") {
    showFairness();
  } else {
    t.hand(await showLobby(main, new URLSearchParams(location.search), t.current));
  }
}

// The file the current history entry was made for; an entry made without one takes the last file
// opened, and keeps it (Back to it later shows that file, not whichever opened since).
function entryFile() {
  const state = history.state ?? {};
  if (state.file === undefined) {
    if (!openedN) return null;
    history.replaceState({ ...state, load: LOAD, file: openedN }, "");
    return files.get(openedN);
  }
  return state.load === LOAD ? (files.get(state.file) ?? null) : null;
}

let fileShown = null; // { routed, source }: the file view the router drew last

async function openSource(source, { t = ticket() } = {}) {
  fileShown = { routed: t.routed, source };
  const hash = new URLSearchParams(location.hash.slice(1));
  t.hand(await showGame(main, source, { version: hash.get("v"), audit: hash.get("audit"), ...t }));
}

// A file just chosen or dropped gets a history entry of its own, at its own last version (not at the
// version or audit of the file shown before it); only the bare picker's entry is replaced by it.
async function openFile(file) {
  if (!file) return;
  const bytes = await file.arrayBuffer();
  const source = new FileSource(file.name, bytes);
  const bare = location.pathname === "/open" && !entryFile();
  const n = files.size + 1;
  files.set(n, source);
  leave();
  leave = () => {};
  if (bare) history.replaceState({ load: LOAD, file: n }, "", "/open");
  else history.pushState({ load: LOAD, file: n }, "", "/open");
  await openSource(source);
  // It opened (FileSource.open read its header); a file chosen after it that opened first stays the last.
  if (source.gameId !== undefined && n > openedN) openedN = n;
}

function picker() {
  const input = h("input", { type: "file", id: "file", accept: ".jsonl,.ndjson,application/x-ndjson,application/json" });
  input.addEventListener("change", () => openFile(input.files[0]));
  return h("p", { class: "picker" }, h("label", { for: "file" }, "Choose a game file: "), input);
}

function showOpen() {
  document.title = "Open a game file · dicestream";
  clear(main).append(
    h("h1", {}, "Open a game file"),
    h(
      "div",
      { class: "dropzone", "data-dropzone": "true" },
      h("p", {}, "Drop a game file here (anywhere on the page works too)"),
      picker(),
    ),
    h(
      "p",
      {},
      "A game file is the JSON Lines file ",
      h("code", {}, "dicestream export GAME"),
      " writes, or a finished game's download link. It is replayed and audited by this gateway without storing it ",
      "and without Redis: you get the board at every version, the events in plain words, the audit of every command ",
      "and the fairness check.",
    ),
  );
}

function showFairness() {
  document.title = "Check a game yourself · dicestream";
  const code = (t) => h("pre", {}, h("code", {}, t));
  clear(main).append(
    h("h1", {}, "Check a game's dice and shuffles yourself"),
    h("p", {}, "Every game commits to its random seed before anything is dealt: the first event records ",
      h("code", {}, "sha256(seed)"), ". Every roll, shuffle and draw comes from ", h("code", {}, "Rng.for_version(seed, version)"),
      " (SHA-256 in counter mode), so nobody, not even the server, can choose an outcome once the game is created. ",
      "When the game ends the seed is revealed."),
    h("p", {}, "The badge on a finished game says what ", h("code", {}, "dicestream verify"),
      " says: the revealed seed hashes to the commitment, and every command, judged again by the rules from the seed, ",
      "yields exactly the recorded events (rolls and shuffles included) and the recorded result."),
    h("h2", {}, "Do it on your own machine"),
    h("ol", {},
      h("li", {}, "Download the game from its page (“Download the game”), or ", h("code", {}, "curl -OJ GATEWAY/v1/games/GAME/export"), "."),
      h("li", {}, "Check it with the project's own code:", code("dicestream verify GAME.jsonl")),
      h("li", {}, "Or with nothing but Python's standard library, re-deriving every die and shuffle from the seed:",
        code("python examples/check_fairness.py GAME.jsonl")),
    ),
    h("p", {}, "The whole scheme, and what each game draws at which version: ", h("code", {}, "docs/fairness.md"), " in the repository."),
  );
}

// Drag and drop a game file anywhere: it is opened as at /open.
const drop = document.getElementById("drop");
let depth = 0;
window.addEventListener("dragenter", (e) => {
  if (!e.dataTransfer?.types?.includes("Files")) return;
  depth += 1;
  drop.hidden = false;
});
window.addEventListener("dragleave", () => {
  depth = Math.max(0, depth - 1);
  if (!depth) drop.hidden = true;
});
window.addEventListener("dragover", (e) => e.preventDefault());
window.addEventListener("drop", (e) => {
  e.preventDefault();
  depth = 0;
  drop.hidden = true;
  openFile(e.dataTransfer?.files?.[0]);
});

// Links inside the page that stay in it (lobby ↔ game) go through the router.
document.addEventListener("click", (e) => {
  const a = e.target.closest?.("a[href^='/']");
  if (!a || a.hasAttribute("download") || e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey) return;
  if (a.getAttribute("href").startsWith("/v1/")) return;
  e.preventDefault();
  history.pushState({}, "", a.getAttribute("href"));
  route();
});
window.addEventListener("popstate", () => {
  // The game shown handles its own board <-> audit moves; anything else is a new route. Only the
  // view the router shows now counts (not one left that is still on screen), and a game from the
  // gateway and a file of the same game are different views.
  const section = document.querySelector(".game");
  const shown = section?.routed === routed ? section.dataset : null;
  const game = location.pathname.match(/^\/games\/([^/]+)/);
  if (shown?.source === "live" && game && decodeURIComponent(game[1]) === shown.gameId) return;
  const file = fileShown?.routed === routed ? fileShown.source : null;
  if (shown?.source === "file" && location.pathname === "/open" && file && entryFile() === file) return;
  route();
});

route();
