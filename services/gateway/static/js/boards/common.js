// Pieces every board draws: seat colours and tokens, dice, cards, panels. A board is a row of
// panels (each its own <svg> with a viewBox at most 500 wide), so that on a phone they stack and
// each stays readable instead of one wide picture shrinking to illegible text.

import { s, text } from "../dom.js";

// Okabe–Ito colours (told apart with most colour vision deficiencies); every token also shows
// its seat number, so colour is never the only cue.
export const SEAT = ["#E69F00", "#56B4E9", "#009E73", "#CC79A7"];
export const INK = "#1b1f24";
export const MUTED = "#4a535c";

export function panel(title, w, h, attrs, ...children) {
  return s(
    "svg",
    {
      class: "panel",
      viewBox: `0 0 ${w} ${h}`,
      width: w,
      height: h,
      role: "group",
      "aria-label": attrs.label || title,
      ...Object.fromEntries(Object.entries(attrs).filter(([k]) => k !== "label")),
    },
    s("rect", { x: 0.5, y: 0.5, width: w - 1, height: h - 1, rx: 8, class: "panel-bg" }),
    text(12, 22, title, { class: "t t-title" }),
    ...children,
  );
}

export function seatToken(x, y, seat, r = 10, attrs = {}) {
  return s(
    "g",
    { class: "seat-token", "data-seat": seat, ...attrs },
    s("circle", { cx: x, cy: y, r, fill: SEAT[seat % SEAT.length], stroke: INK, "stroke-width": 1.2 }),
    text(x, y + r * 0.42, String(seat), { class: "t t-token", "font-size": r * 1.15, "text-anchor": "middle" }),
  );
}

const PIPS = {
  1: [[0, 0]],
  2: [[-1, -1], [1, 1]],
  3: [[-1, -1], [0, 0], [1, 1]],
  4: [[-1, -1], [1, -1], [-1, 1], [1, 1]],
  5: [[-1, -1], [1, -1], [0, 0], [-1, 1], [1, 1]],
  6: [[-1, -1], [1, -1], [-1, 0], [1, 0], [-1, 1], [1, 1]],
};

// A die showing `value` with pips (and the value in its label for tests and screen readers).
export function die(x, y, size, value, attrs = {}, fill = "#fff") {
  const c = size / 2;
  const step = size * 0.27;
  return s(
    "g",
    { class: "die", "data-value": value, transform: `translate(${x},${y})`, role: "img", "aria-label": `die showing ${value}`, ...attrs },
    s("rect", { width: size, height: size, rx: size * 0.18, fill, stroke: INK, "stroke-width": 1.4 }),
    (PIPS[value] || []).map(([dx, dy]) =>
      s("circle", { cx: c + dx * step, cy: c + dy * step, r: size * 0.085, fill: INK }),
    ),
  );
}

export function box(x, y, w, h, attrs = {}) {
  return s("rect", { x, y, width: w, height: h, rx: 5, ...attrs });
}

// Words cut into lines of at most `width` characters (SVG text does not wrap by itself).
export function lines(words, width) {
  const out = [];
  let line = "";
  for (const word of String(words).split(/\s+/)) {
    if (line && (line + " " + word).length > width) {
      out.push(line);
      line = word;
    } else {
      line = line ? line + " " + word : word;
    }
  }
  if (line) out.push(line);
  return out;
}

export function multiline(x, y, words, width, step, attrs = {}) {
  return lines(words, width).map((line, i) => text(x, y + i * step, line, attrs));
}

// A labelled value ("VP 21") as drawn in the players' panels.
export function stat(x, y, label, value, attrs = {}) {
  return s(
    "g",
    attrs,
    text(x, y, label, { class: "t t-small t-muted" }),
    text(x, y + 17, String(value), { class: "t t-big" }),
  );
}

export function toActMark(x, y, attrs = {}) {
  return s(
    "g",
    { class: "to-act", ...attrs },
    s("rect", { x, y: y - 13, width: 62, height: 18, rx: 9, class: "to-act-bg" }),
    text(x + 31, y, "to play", { class: "t t-small t-on-dark", "text-anchor": "middle" }),
  );
}
