// Artifacts, Inc.: the market (rows A–C and the stacks D and E), the museums with their order
// boxes, the public cards, the underwater stack and the reputation track, and each player's two
// rows of asset cards (the side up, the dice placed this turn), artifacts, finds and money.

import { s, text, titleCase } from "../dom.js";
import { SEAT, box, die, panel, seatToken, stat, toActMark } from "./common.js";

const CATEGORY_FILL = { expedition: "#f3e1c7", business: "#d5efd8", vehicle: "#d4e6f7", facility: "#e6dcef" };
const CATEGORY_INK = { expedition: "#7a4b12", business: "#1f6427", vehicle: "#1d4f91", facility: "#5a3b73" };
const KIND_FILL = { fossil: "#c8b08a", scroll: "#efe3b0", gem: "#7fd1c7", statue: "#b7a7d6" };

function need(d) {
  if (d === "any" || d === "odd" || d === "even") return d;
  if (d.startsWith("!")) return `not ${d.slice(1)}`;
  if (d.endsWith("+")) return `${d.slice(0, -1)}+`;
  if (d.endsWith("-")) return `≤${d.slice(0, -1)}`;
  return d;
}

// One action slot in a few characters: the die it takes → what it gives.
export function actionText(a) {
  const per = a.per ? `+${a.per}/${a.category || a.find || "any"}` : "";
  switch (a.effect) {
    case "artifact":
      return `${need(a.die)} → ${a.amount} ${a.kind}`;
    case "artifact_adjacent":
      return `${need(a.die)} → ${a.amount}${per} ${a.kind}`;
    case "dollars":
      return `${need(a.die)} → $${a.amount}`;
    case "dollars_adjacent":
    case "dollars_finds":
      return `${need(a.die)} → $${a.amount}${per}`;
    case "buy":
      return `${need(a.die)} → buy`;
    case "museum":
      return `${need(a.die)} → sell`;
    case "collectors":
      return `${need(a.die)} → collectors`;
    default:
      return `${need(a.die)} → ${a.effect}`;
  }
}

// Text cut to what fits in `width` (about 6 units a character at the tiny size).
function clip(words, width) {
  const most = Math.floor(width / 6);
  return words.length > most ? words.slice(0, most - 1) + "…" : words;
}

// An asset card (w×h) with the side `level` up; `placed`: dice on its action slots this turn.
function assetCard(x, y, w, h, asset, level, attrs = {}, placed = new Map()) {
  const face = level === 2 ? asset.lv2 : asset.lv1;
  const ink = CATEGORY_INK[asset.category] || "#444";
  const out = [
    box(x, y, w, h, { fill: CATEGORY_FILL[asset.category] || "#eee", stroke: ink, "stroke-width": level === 2 ? 2.4 : 1.3 }),
    text(x + 4, y + 12, clip(face.name, w - 8), { class: "t t-tiny t-bold" }),
    text(x + w - 4, y + h - 5, `$${asset.cost}`, { class: "t t-tiny", "text-anchor": "end" }),
    text(x + 4, y + h - 5, clip(asset.id, w - 30), { class: "t t-tiny t-muted" }),
  ];
  if (level === 2) out.push(s("rect", { x: x + w - 26, y: y + h - 30, width: 22, height: 13, rx: 3, fill: ink }), text(x + w - 15, y + h - 20, "Lv2", { class: "t t-tiny t-on-dark", "text-anchor": "middle" }));
  let ay = y + 25;
  face.actions.forEach((a, k) => {
    const dice = placed.get(`${asset.id}#${k + 1}`);
    out.push(text(x + 4, ay, clip(actionText(a), dice ? w - 24 : w - 8), { class: "t t-tiny" }));
    if (dice) dice.forEach((v, d) => out.push(die(x + w - 17 - d * 15, ay - 10, 13, v, { "data-placed": `${asset.id}#${k + 1}` })));
    ay += 12;
  });
  const extras = [];
  if (face.reputation) extras.push(`★${face.reputation}`);
  if (face.adventurers) extras.push(`${face.adventurers} dice`);
  for (const ab of face.abilities || []) extras.push(`★${ab.per}/${ab.category || ab.find}`);
  if (extras.length) out.push(text(x + 4, ay, clip(extras.join(" · "), w - 8), { class: "t t-tiny t-bold", fill: ink }));
  return s("g", { class: "card", "data-card": asset.id, "data-level": level, ...attrs }, ...out);
}

