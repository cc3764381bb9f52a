// "Rematch" at the end of a game, under the final scores: one click by a player of the
// finished game sets a new table for the same players, with the same edition, modules, clock
// and bots (POST /api/games/{id}/rematch), the clicker in its first place, and takes them to
// it. The other players find the offer here ("Ann offers a rematch", read from the board's
// `rematch`, which gives them the code that opens the table) and join it with one click. The
// finished game's stream has ended and no append tells of an offer, so while the page is in
// view it looks at the board every few seconds until there is one.

import { h, replace, status } from "./dom.js";
import { get, post, session, ApiError, refusalText } from "./api.js";

const EVERY = 4000; // ms between two looks for an offer,
const LATER = 30000; // and once the page has been open ten minutes

const go = (gameId) => location.assign(`/games/${encodeURIComponent(gameId)}`);

class Offer {
  constructor(gameId) {
    this.gameId = gameId;
    this.view = null;
    this.rematch = null; // the board's `rematch`, once someone asked
    this.busy = false;
    this.full = false; // the rematch started without this player
    this.timer = null;
    this.opened = Date.now();
    this.message = h("div", { "aria-live": "polite" });
    this.node = h("section", { class: "since rematch", "aria-label": "Rematch" });
    document.addEventListener("visibilitychange", () => this.watch());
    window.addEventListener("pagehide", () => clearTimeout(this.timer));
  }

  get me() {
    const mine = session();
    return mine ? mine.player_id : null;
  }

  // A player of this game (a spectator's board has no seat, and no code to join with).
  get player() {
    const view = this.view;
    return Boolean(this.me) && (view.joined || []).includes(this.me) && view.viewer !== null && view.viewer !== undefined;
  }

  update(view) {
    this.view = view;
    if (view.rematch) this.rematch = view.rematch;
    this.draw();
    this.watch();
  }

  draw() {
    const rematch = this.rematch;
    const player = this.player;
    const link = (words) => h("a", { href: `/games/${encodeURIComponent(rematch.game_id)}` }, words);
    let parts = null;
    if (!rematch && player) {
      parts = [h("h2", {}, "Play again?"),
        h("p", { class: "hint" }, "A new table for the same players, with the same edition, modules, clock and bots. "
          + "You take its first place; the others find your offer on this page."),
        h("div", { class: "buttons" },
          h("button", { type: "button", class: "primary", disabled: this.busy, onclick: () => this.ask() }, "Rematch"))];
    } else if (rematch && rematch.by === this.me) {
      parts = [h("h2", {}, "Rematch"), h("p", {}, "You offered a rematch: the others find it on this page."),
        h("p", {}, link("Go to the rematch table"))];
    } else if (rematch && player && this.full) {
      parts = [h("h2", {}, "Rematch"), h("p", {}, `${rematch.name}'s rematch table is full: it started without you. `,
        link("Watch the rematch"), ".")];
    } else if (rematch && player) {
      parts = [h("h2", {}, "Rematch"), h("p", {}, h("strong", {}, `${rematch.name} offers a rematch.`)),
        h("p", { class: "hint" }, "The same players, edition, modules, clock and bots, at a new table."),
        h("div", { class: "buttons" },
          h("button", { type: "button", class: "primary", disabled: this.busy, onclick: () => this.join(rematch) }, "Join the rematch"))];
    } else if (rematch) {
      parts = [h("p", {}, `${rematch.name} offered the players a rematch: `, link("watch it"), ".")];
    }
    this.node.hidden = !parts;
    replace(this.node, parts, parts ? this.message : null);
  }

  // Look at the board for an offer, while there is none, this reader may take it, and the
  // page is in view.
  watch() {
    clearTimeout(this.timer);
    this.timer = null;
    if (this.rematch || !this.player || document.visibilityState !== "visible") return;
    this.timer = setTimeout(async () => {
      try {
        const board = await get(`/api/games/${encodeURIComponent(this.gameId)}`);
        if (board.rematch && !this.rematch) {
          this.rematch = board.rematch;
          this.draw();
        }
      } catch {
        // the next look tries again
      }
      this.watch();
    }, Date.now() - this.opened < 600000 ? EVERY : LATER);
  }

  async act(work) {
    if (this.busy) return;
    this.busy = true;
    this.draw();
    try {
      await work();
    } catch (error) {
      status(this.message, this.refusal(error), "error");
    } finally {
      this.busy = false;
      this.draw();
    }
  }

  ask() {
    return this.act(async () => {
      status(this.message, "Setting the new table...", "info");
      const made = await post(`/api/games/${encodeURIComponent(this.gameId)}/rematch`);
      this.rematch = { game_id: made.game_id, by: made.by, name: made.name, invite_code: made.invite_code };
      // Another player asked first: theirs is the rematch, and this click joins it.
      if (made.by !== this.me) await post(`/api/games/${encodeURIComponent(made.game_id)}/join`, { invite_code: made.invite_code });
      go(made.game_id);
    });
  }

  join(rematch) {
    return this.act(async () => {
      status(this.message, "Joining the rematch...", "info");
      await post(`/api/games/${encodeURIComponent(rematch.game_id)}/join`, { invite_code: rematch.invite_code });
      go(rematch.game_id);
    });
  }

  refusal(error) {
    if (error instanceof ApiError && error.code === "game_not_open") {
      this.full = true; // said by the offer itself, with a link to watch it
      return null;
    }
    return `Could not do it: ${refusalText(error)}`;
  }
}

let offer = null;

// The offer under the final scores, or null when there is none to make.
export function rematchOffer(view, gameId) {
  if (!view || view.phase !== "over") return null;
  if (!offer || offer.gameId !== gameId) offer = new Offer(gameId);
  offer.update(view);
  return offer.node.hidden ? null : offer.node;
}
