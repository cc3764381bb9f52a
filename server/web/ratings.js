// The rating list (/ratings): every rated player and bot level, highest first, a page of 50
// at a time. The figure is the conservative estimate (docs/api.md, "Ratings"): it says how
// good a player has shown they are at least, so a newcomer starts at 1000 and rises with
// games; "provisional" until five games. You are marked; a player's name links to their
// page, a bot level's nowhere.

import { h, replace, status } from "./dom.js";
import { frame } from "./common.js";
import { get, session } from "./api.js";
import { playerLink } from "./rating.js";

const PAGE = 50;
const main = frame("Ratings");
const mine = session();
const offset = Math.max(0, Number(new URLSearchParams(location.search).get("from")) || 0);

function row(rated) {
  const you = mine && rated.player_id === mine.player_id;
  const bot = rated.player_id.startsWith("bot:");
  return h("tr", { class: you ? "you" : null, dataset: { player: rated.player_id } },
    h("td", { class: "place" }, String(rated.place)),
    h("td", {}, bot ? rated.name : playerLink(rated.player_id, rated.name), bot ? h("span", { class: "hint" }, " (the server's bot)") : null,
      you ? h("strong", {}, " (you)") : null),
    h("td", { class: "figure" }, String(rated.rating),
      rated.provisional ? h("span", { class: "hint", title: "Fewer than 5 rated games" }, " provisional") : null),
    h("td", { class: "games" }, String(rated.games)),
    h("td", { class: "hint spread" }, `±${Math.round(4 * rated.sigma) * 10}`));
}

function pages(list) {
  const links = [];
  if (list.offset > 0) links.push(h("a", { href: `/ratings?from=${Math.max(0, list.offset - PAGE)}` }, "Higher"));
  if (list.offset + list.ratings.length < list.total) links.push(h("a", { href: `/ratings?from=${list.offset + PAGE}` }, "Lower"));
  return links.length ? h("p", { class: "links" }, links) : null;
}

async function show() {
  const list = await get(`/api/ratings?offset=${offset}&limit=${PAGE}`, { anonymous: true });
  const intro = h("p", { class: "intro" },
    "Every finished game of two to five seats moves the ratings of those who played it, bots included. ",
    "The figure is a careful estimate: a newcomer shows 1000; wins raise it, losses lower it, and every game makes it surer. ",
    "The ± column is how far it may still be off (one standard deviation of the estimate).");
  if (!list.ratings.length) {
    replace(main, h("h1", {}, "Ratings"), intro,
      h("p", { class: "hint" }, list.total ? "No ratings this far down." : "No game has been rated yet: finish one!"));
    return;
  }
  replace(main, h("h1", {}, "Ratings"), intro,
    h("div", { class: "scores-wrap" }, h("table", { class: "ratings" },
      h("caption", {}, `${list.total} rated, from place ${list.ratings[0].place}`),
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Place"), h("th", { scope: "col" }, "Player"),
        h("th", { scope: "col" }, "Rating"), h("th", { scope: "col" }, "Games"), h("th", { scope: "col" }, "±"))),
      h("tbody", {}, list.ratings.map(row)))),
    pages(list));
}

show().catch((error) => status(main, `The ratings could not be read: ${error.message}`, "error"));
