#!/usr/bin/env node
// A complete dicestream bot in Node.js 20 with no dependencies, written from docs/bots.md,
// docs/http.md and /openapi.json alone. It talks only to the HTTP gateway (no Redis, no
// WebSocket: Node 20 has no WebSocket client built in, so it polls the seat view): join a seat
// (or play one joined before, with --token), optionally start the game, then until the game is
// over answer every turn with a random legal action, and print the final scores.
//
//   node examples/node_bot.mjs BASE_URL GAME_ID SEAT [--token T] [--start] [--name N] [--seed S]
//                              [--poll-ms MIN,MAX]
//
// Prints `final scores: [..]` and `winners: [..]` on stdout; exits 0 once the game is over, 1 when
// the seat cannot be joined or the gateway refuses something it should not, 2 on bad arguments.

import { randomUUID } from "node:crypto";

const USAGE =
  "usage: node node_bot.mjs BASE_URL GAME_ID SEAT [--token T] [--start] [--name N] [--seed S] [--poll-ms MIN,MAX]";

function parseArgs(argv) {
  const positional = [];
  const opts = { token: null, start: false, name: "node-bot", seed: null, pollMs: [200, 1000] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) fail(2, `${arg} needs a value\n${USAGE}`);
      return argv[++i];
    };
    if (arg === "--start") opts.start = true;
    else if (arg === "--token") opts.token = value();
    else if (arg === "--name") opts.name = value();
    else if (arg === "--seed") opts.seed = Number(value());
    else if (arg === "--poll-ms") opts.pollMs = value().split(",").map(Number);
    else if (arg.startsWith("--")) fail(2, `unknown option ${arg}\n${USAGE}`);
    else positional.push(arg);
  }
  if (positional.length !== 3) fail(2, USAGE);
  const [base, gameId, seatText] = positional;
  const seat = Number(seatText);
  if (!Number.isInteger(seat) || seat < 0) fail(2, `SEAT must be a seat number, not ${seatText}`);
  const [minMs, maxMs = minMs] = opts.pollMs;
  if (!(minMs > 0 && maxMs >= minMs)) fail(2, "--poll-ms takes MIN,MAX milliseconds");
  return { base: base.replace(/\/+$/, ""), gameId, seat, ...opts, minMs, maxMs };
}

