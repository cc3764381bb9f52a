// The replay viewer (/games/{id}/replay, a version deep-linked as #v=123): every step of
// the game as you may see it (everything once it is over), stepped, scrubbed or played at a
// chosen speed; jumps to the next city scoring or the next turn of a seat; the log in words
// beside the board, synced both ways; whose hand is shown (a seat, or none as a spectator:
// any seat once the game is over); each seat's points and tokens over the game; the keys
// arrows, Home/End, PageUp/PageDown (scorings) and Space (play).
//
// The step's words and the controls stay at the top of the window (sticky) wherever the page
// is scrolled; the log scrolls inside its own box (its scrollTop, never the page's).
//
// The whole replay is one request (about 25 KB gzipped for a finished five-seat game); each
// step is drawn from the view the server made for it, nothing is re-derived here.

import { h, s, replace, status, fragment, SEAT_COLOURS } from "./dom.js";
import { get, refusalText } from "./api.js";
import { frame } from "./common.js";
import { Cards, gameDataOf } from "./cards.js";
import { BoardPicture, onColumnsChange, seatName } from "./board.js";
import { seatsTable, resultTable, pendingText, cardList, actedBy } from "./seats.js";
import { gameTitle, pageTitle } from "./names.js";
import { analysisOf } from "./analysis.js";

const gameId = decodeURIComponent(location.pathname.split("/")[2] || "");
const title = pageTitle("Replay"); // "Replay: Ada, Bea and Greedy bot — Towers" once loaded
const main = frame(title);
const page = { replay: null, index: 0, playing: null, perspective: "own", cards: new Cards(null), logItems: [], linking: null };

const parts = {
  message: h("div", { "aria-live": "assertive" }),
  where: h("div", { class: "where", role: "status", "aria-live": "polite" }),
  board: h("div", { class: "board-wrap" }),
  controls: h("div", { class: "controls", role: "toolbar", "aria-label": "Replay controls" }),
  jumps: h("div", { class: "controls", role: "toolbar", "aria-label": "Jumps" }),
  seats: h("section", { class: "seats-wrap", "aria-label": "Seats", tabindex: 0 }),
  hand: h("section", { class: "hand", "aria-label": "Hand shown" }),
  chart: h("section", { class: "chart", "aria-label": "Points and tokens over the game" }),
  log: h("ol", { class: "log", "aria-label": "The game in words" }),
  result: h("div"),
  analysis: h("div"),
};
parts.logBox = h("section", { class: "log-wrap", "aria-label": "Log", tabindex: 0 }, h("h2", {}, "Log"), parts.log);
parts.named = h("a", { href: `/games/${encodeURIComponent(gameId)}` }, "the game"); // its title once loaded

replace(main,
  h("h1", {}, "Replay: ", parts.named),
  parts.message, h("div", { class: "replay-bar" }, parts.where, parts.controls), parts.jumps,
  h("div", { class: "replay" },
    parts.board,
    h("div", { class: "side" }, parts.result, parts.seats, parts.chart, parts.analysis, parts.logBox, parts.hand)),
  h("p", { class: "keys" }, "Keys: \u2190 \u2192 step, Home / End first and last, PageUp / PageDown previous and next city scoring, Space play or pause."));

const noBoard = h("p", { class: "hint", hidden: true }, "No board yet: the cities are laid out once the table is full.");
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
  page.picture.draw(view, {}, parts.board.clientWidth || window.innerWidth);
  if (page.picture.svg.parentNode !== parts.board) replace(parts.board, noBoard, page.picture.svg);
  noBoard.hidden = view.cities.length > 0;
  where(current);
  // Each part is made anew only when what it shows changed (most steps change one seat).
  // "You" is the viewer's own seat only, never the seat whose hand is shown.
  redraw("seats", [view.players, view.architetto, view.pending, view.clock], () =>
    replace(parts.seats, h("h2", {}, "Seats"), seatsTable(view, page.cards, page.replay.viewer)));
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
    if (!fromLog) requestAnimationFrame(() => showInLog(item));
  }
  nowLine.setAttribute("x1", String(chartX(page.index)));
  nowLine.setAttribute("x2", String(chartX(page.index)));
  document.body.dataset.version = current.version;
  // The address follows the board (a link to this step), once the steps stop coming.
  clearTimeout(page.linking);
  page.linking = setTimeout(() => history.replaceState(null, "", `#v=${current.version}`), 120);
}

