// The play page of one game (/games/{id}): the board, every seat, your hand, your options;
// a turn staged step by step (each step previewed by the server, which alone knows the
// rules), undone step by step, and sent as one request when confirmed; other seats' moves
// arriving live on the game's stream; what happened since your last turn, in words; once
// the game is over, the winners and the scores first (ending.js). A key to the board's marks
// under it (legend.js), and the Delegates' standing beside it when the module is on; whose
// turn it is, your hand and your choices in the dock (dock.js), a bar at the foot of a phone.

import { h, replace, status } from "./dom.js";
import { get, newCommandId, refusalText } from "./api.js";
import { describe as describeMove, ask, refusalLine } from "./moves.js";
import { frame } from "./common.js";
import { gameTitle, pageTitle } from "./names.js";
import { Cards, gameDataOf } from "./cards.js";
import { BoardPicture, onColumnsChange } from "./board.js";
import { seatsTable, pendingText, cardList } from "./seats.js";
import { follow } from "./live.js";
import { joinPanel } from "./table.js";
import { finalSection, logLine } from "./ending.js";
import { delegatesSection } from "./delegates.js";
import { Legend } from "./legend.js";
import { TalkPanel } from "./talk.js";
import { rematchOffer } from "./rematch.js";
import { Dock } from "./dock.js";
import { handButtons, optionButtons, stagedTurn } from "./hand.js";
import { sinceYourLastTurn } from "./since.js";

const gameId = decodeURIComponent(location.pathname.split("/")[2] || "");
const path = encodeURIComponent(gameId);
const title = pageTitle("Game"); // the game's title once its board is read
const main = frame(title);
const page = {
  base: null, // the board as the server has it
  shown: null, // the board drawn: the base, or the preview of the staged commands
  staged: [], // the commands staged for this turn, not sent yet
  stagedOn: null, // the version they were staged on
  ended: false, // the last staged command turned up a card: confirm before staging more
  log: [], // [{version, event, text}] the events seen, in words
  cards: new Cards(null),
  busy: false,
  drawn: null, // the version last drawn, and when (the benchmark reads it)
  heard: null, // the version last heard of on the stream, and when
};

const parts = {
  title: h("h1", { class: "game-title" }, "Game"),
  since: h("section", { class: "since", "aria-label": "Since your last turn", hidden: true }),
  pending: h("p", { class: "pending", role: "status", "aria-live": "polite" }),
  board: h("div", { class: "board-wrap" }),
  side: h("div", { class: "side" }),
  stage: h("section", { class: "stage", "aria-label": "Your turn so far", hidden: true }),
  message: h("div", { class: "message", "aria-live": "assertive" }),
  hand: h("section", { class: "hand", "aria-label": "Your hand" }),
  played: h("section", { class: "played", "aria-label": "Your played cards" }),
  options: h("section", { class: "options", "aria-label": "Your options" }),
  seats: h("section", { class: "seats-wrap", "aria-label": "Seats", tabindex: 0 }),
  delegates: h("div", { class: "delegates-wrap" }),
  final: h("div", { class: "final-wrap" }),
  legend: new Legend(),
  talk: new TalkPanel(gameId),
  table: h("div", { class: "table-wrap" }),
  log: h("ol", { class: "log", "aria-label": "What happened" }),
  links: h("p", { class: "links" }),
};

const dock = new Dock(parts.pending, parts.message, parts.stage, parts.hand, parts.options);

replace(main,
  parts.title,
  parts.final, parts.table, parts.since,
  h("div", { class: "play" },
    h("div", { class: "board-column" }, parts.board, parts.legend.node),
    h("div", { class: "side" }, dock.node, parts.played, parts.seats, parts.delegates, parts.talk.node,
      h("section", { class: "log-wrap", "aria-label": "Game log", tabindex: 0 }, h("h2", {}, "Game log"), parts.log)),
  ),
  parts.links,
);

const viewer = () => (page.base ? page.base.viewer : null);
const deciding = () => page.base && page.base.phase === "playing" && page.base.pending && page.base.pending.seat === viewer();

const describe = (command) => describeMove(command, page.cards, page.shown.pending ? page.shown.pending.city : null);

function setBusy(busy) {
  page.busy = busy;
  document.body.dataset.busy = busy;
}

// --- staging a turn -----------------------------------------------------------------------

async function stage(command) {
  if (page.busy || page.ended || !deciding()) return;
  setBusy(true);
  const staged = [...page.staged, command];
  const on = page.staged.length ? page.stagedOn : page.base.version;
  try {
    const { answer, refused } = await ask(`/api/games/${path}/preview`, { expected_version: on, commands: staged });
    if (refused) {
      if (refused.status === 409) await refresh(); // the game moved on: drawn as it is now
      replace(parts.message, refusalLine(refused));
      return;
    }
    if (page.base.version !== on) return; // the game moved on meanwhile: the staging is void
    page.staged = staged;
    page.stagedOn = on;
    page.ended = answer.ends_batch || !answer.view || !answer.view.pending || answer.view.pending.seat !== viewer();
    if (answer.view) page.shown = answer.view;
    status(parts.message, "");
  } catch (error) {
    status(parts.message, `Could not reach the server: ${refusalText(error)}`, "error");
  } finally {
    setBusy(false);
    render();
  }
}

