// A player's page (/players/{id}): their rating and how it went game by game (a chart, with
// the figures in a table for those who do not see it), their reliability record in words,
// their accuracy over their analysed games, and their games, the latest first, each with the others at it and how it went. Reads
// `GET /api/players/{id}/profile` (docs/api.md, "A player's page"); nothing here is secret.

import { h, s, replace, status } from "./dom.js";
import { frame } from "./common.js";
import { get, session } from "./api.js";
import { gameTitle, resultOf, dayOf } from "./names.js";
import { playerLink } from "./rating.js";

const PAGE = 20;
const main = frame("Player");
const mine = session();
const playerId = decodeURIComponent(location.pathname.split("/")[2] || "");

function ratingLine(profile) {
  if (profile.rating === null) return h("p", { class: "figure-line" }, profile.bot ? "A bot of the server: its level is what is rated (see the ratings)." : "Not rated yet: a rating comes with the first finished game of two to five seats.");
  return h("p", { class: "figure-line" },
    h("strong", { class: "big-figure" }, String(profile.rating)),
    ` rating after ${profile.rated_games} rated ${profile.rated_games === 1 ? "game" : "games"}`,
    profile.provisional ? h("span", { class: "hint" }, " (provisional: fewer than 5)") : null,
    h("span", { class: "hint", title: "How far it may still be off (one standard deviation)" }, ` \u00B1${Math.round(4 * profile.sigma) * 10}`));
}

// The rating over the rated games: from the figure before the first, one point a game.
function chart(history) {
  if (!history.length) return null;
  const points = [{ rating: history[0].rating - history[0].change, label: "before the first rated game" },
    ...history.map((p, i) => ({ rating: p.rating, label: `after game ${i + 1}, ${dayOf(p.ended)}` }))];
  // As wide in units as on screen, so that its words stay at their size on a phone too.
  const W = Math.round(Math.max(300, Math.min(720, main.clientWidth - 24))), H = W < 500 ? 170 : 210;
  const left = 48, right = 14, top = 14, bottom = 30;
  const figures = points.map((p) => p.rating);
  let low = Math.min(...figures), high = Math.max(...figures);
  if (high - low < 40) { low -= 20; high += 20; }
  const x = (i) => left + (points.length === 1 ? 0 : (i * (W - left - right)) / (points.length - 1));
  const y = (v) => top + ((high - v) * (H - top - bottom)) / (high - low);
  const first = history[0], last = history[history.length - 1];
  const words = `From ${first.rating - first.change} before the first rated game to ${last.rating} after the ${history.length === 1 ? "first" : `${history.length}th`}; lowest ${Math.min(...figures)}, highest ${Math.max(...figures)}.`;
  const svg = s("svg", { class: "rating-chart", viewBox: `0 0 ${W} ${H}`, role: "img", "aria-labelledby": "rating-chart-title rating-chart-desc" },
    s("title", { id: "rating-chart-title" }, "Rating after each rated game"),
    s("desc", { id: "rating-chart-desc" }, words),
    [high, low].map((v) => [
      s("line", { x1: left, x2: W - right, y1: y(v), y2: y(v), class: "grid" }),
      s("text", { x: left - 6, y: y(v) + 4, "text-anchor": "end", class: "axis" }, String(Math.round(v)))]),
    s("text", { x: left, y: H - 8, class: "axis" }, "start"),
    s("text", { x: W - right, y: H - 8, "text-anchor": "end", class: "axis" }, `after game ${history.length}`),
    s("polyline", { class: "line", points: points.map((p, i) => `${x(i)},${y(p.rating)}`).join(" ") }),
    points.map((p, i) => s("circle", { cx: x(i), cy: y(p.rating), r: 4, class: "dot" }, s("title", {}, `${p.rating} ${p.label}`))));
  const rows = history.map((p, i) => h("tr", {},
    h("td", {}, String(i + 1)), h("td", {}, h("time", { datetime: p.ended }, dayOf(p.ended))),
    h("td", { class: "figure" }, String(p.rating)), h("td", { class: "figure" }, p.change > 0 ? `+${p.change}` : String(p.change))));
  return [h("figure", { class: "rating-figure" }, svg, h("figcaption", { class: "hint" }, words)),
    h("details", { class: "figures" }, h("summary", {}, "The rating after each game, in figures"),
      h("div", { class: "scores-wrap" }, h("table", { class: "history" },
        h("thead", {}, h("tr", {}, ["Game", "Ended"].map((t) => h("th", { scope: "col" }, t)),
          ["Rating", "Change"].map((t) => h("th", { scope: "col", class: "figure" }, t)))),
        h("tbody", {}, rows))))];
}

