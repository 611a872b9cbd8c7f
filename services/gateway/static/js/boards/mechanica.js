// Mechanica: the shop wheel (the improvements on its 7/5/3/1 spaces and the Recycler beside the
// cheapest one), the two blueprint piles, and each factory: the printed belts (the arrow a bot
// leaves a square by), the improvements, trucks and forks on it, the bots in their holes (input
// holes ringed), the wallet and the vault.

import { s, text } from "../dom.js";
import { box, panel, seatToken, stat, toActMark } from "./common.js";

const MODEL_FILL = { basic: "#b6bec7", plus: "#56b4e9", deluxe: "#e6b800" };
const AREA_FILL = { start: "#dff3e4", floor: "#f1f3f5", dock: "#ddeefa" };
const ARROW_ROT = { ">": 0, v: 90, "^": -90 };
const FORK_ARROW = { right: ">", up: "^", down: "v" };
const TRUCKS = { small: "Small truck", big: "Big truck", huge: "Huge truck" };

function kindOf(pieceId, kinds) {
  return kinds.get(String(pieceId).replace(/-\d+$/, "")) || null;
}

// A bot of `model` in a hole (empty: a ring only).
function hole(x, y, r, model, input, attrs = {}) {
  return s(
    "g",
    { class: "hole", "data-model": model || "", ...attrs },
    input ? s("circle", { cx: x, cy: y, r: r + 2.5, class: "input-ring" }) : null,
    s("circle", { cx: x, cy: y, r, fill: model ? MODEL_FILL[model] || "#999" : "#fff", stroke: "#1b1f24", "stroke-width": 1 }),
    model ? text(x, y + 3.5, model[0].toUpperCase(), { class: "t t-tiny t-bold", "text-anchor": "middle" }) : null,
  );
}

function shopPanel(view, data, kinds, players) {
  const W = 420;
  const items = [];
  const cx = 112;
  const cy = 140;
  const R = 92;
  // Five sectors clockwise from the top: the price spaces, most expensive first, then the
  // Recycler one notch past the cheapest.
  const spaces = [...view.shop.map((sp) => ({ ...sp })), { recycler: true }];
  const n = spaces.length;
  spaces.forEach((sp, i) => {
    const a0 = -Math.PI / 2 - Math.PI / n + (i * 2 * Math.PI) / n;
    const a1 = a0 + (2 * Math.PI) / n;
    const p = (a, r) => `${(cx + r * Math.cos(a)).toFixed(1)},${(cy + r * Math.sin(a)).toFixed(1)}`;
    const mid = (a0 + a1) / 2;
    const lx = cx + 58 * Math.cos(mid);
    const ly = cy + 58 * Math.sin(mid);
    const kind = sp.improvement ? kindOf(sp.improvement, kinds) : null;
    const words = sp.recycler ? ["Recycler"] : kind ? kind.name.split(" ") : ["empty"];
    items.push(
      s(
        "g",
        sp.recycler
          ? { class: "wheel-space recycler", "data-recycler": "true", "data-watch": "discard" }
          : { class: "wheel-space", "data-price": sp.price, "data-improvement": sp.improvement, "data-watch": `shop.${i}` },
        s("path", { d: `M${cx},${cy} L${p(a0, R)} A${R},${R} 0 0 1 ${p(a1, R)} Z`, class: sp.recycler ? "sector recycler" : sp.improvement ? "sector full" : "sector" }),
        sp.recycler
          ? null
          : s("g", {}, s("circle", { cx: cx + 80 * Math.cos(mid), cy: cy + 80 * Math.sin(mid), r: 10, class: "coin" }),
              text(cx + 80 * Math.cos(mid), cy + 80 * Math.sin(mid) + 4, String(sp.price), { class: "t t-small t-bold", "text-anchor": "middle" })),
        words.map((w, k) => text(lx, ly - 6 * (words.length - 1) + k * 12, w, { class: `t t-tiny${sp.improvement || sp.recycler ? " t-bold" : " t-muted"}`, "text-anchor": "middle" })),
      ),
    );
  });
  items.push(s("circle", { cx, cy, r: 12, class: "hub" }));
  const x = 226;
  items.push(text(x, 50, `Workday ${view.workday}`, { class: "t t-bold", "data-workday": view.workday }));
  items.push(text(x, 70, `first player ${players[view.first_player] ?? view.first_player}`, { class: "t t-small t-muted" }));
  items.push(text(x, 94, `Stack: ${view.stack_size} · Extras: ${view.extras_size}`, { class: "t t-small", "data-stack": view.stack_size, "data-watch": "stack_size extras_size" }));
  items.push(text(x, 112, view.bought_this_turn ? "bought this turn: selling is over" : "", { class: "t t-tiny t-muted" }));
  items.push(text(x, 136, `In the Recycler (${view.discard.length}):`, { class: "t t-small t-bold" }));
  view.discard.slice(-6).forEach((id, k) => {
    const kind = kindOf(id, kinds);
    items.push(text(x, 154 + k * 15, kind ? `${kind.name} (${id.split("-").pop()})` : id, { class: "t t-tiny", "data-watch": `discard#${id}` }));
  });
  return panel("Shop wheel", W, 246, { "data-part": "shop" }, ...items);
}

