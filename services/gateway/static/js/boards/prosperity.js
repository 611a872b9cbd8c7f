// Prosperity: the decade deck and the counts called this decade, the research board (both
// research tracks with every player's marker, and the tiles for sale by side and level), and each
// player's board: its eleven spaces with the tile on top (name and symbols from the data file),
// energy and ecology totals, money, points and the pollution track.

import { s, text, titleCase } from "../dom.js";
import { box, lines, panel, seatToken, stat, toActMark } from "./common.js";

const SPACE_FILL = { pink: "#f9d3e3", yellow: "#fbeeb0", green: "#cdeccd", blue: "#cfe3fa" };
const SPACE_INK = { pink: "#8a1c4b", yellow: "#6b5300", green: "#1f6427", blue: "#1d4f91" };
const TYPE_COLOUR = { power: "pink", supplies: "yellow", transport: "green", infrastructure: "blue" };
const SYMBOLS = ["energy", "ecology", "capital", "research", "prosperity"];

// The five symbols as small pictures: bolt, leaf, coin, flask, star.
export function icon(kind, x, y, r = 7, attrs = {}) {
  const g = (...c) => s("g", { class: `icon icon-${kind}`, ...attrs }, ...c);
  switch (kind) {
    case "energy":
      return g(s("polygon", { points: `${x + 0.2 * r},${y - r} ${x - 0.6 * r},${y + 0.15 * r} ${x - 0.05 * r},${y + 0.15 * r} ${x - 0.3 * r},${y + r} ${x + 0.65 * r},${y - 0.25 * r} ${x + 0.05 * r},${y - 0.25 * r}`, fill: "#f2c200", stroke: "#5a4600", "stroke-width": 0.8 }));
    case "ecology":
      return g(s("path", { d: `M${x - r} ${y + r} C ${x - r} ${y - r}, ${x + r * 0.2} ${y - r}, ${x + r} ${y - r} C ${x + r} ${y}, ${x} ${y + r}, ${x - r} ${y + r} Z`, fill: "#3fa34d", stroke: "#1f5127", "stroke-width": 0.8 }));
    case "capital":
      return g(s("circle", { cx: x, cy: y, r: r * 0.9, fill: "#e0b94a", stroke: "#6b4f00", "stroke-width": 0.8 }), text(x, y + r * 0.42, "€", { class: "t", "font-size": r * 1.2, "text-anchor": "middle" }));
    case "research":
      return g(s("path", { d: `M${x - 0.25 * r} ${y - r} h${0.5 * r} v${0.7 * r} l${0.65 * r} ${1.3 * r} h${-1.8 * r} l${0.65 * r} ${-1.3 * r} z`, fill: "#7fb3e6", stroke: "#1d4f91", "stroke-width": 0.8 }));
    case "prosperity": {
      const pts = [];
      for (let k = 0; k < 10; k += 1) {
        const a = -Math.PI / 2 + (k * Math.PI) / 5;
        const rr = k % 2 ? r * 0.45 : r;
        pts.push(`${(x + rr * Math.cos(a)).toFixed(2)},${(y + rr * Math.sin(a)).toFixed(2)}`);
      }
      return g(s("polygon", { points: pts.join(" "), fill: "#b07cc6", stroke: "#4b2060", "stroke-width": 0.8 }));
    }
    default:
      return g();
  }
}

function symbolsWidth(face) {
  let w = 0;
  for (const kind of SYMBOLS) {
    const n = face[kind] || 0;
    if (n) w += 14 + (kind === "energy" || kind === "ecology" ? 1 + String(Math.abs(n)).length : String(n).length) * 6.5;
  }
  if (face.points) w += 14 + (2 + String(face.points).length) * 6.5 + 20;
  if (face.clean) w += 50;
  return w;
}

// A face's symbols: energy and ecology are signed impacts, the rest counts; past `width` they
// go on to a second line.
function symbols(face, x, y, attrs = {}, width = 1000) {
  const out = [];
  let cx = x;
  let cy = y;
  for (const kind of SYMBOLS) {
    const n = face[kind] || 0;
    if (!n) continue;
    const label = kind === "energy" || kind === "ecology" ? (n > 0 ? `+${n}` : `−${-n}`) : String(n);
    const w = 14 + label.length * 6.5;
    if (cx + w > x + width && cx > x) {
      cx = x;
      cy += 12;
    }
    out.push(icon(kind, cx + 5, cy - 4, 5.5));
    out.push(text(cx + 12, cy, label, { class: "t t-tiny t-bold" }));
    cx += w;
  }
  if (face.points) out.push(icon("prosperity", cx + 6, y - 4, 6), text(cx + 14, y, `+${face.points} pts`, { class: "t t-tiny t-bold" }));
  if (face.clean) out.push(text(cx, y, `clean ${face.clean}`, { class: "t t-tiny t-bold" }));
  return s("g", attrs, ...out);
}

