// The lobby (/): sign in by picking a name (or with a login link from another device), your
// games with those awaiting you first, the open tables, and a new game. The lists refresh
// themselves every few seconds while the page is in view.
//
// A login link carries the token in its fragment (`/#login=...`): browsers never send the
// fragment to a server, so no log anywhere holds it; the page takes it, keeps it in
// localStorage and wipes it from the address bar.

import { h, replace, ago, until, status, fragment } from "./dom.js";
import { get, post, session, saveSession, refusalText } from "./api.js";
import { frame } from "./common.js";
import { playerLink } from "./rating.js";
import { requirementsText } from "./table.js";
import { BOT_LEVELS, editionName, moduleName, gameTitle, resultOf, listOf, dayOf } from "./names.js";

// A login link's account, checked with its own token before anything is kept: a link that
// does not work changes nothing, and one of another account never replaces yours unasked.
async function loginOf(text) {
  const token = /[#&]login=([A-Za-z0-9_-]+)/.exec(text);
  const player = /[#&]player=([A-Za-z0-9_-]+)/.exec(text);
  if (!token || !player) throw new Error("that is not a login link (it has no #login=...&player=... part)");
  await get("/api/me/games", { token: token[1] }); // a token that is not valid is refused (401)
  const info = await get(`/api/players/${encodeURIComponent(player[1])}`, { anonymous: true });
  return { token: token[1], player_id: player[1], name: info.name };
}

async function takeLoginLink(text) {
  saveSession(await loginOf(text));
}

let offered = null; // a login link of another account than the one signed in here
const takenLink = fragment("login") ? location.hash : null;
if (takenLink) {
  history.replaceState(null, "", location.pathname);
  try {
    const found = await loginOf(takenLink);
    const mine = session();
    if (!mine || mine.token === found.token) saveSession(found);
    else offered = found;
  } catch {
    offered = { broken: true };
  }
}

// Where to go once signed in: a page of this site only (`//elsewhere` or `/\\elsewhere`
// would leave it), as a path.
function sameSite(target) {
  if (!target) return null;
  try {
    const url = new URL(target, location.origin);
    return url.origin === location.origin ? url.pathname + url.hash : null;
  } catch {
    return null;
  }
}
const next = sameSite(fragment("next"));
const main = frame("Lobby");

function signIn() {
  const message = h("div", { "aria-live": "assertive" });
  const name = h("input", { id: "name", name: "name", required: true, maxlength: 40, autocomplete: "nickname" });
  const link = h("input", { id: "login-link", name: "login-link", autocomplete: "off" });
  const done = () => { location.href = next || "/"; };
  return h("section", { class: "sign-in", "aria-label": "Sign in" },
    h("h1", {}, "Play Patrician by correspondence"),
    h("p", { class: "intro" }, "Build towers in the cities of Italy, one move a day or all at once. Pick a name to start."),
    h("form", { class: "card-form", onsubmit: async (event) => {
      event.preventDefault();
      try {
        const created = await post("/api/players", { name: name.value }, { anonymous: true });
        saveSession({ token: created.token, player_id: created.player_id, name: name.value.trim() });
        done();
      } catch (error) {
        status(message, refusalText(error), "error");
      }
    } },
      h("label", { for: "name" }, "Your name"), name,
      h("button", { type: "submit", class: "primary" }, "Start playing")),
    h("form", { class: "card-form", onsubmit: async (event) => {
      event.preventDefault();
      try {
        await takeLoginLink(link.value);
        done();
      } catch (error) {
        status(message, error.status === 401 ? "That login link is not valid." : refusalText(error), "error");
      }
    } },
      h("label", { for: "login-link" }, "Or paste a login link from another device"), link,
      h("button", { type: "submit" }, "Use this link")),
    message);
}

// The other places at the table, in words: seats are drawn only when the table is full (R7),
// so they are not numbered here (seats are numbered from 0, in the game and on every page).
const OPPONENTS = ["First", "Second", "Third", "Fourth"];

function newGameForm(message) {
  const edition = h("select", { id: "edition", name: "edition" }, ["towers", "classic"].map((id) => h("option", { value: id }, editionName(id))));
  const seats = h("select", { id: "seats", name: "seats" }, [2, 3, 4, 5].map((n) => h("option", { value: n, selected: n === 3 }, `${n} players`)));
  const routes = h("input", { type: "checkbox", id: "trade_routes", name: "trade_routes" });
  const delegates = h("input", { type: "checkbox", id: "delegates", name: "delegates" });
  const bots = h("div", { class: "bots" });
  const clock = h("input", { type: "number", id: "per_move_hours", name: "per_move_hours", min: 1, max: 1440, placeholder: "untimed" });
  const minRating = h("input", { type: "number", id: "min_rating", name: "min_rating", min: 0, max: 4000, step: 1, placeholder: "anyone", "aria-describedby": "who-may-join" });
  const maxTimeouts = h("input", { type: "number", id: "max_timeouts", name: "max_timeouts", min: 0, max: 100, step: 0.1, placeholder: "anyone", "aria-describedby": "who-may-join" });
  const drawBots = () => {
    const others = Number(seats.value) - 1;
    const kept = [...bots.querySelectorAll("select")].map((s) => s.value);
    replace(bots, Array.from({ length: others }, (_, i) => h("label", { class: "bot" }, `${OPPONENTS[i]} opponent: `,
      h("select", { name: `bot-${i}`, "aria-describedby": "bot-levels" },
        h("option", { value: "" }, "A person you invite"),
        BOT_LEVELS.map((bot) => h("option", { value: bot.level, selected: kept[i] === bot.level }, bot.choice))))));
  };
  const modules = () => { routes.disabled = delegates.disabled = edition.value === "classic"; };
  seats.addEventListener("change", drawBots);
  edition.addEventListener("change", modules);
  drawBots();
  return h("form", { class: "card-form new-game", "aria-label": "New game", onsubmit: async (event) => {
    event.preventDefault();
    const body = { seats: Number(seats.value), edition: edition.value, modules: [] };
    if (edition.value === "towers") {
      if (routes.checked) body.modules.push("trade_routes");
      if (delegates.checked) body.modules.push("delegates");
    }
    const levels = [...bots.querySelectorAll("select")].map((s) => s.value).filter(Boolean);
    if (levels.length) body.bots = levels.map((level) => ({ level }));
    if (clock.value) body.clock = { per_move_hours: Number(clock.value) };
    const requirements = {};
    if (minRating.value) requirements.min_rating = Number(minRating.value);
    if (maxTimeouts.value) requirements.max_timeouts_per_100 = Number(maxTimeouts.value);
    if (Object.keys(requirements).length) body.requirements = requirements;
    try {
      const created = await post("/api/games", body);
      location.href = `/games/${created.game_id}#invite=${created.invite_code}`;
    } catch (error) {
      status(message, refusalText(error), "error");
    }
  } },
    h("h2", {}, "New game"),
    h("label", { for: "edition" }, "Edition"), edition,
    h("label", { for: "seats" }, "Players"), seats,
    h("fieldset", {}, h("legend", {}, "Modules (Towers only)"),
      h("label", {}, routes, ` ${moduleName("trade_routes")}`), h("label", {}, delegates, ` ${moduleName("delegates")}`)),
    h("fieldset", {}, h("legend", {}, "Your opponents"),
      h("p", { class: "hint" }, "A person, or a bot of the strength you choose. Seats are drawn when the table is full: who plays first is left to chance."),
      bots,
      h("ul", { id: "bot-levels", class: "hint bot-levels" }, BOT_LEVELS.map((bot) => h("li", {}, h("strong", {}, bot.choice), `: ${bot.hint}`)))),
    h("label", { for: "per_move_hours" }, "Hours per turn (empty: untimed)"), clock,
    h("fieldset", {}, h("legend", {}, "Who may join (empty: anyone)"),
      h("p", { id: "who-may-join", class: "hint" }, "Checked when a person joins with your invite link; newcomers show a rating of 1000 and no timeouts."),
      h("label", { for: "min_rating" }, "Lowest rating"), minRating,
      h("label", { for: "max_timeouts" }, "Most turns timed out per 100"), maxTimeouts),
    h("button", { type: "submit", class: "primary" }, "Create the game"));
}

const FINISHED = new Set(["over", "cancelled"]);
const RECENT = 10; // finished games shown at once, the latest first; the others a click away

// A game in play or waiting: its title (its players and kind, never its id) and where it is.
function gameItem(game) {
  const state = game.your_decision ? [h("strong", {}, "Your turn"), ` \u00B7 waiting ${ago(game.waited_seconds)}`,
    game.clock && game.clock.deadline ? ` \u00B7 ${until(game.clock.deadline)}` : ""]
    : game.phase === "waiting" ? "Waiting for players" : "Playing: not your turn";
  return h("li", { class: game.your_decision ? "awaiting" : "", dataset: { game: game.game_id } },
    h("a", { href: `/games/${game.game_id}` }, gameTitle(game)),
    h("p", { class: "hint" }, state));
}

// A finished game: how it went for you (the result, your points and the others'), and when;
// a table called off, when and who had joined it.
function finishedItem(game, mine) {
  const result = resultOf(game, mine.name);
  const others = result.others.map((o) => (o.total === null ? o.name : `${o.name} (${o.total})`));
  const ended = game.ended || game.since;
  const day = ended ? h("time", { datetime: ended }, dayOf(ended)) : null;
  const words = result.outcome === "called off"
    ? [h("strong", {}, result.headline), day ? [" on ", day] : "", others.length ? `, with ${listOf(others)} at the table` : ""]
    : [h("strong", {}, result.headline), result.points === null ? "" : ` with ${result.points} points`,
      others.length ? ` against ${listOf(others)}` : "", day ? [" \u00B7 ended ", day] : ""];
  return h("li", { class: "finished", dataset: { game: game.game_id, outcome: result.outcome } },
    h("a", { href: `/games/${game.game_id}` }, gameTitle(game)),
    h("p", { class: "hint" }, words),
    game.phase === "over" ? h("p", { class: "hint" }, h("a", { href: `/games/${game.game_id}/replay` }, "Replay")) : null);
}

function myGames(games) {
  const playing = games.filter((game) => !FINISHED.has(game.phase));
  if (!playing.length) return h("p", { class: "hint" }, games.length ? "None in play: create one, or open an invite link." : "No games yet: create one, or open an invite link.");
  return h("ul", { class: "games" }, playing.map(gameItem));
}

function finishedGames(games, mine, opened) {
  const when = (game) => String(game.ended || game.since || "");
  const finished = games.filter((game) => FINISHED.has(game.phase)).sort((a, b) => when(b).localeCompare(when(a)));
  if (!finished.length) return h("p", { class: "hint" }, "None yet.");
  const list = (some) => h("ul", { class: "games" }, some.map((game) => finishedItem(game, mine)));
  if (finished.length <= RECENT) return list(finished);
  return [list(finished.slice(0, RECENT)),
    h("details", { open: opened }, h("summary", {}, `${finished.length - RECENT} earlier`), list(finished.slice(RECENT)))];
}

function openGames(games) {
  if (!games.length) return h("p", { class: "hint" }, "No table is waiting for players.");
  return h("ul", { class: "games" }, games.map((game) => h("li", { dataset: { game: game.game_id } },
    h("a", { href: `/games/${game.game_id}` }, gameTitle(game)),
    h("p", { class: "hint" }, `${game.joined.length} of ${game.seats} players at the table: `,
      inWords(game.joined.map((id, index) => ratedName(game, id, index)))),
    requirementsText(game.requirements) ? h("p", { class: "requirements" }, requirementsText(game.requirements)) : null)));
}

// A player at an open table with their rating, so that one can choose whom to play; the name
// links to their page.
function ratedName(game, id, index) {
  const name = (game.names || [])[index] || "a player";
  const rating = (game.ratings || [])[index];
  return [playerLink(id, name), ` (${rating === null || rating === undefined ? "not rated yet" : rating})`];
}

// Parts (texts or nodes) as a list in words: "a", "a and b", "a, b and c".
function inWords(parts) {
  return parts.flatMap((part, i) => (i === 0 ? [part] : [i === parts.length - 1 ? " and " : ", ", part]));
}

function deviceLink(mine) {
  const link = `${location.origin}/#login=${mine.token}&player=${mine.player_id}`;
  const input = h("input", { class: "invite", readonly: true, value: link, type: "password", "aria-label": "Login link for another device" });
  return h("details", { class: "device" }, h("summary", {}, "Use this account on another device"),
    h("p", {}, "Open this link on your phone or another computer. Anyone with it plays as you: keep it to yourself."),
    input, " ",
    h("button", { type: "button", onclick: () => { input.type = input.type === "password" ? "text" : "password"; } }, "Show"), " ",
    h("button", { type: "button", onclick: () => navigator.clipboard && navigator.clipboard.writeText(link) }, "Copy"));
}

function switchNotice(mine) {
  if (!offered) return null;
  if (offered.broken) return h("p", { class: "status error", role: "alert" }, "That login link does not work: you are still signed in as before.");
  const other = offered;
  return h("div", { class: "status info", role: "status" },
    `That login link is for ${other.name}; you are signed in here as ${mine.name || "another player"}. `,
    h("button", { type: "button", onclick: () => { saveSession(other); location.href = "/"; } }, `Switch to ${other.name}`),
    " (keep your own login link first: a token is shown only once).");
}

async function lobby(mine) {
  const message = h("div", { "aria-live": "assertive" }, switchNotice(mine));
  const mineList = h("section", { class: "my-games", "aria-label": "Your games" }, h("h2", {}, "Your games"), h("p", { class: "hint" }, "Loading..."));
  const doneList = h("section", { class: "finished-games", "aria-label": "Finished games" });
  const openList = h("section", { class: "open-games", "aria-label": "Open tables" }, h("h2", {}, "Open tables"));
  replace(main, h("h1", {}, "Lobby"), message, h("div", { class: "lobby" }, h("div", {}, mineList, openList, doneList), h("div", {}, newGameForm(message),
    h("p", { class: "hint" }, h("a", { href: `/players/${encodeURIComponent(mine.player_id)}` }, "Your page"), ": your games, rating and reliability, as others see them."),
    deviceLink(mine))));
  const load = async () => {
    try {
      const [games, open] = await Promise.all([get("/api/me/games"), get("/api/lobby", { anonymous: true })]);
      replace(mineList, h("h2", {}, "Your games"), myGames(games));
      replace(openList, h("h2", {}, "Open tables"), openGames(open));
      const opened = Boolean(doneList.querySelector("details[open]")); // kept open as it was
      replace(doneList, h("h2", {}, "Finished games"), finishedGames(games, mine, opened));
    } catch (error) {
      status(message, error.status === 401 ? "Your sign-in is no longer valid: sign out and in again." : refusalText(error), "error");
    }
  };
  await load();
  setInterval(() => { if (document.visibilityState === "visible") load(); }, 5000);
}

// A login link opened in the tab that shows the lobby changes only the fragment: read it.
// Listened for before the lobby loads, so a link opened while it loads is read too.
window.addEventListener("hashchange", () => {
  if (/[#&](login|next)=/.test(location.hash)) location.reload();
});
const mine = session();
if (mine) {
  if (next) location.href = next;
  else await lobby(mine);
} else {
  replace(main, signIn());
}
