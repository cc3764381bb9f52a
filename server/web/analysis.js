// The analysis of a finished game in the replay viewer: each seat's chance to win over the
// game (a chart, its own panel), each seat's accuracy and marks (a table), the marks on the
// log's lines, at a marked step "the search preferred X (chance a% -> b%)" in words, and a
// jump to the next mistake of a seat. All from GET /api/games/{id}/analysis, which exists
// once the game is over; while the jobs make it, its progress, read again every few seconds.
//
// A decision made at version v shows in the replay at the step of version v + 1 (its first
// event), and its chance is drawn there.

import { h, s, replace, SEAT_COLOURS } from "./dom.js";
import { get } from "./api.js";
import { describe } from "./moves.js";

const MARK_SIGN = { inaccuracy: "?!", mistake: "?", blunder: "??" };
const MARK_WORD = { inaccuracy: "Inaccuracy", mistake: "Mistake", blunder: "Blunder" };
const AGAIN_MS = 3000;
const W = 360;
const H = 120;
const TOP = 8;
const LEFT = 44;
const pct = (chance) => `${Math.round(chance * 100)}%`;

// "?! an inaccuracy (5 to 10 points of chance lost), ...", from the API's thresholds.
function marksWords(t) {
  const points = (chance) => String(Math.round(chance * 100));
  return `?! an inaccuracy (${points(t.inaccuracy)} to ${points(t.mistake)} points of chance lost), ` +
    `? a mistake (${points(t.mistake)} to ${points(t.blunder)}), ?? a blunder (${points(t.blunder)} or more).`;
}

