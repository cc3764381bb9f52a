"""A turn within reach: a whole game played by taps at a phone's size (390x844) and by clicks
at a desktop's (1440x900), where at every decision one of its legal choices is on the screen
as it is, without scrolling, and nothing covers it; the city a step asks you to build in is
in the room the dock at the foot of a phone's screen leaves; no word of the page is drawn
smaller than 11 CSS px; and on a desktop the whole board stays in the window beside the
choices.

Each tap goes to a choice that is on screen already (Playwright would scroll to any other
first, which is what a person would have to do and what this test refuses).
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest

from tests.web.browser import SIZES, Watched
from tests.web.players import LEGAL, Person
from tests.web.test_play import create_game

# The indexes of the legal choices whose whole box is inside the window and which are what
# a tap at their middle reaches (not under the dock, nor under anything else).
ON_SCREEN = """(selector) => [...document.querySelectorAll(selector)].map((node, index) => {
  const box = node.getBoundingClientRect();
  if (!box.width || !box.height) return -1;
  if (box.left < 0 || box.top < 0 || box.right > innerWidth || box.bottom > innerHeight) return -1;
  const hit = document.elementFromPoint(box.left + box.width / 2, box.top + box.height / 2);
  return hit && (hit === node || node.contains(hit)) ? index : -1;
}).filter((index) => index >= 0)"""

# Whether the city the pending step is in (if any) is wholly in the window above the dock.
CITY_IN_ROOM = """() => {
  const view = window.patricianPage.shown;
  const city = view && view.pending ? view.pending.city : null;
  if (!city) return true;
  const tile = document.querySelector(`svg.board g.city[data-city="${CSS.escape(city)}"]`);
  const dock = document.querySelector('.dock');
  const docked = getComputedStyle(dock).position === 'fixed';
  const bottom = innerHeight - (docked ? dock.getBoundingClientRect().height : 0);
  const box = tile.getBoundingClientRect();
  return box.top >= 0 && box.bottom <= bottom + 1;
}"""

# Every piece of text drawn smaller than 11 CSS px (an SVG's words at the size its scale
# draws them), with its size.
SMALL_WORDS = """() => {
  const small = [];
  for (const node of document.querySelectorAll('main *')) {
    const own = [...node.childNodes].some((c) => c.nodeType === 3 && c.textContent.trim());
    if (!own || !node.checkVisibility()) continue;
    let size = parseFloat(getComputedStyle(node).fontSize);
    if (node.closest('svg') && node.getScreenCTM) size *= node.getScreenCTM().a;
    if (size < 11) small.push(`${node.textContent.trim().slice(0, 20)}: ${size.toFixed(1)} px`);
  }
  return small;
}"""

# Whether the whole board is in the window.
BOARD_IN_VIEW = """() => {
  const box = document.querySelector('svg.board').getBoundingClientRect();
  return box.top >= 0 && box.left >= 0 && box.bottom <= innerHeight && box.right <= innerWidth;
}"""


def _decide(person: Person, rng: random.Random, size: str, seen: dict[str, Any]) -> None:
    """Stage a whole turn by choices on screen, and send it."""
    page = person.page
    before = person.version()
    while True:
        person.idle()
        if not page.locator(LEGAL).count():
            break
        reachable: list[int] = page.evaluate(ON_SCREEN, LEGAL)
        step = page.evaluate("window.patricianPage.shown.pending.step")
        assert reachable, f"{size}: no legal choice of step {step} on screen"
        assert page.evaluate(CITY_IN_ROOM), f"{size}: the city of step {step} is off screen"
        if size == "desktop":
            assert page.evaluate(BOARD_IN_VIEW), "the whole board is not in the window"
        seen["steps"].add(step)
        seen["small"].update(page.evaluate(SMALL_WORDS))
        page.locator(LEGAL).nth(rng.choice(reachable)).click()
        person.idle()
    confirm = page.get_by_role("button", name="Confirm and send")
    assert page.evaluate(ON_SCREEN, ".dock button.primary"), f"{size}: Confirm is off screen"
    confirm.click()
    page.wait_for_function("(v) => Number(document.body.dataset.version) > v", arg=before)


@pytest.mark.parametrize("size", list(SIZES))
def test_at_every_decision_of_a_whole_game_a_legal_choice_is_on_screen_without_scrolling(
    open_page: Callable[..., Watched], size: str
) -> None:
    rng = random.Random(31)
    watched = open_page(*SIZES[size])
    person = Person(watched, "Vera")
    watched.sign_in("Vera")
    create_game(person, seats=2, bots=["greedy"], modules=["trade_routes"])
    person.page.locator("svg.board g.city").first.wait_for()
    seen: dict[str, Any] = {"steps": set(), "small": set()}
    turns = 0
    while person.wait_for_turn(timeout=20000):
        _decide(person, rng, size, seen)
        turns += 1
    person.page.get_by_role("region", name="Final scores").wait_for()
    seen["small"].update(person.page.evaluate(SMALL_WORDS))
    assert turns > 8
    assert {"play_card", "place_floor"} <= seen["steps"]
    assert not seen["small"], f"{size}: words under 11 px: {sorted(seen['small'])[:10]}"
    assert watched.no_sideways_scroll()
    assert not watched.unexpected()


def test_the_hand_and_the_step_are_on_a_phone_screen_the_moment_a_turn_starts(
    open_page: Callable[..., Watched],
) -> None:
    watched = open_page(*SIZES["phone"])
    person = Person(watched, "Ugo")
    watched.sign_in("Ugo")
    create_game(person, seats=3, bots=["greedy", "random"], modules=["delegates"])
    assert person.wait_for_turn()
    page = person.page
    assert page.evaluate("scrollY") == 0
    hand = page.get_by_role("region", name="Your hand")
    chips = page.evaluate(ON_SCREEN, ".hand button.card-chip")
    assert len(chips) == hand.locator("button.card-chip").count() >= 3  # every card, none hidden
    pending = page.locator(".dock .pending")
    assert pending.inner_text().startswith("Your turn")
    assert page.evaluate(ON_SCREEN, ".dock .pending")
    assert not watched.unexpected()


def test_the_page_of_a_game_that_does_not_exist_says_so_and_throws_nothing(
    open_page: Callable[..., Watched],
) -> None:
    """Its first reads, begun before the page's modules arrived (early.js), fail as a read
    of the page itself would: in words, never as an uncaught error."""
    watched = open_page(*SIZES["phone"])
    watched.sign_in("Noa")
    watched.allow("Failed to load resource")  # Chromium's own line for the 404
    watched.page.goto("/games/g0000000000000000")
    watched.page.get_by_text("There is no such game.").wait_for()
    assert not watched.unexpected()


def test_the_board_takes_the_columns_its_room_allows_when_the_window_is_resized(
    open_page: Callable[..., Watched],
) -> None:
    watched = open_page(*SIZES["desktop"])
    person = Person(watched, "Ivo")
    watched.sign_in("Ivo")
    create_game(person, seats=2, bots=["greedy"])
    page = person.page
    page.locator("svg.board g.city").first.wait_for()
    width = "() => document.querySelector('svg.board').viewBox.baseVal.width"
    wide = page.evaluate(width)
    page.set_viewport_size({"width": SIZES["phone"][0], "height": SIZES["phone"][1]})
    page.wait_for_function(f"() => ({width})() < {wide}")  # fewer columns: a narrower map
    assert not page.evaluate(SMALL_WORDS)
    assert watched.no_sideways_scroll()
