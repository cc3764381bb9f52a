"""Setting a table: players and their names, creating a game safely, the invite code, leaving
a table and cancelling a game before it starts (R7)."""

from __future__ import annotations

import random

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.server.api.test_bad_input import check_error
from tests.server.client import Api, Player
from tests.server.sse import asgi_stream


def _create(api: Api, player: Player, **body: object) -> tuple[int, dict[str, object]]:
    answer = api.request("POST", "/api/games", player=player, json={"seats": 3, **body})
    return answer.status_code, answer.json()


# --- names ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "kept"),
    [("Mary", "Mary"), ("  Mary Sue  ", "Mary Sue"), ("Zoë", "Zoë"), ("李白", "李白"),
     ("x" * 40, "x" * 40), (" " + "y" * 40 + " ", "y" * 40), ("e\u0301", "é"),
     ("👩\u200d👩\u200d👧", "👩\u200d👩\u200d👧"), ("नमस्ते", "नमस्ते")],
)  # fmt: skip
def test_a_name_is_trimmed_and_kept_as_others_will_read_it(api: Api, name: str, kept: str) -> None:
    created = api.ok(api.request("POST", "/api/players", json={"name": name}), 201)
    found = api.ok(api.request("GET", f"/api/players/{created['player_id']}"))
    assert found == {
        "player_id": created["player_id"], "name": kept, "rating": None, "provisional": True,
        "rated_games": 0,
    }  # fmt: skip


@pytest.mark.parametrize(
    "name",
    ["", "   ", "\t\n", "x" * 41, "Mary\x00", "Mary\nJohn", "a\u202eb", "\u2066x", "a\u2028b",
     "\x1b[31mred", "\u200b", "\U000e0041\U000e0042", "\u3164", "\ufeffMary",
     "a" + "\u0301" * 39, "Ma\u2060ry"],
)  # fmt: skip
def test_a_name_of_spaces_control_or_bidi_characters_or_over_40_is_refused_422(
    api: Api, name: str
) -> None:
    answer = api.request("POST", "/api/players", json={"name": name})
    body = check_error(answer, 422, "invalid_option")
    assert body["field"] == "name" and body["message"]


def test_an_unknown_player_is_404(api: Api) -> None:
    check_error(api.request("GET", "/api/players/pnobody"), 404, "not_found")


def test_the_board_the_record_and_the_narration_name_each_player(api: Api) -> None:
    rng = random.Random(3)
    table = api.new_table(3, "towers", (), rng)
    board = api.board(table.game_id)
    by_seat = {p["seat"]: p["name"] for p in board["players"]}
    assert by_seat == {seat: player.name for seat, player in enumerate(table.seats)}
    assert sorted(board["names"]) == sorted(p.name for p in table.seats)
    record = api.record(table.game_id)
    assert [p["name"] for p in record["players"]] == board["names"]


# --- creating a game, the invite code ---------------------------------------------------------


def test_a_creation_sent_again_with_its_command_id_makes_no_second_game(api: Api) -> None:
    mary = api.create_player("Mary")
    status, first = _create(api, mary, command_id="c-1")
    assert status == 201 and first["repeated"] is False
    status, again = _create(api, mary, command_id="c-1")
    assert status == 201 and again == {**first, "repeated": True}
    mine = api.ok(api.request("GET", "/api/me/games", player=mary))
    assert [g["game_id"] for g in mine] == [first["game_id"]]
    lobby = api.ok(api.request("GET", "/api/lobby"))
    assert [g["game_id"] for g in lobby] == [first["game_id"]]
    # Other content under the same id is refused; the same id is another player's own.
    check_error(
        api.request("POST", "/api/games", player=mary, json={"seats": 4, "command_id": "c-1"}),
        409,
        "command_id_reused",
    )
    status, johns = _create(api, api.create_player("John"), command_id="c-1")
    assert status == 201 and johns["game_id"] != first["game_id"]
    # Without a command id each request is a new game.
    assert _create(api, mary)[1]["game_id"] != _create(api, mary)[1]["game_id"]


def test_a_creation_retried_after_it_was_answered_still_answers_once_the_game_started(
    api: Api,
) -> None:
    mary, john = api.create_player("Mary"), api.create_player("John")
    status, first = _create(api, mary, seats=2, command_id="late")
    api.join(john, str(first["game_id"]), str(first["invite_code"]))
    status, again = _create(api, mary, seats=2, command_id="late")
    assert status == 201 and again["game_id"] == first["game_id"] and again["repeated"]


def test_invalid_options_are_refused_before_a_command_id_is_spent(api: Api) -> None:
    mary = api.create_player("Mary")
    check_error(
        api.request("POST", "/api/games", player=mary, json={"seats": 9, "command_id": "k"}),
        422,
        "invalid_option",
    )
    status, _ = _create(api, mary, command_id="k")
    assert status == 201


def test_the_invite_code_is_on_the_boards_of_the_players_at_the_table_until_it_starts(
    api: Api,
) -> None:
    mary, john, ann, eve = (api.create_player(n) for n in ("Mary", "John", "Ann", "Eve"))
    game = api.create_game(mary, 3)
    path = f"/api/games/{game['game_id']}"
    assert api.board(game["game_id"], mary)["invite_code"] == game["invite_code"]
    assert api.board(game["game_id"], eve)["invite_code"] is None
    assert api.board(game["game_id"])["invite_code"] is None
    api.join(john, game["game_id"], game["invite_code"])
    assert api.board(game["game_id"], john)["invite_code"] == game["invite_code"]
    api.join(ann, game["game_id"], game["invite_code"])
    for player in (mary, john, ann, eve, None):
        board = api.board(game["game_id"], player)
        assert board["phase"] == "playing" and board["invite_code"] is None
    check_error(
        api.request("POST", f"{path}/join", player=eve, json={"invite_code": game["invite_code"]}),
        409,
        "game_not_open",
    )