async function undo() {
  if (page.busy || !page.staged.length) return;
  const staged = page.staged.slice(0, -1);
  page.staged = [];
  page.ended = false;
  page.shown = page.base;
  status(parts.message, "");
  for (const command of staged) await stage(command);
  render();
}

function clear() {
  page.staged = [];
  page.ended = false;
  page.shown = page.base;
  render();
}

async function confirm() {
  if (page.busy || !page.staged.length) return;
  setBusy(true);
  render();
  try {
    const { refused } = await ask(`/api/games/${path}/commands`, {
      // the version the turn was staged on: if the game moved on since, it is refused (409)
      expected_version: page.stagedOn,
      command_id: newCommandId(),
      commands: page.staged,
    });
    if (refused) {
      replace(parts.message, refusalLine(refused));
    } else {
      // Sent: the board drawn next and the line of whose turn it is say so; no banner stays.
      page.staged = [];
      page.ended = false;
      status(parts.message, "");
    }
  } catch (error) {
    status(parts.message, `Could not reach the server: ${refusalText(error)}`, "error");
  } finally {
    setBusy(false);
  }
  await refresh();
}

// --- drawing ------------------------------------------------------------------------------

function renderStage() {
  parts.stage.hidden = !deciding();
  parts.stage.dataset.empty = !page.staged.length; // on a phone, shown once a step is staged
  if (!deciding()) {
    replace(parts.stage);
    return;
  }
  replace(parts.stage, stagedTurn(page.staged.map(describe), {
    ended: page.ended, busy: page.busy, onConfirm: confirm, onUndo: undo, onClear: clear,
  }));
}

function renderHand(view) {
  const seated = viewer() !== null && viewer() !== undefined;
  parts.hand.hidden = !seated || !view.hand.length;
  parts.played.hidden = !seated || !view.played.length;
  replace(parts.played, parts.played.hidden ? null
    : [h("h2", {}, "Your played cards"), cardList(view.played, page.cards, "Your played cards")]);
  if (parts.hand.hidden) {
    replace(parts.hand);
    return;
  }
  const legal = choosing() ? view.legal_commands : [];
  const step = choosing() && view.pending ? view.pending.step : null;
  replace(parts.hand, h("h2", {}, "Your hand"), handButtons(view.hand, page.cards, { legal, step, onCommand: stage }));
}

function choosing() {
  return deciding() && !page.ended && !page.busy;
}

function renderOptions(view) {
  replace(parts.options, optionButtons(choosing() ? view.legal_commands : [], describe, stage));
}

function renderLog() {
  replace(parts.log, page.log.filter((item) => item.text).slice(-80).map((item) => h("li", { dataset: { version: item.version } }, logLine(item, page.base))));
  parts.log.parentElement.scrollTop = parts.log.parentElement.scrollHeight;
}

function render() {
  const view = page.shown;
  if (!view) return;
  parts.title.textContent = gameTitle(page.base);
  title.set(parts.title.textContent);
  document.body.dataset.version = page.base.version;
  document.body.dataset.phase = page.base.phase;
  document.body.dataset.busy = page.busy;
  document.body.dataset.staged = page.staged.length;
  document.body.dataset.deciding = Boolean(deciding());
  // With a turn staged, the step it reached (or, once it ends, what is left to do)
  parts.pending.textContent = !page.staged.length ? pendingText(page.base, viewer())
    : page.ended ? "Your turn: confirm and send it." : pendingText(view, viewer());
  if (!page.picture) page.picture = new BoardPicture(page.cards);
  const focused = document.activeElement && document.activeElement.getAttribute("aria-label");
  const changed = page.picture.draw(view, { legal: view.legal_commands, deciding: choosing(), onCommand: stage }, parts.board.clientWidth || window.innerWidth);
  const svg = page.picture.svg;
  if (svg.parentNode !== parts.board) replace(parts.board, svg);
  for (const name of changed) {
    const tile = svg.querySelector(`g.city[data-city="${CSS.escape(name)}"]`);
    if (tile) tile.classList.add("changed");
  }
  if (focused && !svg.contains(document.activeElement)) {
    const again = [...svg.querySelectorAll("[aria-label]")].find((node) => node.getAttribute("aria-label") === focused);
    if (again) again.focus();
  }
  replace(parts.seats, h("h2", {}, "Seats"), seatsTable(view, page.cards, viewer()));
  parts.legend.draw(view);
  replace(parts.delegates, delegatesSection(view, page.cards));
  renderStage();
  renderHand(view);
  renderOptions(view);
  replace(parts.table, joinPanel(page.base, gameId, refresh));
  replace(parts.links, links(), " \u00B7 ", h("a", { href: "/" }, "Lobby"));
  renderEnd();
  renderLog();
  parts.talk.update(page.base);
  bringPendingCity(view);
  const version = view.version;
  requestAnimationFrame(() => {
    // Drawn: the frame that shows this version is being made (the benchmark reads it).
    if (!page.drawn) performance.mark("board-drawn");
    // A turn's choices drawn for the first time (the benchmark reads it, phone-sized).
    if (!page.choicesShown && choosing() && view.legal_commands.length) {
      page.choicesShown = true;
      performance.mark("choices-shown");
    }
    if (!page.drawn || version > page.drawn.version) page.drawn = { version, at: performance.timeOrigin + performance.now() };
  });
}