function blueprintPanel(view, data) {
  const W = 420;
  const items = [];
  view.blueprints.forEach((bp, i) => {
    const x = 12 + i * 204;
    const y = 36;
    items.push(
      s(
        "g",
        { class: "blueprint", "data-pile": bp.pile, "data-blueprint": bp.face_up, "data-watch": `blueprints.${i}` },
        // The pile under the face-up card.
        bp.size > 1 ? box(x + 4, y + 4, 190, 84, { class: "bp-pile" }) : null,
        bp.face_up
          ? s("g", {},
              box(x, y, 190, 84, { class: view.sideways ? "bp-card sideways" : "bp-card" }),
              text(x + 8, y + 18, `${bp.face_up}`, { class: "t t-small t-bold" }),
              text(x + 182, y + 18, `pile ${bp.pile} · ${bp.size} left`, { class: "t t-tiny t-muted", "text-anchor": "end" }),
              bp.bots.map((m, k) => hole(x + 20 + k * 26, y + 44, 10, m, false)),
              text(x + 8, y + 76, `vault +${bp.money}`, { class: "t t-small t-bold" }),
              bp.completed_by.length ? text(x + 182, y + 76, "done by", { class: "t t-tiny t-muted", "text-anchor": "end" }) : null,
              bp.completed_by.map((seat, k) => seatToken(x + 118 - k * 18, y + 72, seat, 7)))
          : s("g", {}, box(x, y, 190, 84, { class: "slot-empty" }), text(x + 95, y + 46, `pile ${bp.pile}: empty`, { class: "t t-small t-muted", "text-anchor": "middle" })),
      ),
    );
  });
  if (view.sideways) items.push(text(12, 142, "Both blueprints are sideways: none may be completed until they are replaced", { class: "t t-tiny t-muted" }));
  return panel("Blueprints", W, view.sideways ? 152 : 134, { "data-part": "blueprints" }, ...items);
}

