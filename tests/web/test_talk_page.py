"""Table talk on the play page, in Chromium: two people at one table each say something and
see the other's words arrive without a reload, as text (markup shows as it was typed), each
with its writer's name and a time, newest at the bottom; Enter sends and Shift+Enter starts a
new line; the sixth message within a minute is refused in words that say when to try again,
and nothing is sent; a spectator sees no talk while the game is on and everybody reads it,
read-only, once it is over. At a phone's size and a desktop's, with axe-core's serious and
critical rules.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
from playwright.sync_api import Locator, Page

from tests.server.client import Api
from tests.server.live import LiveServer
from tests.web.browser import SIZES, Watched, not_blank
from tests.web.players import Person
from tests.web.test_play import create_game
from tests.web.test_play_end import open_game, signed_in_as

TOO_FAST = "Failed to load resource: the server responded with a status of 429"
REFUSED = "Failed to load resource: the server responded with a status of 422"
LIVE = 8000
"""ms a message may take to reach the other page: it asks every 3 s while in view."""


@pytest.fixture(scope="module")
def api(web_server: LiveServer) -> Iterator[Api]:
    with httpx.Client(base_url=web_server.url, timeout=30) as client:
        yield Api(client)


def talk(page: Page) -> tuple[Locator, Locator]:
    section = page.get_by_role("region", name="Table talk")
    return section, section.get_by_label("Say something to the table")


def said(page: Page, text: str, timeout: float = LIVE) -> None:
    """The message `text` is in the page's thread (within `timeout` ms)."""
    page.locator("section.talk li", has_text=text).first.wait_for(timeout=timeout)


def two_at_one_table(open_page: Callable[..., Watched]) -> tuple[Person, Person, str]:
    """Ann (a desktop) creates a two-seat game in the lobby and Bob (a phone) joins it by the
    invite link; both pages show the board."""
    ann = Person(open_page(*SIZES["desktop"]), "Ann")
    bob = Person(open_page(*SIZES["phone"]), "Bob")
    ann.watched.sign_in("Ann")
    bob.watched.sign_in("Bob")
    game_id = create_game(ann, seats=2)
    invite = ann.page.get_by_label("Invite link").input_value()
    bob.page.goto(invite)
    bob.page.get_by_role("button", name="Join this table").click()
    for person in (bob, ann):
        person.page.locator("svg.board g.city").first.wait_for()
        person.page.get_by_role("region", name="Table talk").wait_for()
    return ann, bob, game_id


def test_two_people_at_one_table_see_each_others_words_arrive_without_a_reload(
    open_page: Callable[..., Watched], screenshots: Path
) -> None:
    ann, bob, _ = two_at_one_table(open_page)
    for person in (ann, bob):
        person.page.evaluate("window.notReloaded = true")
        section, box = talk(person.page)
        assert "500" in section.inner_text(), "the limit is shown"
        assert "No messages yet" in section.inner_text()

    _, box = talk(ann.page)
    box.fill("Good luck, Bob!")
    box.press("Enter")  # Enter sends
    said(ann.page, "Good luck, Bob!", 3000)
    assert box.input_value() == "", "sent: the box is empty again"
    said(bob.page, "Good luck, Bob!")

    _, box = talk(bob.page)
    box.fill("Thanks <b>x</b>")
    box.press("Shift+Enter")  # a new line, not sent
    box.type("second line")
    assert box.input_value() == "Thanks <b>x</b>\nsecond line"
    bob.page.get_by_role("region", name="Table talk").get_by_role("button", name="Send").click()
    said(bob.page, "second line", 3000)
    said(ann.page, "second line")

    for person in (ann, bob):
        page = person.page
        assert page.evaluate("window.notReloaded"), "the page was not reloaded"
        lines = page.locator("section.talk li")
        assert lines.count() == 2
        first, second = lines.nth(0), lines.nth(1)  # newest at the bottom
        assert re.match(r"Ann \(seat \d\).* · \d", first.inner_text()), first.inner_text()
        assert first.locator("time").count() == 1
        assert "Bob (seat" in second.inner_text()
        assert "Thanks <b>x</b>" in second.inner_text(), "markup shows as it was typed"
        assert second.locator("b").count() == 0 and second.locator("br").count() == 1
        mine = first if person is ann else second
        assert "(you)" in mine.inner_text()
        thread = page.locator("section.talk .talk-thread")
        assert thread.evaluate("(box) => getComputedStyle(box).overflowY") == "auto"
        assert person.watched.no_sideways_scroll()
        assert person.watched.axe() == [], "axe found serious violations with talk showing"
    for person, size in ((ann, "desktop"), (bob, "phone")):
        section = person.page.get_by_role("region", name="Table talk")
        section.scroll_into_view_if_needed()
        assert not_blank(section.screenshot(path=screenshots / f"talk-{size}.png"))