function clip(words, width) {
  const most = Math.max(3, Math.floor(width / 5.8));
  return words.length > most ? words.slice(0, most - 1) + "…" : words;
}

function decadePanel(view, tiles, players) {
  const W = 420;
  const items = [];
  const phase = { setup: "choosing boards", count: "counting a drawn tile", actions: "actions", final: "final scoring" }[view.phase] || view.phase;
  items.push(text(12, 44, `Turn ${view.turn} of ${view.turns} · ${view.over ? "game over" : phase}`, { class: "t", "data-turn": view.turn }));
  items.push(text(12, 62, `first player ${players[view.first_player] ?? view.first_player} · ${view.actions_left} action${view.actions_left === 1 ? "" : "s"} left this turn`, { class: "t t-small t-muted" }));
  // The deck's backs: how many tiles of each decade are still to come.
  const backs = new Map();
  for (const d of view.deck_backs) backs.set(d, (backs.get(d) || 0) + 1);
  items.push(text(12, 86, `Deck: ${view.deck_size} tiles`, { class: "t t-small t-bold", "data-deck": view.deck_size, "data-watch": "deck_size" }));
  let x = 110;
  for (const [decade, n] of backs) {
    items.push(s("g", { "data-watch": "deck_backs" }, box(x, 74, 52, 18, { class: "decade-back" }), text(x + 26, 87, `${decade} ×${n}`, { class: "t t-tiny t-on-dark", "text-anchor": "middle" })));
    x += 56;
    if (x > W - 56) break;
  }
  // The counts already called in the decade being played: the drawn tiles of that decade.
  const lastDrawn = view.drawn.length ? tiles.get(view.drawn.at(-1)) : null;
  const decade = lastDrawn ? lastDrawn.decade : null;
  const called = decade ? view.drawn.map((id) => tiles.get(id)).filter((t) => t && t.decade === decade) : [];
  items.push(text(12, 116, decade ? `Counts called in the ${decade}s:` : "No tile drawn yet", { class: "t t-small t-bold" }));
  called.forEach((t, i) => {
    const cx = 210 + i * 30;
    items.push(
      s("g", { "data-called": t.count || "", "data-tile": t.id, "data-watch": `drawn#${t.id}` },
        box(cx - 12, 101, 24, 22, { fill: "#fff", stroke: "#8c959f" }),
        t.count ? icon(t.count, cx, 112, 7) : null,
        s("title", {}, `${t.name}: ${t.count}`)),
    );
  });
  items.push(text(12, 150, "Still to come", { class: "t t-small t-muted" }));
  items.push(text(12, 172, "this decade", { class: "t t-tiny t-muted" }));
  items.push(text(12, 192, "in the game", { class: "t t-tiny t-muted" }));
  SYMBOLS.forEach((kind, i) => {
    const cx = 100 + i * 62;
    items.push(icon(kind, cx, 146, 7));
    items.push(text(cx, 172, String(view.decade_counts_left[kind]), { class: "t t-small t-bold", "text-anchor": "middle", "data-watch": `decade_counts_left.${kind}` }));
    items.push(text(cx, 192, String(view.counts_left[kind]), { class: "t t-small", "text-anchor": "middle", "data-watch": `counts_left.${kind}` }));
  });
  let h = 206;
  if (view.counting && view.drawn_tile) {
    const t = tiles.get(view.drawn_tile);
    items.push(text(12, h + 14, `Counting ${view.counting} (drawn: ${t ? t.name : view.drawn_tile})`, { class: "t t-small t-bold", "data-counting": view.counting }));
    h += 22;
  }
  if (view.pending) {
    items.push(text(12, h + 14, `${players[view.pending.seat] ?? "seat " + view.pending.seat} chooses how to settle ${view.pending.symbol}${view.pending.final ? " (final)" : ""}`, { class: "t t-small" }));
    h += 22;
  }
  return panel("Decade deck and counts", W, h + 10, { "data-part": "deck" }, ...items);
}

