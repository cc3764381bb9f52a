// A player's rating beside their name (docs/api.md, "Ratings"): read once a page from
// `GET /api/players/{id}` and filled in when it arrives, so that no page waits for it.

import { h } from "./dom.js";
import { get } from "./api.js";
import { BOT_LEVELS, namedAsBot } from "./names.js";

const read = new Map();

// A span that shows "(rating 1034)" once read (`compact`: "1034", the words in its title,
// where room is short); for a player not rated yet, `unrated` (a text, or "" to show
// nothing: a bot's seat, whose level is what is rated).
export function ratingOf(playerId, unrated = "", compact = false) {
  const shown = h("span", { class: "hint rating" });
  if (!playerId) return shown;
  if (!read.has(playerId)) read.set(playerId, get(`/api/players/${encodeURIComponent(playerId)}`, { anonymous: true }).catch(() => null));
  read.get(playerId).then((player) => {
    if (!player) return;
    if (player.rating === null) shown.textContent = unrated ? ` (${unrated})` : "";
    else if (compact) {
      shown.textContent = ` ${player.rating}`;
      shown.title = `Rating ${player.rating}${player.provisional ? ", provisional" : ""}`;
    } else shown.textContent = ` (rating ${player.rating}${player.provisional ? ", provisional" : ""})`;
  });
  return shown;
}

// A player's name as a link to their page (/players/{id}); a bot player's name stays a name
// (its page would tell nothing: its level is what is rated).
export function playerLink(playerId, name) {
  const bot = BOT_LEVELS.some((level) => namedAsBot(name, level.level));
  return bot || !playerId ? name : h("a", { href: `/players/${encodeURIComponent(playerId)}`, class: "player-link" }, name);
}
