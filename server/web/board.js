// The board as a picture: one SVG drawn from a View (the API's board as the viewer may see
// it), nothing more. Every city shows its two towers floor by floor in the seats' colours,
// each floor with its seat's pattern and number too (for colour-blind eyes), the floors built
// against the capacity, the prestige tokens left, the face-up card, and once scored who won
// it; in Trade Routes the routes and their markers. Each element carries the data it was
// drawn from (data-* attributes): the tests compare those with the API, not pixels.
//
// The legal commands that have a place on the board are drawn there as buttons (a site, a
// face-up card, a tower to move from); `onCommand` gets the command when one is chosen.

import { s, SEAT_COLOURS, SEAT_PATTERNS } from "./dom.js";

const TILE_W = 200;
const TILE_H = 196;
const STEP_X = 232;
const STEP_Y = 228; // room between two rows for a trade route's marker

// The cities roughly north to south, west to east, laid out in as many columns as the room
// the board has allows at a size where its smallest words stay at least 11 CSS px (a tile
// 200 units wide drawn at 0.82 px a unit or more): two on a phone, four on a desktop, so
// that the whole board and the choices beside it fit a 1440x900 window.
const ORDER = ["Milano", "Verona", "Ferrara", "Parma", "Bologna", "Lucca", "Pistoia", "Firenze", "Siena", "Roma"];
const MIN_SCALE = 0.82;

export function columnsFor(width) {
  const units = width / MIN_SCALE + (STEP_X - TILE_W) - 12;
  return Math.max(2, Math.min(4, Math.floor(units / STEP_X)));
}

// Calls `redraw` when a resize of the window changes how many columns fit `container`.
export function onColumnsChange(container, redraw) {
  const fitting = () => columnsFor(container.clientWidth || window.innerWidth);
  let columns = fitting();
  window.addEventListener("resize", () => {
    if (fitting() === columns) return;
    columns = fitting();
    redraw();
  });
}

function places(cities, columns) {
  const named = [...cities].sort((a, b) => rank(a.name) - rank(b.name));
  const rows = Math.ceil(named.length / columns);
  const result = new Map();
  named.forEach((city, index) => {
    const row = Math.floor(index / columns);
    // The last row, when short, sits in the middle.
    const inRow = row === rows - 1 ? named.length - row * columns : columns;
    const col = (index % columns) + (columns - inRow) / 2;
    result.set(city.name, { x: col * STEP_X, y: row * STEP_Y });
  });
  return result;
}

function rank(name) {
  const known = ORDER.indexOf(name);
  return known < 0 ? ORDER.length : known;
}

function seatLabel(view, seat) {
  if (view.architetto && seat === view.seats) return "A";
  return String(seat);
}

function seatName(view, seat) {
  if (view.architetto && seat === view.seats) return "the Architetto";
  const player = view.players.find((p) => p.seat === seat);
  return player ? `${player.name} (seat ${seat})` : `seat ${seat}`;
}

function patterns() {
  const defs = s("defs");
  SEAT_COLOURS.forEach((colour, seat) => {
    const id = `seat-pattern-${seat}`;
    const kind = SEAT_PATTERNS[seat];
    const pattern = s("pattern", { id, width: 8, height: 8, patternUnits: "userSpaceOnUse" });
    pattern.append(s("rect", { width: 8, height: 8, fill: colour }));
    const ink = { stroke: "rgba(0,0,0,0.45)", "stroke-width": 1.4, fill: "none" };
    if (kind === "stripes") pattern.append(s("path", { d: "M0 8 L8 0", ...ink }));
    if (kind === "dots") pattern.append(s("circle", { cx: 4, cy: 4, r: 1.6, fill: "rgba(0,0,0,0.45)" }));
    if (kind === "checks") pattern.append(s("rect", { width: 4, height: 4, fill: "rgba(0,0,0,0.3)" }));
    if (kind === "waves") pattern.append(s("path", { d: "M0 4 Q2 1 4 4 T8 4", ...ink }));
    if (kind === "cross") pattern.append(s("path", { d: "M0 0 L8 8 M8 0 L0 8", ...ink }));
    defs.append(pattern);
  });
  return defs;
}

