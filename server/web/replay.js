// The replay viewer (/games/{id}/replay, a version deep-linked as #v=123): every step of
// the game as you may see it (everything once it is over), stepped, scrubbed or played at a
// chosen speed; jumps to the next city scoring or the next turn of a seat; the log in words
// beside the board, synced both ways; whose hand is shown (a seat, or none as a spectator:
// any seat once the game is over); each seat's points and tokens over the game; the keys
// arrows, Home/End, PageUp/PageDown (scorings) and Space (play).
//
// The whole replay is one request (about 25 KB gzipped for a finished five-seat game); each
// step is drawn from the view the server made for it, nothing is re-derived here.

import { h, s, replace, status, fragment, SEAT_COLOURS } from "./dom.js";
import { get, refusalText } from "./api.js";
import { frame } from "./common.js";
import { Cards, gameDataOf } from "./cards.js";
import { BoardPicture, seatName } from "./board.js";
import { seatsTable, resultTable, pendingText, cardList } from "./seats.js";

const gameId = decodeURIComponent(location.pathname.split("/")[2] || "");
const main = frame("Replay");
const page = { replay: null, index: 0, playing: null, perspective: "own", cards: new Cards(null), logItems: [], linking: null };

const parts = {
  message: h("div", { "aria-live": "assertive" }),
  where: h("p", { class: "pending", role: "status", "aria-live": "polite" }),
  board: h("div", { class: "board-wrap" }),
  controls: h("div", { class: "controls", role: "toolbar", "aria-label": "Replay controls" }),
  jumps: h("div", { class: "controls", role: "toolbar", "aria-label": "Jumps" }),
  seats: h("section", { class: "seats-wrap", "aria-label": "Seats", tabindex: 0 }),
  hand: h("section", { class: "hand", "aria-label": "Hand shown" }),
  chart: h("section", { class: "chart", "aria-label": "Points and tokens over the game" }),
  log: h("ol", { class: "log", "aria-label": "The game in words" }),
  result: h("div"),
};

replace(main,
  h("h1", {}, "Replay of ", h("a", { href: `/games/${encodeURIComponent(gameId)}` }, h("code", {}, gameId))),
  parts.message, parts.where, parts.controls, parts.jumps,
  h("div", { class: "replay" },
    parts.board,
    h("div", { class: "side" }, parts.result, parts.seats, parts.hand, parts.chart,
      h("section", { class: "log-wrap", "aria-label": "Log", tabindex: 0 }, h("h2", {}, "Log"), parts.log))),
  h("p", { class: "keys" }, "Keys: \u2190 \u2192 step, Home / End first and last, PageUp / PageDown previous and next city scoring, Space play or pause."));

const steps = () => page.replay.steps;
const step = () => steps()[page.index];

function shownHand(view) {
  // Whose hand is shown: yours (as the server showed it), none (a spectator), or, once the
  // game is over and every hand is known, any seat's.
  if (page.perspective === "own") return { seat: view.viewer, hand: view.hand, played: view.played };
  if (page.perspective === "spectator") return { seat: null, hand: [], played: [] };
  const seat = Number(page.perspective);
  const player = view.players.find((p) => p.seat === seat);
  return { seat, hand: (view.hands && view.hands[seat]) || [], played: (player && player.played) || [] };
}

function go(index, { fromLog = false } = {}) {
  if (!page.replay) return;
  page.index = Math.max(0, Math.min(steps().length - 1, index));
  draw(fromLog);
}

function draw(fromLog) {
  const current = step();
  const view = current.view;
  const shown = shownHand(view);
  if (!page.picture) page.picture = new BoardPicture(page.cards);
  page.picture.draw(view);
  if (page.picture.svg.parentNode !== parts.board) replace(parts.board, page.picture.svg);
  parts.where.textContent = `Version ${current.version} of ${page.replay.version} (step ${page.index + 1} of ${steps().length}): ${current.text || current.event.type.replaceAll("_", " ")}${current.by ? ` [${current.by}]` : ""} ${pendingText(view, shown.seat)}`;
  // Each part is made anew only when what it shows changed (most steps change one seat).
  redraw("seats", [view.players, view.architetto, view.pending, view.clock, shown.seat], () =>
    replace(parts.seats, h("h2", {}, "Seats"), seatsTable(view, page.cards, shown.seat)));
  redraw("hand", [shown], () => replace(parts.hand, shown.seat === null || shown.seat === undefined ? null : [
    h("h2", {}, `Hand of ${seatName(view, shown.seat)}`), cardList(shown.hand, page.cards, "Hand"),
    shown.played.length ? [h("h3", {}, "Played"), cardList(shown.played, page.cards, "Played cards")] : null]));
  redraw("result", [view.result], () => replace(parts.result, view.result ? resultTable(view) : null));
  scrub.value = String(page.index);
  scrub.setAttribute("aria-valuetext", `version ${current.version}`);
  const previous = parts.log.querySelector("li.current");
  if (previous) previous.classList.remove("current");
  const item = page.logItems[page.index];
  if (item) {
    item.classList.add("current");
    if (!fromLog) requestAnimationFrame(() => item.scrollIntoView({ block: "nearest" }));
  }
  nowLine.setAttribute("x1", String(chartX(page.index)));
  nowLine.setAttribute("x2", String(chartX(page.index)));
  document.body.dataset.version = current.version;
  // The address follows the board (a link to this step), once the steps stop coming.
  clearTimeout(page.linking);
  page.linking = setTimeout(() => history.replaceState(null, "", `#v=${current.version}`), 120);
}

