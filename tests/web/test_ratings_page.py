"""The rating list (/ratings) and ratings beside names: once a game ends, its players are on
the list, highest first, each with their rating, games and how much it may still move, the
signed-in player marked; the game's seats table shows each rating too, and an open table
shows each player's rating beside their name, in the lobby and on the table an invite leads
to. At a phone's size and a desktop's, clean (axe-core, no sideways scrolling)."""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.server.client import Api, Table
from tests.server.live import LiveServer
from tests.web.browser import SIZES, Watched, not_blank
from tests.web.test_pages import sign_in_as


@pytest.fixture(scope="module")
def api(web_server: LiveServer) -> Iterator[Api]:
    with httpx.Client(base_url=web_server.url, timeout=30) as client:
        yield Api(client)


@pytest.fixture(scope="module")
def rated(api: Api) -> Table:
    """A three-seat game played to its end, once its players are rated."""
    table = api.new_table(3, rng=random.Random(21))
    table.play_to_end(random.Random(21), whole_turns=0.7)
    deadline = time.monotonic() + 30
    ids = {player.player_id for player in table.seats}
    while True:
        listed = api.ok(api.request("GET", "/api/ratings", params={"limit": 200}))
        if ids <= {row["player_id"] for row in listed["ratings"]}:
            return table
        assert time.monotonic() < deadline, "the game's players were never rated"
        time.sleep(0.2)


@pytest.mark.parametrize("size", sorted(SIZES))
def test_a_finished_games_players_are_on_the_rating_list_the_reader_marked(
    open_page: Callable[..., Watched], api: Api, rated: Table, screenshots: Path, size: str
) -> None:
    me = rated.seats[0]
    page = open_page(*SIZES[size])
    sign_in_as(page, me)
    page.page.get_by_role("navigation", name="Site").get_by_role("link", name="Ratings").click()
    page.page.get_by_role("heading", name="Ratings", level=1).wait_for()
    table = page.page.locator("table.ratings")
    table.wait_for()
    mine = table.locator(f"tr[data-player='{me.player_id}']")
    assert "(you)" in mine.inner_text()
    listed = {
        row["player_id"]: row for row in api.ok(api.request("GET", "/api/ratings"))["ratings"]
    }
    cells = mine.locator("td").all_inner_texts()
    row = listed[me.player_id]
    assert cells[0] == str(row["place"]) and cells[1].startswith(me.name)
    assert cells[2].startswith(str(row["rating"])) and "provisional" in cells[2]
    assert cells[3] == "1"
    figures = [int(text.split()[0]) for text in table.locator("td.figure").all_inner_texts()]
    assert figures == sorted(figures, reverse=True)
    page.page.wait_for_load_state("networkidle")
    png = page.page.screenshot(path=screenshots / f"ratings-{size}.png", full_page=True)
    assert not_blank(png)
    assert page.no_sideways_scroll(), f"the rating list scrolls sideways at {size}"
    assert page.axe() == [], f"axe found serious violations on the rating list at {size}"

    page.page.goto(f"/games/{rated.game_id}")  # the seats table: each rating, compact
    seat = page.page.locator("table.seats tr.me th")
    shown = seat.locator("span.rating")
    shown.filter(has_text=str(row["rating"])).wait_for()
    assert shown.get_attribute("title") == f"Rating {row['rating']}, provisional"
    assert f"{me.name} (you) {row['rating']}" in seat.inner_text()
    assert page.no_sideways_scroll(), f"the play page scrolls sideways at {size}"


def test_an_open_table_shows_each_players_rating_in_the_lobby_and_at_the_invite(
    open_page: Callable[..., Watched], api: Api, rated: Table
) -> None:
    host = rated.seats[1]
    created = api.create_game(host, 3)
    newcomer = api.create_player("Nell")
    api.join(newcomer, created["game_id"], created["invite_code"])
    figure = {
        row["player_id"]: row["rating"]
        for row in api.ok(api.request("GET", "/api/ratings", params={"limit": 200}))["ratings"]
    }[host.player_id]
    page = open_page(*SIZES["phone"])
    sign_in_as(page, newcomer)
    page.page.goto("/")
    item = page.page.locator(f"li[data-game='{created['game_id']}']").filter(
        has_text="players at the table"
    )
    item.wait_for()
    text = item.inner_text()
    assert f"{host.name} ({figure})" in text and "Nell (not rated yet)" in text

    page.page.goto(f"/games/{created['game_id']}#invite={created['invite_code']}")
    table = page.page.get_by_role("region", name="The table")
    table.get_by_text(f"(rating {figure}, provisional)").wait_for()
    assert "Nell (not rated yet)" in table.inner_text()