function factoryPanel(view, p, name, kinds, data) {
  const W = 420;
  const items = [];
  const toAct = view.to_act.includes(p.seat);
  items.push(seatToken(W - 24, 18, p.seat, 11));
  if (toAct) items.push(toActMark(W - 104, 22));
  const { rows, cols, arrows, areas } = view.board;
  const cell = Math.min(78, (W - 24) / cols);
  const f = p.factory;
  // [{row, col, direction}]; a read model projected before forks were listed keys them "row,col".
  const forks = Array.isArray(f.forks)
    ? f.forks
    : Object.entries(f.forks || {}).map(([at, direction]) => ({ row: +at.split(",")[0], col: +at.split(",")[1], direction }));
  const x0 = 12;
  const y0 = 36;
  for (let r = 0; r < rows; r += 1) {
    for (let c = 0; c < cols; c += 1) {
      const area = areas[r][c];
      if (!area) continue;
      const sq = r * cols + c;
      const x = x0 + c * cell;
      const y = y0 + r * cell;
      const piece = f.pieces[sq];
      const holes = f.holes[sq] || [];
      const kind = piece && !TRUCKS[piece] && piece !== "basic_fabricator" ? kindOf(piece, kinds) : null;
      const label = TRUCKS[piece] || (piece === "basic_fabricator" ? "Basic Fabricator" : kind ? kind.name : "");
      const arrow = arrows[r][c];
      const g = [box(x + 1, y + 1, cell - 2, cell - 2, { fill: AREA_FILL[area], stroke: "#8c959f" })];
      // The printed belt arrow, at the edge a bot leaves by (the dock has none: the belt ends).
      if (arrow in ARROW_ROT) {
        g.push(s("polygon", { points: `${x + cell - 3},${y + cell / 2} ${x + cell - 11},${y + cell / 2 - 6} ${x + cell - 11},${y + cell / 2 + 6}`, class: "belt-arrow", transform: `rotate(${ARROW_ROT[arrow]} ${x + cell / 2} ${y + cell / 2})` }));
      }
      if (piece) {
        g.push(box(x + 5, y + 5, cell - 10, cell - 10, { class: TRUCKS[piece] || kinds.get(piece)?.effect === "truck" || kind?.effect === "truck" ? "piece truck" : "piece" }));
        label.split(" ").slice(0, 2).forEach((w, k) => g.push(text(x + cell / 2, y + 18 + k * 11, w, { class: "t t-tiny t-bold", "text-anchor": "middle" })));
        if (kind && piece.match(/-\d+$/)) g.push(text(x + cell - 8, y + cell - 8, piece.split("-").pop(), { class: "t t-tiny t-muted", "text-anchor": "end" }));
      }
      const inputs = kind ? kind.inputs || 0 : 0;
      const hr = 7;
      const span = holes.length * (2 * hr + 4) - 4;
      holes.forEach((m, k) => {
        const hx = x + cell / 2 - span / 2 + hr + k * (2 * hr + 4);
        const hy = piece ? y + cell - 18 : y + cell / 2;
        g.push(hole(hx, hy, hr, m, k < inputs, { "data-seat": p.seat, "data-square": `${r + 1},${c + 1}`, "data-hole": k, "data-watch": `players.${p.seat}.factory.holes.${sq}.${k}` }));
      });
      const fork = forks.find((k) => k.row === r + 1 && k.col === c + 1)?.direction;
      if (fork) {
        const fx = x + 12;
        const fy = y + cell - 12;
        g.push(s("g", { class: "fork", "data-fork": fork, "data-seat": p.seat, "data-square": `${r + 1},${c + 1}`, "data-watch": `players.${p.seat}.factory.forks` },
          s("circle", { cx: fx, cy: fy, r: 8, class: "fork-bg" }),
          s("polygon", { points: `${fx + 6},${fy} ${fx - 3},${fy - 5} ${fx - 3},${fy + 5}`, class: "fork-arrow", transform: `rotate(${ARROW_ROT[FORK_ARROW[fork]]} ${fx} ${fy})` })));
      }
      items.push(s("g", { class: "square", "data-seat": p.seat, "data-square": `${r + 1},${c + 1}`, "data-piece": piece || "", "data-area": area, "data-watch": `players.${p.seat}.factory.pieces.${sq}` }, ...g));
    }
  }
  const y = y0 + rows * cell + 14;
  items.push(stat(12, y, "wallet", p.wallet, { "data-wallet": p.wallet, "data-watch": `players.${p.seat}.wallet` }));
  items.push(stat(84, y, "vault", p.vault, { "data-vault": p.vault, "data-watch": `players.${p.seat}.vault` }));
  items.push(stat(150, y, "improvements", p.improvements_value, { "data-watch": `players.${p.seat}.improvements_value` }));
  items.push(stat(260, y, "blueprints done", p.blueprints_done.length, { "data-watch": `players.${p.seat}.blueprints_done` }));
  const score = view.final_scores.length ? ` · final ${view.final_scores[p.seat]}` : "";
  void data;
  return panel(`${name}${score}`, W, y + 30, {
    "data-part": "player",
    "data-seat": p.seat,
    "data-to-act": toAct ? "true" : "false",
    class: toAct ? "panel acting" : "panel",
    label: `${name}, seat ${p.seat}: wallet ${p.wallet}, vault ${p.vault}${toAct ? ", to play" : ""}`,
  }, ...items);
}

export function draw(view, ctx) {
  const kinds = new Map(ctx.data.kinds.map((k) => [k.id, k]));
  return [
    shopPanel(view, ctx.data, kinds, ctx.players),
    blueprintPanel(view, ctx.data),
    ...view.players.map((p) => factoryPanel(view, p, ctx.players[p.seat] || `seat ${p.seat}`, kinds, ctx.data)),
  ];
}
