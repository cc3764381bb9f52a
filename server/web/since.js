// "Since your last turn" on the play page: the events after the viewer's own last move, in
// words (what the others did while you were away), until the game is over.

import { h } from "./dom.js";
import { logLine } from "./ending.js";

// The section's content for `viewer` from the page's log (`[{version, event, text}]`), or
// null when there is nothing to tell; `onDone` hides it.
export function sinceYourLastTurn(log, view, viewer, onDone) {
  if (viewer === null || viewer === undefined || view.phase === "over") return null;
  let last = -1;
  log.forEach((item, index) => {
    const e = item.event;
    if (e.seat === viewer && e.type !== "step_started" && e.type !== "hand_dealt") last = index;
  });
  const since = log.slice(last + 1).filter((item) => item.text && item.event.type !== "step_started");
  if (last < 0 || !since.length) return null;
  return [h("h2", {}, "Since your last turn"),
    h("ul", {}, since.slice(-30).map((item) => h("li", {}, logLine(item, view)))),
    h("button", { type: "button", onclick: onDone }, "Got it")];
}