// "2 turns timed out per 100 over the last 37 games (3 of 150 turns)."
function reliability(record) {
  const games = `${record.games} ${record.games === 1 ? "game" : "games"}`;
  const lines = [];
  if (!record.turns) {
    lines.push(h("p", { class: "figure-line" }, record.games ? `No turn of theirs is over yet in their ${games}.` : "No game played yet."));
  } else {
    const per = Number.isInteger(record.per_100) ? String(record.per_100) : record.per_100.toFixed(1);
    lines.push(h("p", { class: "figure-line" }, h("strong", { class: "big-figure" }, per),
      ` ${record.per_100 === 1 ? "turn" : "turns"} timed out per 100 over the last ${games}`,
      h("span", { class: "hint" }, ` (${record.timed_out} of ${record.turns} turns)`)));
  }
  if (record.excused) lines.push(h("p", { class: "hint" }, `${record.excused} ${record.excused === 1 ? "turn" : "turns"} the clock played during a vacation or quiet hours: counted as on time.`));
  if (record.handed_over) lines.push(h("p", { class: "hint" }, `${record.handed_over} ${record.handed_over === 1 ? "turn" : "turns"} played by a bot after they handed a seat over: not counted.`));
  lines.push(h("p", { class: "hint" }, `A turn times out when its clock runs out and the server's bot plays it. Over the latest ${record.window} games at most, in play or finished; vacations and quiet hours count as on time.`));
  return lines;
}

// "Accuracy 87.4 over 12 analysed games (1,234 decisions)."
function accuracy(record) {
  if (record.accuracy === null) return [h("p", { class: "figure-line" }, "No game of theirs is analysed yet."), accuracyHint];
  const games = `${record.games} analysed ${record.games === 1 ? "game" : "games"}`;
  return [h("p", { class: "figure-line" }, h("strong", { class: "big-figure" }, String(record.accuracy)),
    ` over ${games}`, h("span", { class: "hint" }, ` (${record.own_decisions} of their decisions judged)`)), accuracyHint];
}
const accuracyHint = h("p", { class: "hint" }, "Each finished game's decisions are judged by the search bot from what the player could see then; 100 means every decision as good as the search's choice. A move the clock or a bot made for them does not count.");

// Where a game leads: the play page for a table that waits and for its own players while it
// is on, else the replay viewer (a spectator's while it is on).
function gameLink(game) {
  const seated = mine && game.players.some((p) => p.player_id === mine.player_id);
  if (game.phase === "waiting" || (game.phase === "playing" && seated)) return `/games/${encodeURIComponent(game.game_id)}`;
  return `/games/${encodeURIComponent(game.game_id)}/replay`;
}

