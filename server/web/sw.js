// The service worker of the installable app, served at /sw.js so that it covers the whole
// site. It does three small things and nothing else:
// - a page opened with no network says so, in a page of its own, instead of the browser's
//   error (nothing is cached: every page needs the server, and a stale board would mislead);
// - a push message (a notice the server sent to this device) becomes a notification that
//   names the game and the step asked, one per game (`tag`: a newer one replaces it);
// - a click on the notification opens the game, in a tab of this site already open if any.
// The payload is `{title, body, url, tag}`; `url` must be a path of this site.

const OFFLINE = `<!doctype html><html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1"><title>Offline - Patrician</title>
<link rel="icon" href="data:,">
<style>body{font-family:system-ui,sans-serif;background:#f6efe2;color:#2b2118;margin:0}
header{background:#7a2e1d;color:#fff;padding:.7rem 1rem;font-weight:700}
main{max-width:34rem;margin:2rem auto;padding:0 1rem}a{color:#7a2e1d}</style></head>
<body><header>Patrician</header><main><h1>You are offline</h1>
<p>This device has no connection to the server. Your games wait there: nothing is lost, and no
clock is stopped by it.</p><p><a href="">Try again</a></p></main></body></html>`;

self.addEventListener("install", () => self.skipWaiting());
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

self.addEventListener("fetch", (event) => {
  if (event.request.mode !== "navigate") return; // the browser fetches everything else itself
  event.respondWith(fetch(event.request).catch(() => new Response(OFFLINE, {
    status: 200, // an error status would be logged as one: this page is the answer meant
    headers: { "Content-Type": "text/html; charset=utf-8", "Cache-Control": "no-store" },
  })));
});

function sitePath(url) {
  try {
    const parsed = new URL(url || "/", self.location.origin);
    return parsed.origin === self.location.origin ? parsed.pathname + parsed.hash : "/";
  } catch {
    return "/";
  }
}

self.addEventListener("push", (event) => {
  let notice = {};
  try {
    notice = event.data ? event.data.json() : {};
  } catch {
    notice = { body: event.data ? event.data.text() : "" };
  }
  const title = typeof notice.title === "string" && notice.title ? notice.title : "Patrician";
  event.waitUntil(self.registration.showNotification(title, {
    body: typeof notice.body === "string" ? notice.body : "",
    tag: typeof notice.tag === "string" ? notice.tag : undefined,
    renotify: Boolean(notice.tag),
    icon: "/icon-192.png",
    data: { url: sitePath(notice.url) },
  }));
});

self.addEventListener("notificationclick", (event) => {
  event.notification.close();
  const path = sitePath(event.notification.data && event.notification.data.url);
  event.waitUntil((async () => {
    const open = await self.clients.matchAll({ type: "window", includeUncontrolled: true });
    const same = open.find((client) => new URL(client.url).pathname === path.split("#")[0]);
    if (same) return same.focus();
    return self.clients.openWindow(path);
  })());
});
