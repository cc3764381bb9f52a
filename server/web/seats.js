// Every seat's public state beside the board (hand size, top card, tokens, supply, markers,
// clock), the pending decision in words, and the final scores: shared by the play page and
// the replay viewer, drawn from a View only.

import { h, until, SEAT_PATTERNS } from "./dom.js";
import { seatName } from "./board.js";
import { botName, namedAsBot } from "./names.js";
import { ratingOf, playerLink } from "./rating.js";

const STEPS = {
  play_card: "play a card",
  place_floor: "build a floor",
  take_card: "take a face-up card",
  move_floor: "move a floor (or pass)",
  trade_route: "place a trade route (or pass)",
  architetto_site: "choose the Architetto's site",
};

// The state of a view in words: whose decision and what step, the table filling, the deal,
// the end. "Your turn" only for `viewer`, the seat of whoever looks (null: a spectator).
export function pendingText(view, viewer) {
  if (view.phase === "waiting") {
    const joined = view.joined.length;
    return joined < view.seats ? `Waiting for players: ${joined} of ${view.seats} at the table.` : "The table is full: the game starts.";
  }
  if (view.phase === "cancelled") return "This game was cancelled.";
  if (view.phase === "over") return "The game is over.";
  if (!view.pending) return "The game is being set up: seats drawn, cards dealt.";
  const step = STEPS[view.pending.step] || view.pending.step;
  const card = view.pending.card ? ` with ${view.pending.card}` : "";
  if (viewer !== null && viewer !== undefined && view.pending.seat === viewer) return `Your turn: ${step}${card}.`;
  return `${seatName(view, view.pending.seat)} is to ${step}${card}.`;
}

// Who acted for `seat` when not its player: "" for the player, or for a bot at its own seat
// (a seat the server named after the bot's level, "Greedy bot 2"). `by` is a replay step's
// or a record's: "bot:<level>", or "clock:<level>" when the clock's bot played a turn whose
// time ran out; the bot is named by its level in words (names.js).
export function actedBy(by, view, seat) {
  const [kind, level] = String(by || "").split(":");
  if (!level || seat === null || seat === undefined) return "";
  const player = view.players.find((p) => p.seat === seat);
  if (kind === "bot" && player && namedAsBot(player.name, level)) return "";
  const who = `Played for ${seatName(view, seat)} by the ${botName(level)}`;
  return kind === "clock" ? `${who}: the time for the turn ran out.` : `${who}.`;
}

function swatch(seat) {
  return h("span", { class: `swatch seat-${seat} pattern-${SEAT_PATTERNS[seat]}`, "aria-hidden": "true" }, seat === 5 ? "A" : String(seat));
}

function clockOf(view, seat) {
  const clock = view.clock;
  if (!clock) return null;
  const mine = clock.seats.find((c) => c.seat === seat);
  const parts = [];
  if (clock.running === seat && clock.deadline) parts.push(until(clock.deadline));
  if (mine && mine.bank_seconds) parts.push(`bank ${Math.round(mine.bank_seconds / 3600)} h`);
  if (mine && mine.away_until) parts.push(`away until ${mine.away_until.slice(0, 10)}`);
  return parts.join(", ") || null;
}

export function seatsTable(view, cards, viewer) {
  const rows = view.players.map((player) => {
    const tokens = player.tokens ? `${player.tokens.join(" + ") || "none"}` : `${player.token_count} (values hidden)`;
    const clock = clockOf(view, player.seat);
    const deciding = view.pending && view.pending.seat === player.seat;
    return h("tr", {
      class: `${deciding ? "deciding" : ""}${player.seat === viewer ? " me" : ""}`,
      dataset: {
        seat: player.seat,
        handSize: player.hand_size,
        topCard: player.top_card ?? "",
        playedCount: player.played_count,
        tokenCount: player.token_count,
        tokens: JSON.stringify(player.tokens),
        supply: player.supply,
        markersLeft: player.markers_left,
      },
    },
      h("th", { scope: "row" }, swatch(player.seat), " ", playerLink(player.player, player.name), player.seat === viewer ? " (you)" : "", ratingOf(player.player, "", true), deciding ? h("span", { class: "turn-flag" }, " to play") : null),
      h("td", {}, String(player.hand_size)),
      h("td", { title: player.top_card ? cards.words(player.top_card) : "" }, player.top_card ? `${player.top_card} (${player.played_count})` : `- (${player.played_count})`),
      h("td", {}, tokens),
      h("td", {}, String(player.supply)),
      view.modules.includes("trade_routes") ? h("td", {}, String(player.markers_left)) : null,
      view.clock ? h("td", {}, clock || "") : null,
    );
  });
  if (view.architetto) {
    const a = view.architetto;
    rows.push(h("tr", { dataset: { seat: a.seat, architetto: "true" } },
      h("th", { scope: "row" }, swatch(5), " the Architetto"),
      h("td", {}, `${a.hidden_count} hidden`),
      h("td", {}, a.top_card ? `${a.top_card} (${a.discard_count})` : `- (${a.discard_count})`),
      h("td", {}, a.tokens.join(" + ") || "none"),
      h("td", {}, String(a.supply)),
      view.modules.includes("trade_routes") ? h("td", {}, "") : null,
      view.clock ? h("td", {}, "") : null,
    ));
  }
  return h("table", { class: "seats", "aria-label": "The seats" },
    h("thead", {}, h("tr", {},
      h("th", { scope: "col" }, "Seat"), h("th", { scope: "col" }, "Hand"), h("th", { scope: "col" }, "Played (top)"),
      h("th", { scope: "col" }, "Tokens"), h("th", { scope: "col" }, "Floors left"),
      view.modules.includes("trade_routes") ? h("th", { scope: "col" }, "Markers") : null,
      view.clock ? h("th", { scope: "col" }, "Clock") : null)),
    h("tbody", {}, rows));
}

export function resultTable(view) {
  const result = view.result;
  if (!result) return null;
  const winners = new Set(result.winners);
  const names = result.winners.map((seat) => seatName(view, seat)).join(" and ");
  return h("section", { class: "result", "aria-label": "Final scores", tabindex: 0 },
    h("h2", {}, result.architetto_won ? "The Architetto wins" : `${names} ${result.winners.length > 1 ? "win" : "wins"}`),
    h("table", { class: "scores" },
      h("thead", {}, h("tr", {}, ...["Seat", "Tokens", "Portraits", "Trade bonus", "Delegates", "Total"].map((t) => h("th", { scope: "col" }, t)))),
      h("tbody", {}, result.scores.map((score) => h("tr", { class: winners.has(score.seat) ? "winner" : "", dataset: { seat: score.seat, total: score.total } },
        h("th", { scope: "row" }, seatName(view, score.seat), winners.has(score.seat) ? " \u2605" : ""),
        h("td", {}, String(score.tokens)), h("td", {}, String(score.portraits)),
        h("td", {}, String(score.trade_bonus)), h("td", {}, String(score.delegates)),
        h("td", {}, h("strong", {}, String(score.total))))))));
}

export function cardList(ids, cards, label) {
  return h("ul", { class: "cards", "aria-label": label },
    ids.map((id) => h("li", { class: "card-chip", dataset: { card: id } }, h("span", { class: "chip-id" }, id), " ", h("span", { class: "chip-words" }, cards.words(id)))));
}
