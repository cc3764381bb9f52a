"""Notifications on this device (Web Push), as a player turns them on in the settings page: the
device named and subscribed, listed, told a game's news while no page is open (a notification
whose click opens the game), refused with the reason beside its field, removed, subscribed
again silently when the server's key changed, and the page saying plainly when this browser
or this server cannot do it. A player who is not a programmer must be able to do all this.

Headless Chromium has no push service to subscribe to, so each test stubs `PushManager` (an
init script) with a subscription whose endpoint and keys are those of a `Device` of the tests'
own push service on loopback (tests/workers/push_service.py): the server really sends to it,
VAPID-signed and encrypted, and the service decrypts what arrives. What a push service would
then bring to the browser is handed to the page's service worker through the DevTools
protocol (`ServiceWorker.deliverPushMessage`), as in test_app.py. No headless browser can
click a notification, so the click is dispatched in the service worker as the browser would
dispatch it; the window it asks for is recorded (a window opened from a script's event is
refused) and then opened by the test.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from tests.server.client import Api, Player
from tests.server.live import LiveServer
from tests.web.browser import SIZES, Watched, deliver_push, not_blank, shown_notifications
from tests.workers.push_service import Device, PushService, b64url, point

NAME = "Name of this device"
NOTIFY = "Notify me on this device"
STATE = "test.push"  # the stub's state in localStorage: kept across the context's pages

# PushManager as a browser has it, but subscribing to the tests' push service: the n-th
# subscription made is SUBSCRIPTIONS[n] (a browser gives a new endpoint after unsubscribe).
STUB = """((subscriptions) => {
  const read = () => JSON.parse(localStorage.getItem("%(state)s")
    || '{"key": null, "n": -1, "subscribed": 0, "unsubscribed": 0}');
  const write = (state) => localStorage.setItem("%(state)s", JSON.stringify(state));
  const b64 = (key) => typeof key === "string" ? key
    : btoa(String.fromCharCode(...new Uint8Array(key)))  // a Uint8Array or an ArrayBuffer
      .replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
  const bytes = (text) => Uint8Array.from(atob(text.replaceAll("-", "+").replaceAll("_", "/")),
    (c) => c.charCodeAt(0)).buffer;
  const subscription = (state) => {
    const made = subscriptions[state.n];
    return {
      endpoint: made.endpoint, expirationTime: null,
      options: { userVisibleOnly: true, applicationServerKey: bytes(state.key) },
      getKey: (name) => bytes(made.keys[name]),
      toJSON: () => ({ endpoint: made.endpoint, expirationTime: null, keys: { ...made.keys } }),
      unsubscribe: async () => {
        const now = read();
        now.key = null;
        now.unsubscribed += 1;
        write(now);
        return true;
      },
    };
  };
  PushManager.prototype.getSubscription = async function () {
    const state = read();
    return state.key ? subscription(state) : null;
  };
  PushManager.prototype.subscribe = async function (options) {
    const state = read();
    const key = b64(options.applicationServerKey);
    if (state.key && state.key !== key) {
      throw new DOMException("a subscription with another applicationServerKey exists",
        "InvalidStateError");
    }
    if (!state.key) {
      state.n = Math.min(state.n + 1, subscriptions.length - 1);
      state.key = key;
      state.subscribed += 1;
      write(state);
    }
    return subscription(state);
  };
})(%(subscriptions)s);"""

# A click on the page's notification, dispatched in the service worker; the path it opens.
CLICK = """async () => {
  const [notification] = await self.registration.getNotifications();
  let opened = null;
  self.clients.openWindow = async (url) => { opened = url; return null; };
  const waits = [];
  const event = new NotificationEvent("notificationclick", { notification });
  Object.defineProperty(event, "waitUntil", { value: (promise) => waits.push(promise) });
  self.dispatchEvent(event);
  await Promise.all(waits);
  return opened;
}"""


@pytest.fixture(scope="module")
def api(web_server: LiveServer) -> Iterator[Api]:
    with httpx.Client(base_url=web_server.url, timeout=30) as client:
        yield Api(client)


@pytest.fixture
def push_service(api: Api) -> Iterator[PushService]:
    key = api.ok(api.request("GET", "/api/push/key"))["public_key"]
    assert isinstance(key, str), "the embedded server makes itself a push key"
    with PushService(key) as service:
        yield service


def _opened(
    open_page: Callable[..., Watched], subscriptions: list[dict[str, Any]], name: str,
    size: str = "desktop",
) -> tuple[Watched, Player]:  # fmt: skip
    """A signed-in player's settings page, in a browser whose subscriptions are stubbed."""
    page = open_page(*SIZES[size])
    context = page.page.context
    context.grant_permissions(["notifications"], origin=page.base_url)
    context.add_init_script(STUB % {"state": STATE, "subscriptions": json.dumps(subscriptions)})
    session = page.sign_in(name)
    _settings(page)
    return page, Player(session["player_id"], session["token"], name)