// What this step is: its count, the event in words, who acted for the seat when it was not
// its player (a bot it was handed to, the clock's bot), and the state after it (whose
// decision and what step, or the end), all from this step's own view.
function where(current) {
  const view = current.view;
  const before = page.index > 0 ? steps()[page.index - 1].view.pending : null;
  const actor = before ? before.seat : null; // the seat whose decision this step answered
  const newTurn = current.event.type === "step_started" && current.event.seat !== actor;
  const by = newTurn ? "" : actedBy(current.by, view, actor);
  const pending = view.pending || {};
  replace(parts.where,
    h("p", { class: "step-count" }, `Step ${page.index + 1} of ${steps().length} (version ${current.version} of ${page.replay.version})`),
    current.text ? h("p", { class: "step-event" }, current.text) : null,
    by ? h("p", { class: "step-by" }, by) : null,
    page.analysis ? page.analysis.wordsAt(page.index) : null,
    h("p", { class: "pending step-state", dataset: { phase: view.phase, seat: pending.seat ?? "", step: pending.step ?? "" } },
      pendingText(view, page.replay.viewer)));
}

// The chosen line of the log into view inside the log's own box (the page never scrolls):
// centred when it was out of view, left alone when it shows.
function showInLog(item) {
  const box = parts.logBox;
  const head = box.firstElementChild.getBoundingClientRect().height;
  const outer = box.getBoundingClientRect();
  const line = item.getBoundingClientRect();
  if (line.top >= outer.top + head && line.bottom <= outer.bottom) return;
  box.scrollTop += line.top - (outer.top + head) - (outer.height - head - line.height) / 2;
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

// (The hand shown comes last: it grows as the game goes, and moves nothing else then.)

// The chart: each seat's points (its tokens' values and trade bonus: solid) and tokens held
// (dashed) over the game, in two panels whose axes are true: each from the real lowest to the
// highest value, zero drawn and labelled where it is, the versions along the bottom.
const CHART_W = 360;
const PANELS = { points: { top: 22, height: 104 }, tokens: { top: 158, height: 48 } };
const CHART_H = PANELS.tokens.top + PANELS.tokens.height;
const VIEW_BOX = [-34, 0, CHART_W + 44, CHART_H + 24];
const nowLine = s("line", { class: "now", y1: PANELS.points.top, y2: CHART_H });
const chartX = (index) => (steps().length > 1 ? (index / (steps().length - 1)) * CHART_W : 0);

function panel(name, title, series, dashed, seats) {
  const { top, height } = PANELS[name];
  const known = series.flat().filter((v) => v !== null);
  const low = known.length ? Math.min(...known) : 0;
  const high = Math.max(low + 1, ...known);
  const y = (v) => top + height - ((v - low) / (high - low)) * height;
  const ticks = [...new Set([low, Math.round((low + high) / 2), high, ...(low < 0 && high > 0 ? [0] : [])])];
  const runs = (values) => values.reduce((all, v, i) => {
    if (v === null) all.push([]);
    else all[all.length - 1].push(`${chartX(i).toFixed(1)},${y(v).toFixed(1)}`);
    return all;
  }, [[]]).filter((run) => run.length > 1);
  return s("g", { class: `panel ${name}`, dataset: { low, high } },
    s("text", { class: "panel-title", x: 0, y: top - 8, text: title }),
    ticks.map((v) => [
      s("line", { class: v === 0 ? "zero" : "grid", x1: 0, x2: CHART_W, y1: y(v), y2: y(v), dataset: { value: v } }),
      s("text", { class: "tick", x: -5, y: y(v) + 4, "text-anchor": "end", text: String(v) }),
    ]),
    s("line", { class: "axis", x1: 0, x2: 0, y1: top, y2: top + height }),
    seats.map((seat, i) => runs(series[i]).map((run) => s("polyline", {
      fill: "none", stroke: SEAT_COLOURS[seat], "stroke-width": 2.5, "stroke-dasharray": dashed ? "5 3" : null,
      points: run.join(" "), dataset: { seat },
    }))));
}

function chart() {
  const last = steps()[steps().length - 1].view;
  const seats = last.players.map((p) => p.seat);
  const of = (view, seat) => view.players.find((x) => x.seat === seat);
  // A seat's points where its tokens are known (null where hidden, or before the seats).
  const points = (view, seat) => {
    const p = of(view, seat);
    return p && p.tokens ? p.tokens.reduce((a, b) => a + b, 0) + (p.trade_bonus || 0) : null;
  };
  const held = (view, seat) => (of(view, seat) ? of(view, seat).token_count : null);
  const series = seats.map((seat) => steps().map((item) => points(item.view, seat)));
  const tokens = seats.map((seat) => steps().map((item) => held(item.view, seat)));
  const pointsPanel = panel("points", "Points (tokens' values and trade bonus)", series, false, seats);
  const tokensPanel = panel("tokens", "Tokens held", tokens, true, seats);
  const [first, final] = [steps()[0].version, page.replay.version];
  const svg = s("svg", { viewBox: VIEW_BOX.join(" "), role: "img",
    "aria-label": `Points (solid, from ${pointsPanel.dataset.low} to ${pointsPanel.dataset.high}) and tokens held (dashed, from ${tokensPanel.dataset.low} to ${tokensPanel.dataset.high}) of each seat from version ${first} to ${final}; the red line is this step` },
  pointsPanel, tokensPanel,
  s("text", { class: "tick", x: 0, y: CHART_H + 18, text: `version ${first}` }),
  s("text", { class: "tick", x: CHART_W, y: CHART_H + 18, "text-anchor": "end", text: `version ${final}` }),
  nowLine);
  svg.addEventListener("click", (event) => {
    const box = svg.getBoundingClientRect();
    const x = ((event.clientX - box.left) / box.width) * VIEW_BOX[2] + VIEW_BOX[0];
    go(Math.round((Math.max(0, Math.min(CHART_W, x)) / CHART_W) * (steps().length - 1)));
  });
  const hidden = seats.some((_, i) => series[i].some((v, j) => v === null && tokens[i][j] !== null));
  replace(parts.chart, h("h2", {}, "Points and tokens"), svg,
    h("ul", { class: "legend" }, last.players.map((p) => h("li", {},
      h("span", { class: `swatch seat-${p.seat}`, "aria-hidden": "true" }, String(p.seat)), ` ${p.name}`))),
    h("p", { class: "hint" }, "Solid: points so far; dashed: tokens held; the red line: this step.",
      hidden ? " A seat's points are not drawn while the values of its tokens are hidden." : ""));
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
    h("label", {}, "Hand shown ", perspective),
    page.analysis ? page.analysis.jumps : null);
}