// A choice on the board: a transparent target over the drawing (its name is the words of
// the choice alone), the drawing under it marked as legal or not.
function button(group, label, offered, onCommand, box) {
  const { command } = offered;
  group.classList.add("option", offered.legal ? "legal" : "other");
  const target = s("rect", {
    class: "target",
    ...box,
    role: "button",
    tabindex: 0,
    "aria-label": offered.legal ? label : `${label} (not allowed now: choose it to see why)`,
    dataset: { command: JSON.stringify(command) },
  });
  const choose = (event) => {
    event.preventDefault();
    onCommand(command);
  };
  target.addEventListener("click", choose);
  target.addEventListener("keydown", (event) => {
    if (event.key === "Enter" || event.key === " ") choose(event);
  });
  group.append(target);
  return target;
}

export function sameCommand(a, b) {
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  return [...keys].every((key) => JSON.stringify(a[key]) === JSON.stringify(b[key]));
}

// The commands this city offers: while the viewer decides, every place of the pending step
// is a button (a command the rules refuse comes back refused with its rule, in words), the
// legal ones marked as such.
function optionsOf(view, city, legal, deciding) {
  const found = { sites: new Map(), take: null, moves: new Map() };
  const step = deciding && view.pending ? view.pending.step : null;
  const offer = (command) => ({ command, legal: legal.some((each) => sameCommand(each, command)) });
  if ((step === "place_floor" || step === "architetto_site") && view.pending.city === city.name) {
    const type = step === "place_floor" ? "place_floor" : "choose_architetto_site";
    for (const site of [0, 1]) found.sites.set(site, offer({ type, site }));
  }
  if (step === "take_card" && city.face_up) found.take = offer({ type: "take_card", city: city.name });
  if (step === "move_floor") {
    for (const site of [0, 1]) {
      if (city.sites[site].length) found.moves.set(site, offer({ type: "move_floor", city: city.name, from_site: site }));
    }
  }
  return found;
}

function tower(view, city, site, x, options, onCommand) {
  const group = s("g", { class: "tower", dataset: { site, floors: JSON.stringify(city.sites[site]) } });
  const bottom = TILE_H - 14;
  const height = Math.min(15, 126 / Math.max(city.capacity, 1));
  const siteBox = { x, y: bottom - 126 - 4, width: 54, height: 130, rx: 4 };
  group.append(s("rect", { class: "site", ...siteBox }));
  city.sites[site].forEach((seat, floor) => {
    const y = bottom - (floor + 1) * height;
    const colourIndex = seat === view.seats && view.architetto ? 5 : seat;
    group.append(
      s("rect", { class: "floor", x: x + 2, y, width: 50, height: height - 1.5, rx: 2, fill: `url(#seat-pattern-${colourIndex})` }),
      s("text", { class: "floor-label", x: x + 27, y: y + height / 2 + 1, "dominant-baseline": "middle", text: seatLabel(view, seat) }),
    );
  });
  group.append(s("text", { class: "site-label", x: x + 27, y: bottom + 11, text: `site ${site}` }));
  const owners = city.sites[site].map((seat) => seatName(view, seat)).join(", ") || "no floors";
  group.setAttribute("aria-label", `${city.name} site ${site}: ${owners}`);
  const place = options.sites.get(site);
  if (place) {
    const what = place.command.type === "place_floor" ? "Build a floor" : "Put the Architetto's floor";
    button(group, `${what} on ${city.name} site ${site}`, place, onCommand, siteBox);
  }
  const move = options.moves.get(site);
  if (move) button(group, `Move the top floor of ${city.name} site ${site} to site ${1 - site}`, move, onCommand, siteBox);
  return group;
}