def _settings(page: Watched) -> None:
    page.page.get_by_role("link", name="Settings").click()
    page.page.get_by_role("heading", name="Notifications on this device").wait_for()


def _turn_on(page: Watched, name: str) -> None:
    page.page.get_by_label(NAME).fill(name)
    page.page.get_by_role("button", name=NOTIFY).click()
    page.page.get_by_text(f'Done: "{name}" gets your notifications.').wait_for()


def _state(page: Watched) -> dict[str, Any]:
    state: dict[str, Any] = json.loads(page.page.evaluate(f"localStorage.getItem('{STATE}')"))
    return state


def _stored(page: Watched) -> dict[str, Any] | None:
    stored = page.page.evaluate("localStorage.getItem('patrician.push-device')")
    return None if stored is None else dict(json.loads(stored))


def _devices(api: Api, player: Player) -> list[dict[str, Any]]:
    devices: list[dict[str, Any]] = api.ok(api.request("GET", "/api/me/push", player=player))
    return devices


def test_a_player_turns_on_this_device_and_a_game_notice_arrives_there_and_opens_the_game(
    open_page: Callable[..., Watched], api: Api, push_service: PushService
) -> None:
    device = push_service.add(Device())
    page, me = _opened(open_page, [device.subscription(push_service)], "Pia")
    assert page.page.get_by_label(NAME).input_value() == "Chrome on Linux", "guessed"
    _turn_on(page, "Pia's laptop")
    item = page.page.locator("ul.devices li")
    assert item.count() == 1
    assert "Pia's laptop" in item.inner_text() and "this device" in item.inner_text()
    assert "through 127.0.0.1" in item.inner_text()
    [listed] = _devices(api, me)
    assert listed["name"] == "Pia's laptop" and listed["service"] == "127.0.0.1"
    assert listed["current"] is True
    assert _stored(page) == {"id": listed["id"], "name": "Pia's laptop"}

    bea = api.create_player("Bea")  # a game with Pia starts: she is told on this device
    created = api.create_game(bea, 2, "towers", (), "ab")
    game_id = created["game_id"]
    api.join(me, game_id, created["invite_code"], "cd")
    message = push_service.wait(device.path, 1, timeout=30)[0].message
    assert "Bea" in message["title"] and game_id not in message["title"], message
    assert message["url"] == f"/games/{game_id}" and message["tag"] == f"game-{game_id}"

    deliver_push(page, message)  # what the push service would bring to this browser
    shown = shown_notifications(page, 1)
    assert shown == [{key: message[key] for key in ("title", "body", "tag", "url")}]
    worker = page.page.context.service_workers[0]
    opened = worker.evaluate(CLICK)
    assert opened == f"/games/{game_id}", "the click opens the game's page"
    assert shown_notifications(page, 0) == [], "and closes the notification"
    page.page.goto(opened)
    page.page.get_by_role("heading", level=1, name=re.compile(r" \u2014 Towers$")).wait_for()
    assert page.unexpected() == []