// The city a step asks you to build in, brought into the room the dock leaves.
function bringPendingCity(view) {
  const city = choosing() && view.pending ? view.pending.city : null;
  if (!city) return;
  const tile = page.picture.svg.querySelector(`g.city[data-city="${CSS.escape(city)}"]`);
  dock.bring(tile, `${view.version}:${page.staged.length}:${city}`);
}

function links() {
  const over = page.base.phase === "over";
  return [h("a", { href: `/games/${path}/replay` }, "Replay"), " \u00B7 ",
    over ? [h("a", { href: `/api/games/${path}/record`, download: `${gameId}.json` }, "Record"), " \u00B7 ", h("a", { href: `/audit#game=${path}` }, "Audit"), " \u00B7 "] : null,
    h("a", { href: "/rules" }, "Rules")];
}

// Once the game is over: the winners and the scores at the top of the page, and nothing left
// over from the play (a banner of an earlier action, "since your last turn", the turn line).
// When it ends while the page is open, the page goes up to them.
function renderEnd() {
  const over = page.base.phase === "over";
  parts.pending.hidden = over;
  dock.node.hidden = over;
  if (!over) {
    replace(parts.final);
    return;
  }
  const first = !parts.final.firstChild;
  parts.since.hidden = true;
  status(parts.message, "");
  replace(parts.final, finalSection(page.base, links()), rematchOffer(page.base, gameId));
  if (first && page.drawn) {
    window.scrollTo({ top: 0 });
    parts.final.firstChild.focus({ preventScroll: true });
  }
}

// "Since your last turn": the events after your own last move, in words.
function showSince() {
  const told = sinceYourLastTurn(page.log, page.base, viewer(), () => { parts.since.hidden = true; });
  if (!told) return;
  replace(parts.since, told);
  parts.since.hidden = false;
}

// The first reads, begun by early.js before this module arrived (once, for this game).
function takeEarlyReads(after) {
  const early = window.patricianEarly;
  window.patricianEarly = null;
  return early && early.id === gameId && after === 0 ? [early.view, early.events] : null;
}

let refreshing = null;
let again = false;
async function refresh() {
  if (refreshing) {
    again = true; // something happened while the last read was on its way: read once more
    return refreshing;
  }
  refreshing = (async () => {
    try {
      const after = page.log.length ? page.log[page.log.length - 1].version : 0;
      const early = takeEarlyReads(after);
      const [view, events] = await Promise.all(early || [
        get(`/api/games/${path}`),
        get(`/api/games/${path}/events?after=${after}`),
      ]);
      if (!page.log.length) page.cards = new Cards(gameDataOf(events.events));
      for (const item of events.events) if (!page.log.length || item.version > page.log[page.log.length - 1].version) page.log.push(item);
      const moved = !page.base || page.base.version !== view.version;
      const before = page.base;
      page.base = view;
      if (moved || !page.staged.length) {
        if (page.staged.length) status(parts.message, "The game moved on: your staged moves were cleared.", "info");
        else if (moved && before) status(parts.message, ""); // what it said was of a board gone by
        page.staged = [];
        page.ended = false;
        page.shown = view;
      }
      render();
    } catch (error) {
      status(parts.message, error.status === 404 ? "There is no such game." : `Could not load the game: ${refusalText(error)}`, "error");
    } finally {
      refreshing = null;
    }
    if (again) {
      again = false;
      // Only if the stream told of a version this read did not reach (an append's events
      // come one by one, but one read already holds them all).
      if (!page.heard || !page.base || page.heard.version > page.base.version) await refresh();
    }
  })();
  return refreshing;
}

await refresh();
showSince();
if (page.base) {
  follow(gameId, () => page.base, () => page.log.length ? page.log[page.log.length - 1].version : 0, (version) => {
    if (!page.heard || version > page.heard.version) page.heard = { version, at: performance.timeOrigin + performance.now() };
    refresh();
  });
}
onColumnsChange(parts.board, render); // the board's columns follow its width
window.patricianPage = page; // for the tests and for the curious: what the page drew
