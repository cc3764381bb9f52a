"""Coming back to a game: "Since your last turn" tells in words what the other seats did
after your own last move, names them as the seats table does, and goes when told "Got it"."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator

import httpx
import pytest

from tests.server.client import Api
from tests.server.live import LiveServer
from tests.web.browser import SIZES, Watched
from tests.web.test_play_end import open_game, signed_in_as


@pytest.fixture(scope="module")
def api(web_server: LiveServer) -> Iterator[Api]:
    with httpx.Client(base_url=web_server.url, timeout=30) as client:
        yield Api(client)


@pytest.mark.parametrize("size", sorted(SIZES))
def test_the_moves_of_the_others_since_your_last_turn_are_told_in_words(
    open_page: Callable[..., Watched], api: Api, size: str
) -> None:
    rng = random.Random(4)
    table = api.new_table(2, rng=rng)
    for _ in range(60):  # until the other seat moved last, and it is the first seat's turn
        table.step(rng, whole_turn=True)  # (with the Architetto, a seat may play twice running)
        if table.pending == 0 and table.batches >= 3 and table.answers[-1][0] == 1:
            break
    assert table.pending == 0 and table.answers[-1][0] == 1
    other = table.seats[1]
    watched = signed_in_as(open_page, table.seats[0], size)
    open_game(watched.page, table.game_id)
    since = watched.page.get_by_role("region", name="Since your last turn")
    since.wait_for()
    lines = since.locator("li").all_inner_texts()
    assert lines and any(line.startswith(f"{other.name} (seat 1) ") for line in lines), lines
    assert not any("seat 0" in line and "plays" in line for line in lines), "nothing of yours"
    since.get_by_role("button", name="Got it").click()
    assert since.is_hidden()
    assert not watched.unexpected()
