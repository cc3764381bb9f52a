// "What the marks mean": a key to every mark the board draws (board.js) and the card faces
// (cards.js), each beside a small drawing made with the board's own classes, so that the key
// looks as the board does. Each entry names the classes it explains (`data-marks`) and each
// mark of a card its symbol (`data-symbol`): the tests hold the board to its key.

import { h, s } from "./dom.js";
import { seatName } from "./board.js";

function sample(width, height, ...children) {
  return s("svg", { class: "legend-sample", viewBox: `0 0 ${width} ${height}`, width: width * 0.88, height: height * 0.88, "aria-hidden": "true", focusable: "false" }, ...children);
}

function floor(x, y, seat, label) {
  return [
    s("rect", { class: "floor", x, y, width: 30, height: 13, rx: 2, fill: `url(#seat-pattern-${seat})` }),
    s("text", { class: "floor-label", x: x + 15, y: y + 7.5, "dominant-baseline": "middle", text: label }),
  ];
}

function entry(marks, drawing, ...words) {
  return h("li", { dataset: { marks } }, drawing, h("div", { class: "legend-words" }, ...words));
}

function seatsKey(view) {
  const seats = view.players.map((player) => [player.seat, String(player.seat)]);
  if (view.architetto) seats.push([view.seats, "A"]);
  return h("ul", { class: "legend-seats" }, seats.map(([seat, label]) =>
    h("li", {}, sample(34, 16, floor(2, 1.5, seat === view.seats && view.architetto ? 5 : seat, label)), seatName(view, seat))));
}

const SYMBOLS = [
  ["\u25C6", "a crest: one floor per crest, in the card's city (R11); a card of two crests wakes the Architetto in a two-seat game (R20)"],
  ["\u2605", "a star: three are dealt to each seat (R6); with Trade Routes, a star lets you put a route after taking a card (R17, R30)"],
  ["A", "a portrait of the noble with the red hat"],
  ["B", "a portrait of the lady"],
  ["C", "a portrait of the bearded noble: every three portraits of one noble on the cards you played score 6; a double one (AA) counts two (R36)"],
  ["\u21C4", "move: you may move the top floor of a site onto the other site, in a city not scored where you own a floor, not the one you built in (R15)"],
  ["+", "take any: you may take the face-up card of any city instead of the one you built in (R14)"],
];

function cardKey() {
  return h("ul", { class: "legend-symbols" }, SYMBOLS.map(([symbol, words]) =>
    h("li", { dataset: { symbol } }, h("span", { class: "symbol", "aria-hidden": "true" }, symbol), h("span", {}, h("span", { class: "visually-hidden" }, `${symbol}: `), words))));
}