function cityTile(view, city, at, choice, cards) {
  const { legal, onCommand } = choice;
  const options = optionsOf(view, city, legal, choice.deciding);
  const tile = s("g", {
    class: `city${city.scored ? " scored" : ""}${view.pending && view.pending.city === city.name ? " pending" : ""}`,
    transform: `translate(${at.x} ${at.y})`,
    role: "group",
    "aria-label": `${city.name}: ${city.floors} of ${city.capacity} floors${city.scored ? ", scored" : ""}`,
    dataset: {
      city: city.name,
      capacity: city.capacity,
      floorsBuilt: city.floors,
      sites: JSON.stringify(city.sites),
      tokensLeft: JSON.stringify(city.tokens_left),
      faceUp: city.face_up ?? "",
      scored: city.scored,
      highSeat: city.high_seat ?? "",
      lowSeat: city.low_seat ?? "",
    },
  });
  tile.append(
    s("rect", { class: "tile", width: TILE_W, height: TILE_H, rx: 10 }),
    s("text", { class: "city-name", x: 10, y: 22, text: city.name }),
    s("text", { class: "city-capacity", x: TILE_W - 10, y: 22, "text-anchor": "end", text: `${city.floors}/${city.capacity}` }),
    s("rect", { class: "progress-back", x: 10, y: 30, width: TILE_W - 20, height: 5, rx: 2 }),
    s("rect", { class: "progress", x: 10, y: 30, width: ((TILE_W - 20) * city.floors) / Math.max(city.capacity, 1), height: 5, rx: 2 }),
  );
  tile.append(tower(view, city, 0, 10, options, onCommand), tower(view, city, 1, 70, options, onCommand));

  const card = s("g", { class: "face-up", dataset: { card: city.face_up ?? "" } });
  const cardBox = { x: 134, y: 46, width: 56, height: 78, rx: 5 };
  card.append(s("rect", { class: "card", ...cardBox }));
  if (city.face_up) {
    const info = cards.info(city.face_up);
    card.append(
      s("text", { class: "card-city", x: 162, y: 66, text: info.city.slice(0, 3).toUpperCase() }),
      s("text", { class: "card-marks", x: 162, y: 88, text: cards.marks(city.face_up) }),
      s("text", { class: "card-id", x: 162, y: 112, text: city.face_up }),
    );
    card.setAttribute("aria-label", `Face-up card on ${city.name}: ${cards.words(city.face_up)}`);
  } else {
    card.append(s("text", { class: "card-id", x: 162, y: 90, text: "none" }));
    card.setAttribute("aria-label", `No face-up card on ${city.name}`);
  }
  if (options.take) button(card, `Take ${city.face_up} (${cards.words(city.face_up)}) from ${city.name}`, options.take, onCommand, cardBox);
  tile.append(card);

  const tokens = s("g", { class: "tokens", role: "img", "aria-label": `Prestige tokens left on ${city.name}: ${city.tokens_left.join(" and ") || "none"}` });
  city.tokens_left.forEach((value, index) => {
    tokens.append(
      s("circle", { class: "token", cx: 148 + index * 28, cy: 148, r: 12 }),
      s("text", { class: "token-value", x: 148 + index * 28, y: 149, "dominant-baseline": "middle", text: value }),
    );
  });
  tile.append(tokens);
  if (city.scored) {
    const won = [city.high_seat, city.low_seat].filter((seat) => seat !== null && seat !== undefined);
    tile.append(s("text", { class: "winners", x: 162, y: 182, text: `won ${won.map((seat) => seatLabel(view, seat)).join(" / ")}` }));
    tile.setAttribute("aria-label", `${tile.getAttribute("aria-label")}: ${won.map((seat) => seatName(view, seat)).join(" first, ")} second`);
  }
  return tile;
}

// Where a marker sits on its route: the point nearest the middle whose disc no tile covers (a
// route may pass under a third city's tile), else the middle.
function onRoute(pa, pb, at) {
  const r = 15;
  const clear = ([x, y]) => [...at.values()].every((p) => x + r < p.x || x - r > p.x + TILE_W || y + r < p.y || y - r > p.y + TILE_H);
  for (let step = 0; step <= 16; step += 1) {
    for (const t of [0.5 - step * 0.025, 0.5 + step * 0.025]) {
      const point = [pa[0] + (pb[0] - pa[0]) * t, pa[1] + (pb[1] - pa[1]) * t];
      if (clear(point)) return point;
    }
  }
  return [(pa[0] + pb[0]) / 2, (pa[1] + pb[1]) / 2];
}