function gameItem(game, profile) {
  const others = game.players.filter((p) => p.player_id !== profile.player_id);
  const titled = game.phase === "waiting"
    ? { ...game, names: game.players.map((p) => p.name), joined: game.players.map((p) => p.player_id) }
    : game;
  const score = (p) => (game.result ? (game.result.scores.find((row) => row.seat === p.seat) || {}).total : undefined);
  const named = (p) => [playerLink(p.player_id, p.name), score(p) === undefined ? "" : ` (${score(p)})`];
  const against = others.length ? [" against ", joined(others.map(named))] : "";
  const when = game.ended || game.since;
  const day = when ? h("time", { datetime: when }, dayOf(when)) : null;
  let words;
  if (game.phase === "over") {
    const result = resultOf(game, profile.name);
    words = [h("strong", {}, result.headline), result.points === null ? "" : ` with ${result.points} points`, against, day ? [" \u00B7 ended ", day] : "",
      game.accuracy === null || game.accuracy === undefined ? "" : ` \u00B7 accuracy ${game.accuracy}`];
  } else if (game.phase === "playing") {
    words = [h("strong", {}, "In play"), against, day ? [" \u00B7 last move ", day] : ""];
  } else {
    words = [h("strong", {}, `Waiting for players (${game.players.length} of ${game.seats})`), others.length ? [", with ", joined(others.map(named))] : "", day ? [" \u00B7 ", day] : ""];
  }
  return h("li", { class: game.phase === "over" ? "finished" : "", dataset: { game: game.game_id, phase: game.phase } },
    h("a", { href: gameLink(game) }, gameTitle(titled)),
    h("p", { class: "hint" }, words));
}

// Parts (texts or nodes) joined as a list in words: "a", "a and b", "a, b and c".
function joined(parts) {
  const out = [];
  parts.forEach((part, i) => {
    if (i) out.push(i === parts.length - 1 ? " and " : ", ");
    out.push(part);
  });
  return out;
}

async function show() {
  if (!playerId) throw new Error("no player is named in the address");
  const profile = await get(`/api/players/${encodeURIComponent(playerId)}/profile?limit=${PAGE}`, { anonymous: true });
  const you = mine && mine.player_id === profile.player_id;
  document.title = `${profile.name} - Patrician`;
  const list = h("ul", { class: "games" }, profile.games.map((game) => gameItem(game, profile)));
  const more = h("p", {});
  let shown = profile.games.length;
  const moreButton = () => (shown < profile.total
    ? h("button", { type: "button", onclick: async () => {
      try {
        const next = await get(`/api/players/${encodeURIComponent(playerId)}/profile?offset=${shown}&limit=${PAGE}`, { anonymous: true });
        list.append(...next.games.map((game) => gameItem(game, profile)));
        shown += next.games.length;
        replace(more, moreButton());
      } catch (error) {
        status(more, `The games could not be read: ${error.message}`, "error");
      }
    } }, `Show ${Math.min(PAGE, profile.total - shown)} more of ${profile.total - shown}`)
    : null);
  replace(more, moreButton());
  replace(main,
    h("h1", {}, profile.name, you ? h("span", { class: "hint" }, " (you)") : null),
    h("div", { class: "player-page" },
      h("section", { class: "rating", "aria-labelledby": "rating-heading" },
        h("h2", { id: "rating-heading" }, "Rating"), ratingLine(profile), chart(profile.rating_history),
        h("p", { class: "hint" }, h("a", { href: "/ratings" }, "The rating list"), " says how ratings are made.")),
      h("section", { class: "reliability", "aria-labelledby": "reliability-heading" },
        h("h2", { id: "reliability-heading" }, "Reliability"), reliability(profile.reliability)),
      h("section", { class: "accuracy-record", "aria-labelledby": "accuracy-heading" },
        h("h2", { id: "accuracy-heading" }, "Accuracy"), accuracy(profile.accuracy)),
      h("section", { class: "player-games", "aria-labelledby": "games-heading" },
        h("h2", { id: "games-heading" }, `Games (${profile.total})`),
        profile.games.length ? list : h("p", { class: "hint" }, "No games yet."), more)));
}

show().catch((error) => {
  replace(main, h("h1", {}, "Player"));
  const note = h("div", {});
  main.append(note);
  status(note, error.status === 404 ? "No player has this address." : `The player could not be read: ${error.message}`, "error");
});