function entries(view) {
  const routes = (view.modules || []).includes("trade_routes");
  const tile = (extra, ...more) => s("g", { class: `city ${extra}` }, s("rect", { class: "tile", x: 2, y: 2, width: 76, height: 36, rx: 6 }), ...more);
  return [
    entry("board city tile city-name city-capacity progress-back progress",
      sample(104, 40, s("rect", { class: "tile", x: 2, y: 2, width: 100, height: 36, rx: 6 }),
        s("text", { class: "city-name", x: 7, y: 20, text: "Milano" }),
        s("text", { class: "city-capacity", x: 97, y: 20, "text-anchor": "end", text: "5/7" }),
        s("rect", { class: "progress-back", x: 7, y: 27, width: 90, height: 5, rx: 2 }),
        s("rect", { class: "progress", x: 7, y: 27, width: 64, height: 5, rx: 2 })),
      h("strong", {}, "A city"), ": its name, the floors built against the floors it holds (5 of 7) and a bar of the same (R11). The map is a sketch of northern Italy."),
    entry("tower site site-label",
      sample(72, 58, s("rect", { class: "site", x: 2, y: 2, width: 32, height: 44, rx: 3 }), s("rect", { class: "site", x: 38, y: 2, width: 32, height: 44, rx: 3 }),
        floor(3, 32, 0, "0"), floor(39, 32, 1, "1"), floor(39, 18, 0, "0"),
        s("text", { class: "site-label", x: 18, y: 56, text: "site 0" }), s("text", { class: "site-label", x: 54, y: 56, text: "site 1" })),
      h("strong", {}, "Site 0 and site 1"), ": the two towers of a city, built from the bottom up (R11). A city's last floor goes on a site left empty, if any (R12)."),
    entry(`floor floor-label ${view.players.map((p) => `seat-${p.seat}`).join(" ")}`,
      sample(34, 16, floor(2, 1.5, 0, "0")),
      h("strong", {}, "A floor"), " in its seat's colour and pattern, with its seat's number (A: the Architetto, R20):", seatsKey(view)),
    entry("face-up card card-city card-id",
      sample(40, 56, s("rect", { class: "card", x: 2, y: 2, width: 36, height: 52, rx: 4 }),
        s("text", { class: "card-city", x: 20, y: 17, text: "FER" }), s("text", { class: "card-marks", x: 20, y: 33, text: "\u25C6\u2605" }),
        s("text", { class: "card-id", x: 20, y: 48, text: "FER-n" })),
      h("strong", {}, "The face-up card"), " of a city: its city, its marks and its id; \"none\" when it has none. After building you take one (R14); the draw pile refills its place (R16)."),
    h("li", { dataset: { marks: "card-marks" }, class: "wide" }, h("div", { class: "legend-words" }, h("strong", {}, "The marks of a card"), " (on the board's face-up cards):", cardKey())),
    entry("tokens token token-value",
      sample(56, 26, s("circle", { class: "token", cx: 13, cy: 13, r: 11 }), s("text", { class: "token-value", x: 13, y: 14, "dominant-baseline": "middle", text: "7" }),
        s("circle", { class: "token", cx: 41, cy: 13, r: 11 }), s("text", { class: "token-value", x: 41, y: 14, "dominant-baseline": "middle", text: "4" })),
      h("strong", {}, "Prestige tokens"), " still on a city: the high one (its floor count) goes to whoever holds the taller tower, the low one (3 less) to whoever holds the shorter (R8, R13)."),
    entry("scored winners",
      sample(80, 40, tile("scored", s("text", { class: "winners", x: 40, y: 25, text: "won 1 / 0" }))),
      h("strong", {}, "A scored city"), ", framed in gold. \"won 1 / 0\": seat 1 holds the taller tower and took the high token, seat 0 the shorter and the low one. A tower is held by the most floors in it; on a tie, by the highest of them (R13)."),
    entry("pending", sample(80, 40, tile("pending")), h("strong", {}, "The city being built in"), " this turn."),
    entry("changed", sample(80, 40, s("g", { class: "city flash-sample" }, s("rect", { class: "tile", x: 2, y: 2, width: 76, height: 36, rx: 6 }))),
      h("strong", {}, "A city that flashes"), ": the last move changed it."),
    entry("option legal target", sample(40, 48, s("g", { class: "option legal" }, s("rect", { class: "site", x: 4, y: 4, width: 32, height: 40, rx: 3 }))),
      h("strong", {}, "Green"), ": on your turn, a choice the rules allow now. Nothing is sent until you confirm."),
    entry("other", sample(40, 48, s("g", { class: "option other" }, s("rect", { class: "site", x: 4, y: 4, width: 32, height: 40, rx: 3 }))),
      h("strong", {}, "Grey, dashed"), ": a choice the rules refuse now; choose it to read the rule that says why."),
    routes ? entry("routes route", sample(80, 16, s("line", { class: "route", x1: 4, y1: 8, x2: 76, y2: 8 })),
      h("strong", {}, "A free signpost"), " between two cities: a trade route may go there (R30).") : null,
    routes ? entry("taken", sample(80, 16, s("line", { class: "route taken seat-1", x1: 4, y1: 8, x2: 76, y2: 8 })),
      h("strong", {}, "A route taken"), ", in its seat's colour (here seat 1's).") : null,
    routes ? entry("marker marker-disc marker-label",
      sample(64, 30, s("circle", { class: "marker-disc", cx: 15, cy: 15, r: 13, fill: "url(#seat-pattern-1)" }), s("text", { class: "marker-label", x: 15, y: 16, "dominant-baseline": "middle", text: "1T" }),
        s("circle", { class: "marker-disc", cx: 48, cy: 15, r: 13, fill: "url(#seat-pattern-0)" }), s("text", { class: "marker-label", x: 48, y: 16, "dominant-baseline": "middle", text: "0B" })),
      h("strong", {}, "1T"), ": seat 1's Trader, +1 to each tower's winner when a city it points to is scored; ", h("strong", {}, "0B"),
      ": seat 0's Bandit, -1 (R30, R32, R47).") : null,
  ];
}

// The key, kept open or closed as the reader left it; drawn again only when the seats or
// the modules change.
export class Legend {
  constructor() {
    this.list = h("ul", { class: "legend-list" });
    this.node = h("details", { class: "legend" },
      h("summary", {}, "What the marks mean"),
      this.list,
      h("p", { class: "hint" }, "The rules in short, with their ids: ", h("a", { href: "/rules" }, "the rules summary"), "."));
    this.key = null;
  }

  draw(view) {
    const key = JSON.stringify([view.players.map((p) => [p.seat, p.name]), view.modules, Boolean(view.architetto)]);
    if (key === this.key) return this.node;
    this.key = key;
    this.list.replaceChildren(...entries(view).filter(Boolean));
    return this.node;
  }
}
