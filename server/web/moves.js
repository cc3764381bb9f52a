// A move of the play page in words, and what the server answers to one: a refusal (4xx) is
// an answer of the rules, handled and shown with its rule said once, never thrown on.

import { h } from "./dom.js";
import { post, refusalText, ApiError } from "./api.js";

// A staged command in words; `city`: the city being built in.
export function describe(command, cards, city) {
  switch (command.type) {
    case "play_card": return `Play ${command.card} (${cards.words(command.card)})`;
    case "place_floor": return `Build a floor on ${city || "the city"}, site ${command.site}`;
    case "take_card": return `Take the card on ${command.city}`;
    case "move_floor": return `Move the top floor of ${command.city} site ${command.from_site} to site ${1 - command.from_site}`;
    case "place_trade_route": return `Put a ${command.side} between ${command.cities[0]} and ${command.cities[1]}`;
    case "choose_architetto_site": return `Put the Architetto's floor on site ${command.site}`;
    case "skip": return "Pass";
    default: return command.type;
  }
}

// `{answer}`, or `{refused}` (an ApiError of a 4xx); a failure to reach the server throws.
export async function ask(url, body) {
  try {
    return { answer: await post(url, body) };
  } catch (error) {
    if (error instanceof ApiError && error.status >= 400 && error.status < 500) return { refused: error };
    throw error;
  }
}

// "Refused: R14: take the face-up card of Bologna, ..." with the rule linked to the rules
// summary; the server's message ends with its rule in brackets too, left out here.
export function refusalLine(error) {
  const rule = error instanceof ApiError ? error.rule : null;
  if (!rule) return h("p", { class: "status error", role: "alert" }, `Refused: ${refusalText(error)}`);
  const escaped = rule.replace(/[^A-Za-z0-9]/g, "\\$&");
  const message = error.message.replace(new RegExp(`\\s*\\(${escaped}\\)\\s*\\.?$`), "");
  return h("p", { class: "status error", role: "alert" },
    "Refused: ", h("a", { href: `/rules#${encodeURIComponent(rule)}`, class: "rule" }, rule), `: ${message}`);
}
