"""The replay viewer of a finished five-seat game: at 20 random versions the board it draws is
the API's view at that version (the data drawn, read back from the page, not pixels), and
the keys step, jump to the ends and to the city scorings; the log follows the board and the
board follows the log.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from typing import Any

import httpx
import pytest

from tests.server.client import Api, Table
from tests.server.live import LiveServer
from tests.web.browser import Watched, view_as_drawn


@pytest.fixture(scope="module")
def five_seats(web_server: LiveServer) -> Iterator[tuple[Table, dict[str, Any]]]:
    with httpx.Client(base_url=web_server.url, timeout=30) as client:
        table = Api(client).new_table(
            5, "towers", ("trade_routes", "delegates"), rng=random.Random(21)
        )
        table.play_to_end(random.Random(21), whole_turns=0.3)
        for _ in range(100):  # the seed is revealed just after the end, by the server
            replay = client.get(f"/api/games/{table.game_id}/replay").json()
            if replay["over"]:
                break
            time.sleep(0.05)
        assert replay["over"]
        yield table, replay


def drawn_version(page: Watched) -> int:
    return int(page.page.evaluate("Number(document.body.dataset.version)"))


def test_the_replay_draws_the_apis_view_at_twenty_random_versions(
    open_page: Callable[..., Watched],
    web_server: LiveServer,
    five_seats: tuple[Table, dict[str, Any]],
) -> None:
    table, replay = five_seats
    page = open_page()
    page.page.goto(f"/games/{table.game_id}/replay")
    page.page.locator("ol.log li.current").wait_for()
    versions = random.Random(8).sample([step["version"] for step in replay["steps"]], 20)
    for version in versions:
        page.page.evaluate("(v) => { location.hash = `v=${v}`; }", version)
        page.page.wait_for_function(
            "(v) => Number(document.body.dataset.version) === v", arg=version
        )
        expected = httpx.get(f"{web_server.url}/api/games/{table.game_id}/at/{version}").json()
        assert page.board() == view_as_drawn(expected), f"version {version}"


def test_the_keys_step_through_the_replay_and_the_log_follows(
    open_page: Callable[..., Watched], five_seats: tuple[Table, dict[str, Any]]
) -> None:
    table, replay = five_seats
    versions = [step["version"] for step in replay["steps"]]
    scorings = [s["version"] for s in replay["steps"] if s["event"]["type"] == "city_scored"]
    page = open_page(390, 844)
    page.page.goto(f"/games/{table.game_id}/replay#v={versions[10]}")
    page.page.locator("ol.log li.current").wait_for()
    assert drawn_version(page) == versions[10]
    keyboard = page.page.keyboard
    keyboard.press("ArrowRight")
    assert drawn_version(page) == versions[11]
    keyboard.press("ArrowLeft")
    keyboard.press("ArrowLeft")
    assert drawn_version(page) == versions[9]
    keyboard.press("End")
    assert drawn_version(page) == versions[-1]
    assert page.page.get_by_role("region", name="Final scores").is_visible()
    keyboard.press("Home")
    assert drawn_version(page) == versions[0]
    keyboard.press("PageDown")
    assert drawn_version(page) == scorings[0]
    keyboard.press("PageDown")
    assert drawn_version(page) == scorings[1]
    keyboard.press("PageUp")
    assert drawn_version(page) == scorings[0]
    current = page.page.locator("ol.log li.current")
    assert "is scored" in current.inner_text()
    # The log leads the board too: a line chosen by keyboard shows its step.
    line = page.page.locator("ol.log li button").nth(30)
    line.focus()
    keyboard.press("Enter")
    chosen = int(page.page.locator("ol.log li").nth(30).get_attribute("data-version") or 0)
    assert drawn_version(page) == chosen
    page.page.wait_for_function("(v) => location.hash === `#v=${v}`", arg=chosen)


def test_the_replay_plays_at_a_chosen_speed_and_shows_any_seats_hand_once_over(
    open_page: Callable[..., Watched], five_seats: tuple[Table, dict[str, Any]]
) -> None:
    table, replay = five_seats
    page = open_page()
    page.page.goto(f"/games/{table.game_id}/replay#v=100")
    page.page.locator("ol.log li.current").wait_for()
    page.page.get_by_label("Speed").select_option("40")
    page.page.get_by_role("button", name="Play", exact=True).click()
    page.page.wait_for_function("() => Number(document.body.dataset.version) > 140")
    page.page.get_by_role("button", name="Pause", exact=True).click()
    page.page.get_by_label("Whose hand to show").select_option("3")
    heading = page.page.get_by_role("heading", name="Hand of")
    assert "seat 3" in heading.inner_text()
    at = drawn_version(page)
    step = next(s for s in replay["steps"] if s["version"] == at)
    shown = page.page.locator("section.hand ul[aria-label=Hand] li.card-chip").evaluate_all(
        "(items) => items.map((li) => li.dataset.card)"
    )
    assert shown == step["view"]["hands"][3]
    page.page.get_by_role("button", name="Next scoring", exact=True).click()
    assert "is scored" in page.page.locator("ol.log li.current").inner_text()