def test_a_refused_subscription_is_shown_beside_its_field_and_adds_nothing(
    open_page: Callable[..., Watched], api: Api, screenshots: Path
) -> None:
    device = Device()  # its browser's push service at a private address: refused
    keys = {"p256dh": device.p256dh, "auth": device.auth_b64}
    refused = {"endpoint": "https://10.0.0.1/push/x", "keys": keys}
    page, me = _opened(open_page, [refused], "Quin", "phone")
    page.allow("status of 422")
    page.page.get_by_role("button", name=NOTIFY).click()
    error = page.page.locator("#push-error")
    error.wait_for()
    assert error.inner_text().startswith("This browser's push service 10.0.0.1 is")
    assert "private" in error.inner_text()
    assert page.page.locator("section.push .status").count() == 0, "said once, beside it"
    button = page.page.get_by_role("button", name=NOTIFY)
    assert button.get_attribute("aria-describedby") == "push-error"
    assert button.evaluate("(node) => node === document.activeElement"), "focus goes to it"
    page.page.locator("section.push").screenshot(path=screenshots / "push-refused-phone.png")
    assert _devices(api, me) == []
    assert _stored(page) is None
    assert page.page.locator("ul.devices").count() == 0
    assert page.unexpected() == []


def test_remove_takes_the_device_off_the_list_and_ends_its_subscription(
    open_page: Callable[..., Watched], api: Api, push_service: PushService
) -> None:
    device = push_service.add(Device())
    page, me = _opened(open_page, [device.subscription(push_service)], "Rhea")
    _turn_on(page, "Rhea's phone")
    assert len(_devices(api, me)) == 1
    page.page.get_by_role("button", name="Remove Rhea's phone").click()
    page.page.get_by_text('"Rhea\'s phone" gets no more notifications.').wait_for()
    assert _devices(api, me) == []
    assert _state(page)["unsubscribed"] == 1 and _state(page)["key"] is None
    assert _stored(page) is None
    assert page.page.evaluate("document.activeElement.textContent") == (
        "Devices that get your notifications"
    ), "focus stays in the section once the button is gone"
    assert page.unexpected() == []


def test_signing_out_ends_the_notifications_on_this_device(
    open_page: Callable[..., Watched], api: Api, push_service: PushService
) -> None:
    """The next person at this browser (a shared computer) gets none of the player's."""
    device = push_service.add(Device())
    page, me = _opened(open_page, [device.subscription(push_service)], "Sven")
    _turn_on(page, "Library computer")
    assert len(_devices(api, me)) == 1
    page.page.get_by_role("button", name="Sign out").click()
    page.page.get_by_text("Not signed in").wait_for()
    assert _devices(api, me) == []
    assert _state(page)["unsubscribed"] == 1 and _stored(page) is None
    assert page.unexpected() == []


@pytest.mark.parametrize("size", sorted(SIZES))
def test_the_push_section_reads_well_and_passes_axe_at_each_size(
    open_page: Callable[..., Watched], api: Api, push_service: PushService,
    screenshots: Path, size: str,
) -> None:  # fmt: skip
    here, tablet = push_service.add(Device()), push_service.add(Device())
    page, me = _opened(open_page, [here.subscription(push_service)], "Sol", size)
    tablet_json = {**tablet.subscription(push_service), "name": "Old tablet in the kitchen"}
    api.ok(api.request("POST", "/api/me/push", player=me, json=tablet_json), 201)
    _turn_on(page, "Sol's phone")
    assert page.page.locator("ul.devices li").count() == 2
    section = page.page.locator("section.push")
    png = section.screenshot(path=screenshots / f"push-section-{size}.png")
    assert not_blank(png)
    page.page.screenshot(path=screenshots / f"settings-push-{size}.png", full_page=True)
    assert page.no_sideways_scroll(), f"the settings page scrolls sideways at {size}"
    assert page.axe() == []
    assert page.unexpected() == []


