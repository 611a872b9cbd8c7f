// Building DOM and SVG without a framework: h() for HTML, s() for SVG. Attributes are set with
// setAttribute (never innerHTML), so text from a game (names, ids) is never parsed as markup.

const SVG_NS = "http://www.w3.org/2000/svg";

function build(el, attrs, children) {
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key.startsWith("on") && typeof value === "function") {
      el.addEventListener(key.slice(2), value);
    } else {
      el.setAttribute(key, value === true ? "" : String(value));
    }
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

export function h(tag, attrs, ...children) {
  return build(document.createElement(tag), attrs, children);
}

export function s(tag, attrs, ...children) {
  return build(document.createElementNS(SVG_NS, tag), attrs, children);
}

// An SVG <text>; `cls` picks the style (see app.css: .t, .t-small, .t-big, ...).
export function text(x, y, content, attrs = {}) {
  return s("text", { x, y, class: "t", ...attrs }, content);
}

// Empties `el`; its `append` then skips null and false, as h() does with children.
export function clear(el) {
  while (el.firstChild) el.firstChild.remove();
  return { append: (...children) => build(el, {}, children) };
}

// Numbers are written the same way whatever the browser's locale (screenshots are compared).
export function fmt(n) {
  return n === null || n === undefined ? "–" : String(n);
}

export function titleCase(word) {
  return String(word).replace(/_/g, " ").replace(/^./, (c) => c.toUpperCase());
}
