// A game: its board at any version (replay with a scrubber, play/pause, keyboard ← →, ?v=N),
// live while it runs (new events over the gateway's WebSocket, what they changed highlighted),
// the event list in plain words, the audit of any command, the fairness badge once it is over.

import { catalog } from "./api.js";
import { drawBoard } from "./boards/index.js";
import { changedPaths, highlight } from "./diff.js";
import { clear, h, titleCase } from "./dom.js";
import { describe, describeCommand, namer } from "./words.js";

const SPEEDS = [1, 2, 4, 8, 16];

function statusBadge(summary, live) {
  if (summary.status === "over") return h("span", { class: "badge over", "data-status": "over" }, "Over");
  const label = summary.status === "running" ? "Running" : titleCase(summary.status);
  return h(
    "span",
    { class: `badge ${live ? "live on" : summary.status}`, "data-status": summary.status, "data-live": live ? "true" : "false" },
    live ? `● Live · ${label.toLowerCase()}` : label,
  );
}

function seatChip(seat, name, kind) {
  return h(
    "span",
    { class: "seat-chip", "data-seat": seat },
    h("span", { class: `dot seat-${seat % 4}`, "aria-hidden": "true" }, String(seat)),
    ` ${name ?? "(empty)"}`,
    kind ? h("span", { class: "kind" }, kind) : null,
  );
}

export function playersLine(summary) {
  return h(
    "span",
    { class: "players" },
    summary.players.map((name, seat) =>
      h(
        "span",
        { class: "player" },
        seatChip(seat, name, summary.kinds?.[seat]),
        summary.scores ? h("b", { class: summary.winners?.includes(seat) ? "winner" : "", "data-score": summary.scores[seat] }, ` ${summary.scores[seat]}`) : null,
      ),
    ),
  );
}

function fairnessBadge(report) {
  if (!report || !report.over) return null;
  const ok = report.ok && report.seed_verified;
  return h(
    "div",
    { class: `fairness ${ok ? "fair" : "unfair"}`, "data-fair": ok ? "true" : "false", role: "status" },
    h("strong", {}, ok ? "✓ Fair" : "✗ Check failed"),
    " ",
    ok
      ? `seed matches its commitment; all ${report.events} events re-derived from ${report.commands} commands (every roll and shuffle)`
      : report.findings.map((f) => `${f.check}${f.version ? " at v" + f.version : ""}: ${f.problem}`).join("; ") ||
        "the revealed seed was not verified",
    " · ",
    h("a", { href: "/fairness" }, "check it yourself"),
  );
}

