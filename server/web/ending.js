// The end of a game on the play page, and the lines of its log told from the events' own
// fields where the words matter most: the winners and every seat's score by part (first on
// the page once the game is over), a city's scoring (a seat that wins both towers named
// once), and the final scores one seat a line, every sign as it is ("-8 trade", never
// "+ -8").

import { h } from "./dom.js";
import { seatName } from "./board.js";

export const signed = (value) => (value > 0 ? `+${value}` : String(value));
const capital = (text) => text.charAt(0).toUpperCase() + text.slice(1);
const has = (view, module) => (view.modules || []).includes(module);

function swatch(view, seat) {
  const architetto = Boolean(view.architetto) && seat === view.seats;
  return h("span", { class: `swatch seat-${architetto ? 5 : seat}`, "aria-hidden": "true" }, architetto ? "A" : String(seat));
}

// "Parma is scored: Bea (seat 1) takes 5 and 2 (trade bonus +1 per tower, +2 in all)."
export function scoredWords(event, view) {
  const high = seatName(view, event.high_seat);
  const bonus = event.trade_bonus;
  if (event.high_seat === event.low_seat) {
    const paid = bonus ? ` (trade bonus ${signed(bonus)} per tower, ${signed(2 * bonus)} in all)` : "";
    return `${event.city} is scored: ${high} takes ${event.high_token} and ${event.low_token}${paid}.`;
  }
  const low = seatName(view, event.low_seat);
  const paid = bonus ? ` (trade bonus ${signed(bonus)} each)` : "";
  return `${event.city} is scored: ${high} takes ${event.high_token}, ${low} takes ${event.low_token}${paid}.`;
}

// "Bea (seat 1): 61 points: 38 tokens, 12 portraits, -1 trade bonus, 12 from Delegates A, B, D"
export function scoreWords(score, view) {
  const parts = [`${score.tokens} tokens`, `${score.portraits} portraits`];
  if (has(view, "trade_routes") || score.trade_bonus) parts.push(`${signed(score.trade_bonus)} trade bonus`);
  const cards = (score.delegate_cards || []).join(", ");
  const architetto = Boolean(view.architetto) && score.seat === view.seats; // holds none (R23)
  if (cards) parts.push(`${score.delegates} from Delegates ${cards}`);
  else if (has(view, "delegates") && !architetto) parts.push("no Delegates card");
  return `${seatName(view, score.seat)}: ${score.total} points: ${parts.join(", ")}`;
}

export function winnersWords(result, view) {
  const names = result.winners.map((seat) => seatName(view, seat));
  const best = Math.max(...result.scores.map((score) => score.total));
  if (names.length > 1) return `${capital(names.join(" and "))} share the win with ${best} points`;
  return `${capital(names[0] || "nobody")} wins with ${best} points`;
}

const ranked = (scores) => [...scores].sort((a, b) => b.total - a.total || a.floors_on_board - b.floors_on_board || a.seat - b.seat);

// One line of the log: the server's words, but for a scoring and the end, told here.
export function logLine(item, view) {
  const event = item.event || {};
  if (event.type === "city_scored" && view) return scoredWords(event, view);
  if (event.type === "game_ended" && view) {
    return [`The game is over. ${winnersWords(event, view)}.`,
      h("ul", { class: "score-lines" }, ranked(event.scores).map((score) => h("li", {}, scoreWords(score, view))))];
  }
  return item.text;
}

// R37 in words, when the points alone did not decide.
function tieWords(result, view) {
  const best = Math.max(...result.scores.map((score) => score.total));
  const tied = result.scores.filter((score) => score.total === best);
  if (tied.length < 2) return null;
  const names = tied.map((score) => seatName(view, score.seat)).join(" and ");
  if (result.winners.length === tied.length) return `${capital(names)} tie on points and on floors built: the win is shared (R37).`;
  return `${capital(names)} tie on ${best} points: the fewest floors on the board wins (R37).`;
}

// The winners and the score table by part, with the links of a finished game.
export function finalSection(view, links) {
  const result = view.result;
  if (!result) return null;
  const winners = new Set(result.winners);
  const trade = has(view, "trade_routes");
  const delegates = has(view, "delegates");
  const head = ["Seat", "Tokens", "Portraits", trade ? "Trade bonus" : null, delegates ? "Delegates" : null, "Total"];
  return h("section", { class: "final", "aria-label": "Final scores", tabindex: -1 },
    h("h2", { class: "winners-line" }, `${winnersWords(result, view)}.`),
    tieWords(result, view) ? h("p", { class: "hint" }, tieWords(result, view)) : null,
    h("div", { class: "scores-wrap" }, h("table", { class: "scores", dataset: { parts: head.filter(Boolean).length - 1 } },
      h("thead", {}, h("tr", {}, head.filter(Boolean).map((text) => h("th", { scope: "col" }, text)))),
      h("tbody", {}, ranked(result.scores).map((score) => h("tr", {
        class: `${winners.has(score.seat) ? "winner" : ""}${score.seat === view.viewer ? " me" : ""}`,
        dataset: { seat: score.seat, total: score.total },
      },
        h("th", { scope: "row" }, swatch(view, score.seat), " ", seatName(view, score.seat),
          score.seat === view.viewer ? " (you)" : "", winners.has(score.seat) ? [h("span", { class: "star", "aria-hidden": "true" }, " \u2605"), h("span", { class: "visually-hidden" }, " (winner)")] : null),
        h("td", {}, String(score.tokens)),
        h("td", {}, String(score.portraits)),
        trade ? h("td", {}, signed(score.trade_bonus)) : null,
        delegates ? h("td", {}, String(score.delegates), score.delegate_cards.length ? ` (${score.delegate_cards.join(" ")})` : "") : null,
        h("td", {}, h("strong", {}, String(score.total)))))))),
    links ? h("p", { class: "links final-links" }, links) : null,
  );
}