// `replay`: { gameId, steps() (the replay's steps), indexOfVersion(v), go(index), cards,
// logItems() (a log line per step), onReady() (what to redraw once the analysis is in) }.
export function analysisOf(replay) {
  const section = h("section", { class: "analysis", "aria-label": "Analysis" });
  const jumps = h("span", { class: "analysis-jumps" });
  const seatChoice = h("select", { "aria-label": "The seat whose next mistake to jump to" });
  const found = { analysis: null, byStep: new Map() };
  const nowLine = s("line", { class: "now", y1: TOP, y2: TOP + H });

  const stepOf = (judged) => replay.indexOfVersion(judged.version + 1);
  const seatsOf = () => replay.steps()[replay.steps().length - 1].view.players;
  const nameOf = (seat) => (seatsOf().find((p) => p.seat === seat) || { name: `seat ${seat}` }).name;

  async function load() {
    try {
      found.analysis = await get(`/api/games/${encodeURIComponent(replay.gameId)}/analysis`);
    } catch (error) {
      replace(section, h("h2", {}, "Analysis"), h("p", { class: "hint" }, error.status === 409 ? "The game is analysed once it is over." : "The analysis could not be read."));
      return;
    }
    const analysis = found.analysis;
    if (analysis.status === "off") {
      replace(section, h("h2", {}, "Analysis"), h("p", { class: "hint" }, "This server does not analyse games."));
      return;
    }
    if (analysis.status !== "done") {
      const progress = analysis.status === "queued" ? "waiting for its turn" : `${analysis.analysed} of ${analysis.decisions} decisions so far`;
      replace(section, h("h2", {}, "Analysis"), h("p", { class: "hint", role: "status" }, `Every decision is being judged from what its player could see: ${progress}.`));
      setTimeout(load, AGAIN_MS);
      return;
    }
    found.byStep = new Map(analysis.judged.filter((j) => j.mark).map((j) => [stepOf(j), j]));
    draw(analysis);
    replay.onReady();
  }

  function draw(analysis) {
    const seats = seatsOf().map((p) => p.seat);
    replace(section, h("h2", {}, "Analysis"), chart(analysis, seats), table(analysis),
      h("p", { class: "hint" }, "Each decision judged by the search bot from what its player could see then: its chance to win with the move the search preferred against the move made. ",
        marksWords(analysis.thresholds), " A search's opinion, not the truth."));
    replace(seatChoice, seatsOf().map((p) => h("option", { value: p.seat }, `${p.name} (seat ${p.seat})`)));
    replace(jumps, h("label", {}, "Next mistake of ", seatChoice),
      h("button", { type: "button", onclick: nextMistake }, "Go to it"));
  }

  function chart(analysis, seats) {
    const steps = replay.steps().length;
    const x = (index) => (steps > 1 ? (index / (steps - 1)) * W : 0);
    const y = (chance) => TOP + H - chance * H;
    const lines = seats.map((seat) => {
      const own = analysis.judged.filter((j) => j.seat === seat);
      if (own.length < 2) return null;
      return s("polyline", { fill: "none", stroke: SEAT_COLOURS[seat], "stroke-width": 2.5, dataset: { seat },
        points: own.map((j) => `${x(stepOf(j)).toFixed(1)},${y(j.chance_after).toFixed(1)}`).join(" ") });
    });
    const marks = analysis.judged.filter((j) => j.mark && j.mark !== "inaccuracy").map((j) =>
      s("circle", { class: `mark ${j.mark}`, cx: x(stepOf(j)), cy: y(j.chance_after), r: j.mark === "blunder" ? 5 : 4, fill: SEAT_COLOURS[j.seat], dataset: { version: j.version } }));
    const svg = s("svg", { viewBox: `${-LEFT} 0 ${W + LEFT + 10} ${H + TOP + 22}`, role: "img", class: "chances",
      "aria-label": `Each seat's chance to win after each of its decisions, from 0 to 100%, by the search; rings: mistakes and blunders` },
    [0, 0.5, 1].map((v) => [
      s("line", { class: "grid", x1: 0, x2: W, y1: y(v), y2: y(v) }),
      s("text", { class: "tick", x: -5, y: y(v) + 4, "text-anchor": "end", text: pct(v) })]),
    lines, marks, nowLine);
    found.x = x;
    svg.addEventListener("click", (event) => {
      const box = svg.getBoundingClientRect();
      const at = ((event.clientX - box.left) / box.width) * (W + LEFT + 10) - LEFT;
      replay.go(Math.round((Math.max(0, Math.min(W, at)) / W) * (steps - 1)));
    });
    return h("figure", { class: "chance-chart" }, svg, h("figcaption", { class: "hint" }, "Chance to win after each decision (the search's estimate); the red line: this step."));
  }

  function table(analysis) {
    // A seat whose decisions were all made for its player (a timeout, a seat handed over)
    // has no figure of its own: said under the table.
    const madeFor = analysis.seats.filter((seat) => !seat.own_decisions && analysis.judged.some((j) => j.seat === seat.seat && j.by));
    return [h("div", { class: "table-scroll", tabindex: 0 }, h("table", { class: "accuracy" },
      h("caption", {}, "Accuracy (100: every decision as good as the search's choice)"),
      h("thead", {}, h("tr", {}, ["Seat", "Accuracy", "?!", "?", "??"].map((t, i) => h("th", { scope: "col", title: i > 1 ? ["inaccuracies", "mistakes", "blunders"][i - 2] : null }, t)))),
      h("tbody", {}, analysis.seats.map((seat) => h("tr", { dataset: { seat: seat.seat } },
        h("th", { scope: "row" }, h("span", { class: `swatch seat-${seat.seat}`, "aria-hidden": "true" }, String(seat.seat)), ` ${nameOf(seat.seat)}`),
        h("td", {}, seat.accuracy === null ? "\u2014" : `${seat.accuracy}`),
        h("td", { "aria-label": `${seat.inaccuracies} inaccuracies` }, String(seat.inaccuracies)),
        h("td", { "aria-label": `${seat.mistakes} mistakes` }, String(seat.mistakes)),
        h("td", { "aria-label": `${seat.blunders} blunders` }, String(seat.blunders))))))),
    madeFor.length ? h("p", { class: "hint" }, madeFor.map((seat) => nameOf(seat.seat)).join(", "),
      ": every decision was made for them by a bot (a turn that timed out, a seat handed over), judged and shown but not counted.") : null];
  }

  function nextMistake() {
    const seat = Number(seatChoice.value);
    const from = replay.index();
    const ahead = found.analysis.judged
      .filter((j) => j.seat === seat && (j.mark === "mistake" || j.mark === "blunder") && !j.by)
      .map(stepOf).filter((index) => index > from);
    if (ahead.length) replay.go(Math.min(...ahead));
    else replay.say(`${nameOf(seat)} makes no mistake after this step.`);
  }

  // The log's lines of marked steps get their sign (once; the log is made once).
  function markLog() {
    const items = replay.logItems();
    for (const [index, judged] of found.byStep) {
      const line = items[index];
      if (!line || line.querySelector(".mark-sign")) continue;
      line.querySelector("button").append(" ", h("span", { class: `mark-sign ${judged.mark}`, title: MARK_WORD[judged.mark], "aria-label": MARK_WORD[judged.mark] }, MARK_SIGN[judged.mark]));
    }
  }

  // What the search says of this step's decision, if it was marked (and the chart's line
  // moved to the step).
  function wordsAt(index) {
    if (found.x) {
      nowLine.setAttribute("x1", String(found.x(index)));
      nowLine.setAttribute("x2", String(found.x(index)));
    }
    const judged = found.byStep.get(index);
    if (!judged) return null;
    const before = replay.steps()[replay.indexOfVersion(judged.version)].view;
    const city = before.pending ? before.pending.city : null;
    const preferred = describe(judged.best, replay.cards(), city);
    const who = judged.by ? " (not the player's own move: it was made for them)" : "";
    return h("p", { class: `step-judged ${judged.mark}` },
      h("strong", {}, `${MARK_WORD[judged.mark]} ${MARK_SIGN[judged.mark]}`),
      ` by ${nameOf(judged.seat)}${who}: the search preferred \u201c${preferred}\u201d (chance ${pct(judged.chance_before)} \u2192 ${pct(judged.chance_after)}).`);
  }

  return { section, jumps, load, markLog, wordsAt };
}