def test_a_device_subscribed_with_another_key_is_subscribed_again_when_a_page_opens(
    open_page: Callable[..., Watched], api: Api, push_service: PushService
) -> None:
    first, second = push_service.add(Device()), push_service.add(Device())
    subscriptions = [first.subscription(push_service), second.subscription(push_service)]
    page, me = _opened(open_page, subscriptions, "Tess")
    _turn_on(page, "Tess's phone")
    [before] = _devices(api, me)
    old_key = b64url(point(ec.generate_private_key(ec.SECP256R1()).public_key()))
    page.page.evaluate(  # as if the browser had subscribed before the server's key changed
        "([name, key]) => { const s = JSON.parse(localStorage.getItem(name));"
        " s.key = key; localStorage.setItem(name, JSON.stringify(s)); }",
        [STATE, old_key],
    )
    page.page.goto("/audit")  # any page of a signed-in player
    deadline = time.monotonic() + 15
    while (_stored(page) or {}).get("id") == before["id"]:
        assert time.monotonic() < deadline, "not subscribed again"
        page.page.wait_for_timeout(100)
    page.page.wait_for_load_state("networkidle")
    [after] = _devices(api, me)
    assert after["id"] != before["id"] and after["name"] == "Tess's phone" and after["current"]
    server_key = api.ok(api.request("GET", "/api/push/key"))["public_key"]
    state = _state(page)
    assert (state["n"], state["key"], state["unsubscribed"]) == (1, server_key, 1)
    _settings(page)  # and the page lists this device as it is now
    assert "this device" in page.page.locator("ul.devices li").inner_text()
    assert page.unexpected() == []


def test_a_player_who_does_not_allow_notifications_is_told_how_to_and_nothing_is_added(
    open_page: Callable[..., Watched], api: Api, screenshots: Path
) -> None:
    page = open_page(*SIZES["phone"])  # not granted: headless Chromium answers "denied"
    session = page.sign_in("Wim")
    me = Player(session["player_id"], session["token"], "Wim")
    _settings(page)
    page.page.get_by_role("button", name=NOTIFY).click()
    page.page.get_by_role("alert").filter(has_text="Notifications are blocked").wait_for()
    assert (
        "allow notifications, and press the button again"
        in page.page.locator("section.push [role=alert]").inner_text()
    )
    page.page.locator("section.push").screenshot(path=screenshots / "push-blocked-phone.png")
    assert _devices(api, me) == [] and _stored(page) is None
    page.page.reload()  # the page opened once blocked says so before the button is pressed
    page.page.locator("#push-blocked").wait_for()
    button = page.page.get_by_role("button", name=NOTIFY)
    assert button.get_attribute("aria-describedby") == "push-error push-blocked"
    assert page.axe() == []
    assert page.unexpected() == []


def test_a_browser_or_server_without_push_says_so_instead_of_offering_it(
    open_page: Callable[..., Watched], screenshots: Path
) -> None:
    without = open_page(*SIZES["phone"])
    without.page.context.add_init_script("delete window.PushManager;")
    without.sign_in("Uli")
    _settings(without)
    without.page.get_by_text("This browser cannot get notifications while this site is").wait_for()
    assert without.page.get_by_role("button", name=NOTIFY).count() == 0
    section = without.page.locator("section.push")
    section.screenshot(path=screenshots / "push-unsupported-phone.png")
    assert without.axe() == []

    off = open_page(*SIZES["phone"])
    off.page.context.add_init_script(
        """const fetched = window.fetch;
        window.fetch = (url, options) => String(url).endsWith("/api/push/key")
          ? Promise.resolve(new Response('{"public_key": null}',
              { headers: { "Content-Type": "application/json" } }))
          : fetched(url, options);"""
    )
    off.sign_in("Vera")
    _settings(off)
    off.page.get_by_text("Notifications on phones and computers are off on this").wait_for()
    assert off.page.get_by_role("button", name=NOTIFY).count() == 0
    off.page.locator("section.push").screenshot(path=screenshots / "push-off-phone.png")
    assert without.unexpected() == [] and off.unexpected() == []
