// Where a game comes from: the gateway (a game in Redis, by id) or a game file opened in the
// browser (sent to the gateway's stateless /v1/files/* endpoints with every request; nothing is
// stored and Redis is not read). Both answer the same shapes, so the page draws either alike.

export class ApiError extends Error {
  constructor(status, problem) {
    super(problem?.title ? `${problem.title}${problem.detail ? ": " + problem.detail : ""}` : `HTTP ${status}`);
    this.status = status;
    this.problem = problem;
  }
}

async function answer(response) {
  const type = response.headers.get("content-type") || "";
  const body = type.includes("json") ? await response.json() : null;
  if (!response.ok) throw new ApiError(response.status, body);
  return body;
}

// With `patience` (ms), a request left unanswered that long fails like any other, so a caller that
// asks again on failure (the lobby's refresh) is never stopped by one answer that never comes.
export async function getJSON(url, patience) {
  const signal = patience ? AbortSignal.timeout(patience) : undefined;
  try {
    return await answer(await fetch(url, { headers: { Accept: "application/json" }, signal }));
  } catch (err) {
    if (err?.name === "TimeoutError") throw new Error(`no answer within ${patience / 1000} s`);
    throw err;
  }
}

// A game's reads: an answer this late fails like an error and is drawn as one, instead of a view
// loading for ever. (Not the fairness check, which replays the whole game and may take longer.)
const GAME_PATIENCE_MS = 30_000;

async function postFile(url, bytes) {
  return answer(
    await fetch(url, { method: "POST", body: bytes, headers: { "Content-Type": "application/x-ndjson" } }),
  );
}

// A game's names and values come from the data it is played with (its summary's data_version),
// which an older game may not share with the current data file.
const catalogs = new Map();
export function catalog(title, dataVersion) {
  const key = `${title}\n${dataVersion || ""}`;
  const query = dataVersion ? `?data_version=${encodeURIComponent(dataVersion)}` : "";
  if (!catalogs.has(key)) {
    const asked = getJSON(`/v1/catalog/${encodeURIComponent(title)}${query}`, GAME_PATIENCE_MS);
    // A failure is not kept: the next view of a game of this title asks again.
    asked.catch(() => catalogs.get(key) === asked && catalogs.delete(key));
    catalogs.set(key, asked);
  }
  return catalogs.get(key);
}

const CHUNK = 50;

// Public states by version, fetched in aligned chunks of 50 and kept.
class States {
  constructor(fetchChunk) {
    this.fetchChunk = fetchChunk;
    this.cache = new Map();
    this.pending = new Map();
  }
  async get(version) {
    if (this.cache.has(version)) return this.cache.get(version);
    // A version's state never changes, so what is cached stays; a live game's newest versions
    // are fetched from the first one missing, not from the start of their chunk again.
    const aligned = Math.floor((version - 1) / CHUNK) * CHUNK + 1;
    const from = this.cache.has(version - 1) ? version : aligned;
    if (!this.pending.has(from)) {
      const p = this.fetchChunk(from, CHUNK).then((page) => {
        for (const st of page.states) this.cache.set(st.version, st);
        return page;
      });
      this.pending.set(from, p);
      p.finally(() => this.pending.delete(from));
    }
    await this.pending.get(from);
    return this.cache.get(version) || null;
  }
}

export class GameSource {
  constructor(gameId) {
    this.gameId = gameId;
    this.base = `/v1/games/${encodeURIComponent(gameId)}`;
    this.live = true;
    this.shareable = true;
    this.states = new States((from, limit) => this.get(`/states?from_version=${from}&limit=${limit}`));
  }
  get(path) {
    return getJSON(this.base + path, GAME_PATIENCE_MS);
  }
  async open() {
    const state = await this.get("");
    const events = [];
    let after = null;
    for (;;) {
      const page = await this.get(`/events?limit=1000${after ? "&after=" + after : ""}`);
      events.push(...page.events);
      if (page.events.length < 1000) break;
      after = page.next;
    }
    return { summary: state.summary, version: state.summary.version, events, cursor: events.at(-1)?.cursor };
  }
  audit(commandId) {
    return this.get(`/audit?command_id=${encodeURIComponent(commandId)}`);
  }
  fairness() {
    return getJSON(`${this.base}/fairness`);
  }
  exportUrl() {
    return `${this.base}/export`;
  }
  pageUrl(version) {
    return `/games/${encodeURIComponent(this.gameId)}${version ? "?v=" + version : ""}`;
  }
  auditUrl(commandId) {
    return `/games/${encodeURIComponent(this.gameId)}/audit/${encodeURIComponent(commandId)}`;
  }
  // Live events after `cursor`, over the gateway's WebSocket; reconnects and resumes by itself.
  follow(cursor, onEvent, onStatus) {
    let closed = false;
    let socket = null;
    let retry = null;
    const connect = () => {
      if (closed) return;
      const scheme = location.protocol === "https:" ? "wss:" : "ws:";
      const query = cursor ? `?after=${encodeURIComponent(cursor)}` : "";
      socket = new WebSocket(`${scheme}//${location.host}${this.base}/events/ws${query}`);
      socket.onopen = () => onStatus("connected");
      socket.onmessage = ({ data }) => {
        const msg = JSON.parse(data);
        if (msg.type === "event") {
          cursor = msg.cursor;
          onEvent({ cursor: msg.cursor, event: msg.event });
        } else if (msg.type === "live") {
          onStatus("live");
        }
      };
      socket.onclose = () => {
        onStatus("disconnected");
        if (!closed) retry = setTimeout(connect, 1000);
      };
    };
    connect();
    return () => {
      closed = true;
      clearTimeout(retry); // a reconnect due after the view is left opens nothing
      socket?.close();
    };
  }
}

export class FileSource {
  constructor(name, bytes) {
    this.name = name;
    this.bytes = bytes;
    this.live = false;
    this.shareable = false;
    this.states = new States((from, limit) =>
      postFile(`/v1/files/states?from_version=${from}&limit=${limit}`, this.bytes),
    );
  }
  async open() {
    const file = await postFile("/v1/files/open", this.bytes);
    this.gameId = file.header.game_id;
    this.opened = file;
    return { summary: file.summary, version: file.version, events: file.events, header: file.header };
  }
  audit(commandId) {
    return postFile(`/v1/files/audit?command_id=${encodeURIComponent(commandId)}`, this.bytes);
  }
  async fairness() {
    return this.opened.fairness;
  }
  exportUrl() {
    return null;
  }
  pageUrl(version) {
    return `/open${version ? "#v=" + version : ""}`;
  }
  auditUrl(commandId) {
    return `/open#audit=${encodeURIComponent(commandId)}`;
  }
  follow() {
    return () => {};
  }
}
