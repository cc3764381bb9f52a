// Table talk on the play page: the thread of the game (GET /api/games/{id}/talk), newest at the
// bottom in a box of its own, and a form to say something (POST). Shown to the seated players
// while the game is on and after its end (nobody else may read it during play: the server
// answers them 403), and to anyone else once it is over, read-only. The game's stream carries no talk, so the page asks for
// what came after the last message it has every few seconds while the tab is in view, and at
// once after sending; once the game is over it reads the thread one last time and stops.
// Every message goes in as text, never as HTML (dom.js), its line breaks as <br>.

import { h, replace, status } from "./dom.js";
import { get, post, session, ApiError, refusalText } from "./api.js";

const LIMIT = 500; // characters of a message once cleaned (docs/api.md, "Table talk")
const EVERY = 3000; // ms between two reads while the game is on and the tab in view
const PAGE = 100; // the most messages one read answers
const KEPT = 500; // the newest messages a thread keeps
const RATE = /at most (\d+) messages a minute/;

let panels = 0;

// A message's length as the server counts it: NFC, each line trimmed, then the whole.
export function talkLength(text) {
  const cleaned = text.normalize("NFC").trim().split("\n").map((line) => line.trim()).join("\n").trim();
  return [...cleaned].length;
}

// "14:05" today, "3 Dec, 14:05" another day, in the reader's time zone.
function when(iso) {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return "";
  const time = date.toLocaleTimeString([], { hour: "2-digit", minute: "2-digit" });
  if (date.toDateString() === new Date().toDateString()) return time;
  return `${date.toLocaleDateString([], { day: "numeric", month: "short" })}, ${time}`;
}

function withBreaks(text) {
  return text.split("\n").flatMap((line, index) => (index ? [h("br"), line] : [line]));
}

export class TalkPanel {
  constructor(gameId) {
    this.gameId = gameId;
    this.path = `/api/games/${encodeURIComponent(gameId)}/talk`;
    this.mode = "hidden"; // "live": a seated player, game on; "over": anyone, read-only
    this.seat = null; // the reader's seat, to mark their own messages
    this.messages = [];
    this.last = "0-0";
    this.timer = null;
    this.reading = null;
    this.again = false;
    this.readOver = false; // the thread was read once the game was over: nothing more comes
    this.sending = false;
    this.waitUntil = 0; // when the rate limit lets this player send again (ms)
    const id = `talk-${++panels}`;
    this.list = h("ul", { class: "devices talk-lines" });
    this.box = h("div", { class: "log-wrap talk-thread", role: "log", "aria-label": "Messages", tabindex: 0 }, this.list);
    this.none = h("p", { class: "hint" }, "No messages yet: say hello to the table.");
    this.text = h("textarea", {
      id: `${id}-text`, name: "text", rows: 3, cols: 36, autocomplete: "off",
      "aria-describedby": `${id}-hint ${id}-error`,
      oninput: () => this.count(),
      onkeydown: (event) => this.key(event),
    });
    this.hint = h("p", { class: "hint", id: `${id}-hint` });
    this.error = h("div", { id: `${id}-error`, "aria-live": "polite" });
    this.send = h("button", { type: "submit", class: "primary" }, "Send");
    this.form = h("form", { class: "card-form talk-form", novalidate: true, onsubmit: (event) => { event.preventDefault(); this.submit(); } },
      h("label", { for: this.text.id }, "Say something to the table"), this.text, this.hint,
      h("div", { class: "buttons" }, this.send), this.error);
    this.node = h("section", { class: "talk", "aria-label": "Table talk", hidden: true });
    this.count();
    document.addEventListener("visibilitychange", () => this.soon(0));
    window.addEventListener("pagehide", () => clearTimeout(this.timer));
  }

  // Called with the board each time the page draws it.
  update(view) {
    const mine = session();
    const seated = Boolean(mine) && (view.joined || []).includes(mine.player_id)
      && view.viewer !== null && view.viewer !== undefined;
    this.seat = seated ? view.viewer : null;
    // A seated player talks on after the end too ("good game"); anyone else reads it then.
    const playing = view.phase === "playing" || view.phase === "over";
    const mode = seated && playing ? "live" : view.phase === "over" ? "over" : "hidden";
    if (mode === this.mode) return;
    this.mode = mode;
    this.draw();
    this.soon(0);
  }

  draw() {
    const shown = this.mode === "live" || (this.mode === "over" && this.messages.length > 0);
    this.node.hidden = !shown;
    if (!shown) {
      replace(this.node);
      return;
    }
    const any = this.messages.length > 0;
    replace(this.node, h("h2", {}, "Table talk"),
      this.mode === "over" ? h("p", { class: "hint" }, "The game is over: its players may still talk here.") : null,
      any ? this.box : this.none,
      this.mode === "live" ? this.form : null);
    if (any) this.box.scrollTop = this.box.scrollHeight;
  }