function fail(code, message) {
  console.error(`node_bot: ${message}`);
  process.exit(code);
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

// A small seeded generator (mulberry32), so that a seat's choices can be replayed.
function random(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// One HTTP exchange with the gateway: {status, body} with body the JSON answer (problem details,
// RFC 9457, for every error). A 429 is waited out (Retry-After) and the request sent again; so is
// a connection that fails, a few times.
async function call(method, url, { token, body } = {}) {
  const headers = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  if (token) headers.Authorization = `Bearer ${token}`;
  for (let attempt = 1; ; attempt++) {
    let response;
    try {
      response = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    } catch (error) {
      if (attempt >= 5) throw error;
      await sleep(200 * attempt);
      continue;
    }
    const text = await response.text();
    const parsed = text ? JSON.parse(text) : null;
    if (response.status === 429) {
      const wait = Number(response.headers.get("retry-after") ?? parsed?.retry_after_s ?? 1);
      await sleep(Math.max(wait, 0.1) * 1000);
      continue;
    }
    return { status: response.status, body: parsed };
  }
}

const describe = (problem) =>
  `${problem?.status ?? "?"} ${problem?.rule ?? problem?.type ?? ""}: ${problem?.title ?? ""} (${problem?.detail ?? ""})`;

class Bot {
  constructor(args) {
    this.args = args;
    this.game = `${args.base}/v1/games/${encodeURIComponent(args.gameId)}`;
    this.seatUrl = `${this.game}/seats/${args.seat}`;
    this.token = args.token;
    this.rng = random(args.seed ?? args.seat + 1);
    this.answered = -1; // the highest version this seat answered: each version is answered once
    this.moves = 0;
    this.stale = 0;
  }

  // POST a command; a 504 (no outcome in time) is resent with the same command_id and body, which
  // the referee judges once: the retry learns the first outcome, it never plays a second move.
  async command(type, payload, expectedVersion) {
    const body = { type, command_id: randomUUID() };
    if (payload !== undefined) body.payload = payload;
    if (expectedVersion !== undefined) body.expected_version = expectedVersion;
    for (let attempt = 1; ; attempt++) {
      const answer = await call("POST", `${this.seatUrl}/commands`, { token: this.token, body });
      if (answer.status !== 504 || attempt >= 6) return answer;
    }
  }

  async join() {
    const body = { name: this.args.name, kind: "bot", command_id: randomUUID() };
    for (let attempt = 1; ; attempt++) {
      const answer = await call("POST", `${this.seatUrl}/join`, { body });
      if (answer.status === 201) return answer.body.token; // shown this once: it is the seat
      if (answer.status !== 504 || attempt >= 6) fail(1, `seat ${this.args.seat} of ${this.args.gameId} not joined: ${describe(answer.body)}`);
    }
  }

  // Any seated player may start the game once every seat is joined: wait until the public state
  // names a player in every seat, then StartGame (GAME-SEATS-EMPTY: not yet; GAME-NOT-OPEN:
  // someone else started it).
  async start() {
    for (let delay = this.args.minMs; ; delay = Math.min(delay * 2, this.args.maxMs)) {
      const state = await call("GET", this.game);
      if (state.status !== 200) fail(1, `no game ${this.args.gameId}: ${describe(state.body)}`);
      const { status, players } = state.body.summary;
      if (status !== "open") return; // running or over already
      if (players.every((name) => name !== null)) {
        const answer = await this.command("lifecycle.StartGame");
        if (answer.status === 200 || answer.body?.rule === "GAME-NOT-OPEN") return;
        if (answer.body?.rule !== "GAME-SEATS-EMPTY") fail(1, `StartGame refused: ${describe(answer.body)}`);
      }
      await sleep(delay);
    }
  }

  // Poll the seat view until the game is over; answer each turn once with a random legal action.
  async play() {
    let delay = this.args.minMs;
    let seen = -1;
    for (;;) {
      const got = await call("GET", this.seatUrl, { token: this.token });
      if (got.status !== 200) fail(1, `seat view refused: ${describe(got.body)}`);
      const view = got.body;
      if (view.status === "over") return view.version;
      delay = view.version === seen ? Math.min(Math.ceil(delay * 1.5), this.args.maxMs) : this.args.minMs;
      seen = view.version;
      const toAct = view.status === "running" && view.to_act.includes(this.args.seat);
      if (toAct && view.version > this.answered && view.legal_actions.length > 0) {
        this.answered = view.version;
        const action = view.legal_actions[Math.floor(this.rng() * view.legal_actions.length)];
        const answer = await this.command(action.type, action.payload, view.version);
        if (answer.status === 200) {
          this.moves++;
        } else if (answer.body?.rule === "GAME-STALE") {
          this.stale++; // another seat (or a deadline) moved the game first: wait for the next turn
        } else if (answer.body?.rule === "GAME-NOT-RUNNING" || answer.body?.rule === "GAME-RESIGNED") {
          continue; // the game ended meanwhile (or the seat resigned): the next poll says so
        } else {
          fail(1, `a legal action was refused: ${describe(answer.body)}`);
        }
        continue; // look again at once: it may be this seat's turn again
      }
      await sleep(delay);
    }
  }

  async run() {
    const started = Date.now();
    if (!this.token) this.token = await this.join();
    if (this.args.start) await this.start();
    const version = await this.play();
    // The public state comes from a read model that may lag by a few milliseconds: ask for at
    // least the version the game ended at.
    const final = await call("GET", `${this.game}?min_version=${version}`);
    if (final.status !== 200) fail(1, `final state: ${describe(final.body)}`);
    const { scores, winners } = final.body.summary;
    console.log(`final scores: ${JSON.stringify(scores)}`);
    console.log(`winners: ${JSON.stringify(winners)}`);
    const seconds = ((Date.now() - started) / 1000).toFixed(1);
    console.error(`seat ${this.args.seat}: ${this.moves} moves, ${this.stale} stale, game over at version ${version} (${seconds} s)`);
  }
}

await new Bot(parseArgs(process.argv.slice(2))).run();
