"""What the browser tests do with a page: sign in through the sign-in form, read what the page
drew (the data-* attributes of the board and the seats), keep every response the page
received (for the secret search), take screenshots and check that they are not blank, run
the vendored axe-core.

Everything a test does on a page it does as a person would: clicks and keys. Only the set-up
of a table (a player made elsewhere, a game created) may go through the API directly.
"""

from __future__ import annotations

import io
import json
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from PIL import Image
from playwright.sync_api import Page, Response

CHROMIUM = "/usr/bin/chromium"
AXE = Path(__file__).parent / "axe.min.js"
SIZES = {"phone": (390, 844), "desktop": (1440, 900)}


@dataclass
class Watched:
    page: Page
    base_url: str
    problems: list[str] = field(default_factory=list)
    bodies: list[str] = field(default_factory=list)
    allowed: tuple[str, ...] = ()

    def keep(self, response: Response) -> None:
        """Every API answer the page received, as text (the secret search reads them)."""
        if "/api/" in response.url and response.request.method != "OPTIONS":
            try:
                self.bodies.append(response.text())
            except Exception:  # a stream still open, or a body already gone: nothing to read
                return

    def allow(self, *texts: str) -> None:
        """Console lines this test expects (Chromium logs every 4xx a page's fetch receives:
        a refused move is one)."""
        self.allowed += texts

    def unexpected(self) -> list[str]:
        return [p for p in self.problems if not any(text in p for text in self.allowed)]

    def sign_in(self, name: str) -> dict[str, Any]:
        page = self.page
        page.goto("/")
        page.get_by_label("Your name").fill(name)
        page.get_by_role("button", name="Start playing").click()
        page.get_by_role("heading", name="Lobby").wait_for()
        session: dict[str, Any] = json.loads(
            page.evaluate("localStorage.getItem('patrician.session')")
        )
        return session

    def board(self) -> dict[str, Any]:
        """The board the page drew, read back from its SVG and its seats table."""
        drawn: dict[str, Any] = self.page.evaluate(
            """() => {
            const svg = document.querySelector('svg.board');
            const cities = [...svg.querySelectorAll('g.city')].map((g) => ({
              name: g.dataset.city, capacity: Number(g.dataset.capacity),
              floors: Number(g.dataset.floorsBuilt), sites: JSON.parse(g.dataset.sites),
              tokens_left: JSON.parse(g.dataset.tokensLeft), face_up: g.dataset.faceUp || null,
              scored: g.dataset.scored === 'true',
              high_seat: g.dataset.highSeat === '' ? null : Number(g.dataset.highSeat),
              low_seat: g.dataset.lowSeat === '' ? null : Number(g.dataset.lowSeat),
              floors_drawn: [...g.querySelectorAll('g.tower')]
                .map((t) => t.querySelectorAll('rect.floor').length),
            }));
            const players = [...document.querySelectorAll('table.seats tr[data-seat]')]
              .filter((tr) => !tr.dataset.architetto).map((tr) => ({
                seat: Number(tr.dataset.seat), hand_size: Number(tr.dataset.handSize),
                top_card: tr.dataset.topCard || null, played_count: Number(tr.dataset.playedCount),
                token_count: Number(tr.dataset.tokenCount), tokens: JSON.parse(tr.dataset.tokens),
                supply: Number(tr.dataset.supply), markers_left: Number(tr.dataset.markersLeft),
              }));
            const markers = [...svg.querySelectorAll('g.marker')].map((g) => g.dataset.marker);
            return {version: Number(svg.dataset.version), draw_count: Number(svg.dataset.drawCount),
                    cities, players, markers};
          }"""
        )
        return drawn

    def axe(self) -> list[dict[str, Any]]:
        """The serious and critical violations axe-core finds on the page as it is now."""
        # Evaluated through the DevTools protocol, which the page's CSP does not govern (a
        # script tag would be refused by it, as it should be).
        self.page.evaluate("(source) => { (0, eval)(source); }", AXE.read_text())
        found: list[dict[str, Any]] = self.page.evaluate(
            """async () => {
            const result = await axe.run(document, {resultTypes: ['violations']});
            return result.violations
              .filter((v) => v.impact === 'serious' || v.impact === 'critical')
              .map((v) => ({id: v.id, impact: v.impact, help: v.help,
                            nodes: v.nodes.slice(0, 3).map((n) => n.target.join(' '))}));
          }"""
        )
        return found

    def no_sideways_scroll(self) -> bool:
        return bool(
            self.page.evaluate(
                "document.documentElement.scrollWidth <= document.documentElement.clientWidth"
            )
        )


def view_as_drawn(view: dict[str, Any]) -> dict[str, Any]:
    """The part of an API view that the board and the seats table draw, in the shape
    `Watched.board` reads back."""
    return {
        "version": view["version"],
        "draw_count": view["draw_count"],
        "cities": [
            {
                **{key: city[key] for key in ("name", "capacity", "floors", "sites")},
                **{key: city[key] for key in ("tokens_left", "face_up", "scored")},
                "high_seat": city["high_seat"],
                "low_seat": city["low_seat"],
                "floors_drawn": [len(site) for site in city["sites"]],
            }
            for city in view["cities"]
        ],
        "players": [
            {
                key: player[key]
                for key in (
                    *("seat", "hand_size", "top_card", "played_count", "token_count"),
                    *("tokens", "supply", "markers_left"),
                )
            }
            for player in view["players"]
        ],
        "markers": [
            f"{marker['seat']}:{'-'.join(marker['cities'])}:{marker['side']}"
            for marker in view["markers"]
        ],
    }


def not_blank(png: bytes) -> bool:
    """Whether a screenshot shows something: more than a handful of distinct colours, and
    no one colour covering nearly all of it."""
    image = Image.open(io.BytesIO(png)).convert("RGB").resize((120, 120))
    colours = image.getcolors(120 * 120) or []
    commonest = max(count for count, _ in colours)
    return len(colours) > 8 and commonest < 0.97 * 120 * 120


def deliver_push(page: Watched, payload: dict[str, Any]) -> None:
    """A push message to this page's service worker, as the browser's push service brings it
    (through the DevTools protocol: headless Chromium cannot subscribe to a real one)."""
    # Only to an active worker: a message delivered while it still installs is lost (CI saw
    # a first push show nothing under load).
    page.page.evaluate("async () => { await navigator.serviceWorker.ready; }")
    cdp = page.page.context.new_cdp_session(page.page)
    registrations: list[str] = []
    cdp.on(
        "ServiceWorker.workerRegistrationUpdated",
        lambda event: registrations.extend(
            r["registrationId"] for r in event["registrations"] if not r["isDeleted"]
        ),
    )
    cdp.send("ServiceWorker.enable")
    deadline = time.monotonic() + 10
    while not registrations:
        assert time.monotonic() < deadline, "no service worker registration"
        page.page.wait_for_timeout(50)
    cdp.send(
        "ServiceWorker.deliverPushMessage",
        {"origin": page.base_url, "registrationId": registrations[0], "data": json.dumps(payload)},
    )


def shown_notifications(page: Watched, count: int) -> list[dict[str, Any]]:
    """The notifications the page's service worker shows, once there are `count` (10 s at
    most)."""
    deadline = time.monotonic() + 10
    while True:
        shown: list[dict[str, Any]] = page.page.evaluate(
            """async () => (await (await navigator.serviceWorker.ready).getNotifications())
              .map((n) => ({title: n.title, body: n.body, tag: n.tag, url: n.data.url}))"""
        )
        if len(shown) >= count or time.monotonic() > deadline:
            return shown
        page.page.wait_for_timeout(50)
