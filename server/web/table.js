// A table that waits for players, on the play page: who is there, the invite link to pass
// on (the code travels in the link's fragment, which no server sees or logs), and joining,
// leaving or calling the game off.

import { h, status, fragment } from "./dom.js";
import { post, session, refusalText } from "./api.js";
import { ratingOf, playerLink } from "./rating.js";

export function joinPanel(view, gameId, refresh) {
  if (!view || view.phase !== "waiting") return null;
  const mine = session();
  const seated = mine && view.joined.includes(mine.player_id);
  const creator = mine && view.joined[0] === mine.player_id;
  const code = view.invite_code || fragment("invite");
  const message = h("div", { "aria-live": "polite" });
  const game = encodeURIComponent(gameId);
  const act = async (path, body) => {
    try {
      await post(path, body);
      if (path.endsWith("/join")) history.replaceState(null, "", location.pathname);
      await refresh();
    } catch (error) {
      status(message, refusalText(error), "error");
    }
  };
  const link = view.invite_code ? `${location.origin}/games/${game}#invite=${view.invite_code}` : null;
  return h("section", { class: "waiting", "aria-label": "The table" },
    h("h2", {}, `The table: ${view.joined.length} of ${view.seats} players`),
    h("p", { class: "hint" }, "Seats are drawn when the table is full: who plays first is left to chance."),
    h("ul", {}, view.names.map((name, index) => h("li", {}, playerLink(view.joined[index], name), ratingOf(view.joined[index], "not rated yet")))),
    requirementsLine(view.requirements),
    link ? h("p", {}, "Invite others with this link: ", h("input", { class: "invite", readonly: true, value: link, "aria-label": "Invite link", onfocus: (e) => e.target.select() }),
      " ", h("button", { type: "button", onclick: () => navigator.clipboard && navigator.clipboard.writeText(link) }, "Copy")) : null,
    !mine ? h("p", {}, h("a", { href: `/#next=${encodeURIComponent(location.pathname + location.hash)}` }, "Sign in"), " to take a seat.") : null,
    mine && !seated && code ? h("button", { type: "button", class: "primary", onclick: () => act(`/api/games/${game}/join`, { invite_code: code }) }, "Join this table") : null,
    mine && !seated && !code ? h("p", {}, "You need the invite link of a player at this table to join.") : null,
    seated && !creator ? h("button", { type: "button", onclick: () => act(`/api/games/${game}/leave`) }, "Leave the table") : null,
    creator ? h("button", { type: "button", onclick: () => act(`/api/games/${game}/cancel`) }, "Call the game off") : null,
    message);
}

// What a player must show to join the table, in words ("" for a table that asks nothing).
export function requirementsText(required) {
  if (!required) return "";
  const parts = [];
  if (required.min_rating !== null && required.min_rating !== undefined) parts.push(`a rating of ${required.min_rating} or more`);
  if (required.max_timeouts_per_100 !== null && required.max_timeouts_per_100 !== undefined) parts.push(`at most ${required.max_timeouts_per_100} turns timed out per 100`);
  return parts.length ? `To join: ${parts.join(" and ")}.` : "";
}

function requirementsLine(required) {
  const text = requirementsText(required);
  return text ? h("p", { class: "requirements" }, text) : null;
}
