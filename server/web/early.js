// The play page's first two reads (its board and its events), begun as soon as this small
// module arrives, while the page's other modules are still on their way: on a first visit
// the modules and the reads then take the time of the longer, not of both one after the
// other, and a turn's choices are drawn that much sooner. The play page's shell loads it
// (server/api/pages.py); play.js takes the reads.

import { get } from "./api.js";

const match = /^\/games\/([^/]+)$/.exec(location.pathname);
if (match) {
  const path = `/api/games/${match[1]}`;
  const reads = { id: decodeURIComponent(match[1]), view: get(path), events: get(`${path}/events?after=0`) };
  // Handled here too: a failure is play.js's to say, never an "uncaught" of the page.
  reads.view.catch(() => {});
  reads.events.catch(() => {});
  window.patricianEarly = reads;
}
