// The lobby: every game, newest first, filtered by title and status, a page at a time; whichever
// page it shows refreshes itself (a later page is the games after its cursor, so its rows change
// only as those games do).

import { getJSON } from "./api.js";
import { clear, h, titleCase } from "./dom.js";
import { playersLine } from "./game.js";

const PAGE = 20;
// The refresh asks every 5 s; one request that hangs (a proxy, a gateway restarting) fails after
// this long and the next is asked as after any failure, instead of the list freezing for good.
const PATIENCE_MS = 10_000;
const STATUSES = ["open", "running", "over", "archived"];

function when(ms) {
  if (!ms) return "–";
  return new Date(ms).toISOString().replace("T", " ").slice(0, 16) + " UTC";
}

export async function showLobby(main, query, current = () => true) {
  // At once, so nothing of the view left stays on screen (nor answers a click) while this loads.
  clear(main).append(h("p", { class: "loading" }, "Loading the games…"));
  // Without the catalog the list still works: titles show as their ids.
  const titles = await getJSON("/v1/catalog", PATIENCE_MS).catch(() => []);
  if (!current()) return () => {};
  const state = { title: query.get("title") || "", status: query.get("status") || "", cursor: query.get("cursor") || "" };
  const back = [];
  document.title = "Games · dicestream";

  const titleSel = h(
    "select",
    { id: "f-title", name: "title" },
    h("option", { value: "" }, "every game"),
    titles.map((t) => h("option", { value: t.title, ...(t.title === state.title ? { selected: true } : {}) }, t.name)),
    // A title from the URL that the catalog did not name (it failed) is still the filter shown.
    state.title && !titles.some((t) => t.title === state.title) ? h("option", { value: state.title, selected: true }, state.title) : null,
  );
  const statusSel = h(
    "select",
    { id: "f-status", name: "status" },
    h("option", { value: "" }, "any status"),
    STATUSES.map((s) => h("option", { value: s, ...(s === state.status ? { selected: true } : {}) }, titleCase(s))),
  );
  const tbody = h("tbody");
  const total = h("p", { class: "total", "aria-live": "polite" });
  const newer = h("button", { type: "button", onclick: () => page(back.pop() ?? "") }, "← Newer");
  const older = h("button", { type: "button" }, "Older →");
  const ratingsBody = h("tbody");
  const ratingsNote = h("p", { class: "muted" });
  const ratingsBox = h(
    "section",
    { class: "ratings", "aria-labelledby": "ratings-h" },
    h("h2", { id: "ratings-h" }, "Ratings"),
    ratingsNote,
    h(
      "table",
      { class: "games ratings-table" },
      h("caption", { class: "visually-hidden" }, "Players by rating, per game"),
      h("thead", {}, h("tr", {}, ["Player", "Game", "Games", "Wins", "Rating (μ ± σ)"].map((c) => h("th", { scope: "col" }, c)))),
      ratingsBody,
    ),
  );
  clear(main).append(
    h("h1", {}, "Games"),
    h(
      "form",
      { class: "filters", role: "search", "aria-label": "Filter games", onsubmit: (e) => e.preventDefault() },
      h("label", { for: "f-title" }, "Title "),
      titleSel,
      h("label", { for: "f-status" }, " Status "),
      statusSel,
    ),
    total,
    h(
      "table",
      { class: "games" },
      h("caption", { class: "visually-hidden" }, "Games, newest first"),
      h(
        "thead",
        {},
        h("tr", {}, ["Game", "Status", "Players and scores", "Version", "Created"].map((c) => h("th", { scope: "col" }, c))),
      ),
      tbody,
    ),
    h("nav", { class: "pager", "aria-label": "Pages" }, newer, " ", older),
    ratingsBox,
    h(
      "p",
      { class: "hint" },
      "Have a game file (from ",
      h("code", {}, "dicestream export"),
      " or a game's download link)? ",
      h("a", { href: "/open" }, "Open it"),
      " or drop it anywhere on this page to replay and audit it.",
    ),
  );

  let shownRatings = "";
  let asked = 0;
  async function rate() {
    const params = new URLSearchParams();
    if (state.title) params.set("title", state.title);
    const mine = ++asked;
    let board;
    try {
      board = await getJSON(`/v1/ratings?${params}`, PATIENCE_MS);
    } catch {
      return; // the game list says already that Redis is not available
    }
    // An answer for an earlier filter that arrives late must not replace the current one.
    if (mine !== asked || JSON.stringify(board) === shownRatings) return;
    shownRatings = JSON.stringify(board);
    const name = (title) => titles.find((t) => t.title === title)?.name || title;
    clear(ratingsBody).append(
      ...board.ratings.map((r) =>
        h(
          "tr",
          { "data-player": r.name, "data-rated": r.title },
          h("td", { "data-label": "Player" }, r.name),
          h("td", { "data-label": "Game" }, name(r.title)),
          h("td", { "data-label": "Games", class: "num" }, String(r.games)),
          h("td", { "data-label": "Wins", class: "num" }, String(r.wins)),
          h("td", { "data-label": "Rating", class: "num" }, `${r.rating.toFixed(1)} (${r.mu.toFixed(1)} ± ${r.sigma.toFixed(1)})`),
        ),
      ),
    );
    ratingsNote.textContent = board.games
      ? `OpenSkill over ${board.games} finished game${board.games === 1 ? "" : "s"}, oldest first; rating = μ − 3σ.`
      : "No finished games between different players yet.";
  }

  // A game's row stays in the page for as long as the game is listed, its link untouched; only its
  // other cells are redrawn when the game changes. So a refresh neither takes the keyboard's focus
  // from the link nor swallows a click whose press and release it falls between.
  let drawn = new Map();
  function cells(g) {
    return [
      h("td", { "data-label": "Status" }, h("span", { class: `badge ${g.status === "running" ? "live on" : g.status}` }, g.status === "running" ? "● Live" : titleCase(g.status)), g.to_act.length && g.status === "running" ? h("span", { class: "muted" }, ` ${g.to_act.map((s) => g.players[s]).join(", ")} to play`) : null),
      h("td", { "data-label": "Players" }, playersLine(g)),
      h("td", { "data-label": "Version", class: "num" }, String(g.version)),
      h("td", { "data-label": "Created" }, when(g.created_at_ms)),
    ];
  }
  function row(g, next) {
    const key = JSON.stringify(g);
    const kept = drawn.get(g.game_id) ?? {
      key: "",
      tr: h(
        "tr",
        { "data-game-id": g.game_id, "data-title": g.game_type },
        h("td", { "data-label": "Game" }, h("a", { href: `/games/${encodeURIComponent(g.game_id)}` }, titles.find((t) => t.title === g.game_type)?.name || g.game_type, " ", h("span", { class: "game-id" }, g.game_id))),
      ),
    };
    if (kept.key !== key) {
      kept.key = key;
      kept.tr.dataset.status = g.status;
      while (kept.tr.children.length > 1) kept.tr.lastElementChild.remove();
      kept.tr.append(...cells(g));
    }
    next.set(g.game_id, kept);
    return kept.tr;
  }
  // Rows that left go first, then the new ones are put in their places: the rows that stay are
  // never taken out of the page.
  function place(rows) {
    const wanted = new Set(rows);
    for (const tr of [...tbody.children]) if (!wanted.has(tr)) tr.remove();
    rows.forEach((tr, i) => {
      if (tbody.children[i] !== tr) tbody.insertBefore(tr, tbody.children[i] ?? null);
    });
  }

  let timer = null;
  let shownList = "";
  let listed = 0;
  async function page(cursor) {
    state.cursor = cursor;
    const mine = ++listed;
    clearTimeout(timer); // a refresh of the page left must not come back over this one
    const params = new URLSearchParams({ limit: PAGE });
    if (state.title) params.set("title", state.title);
    if (state.status) params.set("status", state.status);
    if (cursor) params.set("cursor", cursor);
    const shown = new URLSearchParams(params);
    shown.delete("limit");
    history.replaceState({}, "", "/" + (shown.toString() ? "?" + shown : ""));
    let list;
    try {
      list = await getJSON(`/v1/games?${params}`, PATIENCE_MS);
    } catch (err) {
      if (mine !== listed) return;
      // The list needs Redis; opening a game file does not.
      shownList = "";
      clear(tbody).append(h("tr", {}, h("td", { colspan: 5, class: "error", role: "alert" }, `The game list is not available: ${err.message}`)));
      clearTimeout(timer);
      timer = setTimeout(() => document.body.contains(tbody) && page(cursor), 5000);
      return;
    }
    // An answer for an earlier page or filter that arrives late must not replace the current one.
    if (mine !== listed) return;
    // Nothing is touched when nothing changed.
    const same = JSON.stringify([cursor, list]) === shownList;
    shownList = JSON.stringify([cursor, list]);
    clearTimeout(timer);
    timer = setTimeout(() => document.body.contains(tbody) && page(cursor), 5000);
    // After the list's answer (which is drawn in this same tick): ratings for the filter shown
    // mean the list for it is drawn too.
    rate();
    if (same) return;
    const next = new Map();
    const rows = list.games.map((g) => row(g, next));
    drawn = next;
    if (!rows.length) rows.push(h("tr", {}, h("td", { colspan: 5 }, cursor ? "No older games." : "No games yet. Create some with ./dev demo or dicestream new.")));
    place(rows);
    total.textContent = `${list.total} game${list.total === 1 ? "" : "s"}`;
    newer.disabled = !cursor;
    older.disabled = !list.next;
    older.onclick = () => {
      back.push(cursor);
      page(list.next);
    };
  }
  titleSel.addEventListener("change", () => {
    state.title = titleSel.value;
    back.length = 0;
    page("");
  });
  statusSel.addEventListener("change", () => {
    state.status = statusSel.value;
    back.length = 0;
    page("");
  });
  await page(state.cursor);
  // Leaving makes every answer still awaited one for a page no longer asked (the guards above).
  return () => {
    listed += 1;
    asked += 1;
    clearTimeout(timer);
  };
}
