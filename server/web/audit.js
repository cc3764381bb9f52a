// The audit page (/audit, or /audit#game=<id> for a finished game of this server): drop a
// record file, or name a game, and read the audit in words: every check in order, up to the
// first that fails. The checks are the server's (`POST /api/audit`, the same as `patrician
// audit`); the page sends the record and shows the answer.

import { h, replace, status, fragment } from "./dom.js";
import { post, refusalText } from "./api.js";
import { frame } from "./common.js";

const main = frame("Audit");
const result = h("section", { class: "audit-result", "aria-live": "polite", "aria-label": "Audit result" });
const message = h("div", { "aria-live": "assertive" });
const file = h("input", { type: "file", id: "record-file", accept: ".json,application/json", onchange: () => file.files[0] && readFile(file.files[0]) });
const game = h("input", { id: "game-id", name: "game-id", placeholder: "g0123456789abcdef", autocomplete: "off" });

function show(answer, source) {
  const failed = answer.checks.find((check) => !check.ok);
  replace(result,
    h("h2", {}, `Audit of ${source}`),
    h("p", { class: "verdict", dataset: { ok: answer.ok, exitCode: answer.exit_code } },
      answer.ok ? "The record holds up: every check passed." : `The record does not hold up: the ${failed ? failed.name : "audit"} check failed.`),
    h("ul", { class: "checks" }, answer.checks.map((check) => h("li", { class: check.ok ? "ok" : "failed", dataset: { check: check.name } },
      h("strong", {}, check.name), `: ${check.detail}`))));
}

async function audit(text, source) {
  status(message, "Checking...", "info");
  try {
    const answer = await post("/api/audit", text, { anonymous: true });
    status(message, "");
    show(answer, source);
  } catch (error) {
    status(message, refusalText(error), "error");
  }
}

async function readFile(chosen) {
  await audit(await chosen.text(), chosen.name);
}

async function auditGame(id) {
  try {
    const record = await fetch(`/api/games/${encodeURIComponent(id)}/record`, { headers: { Accept: "application/json" } });
    if (!record.ok) throw new Error(record.status === 404 ? "there is no such game" : `the record could not be read (${record.status})`);
    await audit(await record.text(), `game ${id}`);
  } catch (error) {
    status(message, refusalText(error), "error");
  }
}

const drop = h("div", { class: "drop", "aria-label": "Drop a record file here" },
  h("p", {}, "Drop a record file here, or "), h("label", { for: "record-file" }, "choose one: "), file);
drop.addEventListener("dragover", (event) => { event.preventDefault(); drop.classList.add("over"); });
drop.addEventListener("dragleave", () => drop.classList.remove("over"));
drop.addEventListener("drop", (event) => {
  event.preventDefault();
  drop.classList.remove("over");
  const chosen = event.dataTransfer.files[0];
  if (chosen) readFile(chosen);
});

replace(main,
  h("h1", {}, "Audit a game"),
  h("p", { class: "intro" }, "A game record holds every event, every command and the seed. The audit re-decides the whole game from them by the rules and says, in words, whether it holds up or where it first goes wrong."),
  drop,
  h("form", { class: "card-form", onsubmit: (event) => { event.preventDefault(); if (game.value.trim()) auditGame(game.value.trim()); } },
    h("label", { for: "game-id" }, "Or the id of a finished game on this server"), game,
    h("button", { type: "submit" }, "Audit this game")),
  message, result);

const named = fragment("game");
if (named) {
  game.value = named;
  await auditGame(named);
}
