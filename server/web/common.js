// What every page has: the top bar (where you are, who you are signed in as, the settings),
// the line where the background look at your games speaks (awaiting.js), and the main
// landmark the page fills. And this device's Web Push subscription, kept alive (below).

import { h, $, replace } from "./dom.js";
import { session, forget, get, post, call } from "./api.js";
import { watchAwaiting } from "./awaiting.js";

let pushRenewed = Promise.resolve();

export function frame(title) {
  document.title = `${title} - Patrician`;
  const mine = session();
  const nav = h("nav", { class: "top", "aria-label": "Site" },
    h("a", { href: "/", class: "brand" }, "Patrician"),
    h("a", { href: "/" }, "Lobby"),
    h("a", { href: "/ratings" }, "Ratings"),
    h("a", { href: "/audit" }, "Audit a game"),
    mine ? h("a", { href: "/settings" }, "Settings") : null,
    h("span", { class: "who" }, mine ? `Signed in as ${mine.name || "a player"}` : "Not signed in"),
    mine ? h("button", { type: "button", class: "link", onclick: signOut }, "Sign out") : null,
  );
  const notices = h("div", { class: "notices", "aria-live": "polite" });
  const header = $("header#top");
  replace(header, nav, notices);
  watchAwaiting(title, notices);
  if ("serviceWorker" in navigator) navigator.serviceWorker.register("/sw.js").catch(() => {});
  if (mine && thisDevice()) pushRenewed = renewPush().catch(() => {}); // the settings page says more
  return $("main#main");
}

// Signing out on a device that gets the player's notifications ends them there: the next
// person at this browser (a shared computer) must not see them. A few seconds at most.
async function signOut() {
  const device = thisDevice();
  if (device) {
    const ended = (async () => {
      await call("DELETE", `/api/me/push/${encodeURIComponent(device.id)}`).catch(() => {});
      await forgetHere().catch(() => {});
    })();
    await Promise.race([ended, new Promise((done) => setTimeout(done, 3000))]);
  }
  forget();
  location.href = "/";
}

// Web Push on this device: the settings page subscribes it (`subscribeHere`) and the server
// keeps it as one of the player's devices, whose id this browser keeps (`PUSH_DEVICE`, with
// the name it was given). When the server's key was replaced, a subscription made with the
// old one gets nothing: any page opened then subscribes again with the key served now,
// silently, and removes the old device.

const PUSH_DEVICE = "patrician.push-device";

export function pushSupported() {
  return "serviceWorker" in navigator && "PushManager" in window && "Notification" in window;
}

// The server's public key (base64url), or null when push is off on this server.
export async function pushKey() {
  return (await get("/api/push/key", { anonymous: true })).public_key;
}

// This device as the server knows it: `{id, name}`, or null.
export function thisDevice() {
  try {
    const stored = JSON.parse(localStorage.getItem(PUSH_DEVICE) || "null");
    return stored && typeof stored.id === "string" ? stored : null;
  } catch {
    return null;
  }
}

// The settings page waits for the renewal a page starts before it lists the devices (a
// few seconds at most: a service worker that never starts holds nothing up).
export const pushChecked = () => Promise.race([pushRenewed, new Promise((done) => setTimeout(done, 3000))]);

function keyBytes(text) {
  return Uint8Array.from(atob(text.replaceAll("-", "+").replaceAll("_", "/")), (c) => c.charCodeAt(0));
}

function madeWith(subscription, key) {
  const used = subscription && subscription.options.applicationServerKey;
  if (!used) return false;
  const [a, b] = [new Uint8Array(used), keyBytes(key)];
  return a.length === b.length && a.every((byte, i) => byte === b[i]);
}

async function pushManager() {
  const late = new Promise((_, fail) => setTimeout(() => fail(new Error("the site's service worker did not start: reload the page and try again")), 10000));
  return (await Promise.race([navigator.serviceWorker.ready, late])).pushManager;
}

// Subscribe this browser with the server's `key` and add it to the player's devices as
// `name` (the same subscription again: its name replaced). Permission is asked before.
export async function subscribeHere(key, name) {
  const manager = await pushManager();
  const before = await manager.getSubscription();
  if (before && !madeWith(before, key)) await before.unsubscribe(); // a browser takes one key
  const subscription = await manager.subscribe({ userVisibleOnly: true, applicationServerKey: keyBytes(key) });
  const device = await post("/api/me/push", { ...subscription.toJSON(), name });
  localStorage.setItem(PUSH_DEVICE, JSON.stringify({ id: device.id, name: device.name }));
  return device;
}

// After this device was removed from the player's devices: the browser's subscription ends.
export async function forgetHere() {
  localStorage.removeItem(PUSH_DEVICE);
  if (!pushSupported()) return;
  const subscription = await (await pushManager()).getSubscription();
  if (subscription) await subscription.unsubscribe();
}

async function renewPush() {
  const stored = thisDevice();
  if (!pushSupported() || Notification.permission !== "granted") return;
  const [key, devices] = await Promise.all([pushKey(), get("/api/me/push")]);
  if (!key) return;
  const subscription = await (await pushManager()).getSubscription();
  const listed = devices.find((device) => device.id === stored.id);
  const fresh = madeWith(subscription, key);
  if (fresh && listed && listed.current) return;
  if (!listed && (fresh || !subscription)) { // removed elsewhere, or its push service ended it
    localStorage.removeItem(PUSH_DEVICE);
    return;
  }
  const device = await subscribeHere(key, listed ? listed.name : stored.name);
  if (listed && device.id !== listed.id) await call("DELETE", `/api/me/push/${encodeURIComponent(listed.id)}`);
}
