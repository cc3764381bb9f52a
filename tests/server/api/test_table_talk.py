"""Table talk: a short thread per game beside its log. The seated players read and write it
during play; nobody else reads it until the game is over, then anyone may. A message is
cleaned like a name (no text that hides or reorders what is around it; line breaks kept),
capped in length and in rate, and never enters the game's record."""

from __future__ import annotations

import random

import pytest

from tests.server.client import Api


def _talk(api: Api, game_id: str) -> str:
    return f"/api/games/{game_id}/talk"


def test_the_seated_players_talk_and_nobody_else_reads_it_until_the_end(api: Api) -> None:
    table = api.new_table(2, rng=random.Random(1))
    ada, bea = table.seats
    outsider = api.create_player("Cy")
    path = _talk(api, table.game_id)
    said = api.ok(api.request("POST", path, player=ada, json={"text": "  Good luck!\nHave fun "}),
                  201)  # fmt: skip
    assert said["text"] == "Good luck!\nHave fun" and said["seat"] == 0 and said["name"] == ada.name
    api.ok(api.request("POST", path, player=bea, json={"text": "<b>you too</b>"}), 201)
    thread = api.ok(api.request("GET", path, player=bea))
    assert [m["text"] for m in thread] == ["Good luck!\nHave fun", "<b>you too</b>"]
    after = api.ok(api.request("GET", path, player=ada, params={"after": thread[0]["id"]}))
    assert [m["text"] for m in after] == ["<b>you too</b>"]
    assert api.request("GET", path).status_code == 403, "a spectator, during play"
    assert api.request("GET", path, player=outsider).status_code == 403
    assert api.request("POST", path, player=outsider, json={"text": "hi"}).status_code == 403
    record = api.record(table.game_id, ada)
    assert "Good luck" not in str(record), "talk is not in the game's record"
    table.play_to_end(random.Random(2))
    assert len(api.ok(api.request("GET", path))) == 2, "anyone reads it once the game is over"


@pytest.mark.parametrize(
    "text", ["", "   ", "\n\n", "x" * 501, "evil\u202eetirw", "bell\x07", "a\u2028b"]
)
def test_a_message_that_is_empty_too_long_or_hides_text_is_refused_naming_text(
    api: Api, text: str
) -> None:
    table = api.new_table(2, rng=random.Random(3))
    answer = api.request("POST", _talk(api, table.game_id), player=table.seats[0],
                         json={"text": text})  # fmt: skip
    assert answer.status_code in (400, 422) and "text" in answer.text, answer.text
    assert api.ok(api.request("GET", _talk(api, table.game_id), player=table.seats[0])) == []


def test_a_player_who_talks_too_fast_is_asked_to_wait(api: Api) -> None:
    table = api.new_table(2, rng=random.Random(4))
    path = _talk(api, table.game_id)
    for n in range(5):
        api.ok(api.request("POST", path, player=table.seats[0], json={"text": f"{n}"}), 201)
    answer = api.request("POST", path, player=table.seats[0], json={"text": "again"})
    assert answer.status_code == 429 and answer.headers["retry-after"] == "60"
    assert answer.json()["error"] == "rate_limited"
    api.ok(api.request("POST", path, player=table.seats[1], json={"text": "me"}), 201)


@pytest.mark.parametrize("after", ["x", "-", "+", "1", "1-2-3", "(1-0"])
def test_a_malformed_message_id_is_refused(api: Api, after: str) -> None:
    table = api.new_table(2, rng=random.Random(5))
    answer = api.request("GET", _talk(api, table.game_id), player=table.seats[0],
                         params={"after": after})  # fmt: skip
    assert answer.status_code == 400 and answer.json()["field"] == "after"
