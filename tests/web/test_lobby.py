"""The lobby in words, in Chromium at a phone's size and a desktop's (docs/web.md, "Names and
numbers"): every game is titled by its players and its kind, never by its id; editions and
modules are named, never by their ids; the bot levels are offered by their strength, a line
each, and a bot chosen so takes its seat under the same words; a finished game says who played
it, how it went and the day it ended; the replay is titled as the lobby titles its game; and
axe-core finds no serious or critical violation.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.server.client import Api, Player, Table
from tests.server.live import LiveServer
from tests.web.browser import SIZES, Watched, not_blank

DASH = "\u2014"
GAME_ID = re.compile(r"\bg[0-9a-f]{6,}\b")
# The ids of editions, modules and bot levels, as they must never be read on a page.
IDS = re.compile(
    r"trade_routes|trade routes|\bdelegates\b|\btowers\b|\bclassic\b|\bismcts\b"
    r"|\b(?:random|greedy|search|ismcts) bot\b|\bIsmcts\b"
)
CHOICES = [
    "A person you invite",
    "Random (weakest)",
    "Greedy (medium)",
    "Search / ISMCTS (strongest)",
]


@dataclass
class AdaGames:
    """Ada's games: one finished, one in play, a table waiting for two more, one called off."""

    ada: Player
    finished: Table
    playing: Table
    waiting: str
    called_off: str


@pytest.fixture(scope="module")
def api(web_server: LiveServer) -> Iterator[Api]:
    with httpx.Client(base_url=web_server.url, timeout=30) as client:
        yield Api(client)


def seated(api: Api, players: Sequence[Player], edition: str, modules: Sequence[str]) -> Table:
    created = api.create_game(players[0], len(players), edition, modules, "lobby-0")
    for number, player in enumerate(players[1:], 1):
        api.join(player, created["game_id"], created["invite_code"], f"lobby-{number}")
    return api.table_of(created["game_id"], players)


@pytest.fixture(scope="module")
def games(api: Api) -> AdaGames:
    ada, bea, cyd, dov = (api.create_player(name) for name in ("Ada", "Bea", "Cyd", "Dov"))
    finished = seated(api, [ada, bea, cyd], "towers", ["trade_routes"])
    finished.play_to_end(random.Random(21), whole_turns=0.5)
    playing = seated(api, [ada, dov], "classic", [])
    for _ in range(3):
        playing.step(random.Random(4), False)
    waiting = api.create_game(ada, 4, "towers", ["delegates"])
    api.join(bea, waiting["game_id"], waiting["invite_code"])
    called = api.create_game(ada, 3)
    api.join(cyd, called["game_id"], called["invite_code"])
    api.ok(api.request("POST", f"/api/games/{called['game_id']}/cancel", player=ada))
    return AdaGames(ada, finished, playing, waiting["game_id"], called["game_id"])


def sign_in_as(page: Watched, player: Player) -> None:
    page.page.goto("/")
    page.page.evaluate(
        "([token, id, name]) => localStorage.setItem('patrician.session', "
        "JSON.stringify({token, player_id: id, name}))",
        [player.token, player.player_id, player.name],
    )


def listed(names: Sequence[str]) -> str:
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


def title_of(api: Api, table: Table, kind: str) -> str:
    board = api.board(table.game_id)
    names = [p["name"] for p in sorted(board["players"], key=lambda p: p["seat"])]
    return f"{listed(names)} {DASH} {kind}"


def open_lobby(page: Watched, games: AdaGames) -> None:
    sign_in_as(page, games.ada)
    page.page.goto("/")
    page.page.locator(f"section.finished-games li[data-game='{games.finished.game_id}']").wait_for()


def page_text(page: Watched) -> str:
    """What the page says: its text, and the words of every choice of its lists."""
    text: str = page.page.evaluate(
        "() => [document.body.innerText, document.title,"
        " ...[...document.querySelectorAll('option')].map((o) => o.textContent)].join('\\n')"
    )
    return text


@pytest.mark.parametrize("size", sorted(SIZES))
def test_the_lobby_titles_every_game_by_its_players_and_kind_and_never_shows_an_id(
    open_page: Callable[..., Watched], api: Api, games: AdaGames, screenshots: Path, size: str
) -> None:
    page = open_page(*SIZES[size])
    open_lobby(page, games)
    page.page.wait_for_load_state("networkidle")
    titles = {
        games.finished.game_id: title_of(api, games.finished, "Towers, Trade Routes"),
        games.playing.game_id: title_of(api, games.playing, "Classic"),
        games.waiting: f"Ada's table (2 of 4) {DASH} Towers, Delegates",
        games.called_off: f"Ada and Cyd {DASH} Towers",
    }
    for game_id, title in titles.items():
        links = page.page.locator(f"li[data-game='{game_id}'] > a:first-child")
        assert links.first.inner_text() == title, game_id
    # The waiting table is in the open tables too, under the same title.
    open_table = page.page.locator(f"section.open-games li[data-game='{games.waiting}'] > a")
    assert open_table.inner_text() == titles[games.waiting]
    said = page_text(page)
    assert not GAME_ID.search(said), GAME_ID.search(said)
    assert not IDS.search(said), IDS.search(said)
    for link in page.page.locator("ul.games li > a:first-child").all():
        assert DASH in link.inner_text(), "every game titled by its players and kind"
    png = page.page.screenshot(path=screenshots / f"lobby-games-{size}.png", full_page=True)
    assert not_blank(png)
    assert page.no_sideways_scroll(), f"the lobby scrolls sideways at {size}"
    assert page.axe() == [], f"axe found serious violations on the lobby at {size}"