// The dice the active seat placed this turn, from the public events (the view keeps only which
// slots are used): "card#action" -> dice.
function placedThisTurn(events, seat) {
  const placed = new Map();
  for (const ev of events) {
    if (ev.type === "artifacts.TurnStarted") placed.clear();
    if (ev.type === "artifacts.DicePlaced" && ev.payload.seat === seat) placed.set(`${ev.payload.card}#${ev.payload.action}`, ev.payload.dice);
  }
  return placed;
}

function marketPanel(view, assets) {
  const W = 420;
  const cw = 94;
  const ch = 64;
  const items = [];
  ["A", "B", "C"].forEach((row, r) => {
    const y = 34 + r * (ch + 8);
    items.push(text(12, y + 36, row, { class: "t t-big" }));
    items.push(text(12, y + 52, `${view.deck_sizes[row]}`, { class: "t t-tiny t-muted", "data-deck": row, "data-size": view.deck_sizes[row] }));
    view.market[row].forEach((id, i) => {
      const x = 30 + i * (cw + 4);
      const attrs = { "data-market": row, "data-slot": i + 1, "data-watch": `market.${row}.${i}` };
      items.push(id && assets.get(id) ? assetCard(x, y, cw, ch, assets.get(id), 1, attrs) : s("g", attrs, box(x, y, cw, ch, { class: "slot-empty" })));
    });
  });
  const y = 34 + 3 * (ch + 8);
  ["D", "E"].forEach((row, r) => {
    const x = 30 + r * 2 * (cw + 4);
    items.push(text(x - 18, y + 36, row, { class: "t t-big" }));
    const id = view.market[row][0];
    // Before set-up deals the market, a stack shows nothing (and is no slot of the view).
    const attrs = view.market[row].length ? { "data-market": row, "data-slot": 1, "data-watch": `market.${row}.0` } : {};
    if (view.deck_sizes[row] > 0) items.push(box(x + 3, y + 3, cw, ch, { class: "pile-under" }));
    items.push(id && assets.get(id) ? assetCard(x, y, cw, ch, assets.get(id), 1, attrs) : s("g", attrs, box(x, y, cw, ch, { class: "slot-empty" })));
    items.push(text(x + cw + 8, y + 36, `${view.deck_sizes[row]} below`, { class: "t t-tiny t-muted", "data-deck": row, "data-size": view.deck_sizes[row] }));
  });
  return panel("Market (under each letter: cards left in its deck)", W, y + ch + 16, { "data-part": "market" }, ...items);
}

