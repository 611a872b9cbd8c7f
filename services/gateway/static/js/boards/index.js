// One drawing per title: draw(view, ctx) returns the board's panels (SVG elements).
// ctx: { data: the title's catalog data, players: seat names, name: id -> name, events: the
// public events up to the version drawn (for what a view does not keep, e.g. dice just placed) }.

import { h } from "../dom.js";
import { draw as artifacts } from "./artifacts.js";
import { draw as mechanica } from "./mechanica.js";
import { draw as prosperity } from "./prosperity.js";
import { draw as sentient } from "./sentient.js";

const BOARDS = { sentient, prosperity, mechanica, artifacts };

export function drawBoard(title, view, ctx) {
  const root = h("div", { class: "board", "data-game": title, "data-version": ctx.version });
  if (!view) {
    root.append(h("p", { class: "empty-board" }, "The game has not started: the board is laid out at its start."));
    return root;
  }
  const draw = BOARDS[title];
  if (!draw) {
    root.append(h("pre", {}, JSON.stringify(view, null, 2)));
    return root;
  }
  try {
    root.append(...draw(view, ctx));
  } catch (err) {
    // A view this page cannot draw (written by a newer version?): show what it holds.
    root.append(h("p", { class: "error", role: "alert" }, `This board could not be drawn (${err.message}); its view:`), h("pre", {}, JSON.stringify(view, null, 2)));
  }
  return root;
}