@pytest.mark.parametrize("size", sorted(SIZES))
def test_the_bot_choices_say_their_strength_with_a_line_each(
    open_page: Callable[..., Watched], games: AdaGames, screenshots: Path, size: str
) -> None:
    page = open_page(*SIZES[size])
    open_lobby(page, games)
    page.page.get_by_label("Players").select_option("5")
    choices = page.page.locator(".bots select")
    assert choices.count() == 4, "one choice for each other place"
    for index, ordinal in enumerate(("First", "Second", "Third", "Fourth")):
        choice = page.page.get_by_label(f"{ordinal} opponent")
        assert choice.locator("option").all_inner_texts() == CHOICES
        described = choice.get_attribute("aria-describedby")
        assert described and choices.nth(index).get_attribute("aria-describedby") == described
    lines = page.page.locator(f"#{described} li").all_inner_texts()
    assert [line.split(":")[0] for line in lines] == CHOICES[1:]
    assert all(len(line.split(": ", 1)[1]) > 20 for line in lines), lines
    text = page.page.locator("form.new-game").inner_text()
    assert not re.search(r"\b[Ss]eat \d", text), "the places of a waiting table are not seats"
    assert "Trade Routes" in text and "Delegates" in text
    assert page.page.get_by_label("Edition").locator("option").all_inner_texts() == [
        "Towers",
        "Classic",
    ]
    form = page.page.locator("form.new-game")
    form.screenshot(path=screenshots / f"lobby-new-game-{size}.png")
    assert page.no_sideways_scroll()
    assert page.axe() == [], f"axe found serious violations on the new-game form at {size}"


def expected_result(entry: dict[str, Any], names: Sequence[str]) -> tuple[str, list[str]]:
    """The headline and the others (with their points) a finished game's entry says."""
    result, seat = entry["result"], entry["seat"]
    scores = result["scores"]
    mine = next(s for s in scores if s["seat"] == seat)
    others = [f"{names[s['seat']]} ({s['total']})" for s in scores if s["seat"] != seat]
    if seat in result["winners"]:
        return ("Shared the win" if len(result["winners"]) > 1 else "Won"), others
    ahead = [
        s
        for s in scores
        if s["seat"] != seat and (s["seat"] in result["winners"] or s["total"] > mine["total"])
    ]
    return f"Placed {('1st', '2nd', '3rd')[len(ahead)]} of {len(scores)}", others


def test_a_finished_game_in_the_list_shows_the_opponents_the_result_and_the_day_it_ended(
    open_page: Callable[..., Watched], api: Api, games: AdaGames
) -> None:
    page = open_page()
    open_lobby(page, games)
    mine = api.ok(api.request("GET", "/api/me/games", player=games.ada))
    entry = next(g for g in mine if g["game_id"] == games.finished.game_id)
    headline, others = expected_result(entry, entry["seat_names"])
    item = page.page.locator(f"section.finished-games li[data-game='{games.finished.game_id}']")
    said = item.inner_text()
    assert item.locator("strong").first.inner_text() == headline, said
    mine_total = next(s["total"] for s in entry["result"]["scores"] if s["seat"] == entry["seat"])
    assert f"with {mine_total} points against {listed(others)}" in said, said
    assert "Bea" in said and "Cyd" in said and "Ada (" not in said, "the others, not Ada"
    day = item.locator("time")
    assert day.get_attribute("datetime") == entry["ended"]
    ended = datetime.fromisoformat(entry["ended"])
    assert str(ended.year) in day.inner_text() and f"ended {day.inner_text()}" in said
    assert item.get_attribute("data-outcome") in ("won", "shared", "lost", "placed")
    called = page.page.locator(f"section.finished-games li[data-game='{games.called_off}']")
    called_day = called.locator("time")
    assert called_day.get_attribute("datetime")
    assert f"Called off on {called_day.inner_text()}, with Cyd at the table" in called.inner_text()
    # Not among the games in play, which say where they are.
    assert (
        page.page.locator(f"section.my-games li[data-game='{games.finished.game_id}']").count() == 0
    )
    playing = page.page.locator(f"section.my-games li[data-game='{games.playing.game_id}']")
    assert re.search(r"Your turn|Playing", playing.inner_text())


def test_the_replay_is_titled_as_the_lobby_titles_its_game(
    open_page: Callable[..., Watched], api: Api, games: AdaGames
) -> None:
    page = open_page()
    sign_in_as(page, games.ada)
    page.page.goto(f"/games/{games.finished.game_id}/replay")
    page.page.locator("ol.log li.current").wait_for()
    title = title_of(api, games.finished, "Towers, Trade Routes")
    assert page.page.get_by_role("heading", level=1).inner_text() == f"Replay: {title}"
    page.page.wait_for_load_state("networkidle")  # the look at Ada's games has written the tab
    assert re.fullmatch(rf"(\(\d+\) )?Replay: {re.escape(title)} - Patrician", page.page.title())


def test_a_bot_chosen_by_its_strength_takes_its_seat_under_the_same_words(
    open_page: Callable[..., Watched], api: Api
) -> None:
    page = open_page()
    page.sign_in("Eve")
    page.page.get_by_label("Players").select_option("2")
    page.page.get_by_label("First opponent").select_option(label="Search / ISMCTS (strongest)")
    page.page.get_by_role("button", name="Create the game").click()
    page.page.wait_for_url(re.compile(r"/games/g[0-9a-f]+"))
    game_id = page.page.url.split("/games/")[1].split("#")[0]
    page.page.locator("table.seats").get_by_text("Search bot").wait_for()
    board = api.board(game_id)
    assert sorted(board["names"]) == ["Eve", "Search bot"]
