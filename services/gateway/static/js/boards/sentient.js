// Sentient: the factory row (four bot cards, the round's investors with their 1-VP chips between
// and beside them, influence and agents per slot), the turn-order stacks, and each player's board:
// five dice with the four network slots between them and the cards connected there, agents and
// assistants left, investors won, VP so far.

import { s, text, titleCase } from "../dom.js";
import { SEAT, box, die, panel, seatToken, stat, toActMark } from "./common.js";

export const TYPE_FILL = {
  information: "#cfe3fa",
  transport: "#fbeaa0",
  industry: "#e3d8cc",
  military: "#f7c9c1",
  service: "#cdebcf",
};
const TYPE_INK = {
  information: "#1d4f91",
  transport: "#6b5300",
  industry: "#5b4636",
  military: "#8f2414",
  service: "#1f6427",
};

// What a card scores, in a few words (its values from the data file). L and R are the dice on
// the card's left and right.
export function scoring(card) {
  const t = card.threshold;
  const vp = `${card.vp} VP`;
  const minus = (what) => [`VP = ${what}`, card.offset ? `minus ${card.offset}` : ""];
  switch (card.kind) {
    case "match":
      return [`a ${card.number} beside:`, `one ${card.points_one} · both ${card.points_both}`];
    case "left_greater":
      return ["L > R", vp];
    case "left_less":
      return ["L < R", vp];
    case "equal":
      return ["L = R", vp];
    case "differ_by_one":
      return ["L, R differ by 1", vp];
    case "both_odd":
      return ["both odd", vp];
    case "both_even":
      return ["both even", vp];
    case "odd_and_even":
      return ["one odd, one even", vp];
    case "left_odd_right_even":
      return ["L odd, R even", vp];
    case "left_even_right_odd":
      return ["L even, R odd", vp];
    case "sum_at_least":
      return [`L + R ≥ ${t}`, vp];
    case "sum_at_most":
      return [`L + R ≤ ${t}`, vp];
    case "difference_at_least":
      return [`|L − R| ≥ ${t}`, vp];
    case "difference_at_most":
      return [`|L − R| ≤ ${t}`, vp];
    case "sum_minus":
      return minus("L + R");
    case "left_die":
      return minus("L");
    case "right_die":
      return minus("R");
    case "lower_die":
      return minus("lower die");
    case "higher_die":
      return minus("higher die");
    case "difference":
      return minus("|L − R|");
    default:
      return [card.kind, ""];
  }
}

// A bot card, w×h at (x, y): the band with its corner modifiers (+ raises, - lowers the die on
// that side, = leaves it), its id and type, what it scores.
function botCard(x, y, w, h, card, attrs = {}, label = "") {
  if (!card) {
    return s("g", attrs, box(x, y, w, h, { class: "slot-empty" }), text(x + w / 2, y + h / 2 + 4, label || "empty", { class: "t t-small t-muted", "text-anchor": "middle" }));
  }
  const [line1, line2] = scoring(card);
  const ink = TYPE_INK[card.type];
  return s(
    "g",
    { class: "card", "data-card": card.id, "data-type": card.type, ...attrs },
    box(x, y, w, h, { fill: TYPE_FILL[card.type], stroke: ink, "stroke-width": 1.5 }),
    s("rect", { x, y, width: w, height: 18, rx: 5, fill: ink }),
    text(x + 5, y + 15, card.left, { class: "t t-mod t-on-dark", "data-corner": "left" }),
    text(x + w - 5, y + 15, card.right, { class: "t t-mod t-on-dark", "text-anchor": "end", "data-corner": "right" }),
    label ? text(x + w / 2, y + 13, label, { class: "t t-tiny t-on-dark", "text-anchor": "middle" }) : null,
    text(x + w / 2, y + 33, card.id, { class: "t t-small t-bold", "text-anchor": "middle" }),
    text(x + w / 2, y + 45, titleCase(card.type), { class: "t t-tiny", fill: ink, "text-anchor": "middle" }),
    text(x + w / 2, y + 60, line1, { class: "t t-tiny", "text-anchor": "middle" }),
    line2 ? text(x + w / 2, y + 73, line2, { class: "t t-tiny t-bold", "text-anchor": "middle" }) : null,
  );
}

