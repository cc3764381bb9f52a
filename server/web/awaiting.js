// What every page of a signed-in player does in the background: it asks which games await
// them (`GET /api/me/games`) and says so where a player looks when the page is not in front:
// the tab's title ("(2) Lobby - Patrician") and its icon (a badge with the count). When a game
// becomes their turn while a page is open, a line says so (with a link to it), and a short
// sound plays if they asked for one on the settings page. Once, when the player first has a
// game, a line offers the settings page: notifications are how correspondence games are
// played, and a player who never set any misses their turns.

import { h, replace } from "./dom.js";
import { get, session } from "./api.js";
import { gameTitle } from "./names.js";

const SOUND_KEY = "patrician.sound";
const OFFERED_KEY = "patrician.settings-offered";
const SECONDS_SHOWN = 15;
const SECONDS_HIDDEN = 60; // browsers slow a hidden tab's timers to about this anyway

export function soundWanted() {
  return localStorage.getItem(SOUND_KEY) === "on";
}

export function wantSound(on) {
  if (on) localStorage.setItem(SOUND_KEY, "on");
  else localStorage.removeItem(SOUND_KEY);
}

function beep() {
  try {
    const audio = new AudioContext();
    const tone = audio.createOscillator();
    const volume = audio.createGain();
    tone.frequency.value = 660;
    volume.gain.setValueAtTime(0.15, audio.currentTime);
    volume.gain.exponentialRampToValueAtTime(0.001, audio.currentTime + 0.4);
    tone.connect(volume).connect(audio.destination);
    tone.start();
    tone.stop(audio.currentTime + 0.4);
  } catch {
    // no audio here (or not allowed before the player touched the page): the line suffices
  }
}

// The site's icon with a red badge of `count` (the icon alone for none), as a data: URL.
async function badged(original, count) {
  if (!count) return original;
  const image = new Image();
  image.src = original;
  await image.decode();
  const canvas = document.createElement("canvas");
  canvas.width = canvas.height = 64;
  const pen = canvas.getContext("2d");
  pen.drawImage(image, 0, 0, 64, 64);
  pen.fillStyle = "#c0392b";
  pen.beginPath();
  pen.arc(44, 20, 20, 0, 2 * Math.PI);
  pen.fill();
  pen.fillStyle = "#fff";
  pen.font = "bold 28px sans-serif";
  pen.textAlign = "center";
  pen.textBaseline = "middle";
  pen.fillText(count > 9 ? "9+" : String(count), 44, 21);
  return canvas.toDataURL("image/png");
}

export function watchAwaiting(title, notices) {
  if (!session()) return;
  const icon = document.querySelector("link[rel=icon]");
  const original = icon ? icon.href : null;
  let known = null; // the ids of the games awaiting the player at the last look
  let shownCount = 0;
  const look = async () => {
    let games;
    try {
      games = await get("/api/me/games");
    } catch {
      return; // signed out or offline: the page itself says so where it matters
    }
    const awaiting = games.filter((game) => game.your_decision);
    const ids = new Set(awaiting.map((game) => game.game_id));
    document.title = `${awaiting.length ? `(${awaiting.length}) ` : ""}${title} - Patrician`;
    if (icon && awaiting.length !== shownCount) {
      shownCount = awaiting.length;
      icon.type = shownCount ? "image/png" : "image/svg+xml";
      icon.href = await badged(original, shownCount).catch(() => original);
    }
    if (known) {
      const fresh = awaiting.filter((game) => !known.has(game.game_id) && !location.pathname.endsWith(game.game_id));
      if (fresh.length) {
        replace(notices, h("p", { class: "status turn", role: "status" },
          fresh.length === 1 ? "Your turn now in a " : `Your turn now in ${fresh.length} games: `,
          fresh.map((game, i) => [i ? ", " : "", h("a", { href: `/games/${game.game_id}` }, gameTitle(game))]), "."));
        if (soundWanted()) beep();
      }
    }
    known = ids;
    if (games.length && !localStorage.getItem(OFFERED_KEY) && location.pathname !== "/settings") {
      localStorage.setItem(OFFERED_KEY, "1");
      notices.append(h("p", { class: "status info offer", role: "status" },
        "Get told when it is your turn: ",
        h("a", { href: "/settings" }, "set up notifications"), "."));
    }
  };
  look();
  let timer = null;
  const again = () => {
    clearTimeout(timer);
    timer = setTimeout(async () => { await look(); again(); },
      1000 * (document.visibilityState === "visible" ? SECONDS_SHOWN : SECONDS_HIDDEN));
  };
  again();
  document.addEventListener("visibilitychange", () => { if (document.visibilityState === "visible") { look(); again(); } });
}
