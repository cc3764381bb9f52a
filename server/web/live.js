// Following a game live on its server-sent event stream. A browser's EventSource cannot send
// the bearer token, so a seated player first asks for a stream ticket (short-lived, for this
// one game, good once) and opens the stream with it; a spectator opens it as it is. After a
// dropped connection it opens a new stream from the last version it saw (`after`), with a
// new ticket, waiting a little longer each time it fails in a row.

import { post, session } from "./api.js";

const TYPES = [
  "game_created", "seat_joined", "seat_left", "game_cancelled", "game_started", "hand_dealt",
  "face_up_dealt", "step_started", "card_played", "floor_placed", "city_scored", "card_taken",
  "floor_moved", "step_skipped", "card_revealed", "trade_route_placed", "architetto_revealed",
  "game_ended", "seed_revealed", "revealed",
];

export function follow(gameId, board, lastVersion, onEvent) {
  let source = null;
  let failures = 0;
  let stopped = false;
  const seated = () => session() && board().joined.includes(session().player_id);

  async function open() {
    if (stopped) return;
    let url = `/api/games/${encodeURIComponent(gameId)}/stream?after=${lastVersion()}`;
    if (seated()) {
      try {
        const ticket = await post(`/api/games/${encodeURIComponent(gameId)}/stream-ticket`);
        url += `&ticket=${encodeURIComponent(ticket.ticket)}`;
      } catch {
        retry();
        return;
      }
    }
    source = new EventSource(url);
    source.onopen = () => { failures = 0; };
    const seen = (message) => onEvent(Number(message.lastEventId) || lastVersion());
    for (const type of TYPES) source.addEventListener(type, seen);
    source.addEventListener("seed_revealed", () => stop());
    source.onerror = () => {
      source.close();
      retry();
    };
  }

  function retry() {
    if (stopped) return;
    setTimeout(open, Math.min(30000, 500 * 2 ** Math.min(failures, 6)));
    failures += 1;
  }

  function stop() {
    stopped = true;
    if (source) source.close();
  }

  if (board().phase !== "over" && board().phase !== "cancelled") open();
  window.addEventListener("pagehide", stop);
  return { stop };
}
