"""The settings page and what every page does in the background, as a person uses them: a new
player sets every channel by typing and clicking, and the API then says each one; a refused
setting is shown beside its field and changes nothing; the tab's title counts the games that
await the player, a line says when one becomes their turn, and the settings page is offered
once a player has a game.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.server.client import Api, Player
from tests.server.live import LiveServer
from tests.web.browser import SIZES, Watched, not_blank

PUBLIC_HOOK = "https://93.184.216.34/patrician"  # a public address: the player has no game,
# so nothing is ever sent to it


@pytest.fixture(scope="module")
def api(web_server: LiveServer) -> Iterator[Api]:
    with httpx.Client(base_url=web_server.url, timeout=30) as client:
        yield Api(client)


def _player_of(page: Watched, name: str) -> Player:
    session = page.sign_in(name)
    return Player(session["player_id"], session["token"], name)


def _settings(page: Watched) -> None:
    page.page.get_by_role("link", name="Settings").click()
    page.page.get_by_role("heading", name="How you are told").wait_for()


@pytest.mark.parametrize("size", sorted(SIZES))
def test_a_new_player_sets_every_channel_in_the_settings_page_and_the_api_then_shows_each(
    open_page: Callable[..., Watched], api: Api, screenshots: Path, size: str
) -> None:
    page = open_page(*SIZES[size])
    me = _player_of(page, "Nora")
    _settings(page)
    form = page.page
    form.get_by_label("Your e-mail address").fill("nora@example.org")
    form.get_by_label("One e-mail a day").check()
    form.get_by_label("Sent at").select_option("9")
    form.locator("#digest\\.time_zone").select_option("Asia/Tokyo")
    form.get_by_label("remind me this many hours").fill("12, 2")
    form.get_by_label("Hold notifications back").check()
    form.get_by_label("From", exact=True).fill("22:30")
    form.get_by_label("Until", exact=True).fill("07:15")
    form.locator("#quiet_hours\\.time_zone").select_option("Europe/Berlin")
    form.get_by_text("Webhook (for programs)").click()
    form.get_by_label("Send each notice as a signed JSON POST to").fill(PUBLIC_HOOK)
    form.get_by_role("button", name="Save").click()
    form.get_by_text("shown this once").wait_for()
    form.get_by_text("We sent a link to nora@example.org").first.wait_for()
    secret = form.locator("form.settings code").inner_text()
    assert secret.startswith("whsec_")

    told = api.ok(api.request("GET", "/api/me/notifications", player=me))
    assert told == {
        "webhook": {"url": PUBLIC_HOOK, "enabled": True, "disabled_reason": None, "secret": None},
        "quiet_hours": {"start": "22:30", "end": "07:15", "time_zone": "Europe/Berlin"},
        "reminder_hours": [12.0, 2.0],
        "email": {"address": "nora@example.org", "confirmed": False},
        "digest": {"hour": 9, "time_zone": "Asia/Tokyo"},
        "push": [],
    }

    form.get_by_label("Days from now").fill("3")
    form.get_by_role("button", name="Go on vacation").click()
    form.get_by_text("On vacation until").wait_for()
    assert api.ok(api.request("GET", "/api/me/vacation", player=me))["until"] is not None
    png = form.screenshot(path=screenshots / f"settings-set-{size}.png", full_page=True)
    assert not_blank(png)
    assert page.no_sideways_scroll(), f"the settings page scrolls sideways at {size}"
    assert page.axe() == []
    form.get_by_role("button", name="Come back now").click()
    form.get_by_role("button", name="Go on vacation").wait_for()
    assert api.ok(api.request("GET", "/api/me/vacation", player=me))["until"] is None

    form.reload()  # what the page shows is what the server keeps
    form.get_by_role("heading", name="How you are told").wait_for()
    assert form.get_by_label("Your e-mail address").input_value() == "nora@example.org"
    assert form.get_by_label("remind me this many hours").input_value() == "12, 2"
    assert form.locator("#digest\\.time_zone").input_value() == "Asia/Tokyo"
    assert form.get_by_label("From", exact=True).input_value() == "22:30"
    assert page.unexpected() == []


def test_a_refused_setting_is_shown_beside_its_field_and_changes_nothing(
    open_page: Callable[..., Watched], api: Api
) -> None:
    page = open_page(*SIZES["phone"])
    page.allow("status of 400", "status of 422")  # the refusals the test asks for
    me = _player_of(page, "Otto")
    _settings(page)
    before = api.ok(api.request("GET", "/api/me/notifications", player=me))
    form = page.page

    form.get_by_label("remind me this many hours").fill("24, 0")
    form.get_by_role("button", name="Save").click()
    error = form.locator("#reminder_hours-error")
    error.wait_for()
    assert "> 0" in error.inner_text()
    assert form.get_by_label("remind me this many hours").get_attribute("aria-invalid") == "true"
    form.get_by_text("Not saved").wait_for()

    form.get_by_label("remind me this many hours").fill("24, soon")
    form.get_by_role("button", name="Save").click()
    form.get_by_text('"soon" is not a number of hours').wait_for()

    form.get_by_label("remind me this many hours").fill("24")
    form.get_by_text("Webhook (for programs)").click()
    form.get_by_label("Send each notice as a signed JSON POST to").fill("http://10.1.2.3/hook")
    form.get_by_role("button", name="Save").click()
    hook_error = form.locator("#webhook\\.url-error")
    hook_error.wait_for()
    assert "private address" in hook_error.inner_text()
    assert form.locator("#reminder_hours-error").is_hidden(), "an old error goes once fixed"

    form.get_by_label("Send each notice as a signed JSON POST to").fill("")
    form.get_by_label("One e-mail a day").check()
    form.get_by_role("button", name="Save").click()
    digest_error = form.locator("#digest-error")
    digest_error.wait_for()
    assert "set email.address too" in digest_error.inner_text()

    form.get_by_label("Days from now").fill("400")
    form.get_by_role("button", name="Go on vacation").click()
    form.locator("#days-error").wait_for()
    assert api.ok(api.request("GET", "/api/me/notifications", player=me)) == before
    assert api.ok(api.request("GET", "/api/me/vacation", player=me))["until"] is None
    assert page.axe() == []
    assert page.unexpected() == []


def test_the_tab_counts_the_games_awaiting_you_and_a_line_says_when_one_becomes_your_turn(
    open_page: Callable[..., Watched], api: Api, screenshots: Path
) -> None:
    page = open_page()
    me = _player_of(page, "Ida")
    other = api.create_player("Max")
    created = api.create_game(me, 2, "towers", (), "ab")
    api.join(other, created["game_id"], created["invite_code"], "cd")
    table = api.table_of(created["game_id"], [me, other])
    mine = next(seat for seat, p in enumerate(table.seats) if p.player_id == me.player_id)
    rng = random.Random(3)
    while table.pending == mine:  # Ida plays (through the API) until the turn is Max's
        table.step(rng, whole_turn=True)
    page.page.goto("/audit")  # any page: the look at the player's games is every page's
    page.page.wait_for_load_state("networkidle")
    assert page.page.title() == "Audit - Patrician", "no game awaits Ida yet"
    while table.pending != mine:  # Max plays until it is Ida's turn
        table.step(rng, whole_turn=True)
    page.page.get_by_text("Your turn now in a").wait_for(timeout=30_000)
    page.page.screenshot(path=screenshots / "your-turn-line.png")
    assert page.page.title() == "(1) Audit - Patrician"
    badge = page.page.locator("link[rel=icon]").get_attribute("href") or ""
    assert badge.startswith("data:image/png"), "the icon carries the count"
    named = " and ".join(player.name for player in table.seats) + " \u2014 Towers"  # by seat
    page.page.get_by_role("link", name=named).click()  # the game by its players, not its kind
    page.page.wait_for_url(f"**/games/{created['game_id']}")
    _title_becomes(page, f"(1) {named} - Patrician")
    while table.pending == mine:  # Ida's turn is played; the count goes
        table.step(rng, whole_turn=True)
    _title_becomes(page, f"{named} - Patrician")
    assert page.unexpected() == []


def _title_becomes(page: Watched, title: str, seconds: float = 30) -> None:
    """Wait for the tab's title (a page function would be `eval`, which the CSP refuses)."""
    deadline = time.monotonic() + seconds
    while page.page.title() != title:
        assert time.monotonic() < deadline, f"the title stayed {page.page.title()!r}"
        page.page.wait_for_timeout(200)


def test_the_settings_page_is_offered_once_a_player_has_a_game(
    open_page: Callable[..., Watched], api: Api, screenshots: Path
) -> None:
    page = open_page()
    me = _player_of(page, "Uma")
    assert page.page.get_by_text("set up notifications").count() == 0, "not before a game"
    api.create_game(me, 3, "towers", (), "cd")
    page.page.reload()
    offer = page.page.get_by_role("link", name="set up notifications")
    offer.wait_for()
    page.page.screenshot(path=screenshots / "settings-offer.png")
    page.page.reload()
    page.page.get_by_role("heading", name="Lobby").wait_for()
    page.page.wait_for_load_state("networkidle")
    assert page.page.get_by_text("set up notifications").count() == 0, "offered once"
    assert page.unexpected() == []
