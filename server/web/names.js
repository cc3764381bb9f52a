// The game in words, the one place every page takes them from: editions, modules and bot
// levels by name (never their ids: "Trade Routes", not `trade_routes`), a game's title from
// its players and its kind (never its id), how a finished game went for one of its players,
// and a date.
//
// Seats are numbered from 0 on every page, as in the game, its API and its records ("Ada
// (seat 0)"). A table that waits has places, not seats: the seats are drawn when it is full
// (R7), so nothing before then is called "seat N".

const EDITIONS = { towers: "Towers", classic: "Classic" };
const MODULES = { trade_routes: "Trade Routes", delegates: "Delegates" };

// The bot levels, weakest first: the name the server gives a bot player of the level
// (`BOT_NAMES` in server/services/games.py, "Greedy bot 2" when a level comes twice), the
// choice in the new-game form, and what the bot does, in a line.
export const BOT_LEVELS = [
  { level: "random", name: "Random bot", choice: "Random (weakest)", hint: "plays any move the rules allow, at random." },
  { level: "greedy", name: "Greedy bot", choice: "Greedy (medium)", hint: "plays the move that leaves it furthest ahead at the end of its turn." },
  { level: "ismcts", name: "Search bot", choice: "Search / ISMCTS (strongest)", hint: "tries many ways the cards it cannot see may lie before each move." },
];

// An id this page does not know (a newer server's) in words all the same: "new_module" is
// "New Module".
const words = (id) => String(id).replaceAll("_", " ").replace(/\b\w/g, (letter) => letter.toUpperCase());

export const editionName = (edition) => EDITIONS[edition] || words(edition);
export const moduleName = (module) => MODULES[module] || words(module);

export function botName(level) {
  const found = BOT_LEVELS.find((bot) => bot.level === level);
  return found ? found.name : `${words(level)} bot`;
}

// Whether a player's name is the one the server gave a bot of `level` (or gave it before
// the levels had these names: "Ismcts bot").
export function namedAsBot(name, level) {
  const lower = String(name).toLowerCase();
  return lower.startsWith(botName(level).toLowerCase()) || lower.startsWith(`${level} bot`);
}

// The edition and its modules: "Towers, Trade Routes, Delegates", "Classic".
export function kindOf(game) {
  return [editionName(game.edition), ...(game.modules || []).map(moduleName)].join(", ");
}

// "Ada", "Ada and Bea", "Ada, Bea and Greedy bot".
export function listOf(names) {
  if (names.length < 2) return names.join("");
  return `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
}

// Each seat's player's name, seat 0 first: from a board (`players`) or a game of your list
// (`seat_names`); none before the seats are drawn.
function seated(game) {
  const players = Array.isArray(game.players) ? game.players.filter((p) => p && typeof p === "object") : [];
  const names = players.length ? [...players].sort((a, b) => a.seat - b.seat).map((p) => p.name) : game.seat_names || [];
  return names.map((name, seat) => name || `seat ${seat}`);
}

// A game's title, wherever a page titles it (a board, a replay's view, a game of your list
// or of the lobby): its players in seat order and its kind, "Ada, Bea and Greedy bot —
// Towers, Trade Routes"; a table that waits, by who opened it, "Ada's table (2 of 4) —
// Towers". Never its id.
export function gameTitle(game) {
  const kind = kindOf(game);
  const players = seated(game);
  if (players.length) return `${listOf(players)} \u2014 ${kind}`;
  const joined = game.names || [];
  if (!game.phase || game.phase === "waiting") { // a lobby's table has no phase: it waits
    const count = (game.joined || joined).length;
    const host = joined[0] ? `${joined[0]}'s table` : "A table";
    return `${host} (${count} of ${game.seats}) \u2014 ${kind}`;
  }
  if (joined.length) return `${listOf(joined)} \u2014 ${kind}`; // called off before it started
  return `A game of ${game.seats} \u2014 ${kind}`; // listed before its names were kept
}

const ORDINALS = ["1st", "2nd", "3rd", "4th", "5th", "6th"];

// How a finished game of your list went for you (`me`: your name, for a table called off
// before the seats were drawn): `outcome` ("won", "shared", "lost", "placed", "called off"),
// `headline` ("Won", "Placed 2nd of 4", "Called off"), `points` (yours, or null), and the
// others: `[{name, total}]` (total null when not scored), the Architetto among them.
export function resultOf(game, me) {
  const names = seated(game);
  const seat = game.seat;
  const result = game.result;
  if (game.phase === "cancelled" || !result) {
    const others = names.length ? names.filter((_, s) => s !== seat) : withoutOnce(game.names || [], me);
    return { outcome: "called off", headline: game.phase === "cancelled" ? "Called off" : "Finished", points: null, others: others.map((name) => ({ name, total: null })) };
  }
  const nameOf = (s) => (s === game.seats ? "the Architetto" : names[s] || `seat ${s}`);
  const scores = result.scores;
  const mine = scores.find((score) => score.seat === seat);
  const others = scores.filter((score) => score.seat !== seat).map((score) => ({ name: nameOf(score.seat), total: score.total }));
  const points = mine ? mine.total : null;
  if (result.winners.includes(seat)) {
    const shared = result.winners.length > 1;
    return { outcome: shared ? "shared" : "won", headline: shared ? "Shared the win" : "Won", points, others };
  }
  if (result.architetto_won) return { outcome: "lost", headline: "Lost to the Architetto", points, others };
  if (scores.length <= 2 || !mine) return { outcome: "lost", headline: "Lost", points, others };
  const place = 1 + scores.filter((s) => s.seat !== seat && (result.winners.includes(s.seat) || s.total > mine.total)).length;
  return { outcome: "placed", headline: `Placed ${ORDINALS[place - 1]} of ${scores.length}`, points, others };
}

function withoutOnce(names, me) {
  const at = names.indexOf(me);
  return at < 0 ? names : [...names.slice(0, at), ...names.slice(at + 1)];
}

// A day in the reader's words and the browser's language ("3 May 2025", "May 3, 2025").
export function dayOf(iso) {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? "" : date.toLocaleDateString(undefined, { day: "numeric", month: "short", year: "numeric" });
}

// The tab's title of a page about one game, told once the game is known. `frame` (common.js)
// takes it as its title, and the background look at your games (awaiting.js) writes the tab's
// title again with its count, from it (a template string calls `toString`): `set` changes the
// title now and at every look after, its count kept.
export function pageTitle(text) {
  return {
    text,
    toString() { return this.text; },
    set(next) {
      if (next === this.text) return;
      this.text = next;
      const count = /^\(\d+\) /.exec(document.title);
      document.title = `${count ? count[0] : ""}${next} - Patrician`;
    },
  };
}