// A finished game's analysis (./analysis.js): its panel, its jump, its marks on the log.
function analyse() {
  page.analysis = analysisOf({
    gameId, steps, indexOfVersion, go, index: () => page.index, cards: () => page.cards,
    logItems: () => page.logItems, say: (text) => status(parts.message, text),
    onReady: () => { page.analysis.markLog(); where(step()); },
  });
  replace(parts.analysis, page.analysis.section);
  page.analysis.load();
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

function versionFromHash(hash = location.hash) {
  const version = fragment("v", hash);
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
  parts.named.textContent = gameTitle(steps()[steps().length - 1].view);
  title.set(`Replay: ${parts.named.textContent}`);
  scrub.max = String(steps().length - 1);
  if (page.replay.over) analyse();
  controls();
  const wanted = versionFromHash();
  go(wanted === null ? 0 : indexOfVersion(wanted));
  performance.mark("replay-drawn");
  // The board first; the log in words and the chart of the whole game right after it.
  setTimeout(() => {
    log();
    if (page.analysis) page.analysis.markLog(); // if it came first
    chart();
    go(page.index);
  }, 0);
  onColumnsChange(parts.board, () => draw(true)); // the board's columns follow its width

  window.addEventListener("hashchange", (event) => {
    // The fragment followed to, not the address now: the address of the step before may
    // have been written since (its `replaceState`, 120 ms after it was drawn).
    const version = versionFromHash(new URL(event.newURL).hash);
    if (version !== null && version !== step().version) go(indexOfVersion(version));
  });
  page.go = go;
  window.patricianReplay = page; // for the tests and the benchmark: what the page drew
} catch (error) {
  status(parts.message, error.status === 404 ? "There is no such game." : `Could not load the replay: ${refusalText(error)}`, "error");
}