const drawnParts = new Map();
function redraw(name, shows, make) {
  const key = JSON.stringify(shows);
  if (drawnParts.get(name) === key) return;
  drawnParts.set(name, key);
  make();
}

function next(test, from = page.index + 1, direction = 1) {
  for (let i = from; i >= 0 && i < steps().length; i += direction) if (test(steps()[i])) return go(i);
  return go(direction > 0 ? steps().length - 1 : 0);
}
const scoring = (item) => item.event.type === "city_scored";
const turnOf = (seat) => (item) => item.event.type === "step_started" && item.event.step === "play_card" && item.event.seat === seat;

function play() {
  if (page.playing) {
    clearInterval(page.playing);
    page.playing = null;
  } else {
    if (page.index >= steps().length - 1) go(0);
    page.playing = setInterval(() => {
      if (page.index >= steps().length - 1) return play();
      go(page.index + 1);
    }, Number(speed.value));
  }
  playButton.textContent = page.playing ? "Pause" : "Play";
  playButton.setAttribute("aria-pressed", page.playing ? "true" : "false");
}

const scrub = h("input", { type: "range", min: 0, max: 0, value: 0, step: 1, "aria-label": "Scrub through the game", oninput: (e) => go(Number(e.target.value)) });
const speed = h("select", { "aria-label": "Speed", onchange: () => { if (page.playing) { play(); play(); } } },
  [[1000, "1 step a second"], [400, "2.5 a second"], [150, "fast"], [40, "very fast"]].map(([ms, label]) => h("option", { value: ms, selected: ms === 400 }, label)));
const playButton = h("button", { type: "button", "aria-pressed": "false", onclick: play }, "Play");
const seatChoice = h("select", { "aria-label": "The seat whose next turn to jump to" });
const perspective = h("select", { "aria-label": "Whose hand to show", onchange: (e) => { page.perspective = e.target.value; draw(); } });

const CHART_W = 600;
const CHART_H = 180;
const nowLine = s("line", { class: "now", y1: 0, y2: CHART_H });
const chartX = (index) => (steps().length > 1 ? (index / (steps().length - 1)) * CHART_W : 0);

function chart() {
  const seats = steps()[steps().length - 1].view.players.map((p) => p.seat);
  const points = (view, seat) => {
    const p = view.players.find((x) => x.seat === seat);
    if (!p) return 0; // before the seats are drawn
    return p.tokens ? p.tokens.reduce((a, b) => a + b, 0) + p.trade_bonus : p.token_count;
  };
  const held = (view, seat) => (view.players.find((x) => x.seat === seat) || { token_count: 0 }).token_count;
  const series = seats.map((seat) => steps().map((item) => points(item.view, seat)));
  const tokens = seats.map((seat) => steps().map((item) => held(item.view, seat)));
  const top = Math.max(1, ...series.flat());
  const most = Math.max(1, ...tokens.flat());
  const line = (values, max, height, offset, seat, dashed) => s("polyline", {
    fill: "none", stroke: SEAT_COLOURS[seat], "stroke-width": 2.5, "stroke-dasharray": dashed ? "5 3" : null,
    points: values.map((v, i) => `${chartX(i).toFixed(1)},${(offset + height - (v / max) * height).toFixed(1)}`).join(" "),
  });
  const svg = s("svg", { viewBox: `-30 -10 ${CHART_W + 40} ${CHART_H + 30}`, role: "img",
    "aria-label": `Points (solid, up to ${top}) and tokens (dashed, up to ${most}) of each seat over the game; the red line is now` },
  s("line", { class: "axis", x1: 0, y1: CHART_H, x2: CHART_W, y2: CHART_H }),
  s("text", { x: -26, y: 10, text: String(top) }), s("text", { x: -26, y: CHART_H, text: "0" }),
  seats.map((seat, i) => line(series[i], top, CHART_H * 0.62, 0, seat, false)),
  seats.map((seat, i) => line(tokens[i], most, CHART_H * 0.3, CHART_H * 0.68, seat, true)),
  nowLine);
  svg.addEventListener("click", (event) => {
    const box = svg.getBoundingClientRect();
    const x = ((event.clientX - box.left) / box.width) * (CHART_W + 40) - 30;
    go(Math.round((x / CHART_W) * (steps().length - 1)));
  });
  replace(parts.chart, h("h2", {}, "Points and tokens"), svg,
    h("p", { class: "hint" }, seats.map((seat) => h("span", { class: `swatch seat-${seat}`, "aria-hidden": "true" }, String(seat))), " solid: points so far; dashed: tokens held"));
}

