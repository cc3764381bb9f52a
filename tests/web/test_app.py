"""The installable app, in real Chromium: the manifest and its icons, the service worker that
registers on every page, a page opened with no network that says so, and a push message
delivered to the device (through the DevTools protocol, as the browser's push service would)
that shows a notification naming the game, one per game, whose click opens it.
"""

from __future__ import annotations

import json
from collections.abc import Callable

import httpx
import pytest

from tests.server.live import LiveServer
from tests.web.browser import Watched, deliver_push, shown_notifications


@pytest.fixture
def app_page(open_page: Callable[..., Watched]) -> Watched:
    """A page of a signed-in player whose service worker is active and controls it."""
    page = open_page()
    page.page.context.grant_permissions(["notifications"], origin=page.base_url)
    page.sign_in("Pia")
    page.page.evaluate("navigator.serviceWorker.ready.then(() => true)")
    page.page.reload()  # a worker controls the pages loaded after it is active
    page.page.get_by_role("heading", name="Lobby").wait_for()
    return page


def test_the_manifest_names_the_app_its_start_and_icons_that_load(
    web_server: LiveServer,
) -> None:
    answer = httpx.get(f"{web_server.url}/manifest.webmanifest")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("application/manifest+json")
    manifest = json.loads(answer.content)
    assert manifest["name"] == "Patrician" and manifest["display"] == "standalone"
    assert manifest["start_url"] == "/"
    sizes = {icon["sizes"]: icon["src"] for icon in manifest["icons"]}
    assert set(sizes) == {"192x192", "512x512"}
    for size, src in sizes.items():
        icon = httpx.get(web_server.url + src)
        assert icon.status_code == 200 and icon.headers["content-type"] == "image/png", src
        assert icon.content.startswith(b"\x89PNG"), src
        width = int.from_bytes(icon.content[16:20], "big")
        assert f"{width}x{width}" == size, src
    shell = httpx.get(web_server.url + "/").text
    assert '<link rel="manifest" href="/manifest.webmanifest">' in shell
    worker = httpx.get(f"{web_server.url}/sw.js")
    assert worker.status_code == 200
    assert worker.headers["content-type"].startswith("text/javascript")
    assert worker.headers["cache-control"] == "no-cache"


def test_every_page_registers_the_service_worker_for_the_whole_site(app_page: Watched) -> None:
    scope = app_page.page.evaluate("navigator.serviceWorker.ready.then((r) => r.scope)")
    assert scope == app_page.base_url + "/"
    assert app_page.page.evaluate("Boolean(navigator.serviceWorker.controller)")
    assert app_page.unexpected() == []


def test_a_page_opened_with_no_network_says_it_is_offline(app_page: Watched) -> None:
    app_page.allow("status of 404")  # the game (that does not exist) once back online
    app_page.page.context.set_offline(True)
    try:
        app_page.page.goto("/games/gsomething")
        app_page.page.get_by_role("heading", name="You are offline").wait_for()
    finally:
        app_page.page.context.set_offline(False)
    app_page.page.get_by_role("link", name="Try again").click()
    app_page.page.get_by_role("heading", name="You are offline").wait_for(state="detached")


def test_a_push_message_shows_one_notification_per_game_naming_it(app_page: Watched) -> None:
    deliver_push(app_page, {"title": "Your turn: Ada, Bo and you", "body": "Play a card.",
                        "url": "/games/g1", "tag": "g1"})  # fmt: skip
    first = shown_notifications(app_page, 1)
    assert first == [{"title": "Your turn: Ada, Bo and you", "body": "Play a card.",
                      "tag": "g1", "url": "/games/g1"}]  # fmt: skip
    deliver_push(app_page, {"title": "Your turn: Ada, Bo and you", "body": "Build a floor.",
                        "url": "/games/g1", "tag": "g1"})  # fmt: skip
    deliver_push(app_page, {"title": "Your turn: Cy and you", "body": "Play a card.",
                        "url": "https://elsewhere.example/x", "tag": "g2"})  # fmt: skip
    shown = shown_notifications(app_page, 2)
    assert sorted((n["tag"], n["body"], n["url"]) for n in shown) == [
        ("g1", "Build a floor.", "/games/g1"),  # the newer notice of a game replaced the older
        ("g2", "Play a card.", "/"),  # a link off the site is never followed
    ]
    assert app_page.unexpected() == []
