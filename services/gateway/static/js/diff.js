// What an event changed: the paths ("players.0.dice.2") at which two public views differ. A board
// marks each drawn element with the path of the data it shows (data-watch), and the page
// highlights those whose data changed between the version before and the one shown.

export function changedPaths(before, after, path = "", out = new Set()) {
  if (before === after) return out;
  const bothObjects = before && after && typeof before === "object" && typeof after === "object";
  if (!bothObjects || Array.isArray(before) !== Array.isArray(after)) {
    out.add(path);
    return out;
  }
  const keys = new Set([...Object.keys(before), ...Object.keys(after)]);
  if (Array.isArray(before) && before.length !== after.length) out.add(path);
  // A list of ids (cards, tiles) also says which ids came or went: "research_board#toll-roads",
  // so that an element drawn for one id lights up when that id moved, not when its index did.
  if (Array.isArray(before) && [...before, ...after].every((x) => typeof x !== "object" || x === null)) {
    const had = new Set(before);
    const has = new Set(after);
    for (const x of has) if (!had.has(x)) out.add(`${path}#${x}`);
    for (const x of had) if (!has.has(x)) out.add(`${path}#${x}`);
  }
  for (const key of keys) changedPaths(before[key], after[key], path ? `${path}.${key}` : key, out);
  return out;
}

// Does an element watching `watched` show something in `changed`? Either covers the other.
export function touches(watched, changed) {
  if (watched.includes("#")) return changed.has(watched);
  for (const path of changed) {
    if (path.includes("#")) continue;
    if (path === watched || path.startsWith(watched + ".") || watched.startsWith(path + ".")) return true;
  }
  return false;
}

export function highlight(root, changed) {
  if (!changed || changed.size === 0) return 0;
  let n = 0;
  for (const el of root.querySelectorAll("[data-watch]")) {
    const watched = el.getAttribute("data-watch").split(" ");
    if (watched.some((w) => touches(w, changed))) {
      el.classList.add("changed");
      n += 1;
    }
  }
  return n;
}