# --- leaving and cancelling -----------------------------------------------------------------


def test_a_player_who_leaves_frees_the_place_and_may_come_back(api: Api) -> None:
    mary, john, ann = (api.create_player(n) for n in ("Mary", "John", "Ann"))
    game = api.create_game(mary, 3, entropy="m")
    game_id, code = game["game_id"], game["invite_code"]
    path = f"/api/games/{game_id}"
    api.join(john, game_id, code, entropy="j1")
    left = api.ok(api.request("POST", f"{path}/leave", player=john))
    assert left["phase"] == "waiting"
    again = api.ok(api.request("POST", f"{path}/leave", player=john))
    assert again == left, "a retried leave answers the first one"
    board = api.board(game_id)
    assert board["joined"] == [mary.player_id] and board["names"] == ["Mary"]
    assert game_id not in [
        g["game_id"] for g in api.ok(api.request("GET", "/api/me/games", player=john))
    ]
    api.join(ann, game_id, code, entropy="a")
    joined = api.join(john, game_id, code, entropy="j2")
    assert joined["started"] is True
    record = api.record(game_id)
    assert [c["kind"] for c in record["commands"]] == ["create", "join", "leave", "join", "join"]
    assert record["fairness"]["entropies"] == ["m", "a", "j2"]
    assert [p["player_id"] for p in record["players"]] == [
        mary.player_id, ann.player_id, john.player_id
    ]  # fmt: skip


def test_the_creator_cancels_the_game_instead_of_leaving_and_the_seed_is_published(
    api: Api, client: TestClient[Litestar], app: Litestar
) -> None:
    mary, john = api.create_player("Mary"), api.create_player("John")
    game = api.create_game(mary, 3)
    path = f"/api/games/{game['game_id']}"
    api.join(john, game["game_id"], game["invite_code"])
    check_error(api.request("POST", f"{path}/leave", player=mary), 409, "creator_cannot_leave")
    check_error(api.request("POST", f"{path}/cancel", player=john), 403, "not_creator")
    outsider = api.create_player("Eve")
    check_error(api.request("POST", f"{path}/leave", player=outsider), 403, "not_at_table")
    cancelled = api.ok(api.request("POST", f"{path}/cancel", player=mary))
    assert cancelled["phase"] == "cancelled"
    assert api.ok(api.request("POST", f"{path}/cancel", player=mary)) == cancelled
    board = api.board(game["game_id"])
    assert board["phase"] == "cancelled" and board["server_seed"] is not None
    assert game["game_id"] not in [g["game_id"] for g in api.ok(api.request("GET", "/api/lobby"))]
    check_error(
        api.request(
            "POST", f"{path}/join", player=outsider, json={"invite_code": game["invite_code"]}
        ),
        403,
        "wrong_invite",
    )
    check_error(api.request("POST", f"{path}/leave", player=john), 409, "game_not_open")
    record = api.record(game["game_id"])
    assert record["complete"] is True and record["result"] is None
    # The stream of a cancelled game ends with the seed, as a finished one does.
    streamed = client.blocking_portal.call(asgi_stream, app, f"{path}/stream", cancelled["version"])
    assert [m.event for m in streamed.messages][-2:] == ["game_cancelled", "seed_revealed"]


def test_leaving_or_cancelling_a_started_game_is_refused(api: Api) -> None:
    table = api.new_table(2, "towers", (), random.Random(2))
    creator = next(
        p for p in table.seats if api.board(table.game_id, p)["joined"][0] == p.player_id
    )
    other = next(p for p in table.seats if p is not creator)
    check_error(api.request("POST", f"{table.path}/cancel", player=creator), 409, "game_not_open")
    check_error(api.request("POST", f"{table.path}/leave", player=other), 409, "game_not_open")


def test_a_creation_retried_with_its_modules_in_another_order_is_the_same_request(
    api: Api,
) -> None:
    mary = api.create_player("Mary")
    both = ["trade_routes", "delegates"]
    _, first = _create(api, mary, modules=both, command_id="m")
    status, again = _create(api, mary, modules=both[::-1], command_id="m")
    assert status == 201 and again["game_id"] == first["game_id"] and again["repeated"]


def test_a_creation_retried_after_the_table_was_cancelled_does_not_list_it_again(
    api: Api,
) -> None:
    mary = api.create_player("Mary")
    _, first = _create(api, mary, command_id="c")
    api.ok(api.request("POST", f"/api/games/{first['game_id']}/cancel", player=mary))
    status, again = _create(api, mary, command_id="c")
    assert status == 201 and again["repeated"] and again["game_id"] == first["game_id"]
    assert api.ok(api.request("GET", "/api/lobby")) == []


@pytest.mark.parametrize("body", [b"hello", b'{"x": 1}', b"{}"])
def test_leaving_or_cancelling_with_a_body_is_refused_as_they_take_none(
    api: Api, body: bytes
) -> None:
    mary, john = api.create_player("Mary"), api.create_player("John")
    game = api.create_game(mary, 3)
    api.join(john, game["game_id"], game["invite_code"])
    for action, player in (("leave", john), ("cancel", mary)):
        answer = api.request(
            "POST", f"/api/games/{game['game_id']}/{action}", player=player, content=body,
            headers={"Content-Type": "application/json"},
        )  # fmt: skip
        assert check_error(answer, 400, "bad_request")["field"] == "body"
    assert api.board(game["game_id"])["phase"] == "waiting", "nothing happened"
