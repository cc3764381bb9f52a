"""The live stream's edges: versions parsed strictly wherever a client names one, and what a
stream delivers once the game is over (the events the end makes public)."""

from __future__ import annotations

import random
import time

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from domain.events import event_decoder
from domain.view import visible
from tests.server.api.test_bad_input import check_error
from tests.server.client import Api
from tests.server.sse import asgi_stream


@pytest.mark.parametrize(
    "last_event_id",
    ["²", "١٢", "-1", "+3", " 4", "4 ", "0x10", "1e3", "18446744073709551616", "9" * 30],
)
def test_a_last_event_id_that_is_not_a_plain_version_is_400_naming_the_header(
    api: Api, client: TestClient[Litestar], app: Litestar, last_event_id: str
) -> None:
    game = api.create_game(api.create_player("Mary"), 2)
    streamed = client.blocking_portal.call(
        asgi_stream,
        app,
        f"/api/games/{game['game_id']}/stream",
        1,
        {"Last-Event-ID": last_event_id},
    )
    assert streamed.status == 400, streamed.body
    body = streamed.json()
    assert body["error"] == "bad_request" and body["field"] == "Last-Event-ID"


@pytest.mark.parametrize(
    "after", ["99999999999999999999", "9007199254740992", "-1", "²", "a", "1e0", "2.0", "+2"]
)
def test_an_after_beyond_any_version_or_not_a_number_is_400(api: Api, after: str) -> None:
    game = api.create_game(api.create_player("Mary"), 2)
    for path in ("events", "stream"):
        answer = api.request("GET", f"/api/games/{game['game_id']}/{path}?after={after}")
        check_error(answer, 400, "bad_request")


def test_the_largest_version_is_accepted_and_simply_finds_nothing(
    api: Api, client: TestClient[Litestar], app: Litestar
) -> None:
    game = api.create_game(api.create_player("Mary"), 2)
    events = api.ok(api.request("GET", f"/api/games/{game['game_id']}/events?after={2**53 - 1}"))
    assert events["events"] == []


def test_a_stream_resumed_after_the_end_first_reveals_what_was_hidden_before_its_id(
    api: Api, client: TestClient[Litestar], app: Litestar
) -> None:
    """A follower that lost its connection during play and comes back once the game is over
    gets, before anything else, the events up to its Last-Event-ID it could not see then."""
    rng = random.Random(6)
    table = api.new_table(2, "towers", (), rng)
    table.play_to_end(rng, whole_turns=1.0)
    record = api.record(table.game_id)
    log = [event_decoder.decode(entry["data"]) for entry in record["events"]]
    cut = 40
    for seat, player in [(None, None), (1, table.seats[1])]:
        headers = {"Last-Event-ID": str(cut), **(player.auth if player else {})}
        streamed = client.blocking_portal.call(
            asgi_stream, app, f"{table.path}/stream", table.version, headers
        )
        first, *rest = streamed.messages
        assert first.event == "revealed" and first.id is None
        hidden = [v for v, e in enumerate(log[:cut], 1) if not visible(e, seat, False)]
        assert [item["version"] for item in first.data["events"]] == hidden
        assert [m.id for m in rest] == list(range(cut + 1, table.version + 1))


def test_a_player_following_the_table_before_it_fills_gets_their_own_hand(
    api: Api, client: TestClient[Litestar], app: Litestar
) -> None:
    mary, john = api.create_player("Mary"), api.create_player("John")
    game = api.create_game(mary, 2)
    path = f"/api/games/{game['game_id']}/stream"
    following = client.blocking_portal.start_task_soon(asgi_stream, app, path, 11, mary.auth)
    time.sleep(0.3)  # the stream is open, the table waits
    api.join(john, game["game_id"], game["invite_code"])
    streamed = following.result(timeout=20)
    seat = api.board(game["game_id"], mary)["viewer"]
    dealt = [m.data for m in streamed.messages if m.event == "hand_dealt"]
    assert [d["seat"] for d in dealt] == [seat], "her own hand, and nobody else's"


@pytest.mark.parametrize("version", ["\u0663", "\uff13", "9007199254740992", "-1", "1e0", "x"])
def test_a_version_in_the_path_that_is_not_a_plain_version_is_400(api: Api, version: str) -> None:
    game = api.create_game(api.create_player("Mary"), 2)
    answer = api.request("GET", f"/api/games/{game['game_id']}/at/{version}")
    assert check_error(answer, 400, "bad_request")["field"] == "version"
