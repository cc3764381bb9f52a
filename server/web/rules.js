// The rules page (/rules): the rules as this server plays them, in short and in our own
// words, each point citing the rulings of docs/rulings.md that decide it (R1...). Every
// ruling id has an anchor here (`/rules#R14`): a refused move links its rule to it.

import { h, replace } from "./dom.js";
import { frame } from "./common.js";

const SECTIONS = [
  ["The game", [
    [["R1", "R5"], "Two editions: Towers of Influence (towers, the default) and the 2007 Patrizier (classic). Towers may add two modules, Trade Routes and Delegates. All of it is fixed when the game is created."],
    [["R2", "R3", "R4"], "Two to five seats. Five seats play on ten cities (with Pistoia), fewer on nine. In towers each seat has 29 floors, and two seats play with a third builder, the Architetto."],
    [[], "You win by scoring the most: prestige tokens from the cities, sets of portraits on the cards you played, and the modules' points (see The end)."],
  ]],
  ["Setting up", [
    [["R6"], "Each seat gets three star cards; the rest make the draw pile, and every city gets a face-up card. With the Architetto, three more cards are set aside face down for it."],
    [["R7"], "The seat order is shuffled with the cards; seat 0 starts."],
    [["R8"], "Each city has two prestige tokens: a high one worth its floor count (5, 7 or 9) and a low one worth three less."],
  ]],
  ["A turn", [
    [["R10"], "Play a card from your hand onto your own played pile."],
    [["R11", "R12"], "Build one floor per crest in the card's city, on site 0 or site 1, on top of that site's tower. A city never holds more than its floor count, and its last floor must go on an empty site if one is left."],
    [["R13"], "A city is scored the moment it is full: the taller tower's holder takes the high token, the shorter's the low one. A tower is held by whoever has the most floors in it; a tie goes to the tied seat with the highest floor."],
    [["R14", "R45"], "Take the face-up card of the city you built in; if it has none, any city's. A card with the take-any mark lets you take any city's card. No face-up card at all: nothing to take."],
    [["R15", "R46"], "A card with the move mark lets you move the top floor of one site onto the other, in a city not scored where you own a floor, other than the one you built in. The floor may be anyone's. You may pass."],
    [["R16"], "The draw pile refills the place of the card you took."],
    [["R17", "R18"], "Then, with Trade Routes, a star card lets you put a route; in a two-seat game the Architetto may build."],
    [["R19"], "The next seat with cards in hand plays; the game ends when nobody has a card left."],
    [["R44"], "Every choice is one move, even a forced one; a step with nothing to choose is passed by itself. Only the move and the trade route can be declined."],
  ]],
  ["The Architetto (two seats)", [
    [["R20"], "After a turn whose card had two crests, the Architetto turns up the draw pile's top card and builds one floor per crest in its city; two crests again, and it goes on."],
    [["R21"], "Where it builds: on an empty site if the city's last floor demands it; between two sites of equal height, the seat whose turn it was chooses; otherwise where the floor lets it hold the tower (the taller such site), else on the shorter site."],
    [["R22", "R23"], "It takes no cards and no actions, wins tokens like a seat, scores the portraits of the cards it turned up, and holds no trade routes and no Delegates."],
    [["R24"], "At the end its three hidden cards are turned up and built one by one."],
    [["R25", "R49"], "If it scores the most, the Architetto wins (or shares the win)."],
  ]],
  ["Trade Routes (module)", [
    [["R30"], "After the refill, a seat that played a star card may put one of its markers between two cities on a free signpost, Trader (+1) or Bandit (-1) side up; not next to the played card's city; at most two markers point to a city."],
    [["R31"], "Two markers each with two or three seats, one with four or five."],
    [["R32", "R47"], "When a city is scored, each tower's holder gains the Traders minus the Bandits pointing to it: a seat holding both towers gains it twice. Totals may go below zero."],
  ]],
  ["Delegates (module)", [
    [["R33", "R48"], "At the end, card A goes to the most 2-point tokens, B to the most 4-point, C to the most 6-point; a tie goes by the card's own order of cities. The Architetto's tokens count for nobody."],
    [["R34"], "Card D goes to the most points of tokens from Verona, Parma and Ferrara; ties go by Verona, then Parma, then Ferrara, and a tie left over gives it to nobody."],
    [["R35"], "A, B and C are each one more portrait of a noble of the owner's choice (chosen for the best score), D one more of each noble."],
  ]],
  ["The end", [
    [["R36"], "Your score: your tokens, 6 for every three portraits of one noble on the cards you played (a double portrait counts two), your trade bonus and your Delegates' portraits."],
    [["R37"], "On a tie, the fewest floors on the board wins; still tied, the win is shared."],
    [["R41"], "A seat out of floors builds no more; a city left unfinished at the end is never scored."],
  ]],
  ["The classic edition", [
    [["R38", "R39"], "The move comes before taking a card; no Architetto and no modules; 39 floors each for two seats, 29 for three, 21 for four or five."],
  ]],
  ["Fairness and secrets", [
    [["R40"], "The server commits to a secret seed before the deal, each seat may add its own, and the seed is published at the end: anyone can check the shuffle."],
    [["R42"], "Secret: the hands dealt, the draw pile's order, the Architetto's hidden cards. A played pile shows others only its top card and size; in classic, others see how many tokens a seat has, not their values."],
    [["R43"], "A move the rules refuse changes nothing, and the page tells you the rule that refused it."],
    [["R50"], "Records list the draw pile top first and keep the cards a game was created with."],
  ]],
];

function item([ids, words]) {
  const [first, ...others] = ids;
  return h("li", { id: first },
    others.map((id) => h("span", { id, class: "anchor" })),
    words, ids.length ? [" ", h("span", { class: "rule-ids" }, `(${ids.join(", ")})`)] : null);
}

const main = frame("Rules");
replace(main,
  h("h1", {}, "The rules in short"),
  h("p", { class: "intro" }, "How this server plays Patrician, in a few lines each. The ids in brackets are those of the rulings (",
    h("code", {}, "docs/rulings.md"), "), which decide every detail; a refused move names one of them."),
  h("nav", { class: "rules-toc", "aria-label": "On this page" }, h("ul", {},
    SECTIONS.map(([title], index) => h("li", {}, h("a", { href: `#part-${index}` }, title))))),
  h("div", { class: "rules-body" }, SECTIONS.map(([title, items], index) => h("section", { class: "rules-part", "aria-labelledby": `part-${index}` },
    h("h2", { id: `part-${index}` }, title),
    h("ul", { class: "rules-list" }, items.map(item))))),
  h("p", { class: "links" }, h("a", { href: "/" }, "Lobby")),
);
if (location.hash) document.getElementById(decodeURIComponent(location.hash.slice(1)))?.scrollIntoView();