  // The next read in `delay` ms, while there is something to read and the tab is in view
  // (coming back into view reads at once).
  soon(delay) {
    clearTimeout(this.timer);
    this.timer = null;
    if (this.mode === "hidden" || (this.mode === "over" && this.readOver)) return;
    if (document.visibilityState !== "visible") return;
    this.timer = setTimeout(() => this.read(), delay);
  }

  async read() {
    if (this.reading) {
      this.again = true; // something may have come since that read was asked
      return this.reading;
    }
    const over = this.mode === "over";
    this.reading = this.readNew(over).finally(() => { this.reading = null; });
    await this.reading;
    if (this.again) {
      this.again = false;
      return this.read();
    }
    this.soon(EVERY);
  }

  async readNew(over) {
    try {
      let found;
      do {
        found = await get(`${this.path}?after=${encodeURIComponent(this.last)}`);
        this.add(found);
      } while (found.length >= PAGE);
      if (over) this.readOver = true;
    } catch (error) {
      if (error instanceof ApiError && error.status === 403) {
        this.mode = "hidden"; // not ours to read (any more): nothing to show
        this.draw();
      } // else the next read tries again
    }
  }

  add(found) {
    const fresh = found.filter((message) => !this.messages.some((known) => known.id === message.id));
    if (!fresh.length) return;
    const box = this.box;
    const atBottom = !box.isConnected || box.scrollHeight - box.scrollTop - box.clientHeight < 48;
    const first = !this.messages.length;
    this.messages = [...this.messages, ...fresh].slice(-KEPT);
    this.last = found[found.length - 1].id;
    this.list.append(...fresh.map((message) => this.line(message)));
    while (this.list.children.length > this.messages.length) this.list.firstElementChild.remove();
    if (first) this.draw();
    else if (atBottom) box.scrollTop = box.scrollHeight;
  }

  line(message) {
    const mine = this.seat !== null && message.seat === this.seat;
    return h("li", { dataset: { id: message.id, seat: message.seat } },
      h("p", {}, h("strong", {}, message.name), ` (seat ${message.seat})`, mine ? " (you)" : "", " \u00B7 ",
        h("time", { datetime: message.time, title: new Date(message.time).toLocaleString() }, when(message.time))),
      h("p", { class: "talk-text" }, withBreaks(message.text)));
  }

  count() {
    const size = talkLength(this.text.value);
    const over = size > LIMIT;
    this.text.setAttribute("aria-invalid", over ? "true" : "false");
    this.hint.textContent = `${size} of at most ${LIMIT} characters${over ? ` (${size - LIMIT} too many)` : ""}. `
      + "Enter sends; Shift+Enter starts a new line.";
  }

  key(event) {
    if (event.key !== "Enter" || event.shiftKey || event.altKey || event.isComposing) return;
    event.preventDefault();
    this.submit();
  }

  async submit() {
    if (this.sending || this.mode !== "live") return;
    const size = talkLength(this.text.value);
    if (!size) {
      status(this.error, "Write something to send first.", "info");
      return;
    }
    if (size > LIMIT) {
      status(this.error, `Not sent: a message has at most ${LIMIT} characters, and this one has ${size}.`, "error");
      return;
    }
    if (Date.now() < this.waitUntil) {
      status(this.error, this.waitWords(), "error");
      return;
    }
    this.sending = true;
    this.send.disabled = true;
    try {
      await post(this.path, { text: this.text.value });
      this.text.value = "";
      this.count();
      status(this.error, "");
    } catch (error) {
      status(this.error, this.refusal(error), "error");
    } finally {
      this.sending = false;
      this.send.disabled = false;
    }
    await this.read(); // at once: what was sent, and anything said meanwhile
  }

  refusal(error) {
    if (!(error instanceof ApiError)) {
      return `Not sent: could not reach the server (${refusalText(error)}). Your message is kept: send it again.`;
    }
    if (error.status === 429) {
      const seconds = error.retryAfter ?? 60;
      const rate = RATE.exec(error.message);
      if (!rate) return `Not sent: ${error.message}. Try again in ${seconds} seconds; your message is kept.`;
      this.rate = Number(rate[1]);
      this.waitUntil = Date.now() + seconds * 1000;
      return this.waitWords();
    }
    if (error.status === 422) return `Not sent: ${error.message}.`;
    if (error.status === 403) return "Not sent: only the players of this game may talk at its table, while it is on.";
    return `Not sent: ${refusalText(error)}`;
  }

  waitWords() {
    const left = Math.max(1, Math.ceil((this.waitUntil - Date.now()) / 1000));
    const at = new Date(this.waitUntil).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
    return `Not sent: at most ${this.rate || 5} messages a minute may be sent in one game. `
      + `Try again in ${left} seconds (at ${at}); your message is kept here.`;
  }
}