function researchPanel(view, data, tiles) {
  const W = 420;
  const top = data.research.top;
  const items = [];
  const cell = Math.min(24, (W - 90) / top);
  ["energy", "ecology"].forEach((track, ti) => {
    const y = 46 + ti * 58;
    items.push(icon(track, 18, y + 9, 8), text(30, y + 13, titleCase(track), { class: "t t-small t-bold" }));
    for (let level = 1; level <= top; level += 1) {
      const x = 84 + (level - 1) * cell;
      items.push(box(x, y, cell - 2, 20, { class: "track-cell" }), text(x + cell / 2 - 1, y + 14, String(level), { class: "t t-tiny t-muted", "text-anchor": "middle" }));
    }
    view.players.forEach((p, seat) => {
      const level = p.research[track];
      const x = 84 + (level - 1) * cell + cell / 2 - 1;
      items.push(seatToken(x, y + 28 + seat * 7, seat, 6, { "data-track": track, "data-level": level, "data-watch": `players.${seat}.research.${track}` }));
    });
  });
  // The tiles for sale beside the board, by side then level.
  const y0 = 172;
  items.push(text(12, y0, "Tiles on the research board (by level)", { class: "t t-small t-bold" }));
  const bySide = { energy: [], ecology: [] };
  for (const t of view.research_board_layout) bySide[t.side]?.push(t);
  let bottom = y0;
  ["energy", "ecology"].forEach((side, si) => {
    const x = 12 + si * 204;
    items.push(text(x, y0 + 20, `${titleCase(side)} side`, { class: "t t-tiny t-muted" }));
    bySide[side].forEach((t, i) => {
      const tile = tiles.get(t.tile);
      const y = y0 + 30 + i * 19;
      const colour = TYPE_COLOUR[t.type];
      items.push(
        s("g", { class: "supply-tile", "data-tile": t.tile, "data-level": t.level, "data-watch": `research_board#${t.tile}` },
          box(x, y, 196, 17, { fill: colour ? SPACE_FILL[colour] : "#eee", stroke: colour ? SPACE_INK[colour] : "#777" }),
          text(x + 4, y + 12.5, `L${t.level}`, { class: "t t-tiny t-bold" }),
          // The name as far as the symbols, right-aligned, leave room.
          text(x + 24, y + 12.5, clip(tile ? tile.name : t.tile, 196 - 30 - (tile ? symbolsWidth(tile) : 0)), { class: "t t-tiny" }),
          tile ? symbols(tile, x + 194 - symbolsWidth(tile), y + 13) : null),
      );
      bottom = Math.max(bottom, y + 17);
    });
  });
  return panel("Research board", W, bottom + 12, { "data-part": "research" }, ...items);
}