function investorToken(x, y, inv, attrs = {}) {
  return s(
    "g",
    { class: "investor", "data-investor": inv.investor, ...attrs },
    s("polygon", {
      points: [0, 1, 2, 3, 4, 5].map((k) => {
        const a = (Math.PI / 3) * k + Math.PI / 6;
        return `${x + 17 * Math.cos(a)},${y + 17 * Math.sin(a)}`;
      }).join(" "),
      fill: TYPE_FILL[inv.type],
      stroke: TYPE_INK[inv.type],
      "stroke-width": 1.6,
    }),
    text(x, y + 4, titleCase(inv.type).slice(0, 4), { class: "t t-tiny t-bold", "text-anchor": "middle" }),
    // Its 1-VP chip lies under it until the round is scored.
    s("circle", { cx: x + 14, cy: y + 14, r: 8, class: "chip" }),
    text(x + 14, y + 17.5, "1", { class: "t t-tiny t-bold", "text-anchor": "middle" }),
  );
}

function factoryPanel(view, cards, players) {
  const W = 420;
  const cw = 88;
  const gap = 16;
  const x0 = (W - 4 * cw - 3 * gap) / 2;
  const cardY = 78;
  const ch = 84;
  const n = players.length;
  const items = [];
  view.factory.forEach((slot, i) => {
    const x = x0 + i * (cw + gap);
    items.push(botCard(x, cardY, cw, ch, slot.card ? cards.get(slot.card) : null, { "data-slot": slot.slot, "data-watch": `factory.${i}.card` }, `slot ${slot.slot}`));
    // Influence per seat on this slot: its agents (pawns) and influence assistants (squares).
    const rowY = cardY + ch + 8;
    for (let seat = 0; seat < n; seat += 1) {
      const inf = slot.influence[seat] || 0;
      const agents = slot.agents[seat] || 0;
      const y = rowY + seat * 20;
      const pieces = [];
      for (let k = 0; k < inf && k < 7; k += 1) {
        const px = x + 20 + k * 9;
        pieces.push(
          k < agents
            ? s("path", { d: `M${px} ${y + 16} L${px + 1.6} ${y + 9} A2.8 2.8 0 1 1 ${px + 5.4} ${y + 9} L${px + 7} ${y + 16} Z`, class: "pawn", fill: SEAT[seat % SEAT.length] })
            : s("rect", { x: px, y: y + 7, width: 7, height: 7, rx: 1, class: "assistant", fill: SEAT[seat % SEAT.length] }),
        );
      }
      items.push(
        s(
          "g",
          { class: "influence", "data-slot": slot.slot, "data-seat": seat, "data-influence": inf, "data-agents": agents, "data-watch": `factory.${i}.influence.${seat} factory.${i}.agents.${seat}`, role: "img", "aria-label": `seat ${seat}: influence ${inf}, ${agents} agents` },
          seatToken(x + 7, y + 9, seat, 7),
          pieces,
          text(x + cw, y + 14, inf ? String(inf) : "–", { class: "t t-small t-bold", "text-anchor": "end" }),
        ),
      );
    }
  });
  view.investors.forEach((inv, pos) => {
    if (!inv) return;
    // Positions 1-3 lie between two slots; 0 and 4 beside the first and the last.
    const x = pos === 0 ? x0 + 18 : pos === 4 ? x0 + 4 * cw + 3 * gap - 18 : x0 + pos * (cw + gap) - gap / 2;
    items.push(investorToken(x, 50, inv, { "data-position": pos, "data-watch": `investors.${pos}` }));
  });
  const h = cardY + ch + 12 + n * 20 + 24;
  items.push(text(12, h - 10, `deck ${view.deck_size} · discard ${view.discard.length}`, { class: "t t-small t-muted", "data-deck": view.deck_size, "data-watch": "deck_size discard" }));
  return panel(`Factory · round ${view.round || "–"}`, W, h, { "data-part": "factory" }, ...items);
}

function orderPanel(view, players) {
  const W = 420;
  const items = [];
  const stack = (label, order, y, current, watch) => {
    items.push(text(12, y + 4, label, { class: "t t-small" }));
    order.forEach((seat, i) => {
      const x = 170 + i * 40;
      const acting = current && view.to_act.includes(seat);
      items.push(
        s(
          "g",
          { "data-order": current ? "current" : "next", "data-index": i, "data-seat": seat, "data-watch": watch },
          acting ? s("circle", { cx: x, cy: y, r: 16, class: "ring" }) : null,
          seatToken(x, y, seat, 12),
        ),
      );
    });
    if (!order.length) items.push(text(158, y + 4, "nobody yet", { class: "t t-small t-muted" }));
  };
  stack("this round (top first)", view.turn_order, 48, true, "turn_order");
  stack("next round", view.next_turn_order, 84, false, "next_turn_order");
  // Scores so far: VP from scored cards and chips (investors count only at the end).
  items.push(text(12, 124, view.final_scores.length ? "Final scores" : "VP so far", { class: "t t-small t-bold" }));
  view.players.forEach((p, i) => {
    const x = 12 + i * 102;
    const score = view.final_scores.length ? view.final_scores[p.seat] : p.vp;
    items.push(seatToken(x + 9, 142, p.seat, 8), text(x + 22, 147, `${players[p.seat] ?? "seat " + p.seat}`.slice(0, 13), { class: "t t-tiny" }));
    items.push(text(x + 22, 162, String(score), { class: "t t-bold", "data-score-seat": p.seat, "data-watch": `players.${p.seat}.vp final_scores` }));
  });
  return panel("Turn order and scores", W, 176, { "data-part": "turn-order", label: `Turn order: ${view.turn_order.map((seat) => players[seat]).join(", ")}` }, ...items);
}