def test_the_sixth_message_within_a_minute_is_refused_in_words_and_nothing_is_sent(
    open_page: Callable[..., Watched], screenshots: Path
) -> None:
    ann, bob, _ = two_at_one_table(open_page)
    ann.watched.allow(TOO_FAST)  # Chromium's own line for the 429 (no page can silence it)
    section, box = talk(ann.page)
    for n in range(1, 6):
        box.fill(f"message {n}")
        box.press("Enter")
        said(ann.page, f"message {n}", 3000)
    box.fill("one too many")
    box.press("Enter")
    alert = section.get_by_role("alert")
    alert.wait_for()
    words = alert.inner_text()
    assert "at most 5 messages a minute may be sent in one game" in words, words
    assert re.search(r"Try again in \d+ seconds \(at \d", words), words
    assert box.input_value() == "one too many", "the message is kept to send later"
    box.press("Enter")  # again at once: answered by the page itself, nothing is sent
    assert "at most 5 messages a minute" in alert.inner_text()
    said(bob.page, "message 5")
    bob.page.wait_for_timeout(3500)  # a read of the other page after the refusal
    for person in (ann, bob):
        texts = person.page.locator("section.talk li").all_inner_texts()
        assert len(texts) == 5 and not any("one too many" in text for text in texts), texts
    refusals = [p for p in ann.watched.problems if TOO_FAST in p]
    assert len(refusals) == 1, "one request refused; the second refusal was the page's own"
    section.screenshot(path=screenshots / "talk-too-fast-desktop.png")


def test_a_spectator_reads_the_talk_only_once_the_game_is_over_and_its_players_talk_on(
    open_page: Callable[..., Watched], api: Api, screenshots: Path
) -> None:
    table = api.new_table(2, rng=random.Random(11))
    ada, bea = table.seats
    path = f"{table.path}/talk"
    api.ok(api.request("POST", path, player=ada, json={"text": "Have fun <i>all</i>"}), 201)
    spectator = open_page(*SIZES["phone"])
    open_game(spectator.page, table.game_id)
    assert spectator.page.locator("section.talk").is_hidden()
    assert not [b for b in spectator.bodies if "Have fun" in b], "nothing of it was sent to them"
    player = signed_in_as(open_page, bea, "desktop")
    open_game(player.page, table.game_id)
    said(player.page, "Have fun <i>all</i>", 3000)
    assert talk(player.page)[1].is_visible()

    api.ok(api.request("POST", path, player=bea, json={"text": "gg"}), 201)
    table.play_to_end(random.Random(12))
    # The game ends while the player's page is open: the thread stays, and so does the form
    # (a player may say "good game" after the end); others read it.
    player.page.get_by_role("region", name="Final scores").wait_for()
    said(player.page, "gg")
    player.page.get_by_label("Say something to the table").fill("well played")
    player.page.get_by_role("region", name="Table talk").get_by_role("button", name="Send").click()
    said(player.page, "well played", 3000)
    for watched in (spectator, open_page(*SIZES["desktop"])):
        page = watched.page
        open_game(page, table.game_id)
        section = page.get_by_role("region", name="Table talk")
        section.wait_for()
        said(page, "well played", 3000)
        assert section.locator("li").all_inner_texts()[0].endswith("Have fun <i>all</i>")
        assert section.get_by_label("Say something to the table").count() == 0, "read-only"
        assert "its players may still talk here" in section.inner_text()
        assert watched.axe() == []
    spectator.page.get_by_role("region", name="Table talk").screenshot(
        path=screenshots / "talk-over-phone.png"
    )


def test_a_message_too_long_or_hiding_text_is_refused_beside_the_form_and_kept(
    open_page: Callable[..., Watched], api: Api
) -> None:
    table = api.new_table(2, rng=random.Random(13))
    watched = signed_in_as(open_page, table.seats[0], "phone")
    watched.allow(REFUSED)
    open_game(watched.page, table.game_id)
    section, box = talk(watched.page)
    box.fill("x" * 501)
    assert "501 of at most 500 characters (1 too many)" in section.inner_text()
    assert box.get_attribute("aria-invalid") == "true"
    box.press("Enter")
    alert = section.get_by_role("alert")
    alert.wait_for()
    assert "at most 500 characters, and this one has 501" in alert.inner_text()
    assert not [p for p in watched.problems if REFUSED in p], "refused by the page: not sent"
    hidden = "right\u202eto left"
    box.fill(hidden)
    box.press("Enter")
    refused = section.get_by_role("alert").filter(has_text="U+202E")
    refused.wait_for()
    assert refused.inner_text().startswith("Not sent: a message may not contain U+202E")
    assert box.input_value() == hidden, "the words stay in the box"
    assert api.ok(api.request("GET", f"{table.path}/talk", player=table.seats[0])) == []
    assert watched.axe() == []
