// The Delegates module beside the board (R33-R35): during play, who would get each card if
// the game ended now, and by how much; once it is over, who got it (the result's
// `delegate_cards`). The board's view has no field for the standing, so it is counted here
// from what the board shows: the winners of the scored cities and their tokens' values
// (R8), with the ties of R33, R34 and R48 as docs/rulings.md words them. It changes nothing:
// the server alone scores the game.

import { h } from "./dom.js";
import { seatName } from "./board.js";

// Per seat (the Architetto's tokens neither win nor block a card, R48), the [city, value]
// of every token it holds.
function tokensHeld(view, cards) {
  const held = Array.from({ length: view.seats }, () => []);
  for (const city of view.cities) {
    if (!city.scored) continue;
    const [high, low] = cards.tokens.get(city.name) || [city.capacity, city.capacity - 3];
    if (city.high_seat !== null && city.high_seat < view.seats) held[city.high_seat].push([city.name, high]);
    if (city.low_seat !== null && city.low_seat < view.seats) held[city.low_seat].push([city.name, low]);
  }
  return held;
}

const best = (values) => Math.max(0, ...values);

// R33: the most tokens of the card's value; a tie goes by the card's cities in order.
function minorStanding(minor, held, seats) {
  const counts = held.map((tokens) => tokens.filter(([, value]) => value === minor.token_value).length);
  const top = best(counts);
  if (top === 0) return { counts, holder: null };
  const tied = counts.flatMap((count, seat) => (count === top ? [seat] : []));
  if (tied.length === 1) return { counts, holder: tied[0] };
  const order = (seats === 5 && minor.tie_order_five_players) || minor.tie_order;
  for (const city of order) {
    const seat = tied.find((each) => held[each].some(([name, value]) => name === city && value === minor.token_value));
    if (seat !== undefined) return { counts, holder: seat, decidedBy: city };
  }
  return { counts, holder: null };
}

// R34: the most points of tokens from the card's cities; a tie goes by the points in each
// city of the order; nobody if still tied or if nobody has any.
function majorStanding(major, held) {
  const points = (seat, cities) => held[seat].filter(([name]) => cities.includes(name)).reduce((sum, [, value]) => sum + value, 0);
  const counts = held.map((_, seat) => points(seat, major.cities));
  const top = best(counts);
  if (top === 0) return { counts, holder: null };
  let tied = counts.flatMap((count, seat) => (count === top ? [seat] : []));
  let decidedBy;
  for (const city of major.tie_order) {
    if (tied.length === 1) break;
    const most = best(tied.map((seat) => points(seat, [city])));
    tied = tied.filter((seat) => points(seat, [city]) === most);
    decidedBy = city;
  }
  return tied.length === 1 ? { counts, holder: tied[0], decidedBy } : { counts, holder: null, tie: true };
}

// Each card: its letter, what wins it, and who holds it now (or got it).
export function delegateStanding(view, cards) {
  const data = cards.delegates;
  if (!data || !(view.modules || []).includes("delegates")) return [];
  const held = tokensHeld(view, cards);
  const rows = ["A", "B", "C"].filter((letter) => data[letter]).map((letter) => ({
    letter, unit: "token", needs: `most ${data[letter].token_value}-point tokens`, ...minorStanding(data[letter], held, view.seats),
  }));
  if (data.D) rows.push({ letter: "D", unit: "point", needs: `most points from ${data.D.cities.join(", ")}`, ...majorStanding(data.D, held) });
  if (view.result) {
    for (const row of rows) {
      const owner = view.result.scores.find((score) => (score.delegate_cards || []).includes(row.letter));
      Object.assign(row, { holder: owner ? owner.seat : null, decidedBy: undefined, tie: false });
    }
  }
  return rows;
}

const plural = (count, unit) => `${count} ${unit}${count === 1 ? "" : "s"}`;

function standingWords(view, row) {
  const over = Boolean(view.result);
  const others = row.counts.flatMap((count, seat) => (count && seat !== row.holder ? [`${seatName(view, seat)} ${count}`] : []));
  if (row.holder === null) {
    if (over) return "nobody";
    return row.tie ? `nobody: a tie (${others.join(", ")})` : "nobody yet";
  }
  const words = [h("strong", {}, seatName(view, row.holder))];
  if (!over) words.push(`, ${plural(row.counts[row.holder], row.unit)}`);
  if (!over && row.decidedBy) words.push(` (tie broken by ${row.decidedBy})`);
  if (!over && others.length) words.push(h("span", { class: "others" }, `; then ${others.join(", ")}`));
  return words;
}

export function delegatesSection(view, cards) {
  const rows = delegateStanding(view, cards);
  if (!rows.length) return null;
  const over = Boolean(view.result);
  return h("section", { class: "delegates", "aria-label": "Delegates" },
    h("h2", {}, "Delegates"),
    h("p", { class: "hint" }, over ? "Who got each card at the end (R33, R34)."
      : "Who would get each card if the game ended now (R33, R34), from the cities scored so far."),
    h("table", { class: "delegates-table" },
      h("thead", {}, h("tr", {}, h("th", { scope: "col" }, "Card"), h("th", { scope: "col" }, "Goes to"), h("th", { scope: "col" }, over ? "Got it" : "Now"))),
      h("tbody", {}, rows.map((row) => h("tr", { dataset: { card: row.letter, holder: row.holder ?? "" } },
        h("th", { scope: "row" }, row.letter), h("td", {}, row.needs), h("td", {}, standingWords(view, row)))))),
    h("p", { class: "hint" }, "A, B and C are each one more portrait of a noble of the owner's choice, D one more of each noble (R35); the Architetto gets none (R23)."),
  );
}