function playerPanel(view, p, name, cards, sides) {
  const W = 420;
  const items = [];
  const toAct = view.to_act.includes(p.seat);
  items.push(seatToken(W - 24, 18, p.seat, 11));
  if (toAct) items.push(toActMark(W - 104, 22));
  const side = sides.get(p.board_side);
  items.push(text(12, 42, `${side ? side.name : p.board_side} board · starting investor ${p.starting_investor || "–"}`, { class: "t t-small t-muted" }));
  // The network: dice 0..4 with slot i between die i-1 and die i.
  const dx = 86;
  const x0 = 14;
  const dieY = 56;
  p.dice.forEach((value, i) => {
    items.push(die(x0 + i * dx, dieY, 38, value, { "data-seat": p.seat, "data-die": i, "data-watch": `players.${p.seat}.dice.${i}` }));
  });
  // Slot i+1 lies between die i and die i+1: its card straddles the gap, under the dice.
  p.network.forEach((cid, i) => {
    const x = x0 + i * dx + 19 + dx / 2 - 39;
    const card = cid ? cards.get(cid) : null;
    const attrs = { "data-seat": p.seat, "data-network": i + 1, "data-watch": `players.${p.seat}.network.${i}` };
    items.push(s("line", { x1: x + 39, y1: dieY + 38, x2: x + 39, y2: dieY + 46, class: "link" }));
    items.push(
      card
        ? botCard(x, dieY + 46, 78, 82, card, attrs)
        : s(
            "g",
            { ...attrs, "data-card": "" },
            box(x, dieY + 46, 78, 82, { class: "slot-empty" }),
            text(x + 39, dieY + 90, `slot ${i + 1}`, { class: "t t-tiny t-muted", "text-anchor": "middle" }),
          ),
    );
  });
  const y = dieY + 150;
  items.push(stat(12, y, "VP", p.vp, { "data-seat": p.seat, "data-vp": p.vp, "data-watch": `players.${p.seat}.vp` }));
  items.push(stat(58, y, "agents", p.agents, { "data-watch": `players.${p.seat}.agents` }));
  items.push(stat(116, y, "assistants", p.assistants, { "data-watch": `players.${p.seat}.assistants` }));
  items.push(stat(192, y, "passed", p.passed ? "yes" : "no", { "data-watch": `players.${p.seat}.passed` }));
  const won = p.investor_types.slice(1);
  items.push(text(250, y, "investors won", { class: "t t-small t-muted" }));
  won.forEach((type, i) =>
    items.push(
      s("g", { "data-watch": `players.${p.seat}.investors` },
        s("rect", { x: 250 + i * 34, y: y + 5, width: 31, height: 16, rx: 3, fill: TYPE_FILL[type], stroke: TYPE_INK[type] }),
        text(265.5 + i * 34, y + 17, titleCase(type).slice(0, 4), { class: "t t-tiny", "text-anchor": "middle" })),
    ),
  );
  if (!won.length) items.push(text(250, y + 17, "none yet", { class: "t t-small t-muted" }));
  items.push(text(12, y + 44, `${p.collected.length} cards kept from earlier rounds`, { class: "t t-small t-muted", "data-watch": `players.${p.seat}.collected` }));
  const score = view.final_scores.length ? ` · final ${view.final_scores[p.seat]}` : "";
  return panel(`${name}${score}`, W, y + 56, {
    "data-part": "player",
    "data-seat": p.seat,
    "data-to-act": toAct ? "true" : "false",
    class: toAct ? "panel acting" : "panel",
    label: `${name}, seat ${p.seat}: ${p.vp} VP, dice ${p.dice.join(" ")}${toAct ? ", to play" : ""}`,
  }, ...items);
}

export function draw(view, ctx) {
  const cards = new Map(ctx.data.cards.map((c) => [c.id, c]));
  const sides = new Map(ctx.data.board_sides.map((b) => [b.id, b]));
  return [
    factoryPanel(view, cards, ctx.players),
    orderPanel(view, ctx.players),
    ...view.players.map((p) => playerPanel(view, p, ctx.players[p.seat] || `seat ${p.seat}`, cards, sides)),
  ];
}