function tablePanel(view, data, players, events) {
  const W = 420;
  const items = [];
  const museums = new Map(data.museums.map((m) => [m.id, m]));
  // Museums: each order box holds the cube of the seat that filled it.
  view.museums.forEach((mu, i) => {
    const m = museums.get(mu.museum);
    const x = 12 + (i % 2) * 204;
    const y = 34 + Math.floor(i / 2) * 84;
    const orders = view.museum_side === "2p" ? m.boxes_2p : m.boxes_3p;
    items.push(
      s("g", { class: "museum", "data-museum": mu.museum, "data-watch": `museums.${i}` },
        box(x, y, 198, 78, { fill: KIND_FILL[m.kind], stroke: "#57606a" }),
        text(x + 6, y + 14, m.name, { class: "t t-small t-bold" }),
        text(x + 192, y + 14, `${need(m.die)} · +$${m.bonus} · ★${m.majority}`, { class: "t t-tiny", "text-anchor": "end" }),
        orders.map((n, k) => {
          const bx = x + 6 + (k % 9) * 21;
          const by = y + 26 + Math.floor(k / 9) * 26;
          const seat = mu.boxes[k];
          return s("g", { class: "order-box", "data-box": k + 1, "data-filled-by": seat ?? "", "data-watch": `museums.${i}.boxes.${k}` },
            box(bx, by, 19, 22, { fill: "#fff", stroke: "#57606a" }),
            text(bx + 9.5, by + 15, String(n), { class: "t t-tiny", "text-anchor": "middle" }),
            seat !== null && seat !== undefined ? seatToken(bx + 9.5, by + 11, seat, 7) : null);
        }),
        text(x + 6, y + 72, view.majorities.length ? `majority: ${view.majorities[i] === null ? "nobody" : players[view.majorities[i]] ?? view.majorities[i]}` : `order boxes: how many ${m.kind}s`, { class: "t t-tiny t-muted" })),
    );
  });
  let y = 34 + 2 * 84 + 8;
  // The public cards, used by anyone on their turn.
  const placed = view.to_act.length ? placedThisTurn(events, view.to_act[0]) : new Map();
  data.public.forEach((card, i) => {
    const x = 12 + i * 204;
    const used = card.actions.map((_, k) => view.used.includes(`${card.id}#${k + 1}`));
    items.push(
      s("g", { class: "public-card", "data-card": card.id, "data-watch": card.actions.map((_, k) => `used#${card.id}#${k + 1}`).join(" ") },
        box(x, y, 198, 36, { fill: "#f4f5f7", stroke: "#57606a" }),
        text(x + 6, y + 14, card.name, { class: "t t-small t-bold" }),
        text(x + 6, y + 29, card.actions.map(actionText).join(" · "), { class: "t t-tiny" }),
        used.some(Boolean) ? (placed.get(`${card.id}#1`) || [0]).map((v, d) => (v ? die(x + 176 - d * 16, y + 4, 15, v) : text(x + 192, y + 14, "used", { class: "t t-tiny", "text-anchor": "end" }))) : null),
    );
  });
  y += 48;
  // The underwater stack (face up, lowest number on top) and the turn.
  const top = view.underwater_top;
  items.push(text(12, y + 4, top ? `Underwater: ${view.underwater.length} cards, top ${top.number} (dive with a sum ≥ ${top.number})` : "Underwater: none left", { class: "t t-small", "data-underwater": view.underwater.length, "data-watch": "underwater" }));
  y += 22;
  items.push(text(12, y + 4, `Round ${view.round} · order ${view.order.map((seat) => players[seat] ?? seat).join(", ")}${view.end_triggered ? " · last round" : ""}`, { class: "t t-small" }));
  y += 14;
  if (view.dice.length) {
    items.push(text(12, y + 18, "dice to place:", { class: "t t-small t-muted" }));
    view.dice.forEach((v, k) => items.push(die(100 + k * 26, y + 4, 22, v, { "data-unplaced": k, "data-watch": "dice" })));
    y += 30;
  }
  // The reputation track.
  y += 12;
  const end = view.end_reputation;
  const most = Math.max(end + 4, ...view.players.map((p) => p.reputation + 1));
  const step = (W - 30) / most;
  items.push(text(12, y + 2, `Reputation (the last round starts at ${end})`, { class: "t t-small t-bold" }));
  y += 10;
  for (let k = 0; k < most; k += 1) {
    items.push(box(14 + k * step, y, step - 1.5, 16, { class: k === end ? "rep-cell end" : "rep-cell" }));
    if (k % 5 === 0 || k === end) items.push(text(14 + k * step + step / 2, y + 12, String(k), { class: "t t-tiny", "text-anchor": "middle" }));
  }
  view.players.forEach((p, seat) =>
    items.push(s("rect", { x: 14 + p.reputation * step + 1, y: y + 18 + seat * 8, width: step - 3, height: 7, fill: SEAT[seat % SEAT.length], stroke: "#1b1f24", "stroke-width": 0.8, "data-seat": seat, "data-reputation": p.reputation, "data-watch": `players.${seat}.reputation` })),
  );
  y += 22 + view.players.length * 8;
  return panel("Museums, public cards, underwater, reputation", W, y + 10, { "data-part": "table" }, ...items);
}