function routes(view, at, cards) {
  const group = s("g", { class: "routes" });
  const modules = view.modules || [];
  if (!modules.includes("trade_routes") || !cards.routes) return group;
  const board = view.cities.some((c) => c.name === "Pistoia") ? cards.routes.ten_city_board : cards.routes.nine_city_board;
  const centre = (name) => {
    const p = at.get(name);
    return p ? [p.x + TILE_W / 2, p.y + TILE_H / 2] : null;
  };
  for (const [a, b] of board || []) {
    const [pa, pb] = [centre(a), centre(b)];
    if (!pa || !pb) continue;
    const marker = view.markers.find((m) => (m.cities[0] === a && m.cities[1] === b) || (m.cities[0] === b && m.cities[1] === a));
    group.append(s("line", { class: `route${marker ? ` taken seat-${marker.seat}` : ""}`, x1: pa[0], y1: pa[1], x2: pb[0], y2: pb[1] }));
  }
  for (const marker of view.markers) {
    const [pa, pb] = [centre(marker.cities[0]), centre(marker.cities[1])];
    if (!pa || !pb) continue;
    const [x, y] = onRoute(pa, pb, at);
    group.append(
      s("g", {
        class: "marker",
        role: "img",
        "aria-label": `${seatName(view, marker.seat)}: a ${marker.side} between ${marker.cities[0]} and ${marker.cities[1]}`,
        dataset: { marker: `${marker.seat}:${marker.cities.join("-")}:${marker.side}` },
      },
        s("circle", { cx: x, cy: y, r: 13, fill: `url(#seat-pattern-${marker.seat})`, class: "marker-disc" }),
        s("text", { x, y: y + 1, "dominant-baseline": "middle", class: "marker-label", text: `${marker.seat}${marker.side[0].toUpperCase()}` })),
    );
  }
  return group;
}

// The board of one page, drawn again for each view it is given: a city's tile is made anew
// only when something it shows changed (a replay step or a move changes one or two), which
// keeps a step well inside one frame and lets a changed tile alone be marked (`changed`).
//
// `choice`: `legal` (the viewer's legal commands), `deciding` (whether the viewer may choose
// now: its decision, nothing sent yet), `onCommand` (called with the chosen command).
export class BoardPicture {
  constructor(cards) {
    this.cards = cards;
    this.svg = null;
    this.layout = null;
    this.tiles = new Map();
    this.routes = null;
  }

  // `width`: the CSS pixels the board has across (its columns follow).
  draw(view, choice = {}, width = window.innerWidth) {
    const chosen = { legal: [], deciding: false, onCommand: () => {}, ...choice };
    const columns = columnsFor(width);
    const at = places(view.cities, columns);
    const layout = JSON.stringify([view.cities.map((c) => c.name), view.players.map((p) => p.name), Boolean(view.architetto), columns]);
    if (layout !== this.layout) this.start(view, at, layout);
    const changed = [];
    const pending = view.pending ? [view.pending.seat, view.pending.step, view.pending.city] : null;
    for (const city of view.cities) {
      const content = JSON.stringify(city);
      const shows = JSON.stringify([content, pending, chosen.deciding ? chosen.legal : null]);
      const kept = this.tiles.get(city.name);
      if (kept && kept.shows === shows) continue;
      const tile = cityTile(view, city, at.get(city.name), chosen, this.cards);
      if (kept) {
        kept.node.replaceWith(tile);
        // changed: what the city holds, not only whose turn it is or what may be chosen
        // there (a new turn draws every tile again, and would mark them all)
        if (kept.content !== content) changed.push(city.name);
      } else {
        this.svg.append(tile);
      }
      this.tiles.set(city.name, { shows, content, node: tile });
    }
    const markers = JSON.stringify(view.markers);
    if (markers !== this.routes.shows) {
      const group = routes(view, at, this.cards);
      this.routes.node.replaceWith(group);
      this.routes = { shows: markers, node: group };
    }
    this.svg.dataset.version = view.version;
    this.svg.dataset.drawCount = view.draw_count;
    this.svg.setAttribute("aria-label", `The board at version ${view.version}`);
    return changed;
  }

  start(view, at, layout) {
    let width = 0;
    let height = 0;
    for (const p of at.values()) {
      width = Math.max(width, p.x + TILE_W);
      height = Math.max(height, p.y + TILE_H);
    }
    const svg = s("svg", { class: "board", viewBox: `-6 -6 ${width + 12} ${height + 12}`, role: "group" });
    const group = routes(view, at, this.cards);
    svg.append(patterns(), group);
    if (this.svg) this.svg.replaceWith(svg);
    this.svg = svg;
    this.layout = layout;
    this.tiles = new Map();
    this.routes = { shows: JSON.stringify(view.markers), node: group };
  }
}

export { seatName };
