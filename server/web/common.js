// What every page has: the top bar (where you are, who you are signed in as, the settings),
// the line where the background look at your games speaks (awaiting.js), and the main
// landmark the page fills.

import { h, $, replace } from "./dom.js";
import { session, forget } from "./api.js";
import { watchAwaiting } from "./awaiting.js";

export function frame(title) {
  document.title = `${title} - Patrician`;
  const mine = session();
  const nav = h("nav", { class: "top", "aria-label": "Site" },
    h("a", { href: "/", class: "brand" }, "Patrician"),
    h("a", { href: "/" }, "Lobby"),
    h("a", { href: "/audit" }, "Audit a game"),
    mine ? h("a", { href: "/settings" }, "Settings") : null,
    h("span", { class: "who" }, mine ? `Signed in as ${mine.name || "a player"}` : "Not signed in"),
    mine ? h("button", { type: "button", class: "link", onclick: () => { forget(); location.href = "/"; } }, "Sign out") : null,
  );
  const notices = h("div", { class: "notices", "aria-live": "polite" });
  const header = $("header#top");
  replace(header, nav, notices);
  watchAwaiting(title, notices);
  if ("serviceWorker" in navigator) navigator.serviceWorker.register("/sw.js").catch(() => {});
  return $("main#main");
}
