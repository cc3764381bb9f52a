"""A player's page (/players/{id}), reached from the rating list and the seats table: their
name, rating and its chart (with its figures in a table, and words for a screen reader), their
reliability in words, and their games with the others at each, how it went and when, each
linking to the game. At a phone's size and a desktop's, clean (axe-core, no sideways
scrolling). And the lobby's new-game form asking a minimum rating of those who join: the
table says so, and a newcomer's join is refused in words."""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.server.client import Api, Json, Player, Table
from tests.server.live import LiveServer
from tests.web.browser import SIZES, Watched, not_blank
from tests.web.test_pages import sign_in_as


@pytest.fixture(scope="module")
def api(web_server: LiveServer) -> Iterator[Api]:
    with httpx.Client(base_url=web_server.url, timeout=30) as client:
        yield Api(client)


def _profile(api: Api, player: Player) -> Json:
    return api.ok(api.request("GET", f"/api/players/{player.player_id}/profile"))


@pytest.fixture(scope="module")
def played(api: Api) -> tuple[Table, Table]:
    """Two three-seat games of the same players, one played to its end (and rated), and one
    in play."""
    finished = api.new_table(3, rng=random.Random(31))
    finished.play_to_end(random.Random(31), whole_turns=0.7)
    players = finished.seats
    created = api.create_game(players[0], 3)
    for player in players[1:]:
        api.join(player, created["game_id"], created["invite_code"])
    playing = api.table_of(created["game_id"], players)
    for _ in range(5):
        playing.step(random.Random(6), True)
    deadline = time.monotonic() + 30
    while not (
        (found := _profile(api, players[0]))["rating_history"]
        and found["reliability"]["games"] == 2
    ):
        assert time.monotonic() < deadline, found
        time.sleep(0.2)
    # each player's list at both games' heads (the follow-ups done): the page counts a game
    # in play to the version its list shows, so a page read before would count a turn less
    api.lists_at_heads(players, [finished.game_id, playing.game_id])
    return finished, playing


@pytest.mark.parametrize("size", sorted(SIZES))
def test_a_players_page_shows_their_rating_chart_reliability_and_games(
    open_page: Callable[..., Watched], api: Api, played: tuple[Table, Table], screenshots: Path,
    size: str,
) -> None:  # fmt: skip
    finished, playing = played
    me, them = finished.seats[0], finished.seats[1]
    profile = _profile(api, them)
    page = open_page(*SIZES[size])
    sign_in_as(page, me)
    # the page of the rating list that holds them (other tests' players share the list)
    listed: list[str] = []
    while them.player_id not in listed:
        params = {"offset": len(listed), "limit": 200}
        rows = api.ok(api.request("GET", "/api/ratings", params=params))["ratings"]
        assert rows, "they are on the rating list"
        listed += [row["player_id"] for row in rows]
    index = listed.index(them.player_id)
    page.page.goto(f"/ratings?from={index - index % 50}")
    page.page.locator(f"table.ratings a[href='/players/{them.player_id}']").click()
    page.page.wait_for_url(f"**/players/{them.player_id}")
    page.page.get_by_role("heading", name=them.name, level=1).wait_for()
    rating = page.page.get_by_role("region", name="Rating")
    assert f"{profile['rating']} rating after 1 rated game" in rating.inner_text()
    assert "provisional" in rating.inner_text()
    chart = rating.get_by_role("img", name="Rating after each rated game")
    assert chart.locator("circle").count() == len(profile["rating_history"]) + 1
    point = profile["rating_history"][0]
    words = f"From {point['rating'] - point['change']} before the first rated game"
    assert (chart.locator("desc").text_content() or "").startswith(words)
    rating.get_by_text("The rating after each game, in figures").click()
    row = rating.locator("table.history tbody tr")
    assert row.count() == 1 and row.locator("td").nth(2).inner_text() == str(point["rating"])

    record = profile["reliability"]
    reliability = page.page.get_by_role("region", name="Reliability")
    expected = f"0 turns timed out per 100 over the last 2 games ({record['turns']} turns)"
    assert record["timed_out"] == 0 and record["turns"] > 0
    said = re.sub(r"\s+", " ", reliability.inner_text())
    assert expected.replace(f"({record['turns']}", f"(0 of {record['turns']}") in said, said
    assert "vacations and quiet hours count as on time" in said

    games = page.page.get_by_role("region", name="Games (2)")
    items = games.locator("ul.games > li")
    assert items.count() == 2
    over = games.locator(f"li[data-game='{finished.game_id}']")
    assert over.get_by_role("link").first.get_attribute("href") == (
        f"/games/{finished.game_id}/replay"
    )
    standing = next(g for g in profile["games"] if g["game_id"] == finished.game_id)["standing"]
    assert f"with {standing['points']} points against" in over.inner_text()
    assert over.get_by_role("link", name=me.name, exact=True).get_attribute("href") == (
        f"/players/{me.player_id}"
    )
    live = games.locator(f"li[data-game='{playing.game_id}']")
    assert "In play" in live.inner_text()
    assert live.get_by_role("link").first.get_attribute("href") == f"/games/{playing.game_id}"
    assert "points" not in live.inner_text(), "no live score"

    page.page.wait_for_load_state("networkidle")
    png = page.page.screenshot(path=screenshots / f"player-{size}.png", full_page=True)
    assert not_blank(png)
    assert page.no_sideways_scroll(), f"the player's page scrolls sideways at {size}"
    assert page.axe() == [], f"axe found serious violations on the player's page at {size}"

    page.page.goto(f"/games/{finished.game_id}")  # the seats table links each name
    page.page.locator(f"table.seats a[href='/players/{them.player_id}']").click()
    page.page.wait_for_url(f"**/players/{them.player_id}")
    page.page.get_by_role("region", name="Reliability").wait_for()