function playerPanel(view, p, name, data, tiles) {
  const W = 420;
  const items = [];
  const toAct = view.to_act.includes(p.seat);
  items.push(seatToken(W - 24, 18, p.seat, 11));
  if (toAct) items.push(toActMark(W - 104, 22));
  const board = data.boards.find((b) => b.id === p.side);
  if (!board) {
    return panel(name, W, 60, { "data-part": "player", "data-seat": p.seat, "data-to-act": toAct ? "true" : "false", class: toAct ? "panel acting" : "panel" },
      ...items, text(12, 46, "choosing a board side (silver or black)", { class: "t t-small t-muted" }));
  }
  items.push(text(12, 40, board.name, { class: "t t-small t-muted" }));
  // The spaces, a row per colour as on the board.
  const rows = ["pink", "yellow", "green", "blue"];
  const sw = 76;
  const sh = 60;
  rows.forEach((colour, r) => {
    const spaces = p.spaces.map((sp, i) => ({ ...sp, i })).filter((sp) => sp.colour === colour);
    spaces.forEach((sp, c) => {
      const x = 12 + c * (sw + 4);
      const y = 50 + r * (sh + 5);
      const topId = sp.tiles.at(-1);
      const tile = topId ? tiles.get(topId) : null;
      const printed = board.spaces[sp.i]?.printed;
      const face = tile || printed;
      items.push(
        s(
          "g",
          { class: "space", "data-seat": p.seat, "data-space": sp.id, "data-tile": topId || "", "data-stack": sp.tiles.length, "data-watch": `players.${p.seat}.spaces.${sp.i}` },
          box(x, y, sw, sh, { fill: sp.usable ? SPACE_FILL[colour] : "#e6e8eb", stroke: SPACE_INK[colour], "stroke-width": tile ? 2 : 1, "stroke-dasharray": sp.usable ? null : "4 3" }),
          text(x + 4, y + 11, sp.id, { class: "t t-tiny t-muted" }),
          sp.tiles.length > 1 ? text(x + sw - 4, y + 11, `${sp.tiles.length} deep`, { class: "t t-tiny t-muted", "text-anchor": "end" }) : null,
          face ? lines(face.name, 12).slice(0, 2).map((line, k) => text(x + 4, y + 22 + k * 11, line, { class: "t t-tiny t-bold" })) : null,
          face ? symbols(face, x + 3, y + 47, {}, sw - 6) : text(x + 4, y + 30, sp.usable ? "empty" : `needs ${sp.needs}`, { class: "t t-tiny t-muted" }),
          s("title", {}, face ? `${sp.id}: ${face.name}` : sp.id),
        ),
      );
    });
  });
  // Totals and money.
  const totals = [
    ["energy", p.energy],
    ["ecology", p.ecology],
    ["capital", p.capital],
    ["research", p.research_symbols],
    ["prosperity", p.prosperity_symbols],
  ];
  const ty = 50 + 4 * (sh + 5) + 6;
  totals.forEach(([kind, n], i) => {
    const x = 12 + i * 56;
    items.push(icon(kind, x + 8, ty + 10, 8));
    items.push(text(x + 20, ty + 15, kind === "energy" || kind === "ecology" ? (n > 0 ? `+${n}` : n < 0 ? `−${-n}` : "0") : String(n), { class: "t t-bold", "data-total": kind, "data-value": n, "data-watch": `players.${p.seat}.${kind === "research" ? "research_symbols" : kind === "prosperity" ? "prosperity_symbols" : kind}` }));
  });
  const my = ty + 32;
  items.push(stat(12, my, "money", `${p.money} €`, { "data-money": p.money, "data-watch": `players.${p.seat}.money` }));
  items.push(stat(100, my, "points", view.final_scores.length ? view.final_scores[p.seat] : p.points, { "data-points": p.points, "data-watch": `players.${p.seat}.points` }));
  items.push(stat(170, my, "research", `${p.research.energy} / ${p.research.ecology}`, { "data-watch": `players.${p.seat}.research` }));
  // Pollution: discs fill the round spaces from 1 up; a disc on the triangle stops prosperity.
  const py = my + 44;
  items.push(text(12, py, `Pollution: ${p.discs} disc${p.discs === 1 ? "" : "s"}${p.polluted ? " · polluted: no prosperity points" : ""}`, { class: `t t-small${p.polluted ? " t-bad" : ""}`, "data-discs": p.discs, "data-watch": `players.${p.seat}.discs` }));
  const step = Math.min(26, (W - 40) / (board.pollution_spaces + 1));
  for (let k = 1; k <= board.pollution_spaces; k += 1) {
    const cx = 22 + (k - 1) * step;
    const covered = k <= p.discs;
    items.push(s("circle", { cx, cy: py + 20, r: step / 2 - 2, class: "pollution-space" }));
    if (board.pollution_prosperity.includes(k) && !covered) items.push(icon("prosperity", cx, py + 20, 6));
    if (covered) items.push(s("circle", { cx, cy: py + 20, r: step / 2 - 4, class: "disc", "data-watch": `players.${p.seat}.discs` }));
  }
  const tx2 = 22 + board.pollution_spaces * step;
  items.push(s("polygon", { points: `${tx2 - 9},${py + 29} ${tx2 + 9},${py + 29} ${tx2},${py + 10}`, class: p.polluted ? "triangle polluted" : "triangle" }));
  return panel(name, W, py + 42, {
    "data-part": "player",
    "data-seat": p.seat,
    "data-to-act": toAct ? "true" : "false",
    class: toAct ? "panel acting" : "panel",
    label: `${name}, seat ${p.seat}: ${p.points} points, ${p.money} euros, energy ${p.energy}, ecology ${p.ecology}${toAct ? ", to play" : ""}`,
  }, ...items);
}

export function draw(view, ctx) {
  const tiles = new Map(ctx.data.tiles.map((t) => [t.id, t]));
  return [
    decadePanel(view, tiles, ctx.players),
    researchPanel(view, ctx.data, tiles),
    ...view.players.map((p) => playerPanel(view, p, ctx.players[p.seat] || `seat ${p.seat}`, ctx.data, tiles)),
  ];
}