export async function showGame(main, source, opts = {}) {
  // Left for another view while an answer was awaited: nothing more is drawn, the URL is not touched.
  const gone = () => opts.current && !opts.current();
  clear(main).append(h("p", { class: "loading" }, "Loading the game…"));
  let meta;
  let served;
  try {
    meta = await source.open();
    if (gone()) return () => {};
    served = await catalog(meta.summary.game_type, meta.summary.data_version);
  } catch (err) {
    if (!gone()) clear(main).append(h("p", { class: "error", role: "alert" }, err.message));
    return () => {};
  }
  if (gone()) return () => {};
  const title = meta.summary.game_type;
  const data = served.data;
  const name = namer(title, data);
  let summary = meta.summary;
  let last = meta.version;
  const events = meta.events;
  const ctxBase = { data, name, players: summary.players, title };
  let current = 0;
  let playing = null;
  let following = !opts.version && !opts.audit && source.live && summary.status !== "over";
  let liveStatus = "";

  document.title = `${titleCase(title)} ${source.gameId} · dicestream`;

  // ---- layout ----
  const head = h("header", { class: "game-head" });
  const board = h("div", { class: "board-host", id: "board", "aria-live": "off" });
  const now = h("p", { class: "now", "aria-live": "polite" });
  const slider = h("input", { type: "range", min: 1, max: Math.max(1, last), value: 1, id: "version", "aria-label": "Version" });
  const counter = h("output", { for: "version", class: "counter" });
  const speed = h(
    "select",
    { "aria-label": "Speed (versions per second)", class: "speed" },
    SPEEDS.map((n) => h("option", { value: n, ...(n === 4 ? { selected: true } : {}) }, `${n}/s`)),
  );
  const btn = (label, text, fn, extra = {}) => h("button", { type: "button", "aria-label": label, title: label, onclick: fn, ...extra }, text);
  const playBtn = btn("Play", "▶ Play", () => togglePlay(), { class: "play", "aria-pressed": "false" });
  const liveBtn = btn("Follow the live game", "Live", () => followLive(), { class: "follow", hidden: !source.live });
  const scrubber = h(
    "div",
    { class: "scrubber", role: "group", "aria-label": "Replay controls" },
    btn("First version", "|◀", () => go(1)),
    btn("Previous version (←)", "◀", () => go(current - 1)),
    playBtn,
    btn("Next version (→)", "▶", () => go(current + 1)),
    btn("Last version", "▶|", () => go(last)),
    slider,
    counter,
    speed,
    liveBtn,
  );
  const list = h("ol", { class: "event-list", "aria-label": "Events in order" });
  const aside = h("aside", { class: "events", "aria-labelledby": "events-h" }, h("h2", { id: "events-h" }, "Events"), list);
  const body = h("div", { class: "game-body" }, h("div", { class: "main-col" }, scrubber, now, board), aside);
  const auditBox = h("section", { class: "audit", hidden: true, "aria-labelledby": "audit-h", tabindex: "-1" });
  // A game on data this server no longer keeps is drawn with today's names and values: say so.
  const played = meta.summary.data_version;
  const otherData = played && served.data_version !== played
    ? h("p", { class: "warning", role: "note" }, `This game was played with data ${played}; this server keeps only ${served.data_version}, so names and values on the board may differ.`)
    : null;
  const section = h("section", { class: "game", "data-game-id": source.gameId, "data-title": title, "data-source": source.live ? "live" : "file" }, head, otherData, body, auditBox);
  section.routed = opts.routed; // which route drew it: the router's, kept off the markup
  clear(main).append(section);

  let fairness = null;
  function renderHead() {
    const exportUrl = source.exportUrl();
    clear(head).append(
      h("h1", {}, `${titleCase(title)} `, h("span", { class: "game-id" }, source.gameId)),
      h(
        "p",
        { class: "status-line" },
        statusBadge(summary, source.live && liveStatus === "live" && summary.status !== "over"),
        ` version ${last} · `,
        playersLine(summary),
        source.live ? null : h("span", { class: "file-note" }, ` · opened from ${source.name} (nothing stored; links work only here)`),
      ),
      h(
        "div",
        { class: "head-actions" },
        fairnessBadge(fairness),
        exportUrl && summary.status === "over"
          ? h("a", { href: exportUrl, download: `${source.gameId}.jsonl`, class: "button", "data-download": "true" }, "Download the game (JSON Lines)")
          : exportUrl
            ? h("span", { class: "muted" }, "The game file can be downloaded once the game is over.")
            : null,
      ),
    );
  }
  async function loadFairness() {
    if (summary.status !== "over") return;
    try {
      fairness = await source.fairness();
    } catch {
      fairness = null;
    }
    renderHead();
  }

  // ---- the event list ----
  const ctx = () => ({ ...ctxBase, players: summary.players });
  function eventItem(item) {
    const ev = item.event;
    const refused = ev.type === "lifecycle.CommandRejected";
    const seat = ev.payload?.seat;
    const li = h(
      "li",
      { "data-version": ev.version, "data-cursor": item.cursor, "data-type": ev.type, class: refused ? "refused" : "" },
      h(
        "button",
        { type: "button", class: "jump", onclick: () => go(ev.version, { stop: true }), "aria-label": `Go to version ${ev.version}` },
        h("span", { class: "v" }, String(ev.version)),
        typeof seat === "number" ? h("span", { class: `dot seat-${seat % 4}`, "aria-hidden": "true" }, String(seat)) : null,
        h("span", { class: "what" }, describe(ev, ctx())),
      ),
      ev.command_id
        ? h("a", { href: source.auditUrl(ev.payload?.command_id || ev.command_id), class: "audit-link", "data-command": ev.payload?.command_id || ev.command_id, onclick: (e) => openAudit(e, ev.payload?.command_id || ev.command_id) }, refused ? `audit ${ev.payload.rule}` : "audit")
        : null,
    );
    return li;
  }
  list.append(...events.map(eventItem));

  function markCurrent() {
    let shown = null;
    for (const li of list.children) {
      const at = Number(li.dataset.version) === current && !li.classList.contains("refused");
      li.classList.toggle("current", at);
      if (at) {
        li.setAttribute("aria-current", "step");
        shown ??= li;
      } else li.removeAttribute("aria-current");
      li.classList.toggle("future", Number(li.dataset.version) > current);
    }
    if (shown && !opts.noScroll) shown.scrollIntoView({ block: "nearest" });
    return shown;
  }

  // ---- going to a version ----
  async function go(v, { stop = false } = {}) {
    if (stop) pause();
    v = Math.max(1, Math.min(last, Math.round(v)));
    // At the newest version of a running game, the page follows it; anywhere else it stays.
    following = v === last && source.live && summary.status !== "over";
    current = v;
    slider.value = v;
    counter.textContent = `${v} / ${last}`;
    let state;
    let before;
    try {
      [state, before] = await Promise.all([source.states.get(v), v > 1 ? source.states.get(v - 1) : null]);
    } catch (err) {
      if (current === v) now.textContent = `Version ${v} could not be loaded: ${err.message}`;
      return;
    }
    if (current !== v || !state) return;
    const upto = events.filter((e) => e.event.version <= v).map((e) => e.event);
    const drawn = drawBoard(title, state.view, { ...ctx(), version: v, events: upto, summary: state.summary });
    if (before?.view && state.view) highlight(drawn, changedPaths(before.view, state.view));
    clear(board).append(drawn);
    const shown = markCurrent();
    const acting = state.summary.to_act.map((seat) => summary.players[seat] ?? `seat ${seat}`);
    now.textContent =
      `Version ${v} of ${last}` +
      (acting.length ? ` · ${acting.join(", ")} to play` : state.summary.status === "over" ? " · game over" : "") +
      (shown ? ` · ${shown.querySelector(".what").textContent}` : "");
    now.dataset.version = v;
    if (!opts.audit && auditBox.hidden) setUrl(v); // a live event does not take an open audit's URL
  }
  // The entries a game makes keep the state of the one it was opened in (main.js: which file).
  function setUrl(v) {
    if (gone()) return;
    const url = source.pageUrl(v === last && following ? null : v);
    if (location.pathname + location.search + location.hash !== url) history.replaceState(history.state, "", url);
  }
  function pause() {
    if (playing) clearInterval(playing);
    playing = null;
    playBtn.textContent = "▶ Play";
    playBtn.setAttribute("aria-label", "Play");
    playBtn.setAttribute("aria-pressed", "false");
  }
  function togglePlay() {
    if (playing) return pause();
    if (current >= last) go(1);
    playBtn.textContent = "⏸ Pause";
    playBtn.setAttribute("aria-label", "Pause");
    playBtn.setAttribute("aria-pressed", "true");
    playing = setInterval(() => (current >= last ? pause() : go(current + 1)), 1000 / Number(speed.value));
  }
  speed.addEventListener("change", () => {
    if (playing) {
      pause();
      togglePlay();
    }
  });
  slider.addEventListener("input", () => go(Number(slider.value), { stop: true }));
  function followLive() {
    go(last, { stop: true });
  }
  function onKey(e) {
    if (!auditBox.hidden || e.altKey || e.ctrlKey || e.metaKey) return;
    const tag = e.target.tagName;
    if (tag === "INPUT" || tag === "SELECT" || tag === "TEXTAREA") return;
    if (e.key === "ArrowLeft") go(current - 1, { stop: true });
    else if (e.key === "ArrowRight") go(current + 1, { stop: true });
    else if (e.key === "Home") go(1, { stop: true });
    else if (e.key === "End") go(last, { stop: true });
    else if (e.key === " " && (tag === "BODY" || tag === "MAIN")) togglePlay();
    else return;
    e.preventDefault();
  }
  document.addEventListener("keydown", onKey);

  // ---- live ----
  // Events can come faster than states load (bots play hundreds a second): one load at a time,
  // then one more for whatever arrived meanwhile.
  let loading = false;
  let again = false;
  async function catchUp() {
    if (loading) {
      again = true;
      return;
    }
    loading = true;
    try {
      do {
        again = false;
        await go(last);
      } while (again && following);
    } finally {
      loading = false;
    }
  }
  let stopFollowing = () => {};
  if (source.live && summary.status !== "over") {
    stopFollowing = source.follow(
      meta.cursor,
      (item) => {
        if (events.some((e) => e.cursor === item.cursor)) return;
        events.push(item);
        list.append(eventItem(item));
        const ev = item.event;
        if (ev.type === "lifecycle.SeatJoined") summary = { ...summary, players: summary.players.map((p, i) => (i === ev.payload.seat ? ev.payload.name : p)), kinds: (summary.kinds || []).map((k, i) => (i === ev.payload.seat ? ev.payload.kind : k)) };
        if (ev.type === "lifecycle.GameStarted") summary = { ...summary, status: "running" };
        if (ev.type === "lifecycle.GameEnded") summary = { ...summary, status: "over", scores: ev.payload.scores, winners: ev.payload.winners };
        if (ev.type !== "lifecycle.CommandRejected" && ev.version > last) {
          const wasFollowing = following;
          last = ev.version;
          slider.max = last;
          if (wasFollowing) catchUp();
          else counter.textContent = `${current} / ${last}`;
        }
        renderHead();
        if (ev.type === "lifecycle.SeedRevealed") loadFairness();
      },
      (status) => {
        liveStatus = status;
        renderHead();
      },
    );
  }

  // ---- audit ----
  async function openAudit(e, commandId) {
    if (e) e.preventDefault();
    pause();
    history.pushState(history.state, "", source.auditUrl(commandId));
    await showAudit(commandId);
  }
  function closeAudit() {
    auditBox.hidden = true;
    body.hidden = false;
    opts.audit = null;
    setUrl(current);
  }
  async function showAudit(commandId) {
    body.hidden = true;
    auditBox.hidden = false;
    clear(auditBox).append(h("p", { class: "loading" }, "Loading the audit…"));
    let report;
    try {
      report = await source.audit(commandId);
    } catch (err) {
      clear(auditBox).append(h("p", { class: "error", role: "alert" }, err.message), h("button", { type: "button", onclick: closeAudit }, "← Back to the board"));
      return;
    }
    renderAudit(report, commandId);
    auditBox.focus();
  }
  function renderAudit(report, commandId) {
    const c = report.command;
    const v = report.verdict;
    const who = c.seat === null || c.seat === undefined ? "the platform" : `${summary.players[c.seat] ?? "seat " + c.seat} (seat ${c.seat})`;
    const accepted = v.status === "accepted";
    const shareUrl = new URL(source.auditUrl(commandId), location.href).href;
    const copy = h("button", { type: "button", onclick: async () => {
      try {
        await navigator.clipboard.writeText(shareUrl);
        copy.textContent = "Copied";
      } catch {
        share.select();
      }
    } }, "Copy link");
    const share = h("input", { type: "text", readonly: true, value: shareUrl, class: "share", "aria-label": "Link to this audit", "data-share": shareUrl });
    const mine = JSON.stringify([c.type, c.payload]);
    const before = report.state_before;
    clear(auditBox).append(
      h("button", { type: "button", class: "back", onclick: () => { history.pushState(history.state, "", source.pageUrl(current)); closeAudit(); } }, "← Back to the board"),
      h("h2", { id: "audit-h" }, `Audit: ${c.type} from ${who}`),
      h(
        "div",
        { class: `verdict ${accepted ? "accepted" : "refused"}`, "data-status": v.status, "data-rule": v.rule || "" },
        h("strong", {}, accepted ? "Accepted" : `Refused by rule ${v.rule}`),
        accepted
          ? ` · judged at version ${v.judged_at_version}, wrote version${v.to_version > v.judged_at_version + 1 ? "s " + (v.judged_at_version + 1) + "–" + v.to_version : " " + v.to_version}`
          : ` · judged at version ${v.judged_at_version}`,
        !accepted ? h("blockquote", { class: "rule-text", "data-rule-text": report.rule?.text || v.text || "" }, report.rule?.text || v.text || "") : null,
        !accepted && v.detail ? h("p", {}, `What was wrong: ${v.detail}`) : null,
        !accepted && report.rule ? h("p", { class: "muted" }, `Stated in ${report.rule.doc}`) : null,
      ),
      source.shareable ? h("p", { class: "share-row" }, h("label", {}, "Share: ", share), " ", copy) : null,
      h("h3", {}, "The command"),
      h(
        "dl",
        { class: "command" },
        [
          ["type", c.type],
          ["in words", c.payload !== null ? describeCommand({ type: c.type, payload: c.payload }, ctx()) : "(payload not kept: only its digest)"],
          ["seat", c.seat ?? "none"],
          ["token checked", c.authenticated ? "yes" : "no"],
          ["expected version", c.expected_version ?? "any"],
          ["received", c.received_at_ms ? new Date(c.received_at_ms).toISOString() : "–"],
          ["command id", c.command_id],
        ].map(([k, val]) => [h("dt", {}, k), h("dd", {}, String(val))]),
      ),
      h("pre", { class: "payload" }, JSON.stringify(c.payload ?? c.payload_digest, null, 2)),
      h("h3", {}, `The state before (version ${before.version}, ${before.status})`),
      before.view
        ? drawBoard(title, before.view, { ...ctx(), version: before.version, events: events.filter((e) => e.event.version <= before.version).map((e) => e.event), summary })
        : h("p", { class: "muted" }, "No board yet: the game had not started."),
      h("p", {}, h("a", { href: source.pageUrl(Math.max(1, before.version)), onclick: (e) => { e.preventDefault(); closeAudit(); go(Math.max(1, before.version), { stop: true }); } }, `Show version ${before.version} on the board`)),
      h("h3", {}, `Legal actions then (${report.legal_actions.length})`),
      report.legal_actions.length
        ? h("ol", { class: "legal" }, report.legal_actions.map((a) => {
            const same = JSON.stringify([a.type, a.payload]) === mine;
            return h("li", { class: same ? "chosen" : "" }, describeCommand(a, ctx()), same ? h("strong", {}, " ← this command") : null);
          }))
        : h("p", { class: "muted" }, "None for this seat at that moment (it was not its turn, or it had no seat)."),
      h("h3", {}, `Events it produced (${report.events.length})`),
      report.events.length
        ? h("ol", { class: "produced" }, report.events.map((ev) => h("li", { "data-version": ev.version }, `v${ev.version}: ${describe(ev, ctx())}`)))
        : h("p", { class: "muted" }, "None: a refused command changes nothing."),
    );
  }
  function onPop() {
    const m = location.pathname.match(/\/audit\/([^/]+)$/) || location.hash.match(/audit=([^&]+)/);
    if (m) showAudit(decodeURIComponent(m[1]));
    else if (!auditBox.hidden) closeAudit();
  }
  window.addEventListener("popstate", onPop);

  const leave = () => {
    pause();
    stopFollowing();
    document.removeEventListener("keydown", onKey);
    window.removeEventListener("popstate", onPop);
  };
  // The router holds the way out from now on: leaving while the first board loads closes the
  // socket and the listeners at once, not when the board's answer comes.
  opts.hand?.(leave);
  try {
    renderHead();
    loadFairness();
    await go(opts.version ? Number(opts.version) : last);
    if (opts.audit && !gone()) await showAudit(opts.audit);
  } catch (err) {
    // A game that cannot be drawn says so in place of a half-drawn board that no longer answers.
    leave();
    if (!gone()) clear(main).append(h("p", { class: "error", role: "alert" }, `This game could not be drawn: ${err.message}`));
    return () => {};
  }
  return leave;
}
