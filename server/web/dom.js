// Small helpers to build the DOM safely: text always goes in as text (never as HTML), so a
// player's name or a table-talk line cannot become markup.

const SVG = "http://www.w3.org/2000/svg";

function fill(node, attributes, children) {
  for (const [name, value] of Object.entries(attributes || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on") && typeof value === "function") {
      node.addEventListener(name.slice(2), value);
    } else if (name === "text") {
      node.textContent = String(value);
    } else if (name === "dataset") {
      for (const [key, data] of Object.entries(value)) node.dataset[key] = String(data);
    } else {
      node.setAttribute(name, value === true ? "" : String(value));
    }
  }
  for (const child of [children].flat(Infinity)) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

export function h(tag, attributes, ...children) {
  return fill(document.createElement(tag), attributes, children);
}

export function s(tag, attributes, ...children) {
  return fill(document.createElementNS(SVG, tag), attributes, children);
}

// A value of the address's fragment (`#invite=...&v=12`): what this client keeps out of
// every URL a server sees. A broken escape counts as absent. `hash`: another fragment than
// the page's own (the one a `hashchange` went to).
export function fragment(name, hash = location.hash) {
  const match = new RegExp(`(?:^|[#&])${name}=([^&]*)`).exec(hash);
  if (!match) return null;
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return null;
  }
}

export function $(selector, root = document) {
  return root.querySelector(selector);
}

export function replace(node, ...children) {
  node.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
}

export function ago(seconds) {
  if (seconds < 60) return "just now";
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  if (hours < 48) return `${hours} h`;
  return `${Math.floor(hours / 24)} days`;
}

export function until(iso) {
  const left = (Date.parse(iso) - Date.now()) / 1000;
  if (!Number.isFinite(left)) return "";
  if (left <= 0) return "time is up";
  return `${ago(left)} left`;
}

// Seat colours (Okabe-Ito, told apart by colour-blind eyes) and a second cue each: a pattern
// on every floor and the seat's number written on it.
export const SEAT_COLOURS = ["#E69F00", "#56B4E9", "#009E73", "#CC79A7", "#F0E442", "#999999"];
export const SEAT_PATTERNS = ["solid", "stripes", "dots", "checks", "waves", "cross"];

export function status(node, text, kind = "info") {
  replace(node, text ? h("p", { class: `status ${kind}`, role: kind === "error" ? "alert" : "status" }, text) : null);
}