def test_a_spectator_sees_a_game_in_play_lead_to_its_replay_and_an_unknown_player_said(
    open_page: Callable[..., Watched], played: tuple[Table, Table]
) -> None:
    _finished, playing = played
    page = open_page(*SIZES["phone"])
    page.page.goto(f"/players/{playing.seats[0].player_id}")
    live = page.page.locator(f"li[data-game='{playing.game_id}']")
    live.wait_for()
    assert live.get_by_role("link").first.get_attribute("href") == (
        f"/games/{playing.game_id}/replay"
    ), "a spectator watches a game in play in the replay viewer"
    page.allow("status of 404")
    page.page.goto("/players/pnobody")
    page.page.get_by_text("No player has this address.").wait_for()


def test_a_new_game_may_ask_a_minimum_rating_and_a_newcomer_below_it_is_told_why(
    open_page: Callable[..., Watched], api: Api, played: tuple[Table, Table], screenshots: Path
) -> None:
    finished, _playing = played
    host = finished.seats[0]
    page = open_page(*SIZES["phone"])
    sign_in_as(page, host)
    page.page.goto("/")
    form = page.page.get_by_role("form", name="New game")
    form.get_by_label("Lowest rating").fill("1100")
    form.get_by_label("Most turns timed out per 100").fill("5")
    form.get_by_role("button", name="Create the game").click()
    page.page.wait_for_url(re.compile(r".*/games/g[0-9a-f]+#invite=.*"))
    table = page.page.get_by_role("region", name="The table")
    said = "To join: a rating of 1100 or more and at most 5 turns timed out per 100."
    table.get_by_text(said).wait_for()
    invite = page.page.url
    game_id = invite.split("/games/")[1].split("#")[0]
    page.page.goto("/")
    page.page.locator(f"li[data-game='{game_id}']").get_by_text(said).wait_for()

    newcomer = open_page(*SIZES["phone"])
    newcomer.sign_in("Nova")
    newcomer.allow("status of 403")
    newcomer.page.goto(invite)
    newcomer.page.get_by_role("button", name="Join this table").click()
    refusal = newcomer.page.get_by_role("alert")
    refusal.get_by_text("this table asks a rating of at least 1100").wait_for()
    assert "yours is 1000" in refusal.inner_text()
    newcomer.page.screenshot(path=screenshots / "table-refused-phone.png", full_page=True)
    assert api.board(game_id)["joined"] == [host.player_id]