function playerPanel(view, p, name, assets, data, events) {
  // Wide enough for every column the player's rows reach (on a phone it scales down).
  const cols = p.cards.map((c) => c.col);
  const minCol = Math.min(...cols, 1);
  const maxCol = Math.max(...cols, 1);
  const span = maxCol - minCol + 1;
  const W = Math.max(420, 24 + span * 86 - 4);
  const items = [];
  const toAct = view.to_act.includes(p.seat);
  items.push(seatToken(W - 24, 18, p.seat, 11));
  if (toAct) items.push(toActMark(W - 104, 22));
  items.push(stat(12, 44, "dollars", `$${p.dollars}`, { "data-dollars": p.dollars, "data-watch": `players.${p.seat}.dollars` }));
  items.push(stat(80, 44, "reputation", p.reputation, { "data-reputation": p.reputation, "data-watch": `players.${p.seat}.reputation` }));
  // Artifact cubes by kind.
  items.push(text(170, 44, "artifacts", { class: "t t-small t-muted" }));
  Object.entries(p.artifacts).forEach(([kind, n], k) => {
    const x = 170 + k * 58;
    items.push(s("g", { "data-artifact": kind, "data-count": n, "data-watch": `players.${p.seat}.artifacts.${kind}` },
      s("rect", { x, y: 49, width: 14, height: 14, rx: 2, fill: KIND_FILL[kind], stroke: "#1b1f24" }),
      text(x + 18, 61, `${n} ${kind}`, { class: "t t-tiny" })));
  });
  // The two rows of cards, laid out by (row, col) as the player placed them.
  const cw = Math.min(96, (W - 24 - (span - 1) * 4) / span);
  const ch = 74;
  const placed = toAct ? placedThisTurn(events, p.seat) : new Map();
  for (const c of p.cards) {
    const x = 12 + (c.col - minCol) * (cw + 4);
    const y = 76 + (c.row - 1) * (ch + 6);
    const asset = assets.get(c.card);
    if (!asset) continue;
    items.push(assetCard(x, y, cw, ch, asset, c.level, { "data-seat": p.seat, "data-row": c.row, "data-col": c.col, "data-watch": `players.${p.seat}.cards.${p.cards.indexOf(c)}` }, placed));
  }
  const rows = Math.max(1, ...p.cards.map((c) => c.row));
  let y = 76 + rows * (ch + 6) + 8;
  const finds = p.underwater.map((id) => data.underwater.find((u) => u.id === id)).filter(Boolean);
  items.push(text(12, y + 4, finds.length ? `Underwater finds: ${finds.map((u) => `${titleCase(u.find)} (${u.number})`).join(", ")}` : "No underwater finds", { class: "t t-tiny", "data-finds": finds.length, "data-watch": `players.${p.seat}.underwater` }));
  y += 14;
  return panel(name, W, y + 6, {
    "data-part": "player",
    "data-seat": p.seat,
    "data-to-act": toAct ? "true" : "false",
    class: toAct ? "panel acting" : "panel",
    label: `${name}, seat ${p.seat}: ${p.reputation} reputation, ${p.dollars} dollars${toAct ? ", to play" : ""}`,
  }, ...items);
}

export function draw(view, ctx) {
  const assets = new Map(ctx.data.assets.map((a) => [a.id, a]));
  const events = ctx.events || [];
  return [
    marketPanel(view, assets),
    tablePanel(view, ctx.data, ctx.players, events),
    ...view.players.map((p) => playerPanel(view, p, ctx.players[p.seat] || `seat ${p.seat}`, assets, ctx.data, events)),
  ];
}
