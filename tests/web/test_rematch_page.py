"""Rematch on the play page, in Chromium: under the final scores of a finished game, Ann
clicks "Rematch" and is taken to the new table (the same seats, edition, modules and bot,
her in its first place); Bob's page of the finished game, left open, shows "Ann offers a
rematch" without a reload, and one click on "Join the rematch" seats him: the new game has
the same players and starts. At a phone's size and a desktop's, with axe-core's serious and
critical rules.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest

from tests.server.api.test_rematch import _play_out
from tests.server.client import Api
from tests.server.live import LiveServer
from tests.web.browser import Watched, not_blank
from tests.web.test_play_end import open_game, signed_in_as

NEW_GAME = re.compile(r"/games/g[0-9a-f]+$")
OFFER_SEEN = 10000
"""ms the offer may take to reach a page of the finished game: it looks every 4 s."""


@pytest.fixture(scope="module")
def api(web_server: LiveServer) -> Iterator[Api]:
    with httpx.Client(base_url=web_server.url, timeout=30) as client:
        yield Api(client)


def test_ann_offers_a_rematch_in_one_click_and_bob_joins_it_in_one_click(
    open_page: Callable[..., Watched], api: Api, screenshots: Path
) -> None:
    ann, bob = api.create_player("Ann"), api.create_player("Bob")
    options = {"seats": 3, "modules": ["trade_routes"], "bots": [{"level": "greedy"}]}
    old = api.ok(api.request("POST", "/api/games", player=ann, json=options), 201)
    api.join(bob, old["game_id"], old["invite_code"])
    final = _play_out(api, old["game_id"], [ann, bob], random.Random(3))

    ann_page = signed_in_as(open_page, ann, "desktop")
    bob_page = signed_in_as(open_page, bob, "phone")
    for watched in (ann_page, bob_page):
        open_game(watched.page, old["game_id"])
        offer = watched.page.get_by_role("region", name="Rematch")
        offer.wait_for()
        assert "Play again?" in offer.inner_text()
    bob_page.page.evaluate("window.notReloaded = true")

    ann_page.page.get_by_role("button", name="Rematch").click()
    ann_page.page.wait_for_url(
        lambda url: NEW_GAME.search(url) is not None and old["game_id"] not in url
    )
    new_id = ann_page.page.url.rsplit("/", 1)[1]
    ann_page.page.get_by_role("heading", name="The table: 2 of 3 players").wait_for()

    offer = bob_page.page.get_by_role("region", name="Rematch")
    offer.get_by_text("Ann offers a rematch.").wait_for(timeout=OFFER_SEEN)
    assert bob_page.page.evaluate("window.notReloaded"), "the offer came without a reload"
    assert bob_page.no_sideways_scroll()
    assert bob_page.axe() == [], "axe found serious violations with the offer showing"
    assert not_blank(offer.screenshot(path=screenshots / "rematch-offer-phone.png"))
    bob_page.page.screenshot(path=screenshots / "rematch-end-phone.png")

    offer.get_by_role("button", name="Join the rematch").click()
    bob_page.page.wait_for_url(f"**/games/{new_id}")
    bob_page.page.locator("svg.board g.city").first.wait_for()
    ann_page.page.locator("svg.board g.city").first.wait_for()  # the table filled, live

    board = api.board(new_id, ann)
    assert board["phase"] == "playing"
    assert (board["seats"], board["edition"], board["modules"]) == (3, "towers", ["trade_routes"])
    assert board["joined"][0] == ann.player_id and bob.player_id in board["joined"]
    assert sorted(board["names"]) == sorted(final["names"]) == ["Ann", "Bob", "Greedy bot"]
    assert ann_page.axe() == [] and bob_page.axe() == []

    # Ann's page of the finished game now says it is her offer, and leads to it.
    open_game(ann_page.page, old["game_id"])
    mine = ann_page.page.get_by_role("region", name="Rematch")
    assert "You offered a rematch" in mine.inner_text()
    link = mine.get_by_role("link", name="Go to the rematch table")
    assert link.get_attribute("href") == f"/games/{new_id}"
    assert not_blank(mine.screenshot(path=screenshots / "rematch-offered-desktop.png"))