function controls() {
  replace(parts.controls,
    h("button", { type: "button", onclick: () => go(0) }, "First"),
    h("button", { type: "button", onclick: () => go(page.index - 1) }, "Back"),
    playButton,
    h("button", { type: "button", onclick: () => go(page.index + 1) }, "Next"),
    h("button", { type: "button", onclick: () => go(steps().length - 1) }, "Last"),
    speed, scrub);
  const seats = steps()[steps().length - 1].view.players;
  replace(seatChoice, seats.map((p) => h("option", { value: p.seat }, `${p.name} (seat ${p.seat})`)));
  const over = page.replay.over;
  replace(perspective,
    h("option", { value: "own" }, page.replay.viewer === null ? "Spectator (as you see it)" : "Your own seat"),
    page.replay.viewer === null ? null : h("option", { value: "spectator" }, "Spectator"),
    over ? seats.filter((p) => p.seat !== page.replay.viewer).map((p) => h("option", { value: String(p.seat) }, `${p.name} (seat ${p.seat})`)) : null);
  replace(parts.jumps,
    h("button", { type: "button", onclick: () => next(scoring, page.index - 1, -1) }, "Previous scoring"),
    h("button", { type: "button", onclick: () => next(scoring) }, "Next scoring"),
    h("label", {}, "Next turn of ", seatChoice),
    h("button", { type: "button", onclick: () => next(turnOf(Number(seatChoice.value))) }, "Go to that turn"),
    h("label", {}, "Hand shown ", perspective));
}

// The log holds the steps that say something in words; a step of bookkeeping is shown by
// the line before it (page.logItems has a line for every step, shared).
function log() {
  const lines = [];
  let line = null;
  page.logItems = steps().map((item, index) => {
    if (item.text || !line) {
      line = h("li", { dataset: { version: item.version } },
        h("button", { type: "button", onclick: () => go(index, { fromLog: true }) }, item.text || item.event.type.replaceAll("_", " ")));
      lines.push(line);
    }
    return line;
  });
  replace(parts.log, lines);
}

document.addEventListener("keydown", (event) => {
  if (!page.replay || event.altKey || event.ctrlKey || event.metaKey) return;
  const inField = ["INPUT", "SELECT", "TEXTAREA"].includes(document.activeElement && document.activeElement.tagName);
  const keys = {
    ArrowRight: () => go(page.index + 1),
    ArrowLeft: () => go(page.index - 1),
    Home: () => go(0),
    End: () => go(steps().length - 1),
    PageDown: () => next(scoring),
    PageUp: () => next(scoring, page.index - 1, -1),
    " ": () => play(),
  };
  const action = keys[event.key];
  if (!action || (inField && event.key !== "PageUp" && event.key !== "PageDown")) return;
  event.preventDefault();
  action();
});

function versionFromHash() {
  const version = fragment("v");
  return version && /^\d+$/.test(version) ? Number(version) : null;
}

function indexOfVersion(version) {
  let found = 0;
  steps().forEach((item, index) => { if (item.version <= version) found = index; });
  return found;
}

try {
  page.replay = await get(`/api/games/${encodeURIComponent(gameId)}/replay`);
  page.cards = new Cards(gameDataOf(steps()));
  scrub.max = String(steps().length - 1);
  controls();
  const wanted = versionFromHash();
  go(wanted === null ? 0 : indexOfVersion(wanted));
  performance.mark("replay-drawn");
  // The board first; the log in words and the chart of the whole game right after it.
  setTimeout(() => {
    log();
    chart();
    go(page.index);
  }, 0);
  window.addEventListener("hashchange", () => {
    const version = versionFromHash();
    if (version !== null && version !== step().version) go(indexOfVersion(version));
  });
  page.go = go;
  window.patricianReplay = page; // for the tests and the benchmark: what the page drew
} catch (error) {
  status(parts.message, error.status === 404 ? "There is no such game." : `Could not load the replay: ${refusalText(error)}`, "error");
}
