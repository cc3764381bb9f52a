"""The board in a command's answer (`?include=board`): asked for, the answer carries the
sender's own board as `GET /api/games/{id}` gives it at that moment, so that a client need not
read it after each command; not asked for, the answer is as it always was; anything else in
`include` is refused in words and appends nothing."""

from __future__ import annotations

import random

from tests.server.api.test_bad_input import check_error
from tests.server.client import Api, command_id


def _send(api: Api, table_path: str, player: object, body: dict[str, object], query: str) -> object:
    return api.request("POST", f"{table_path}/commands{query}", player=player, json=body)  # type: ignore[arg-type]


def test_a_command_answer_asked_with_the_board_carries_the_senders_own_board(api: Api) -> None:
    rng = random.Random(3)
    table = api.new_table(3)
    for _move in range(12):
        seat = table.pending
        assert seat is not None
        player = table.seats[seat]
        board = api.board(table.game_id, player)
        body = {"expected_version": board["version"], "command_id": command_id(),
                "commands": [rng.choice(board["legal_commands"])]}  # fmt: skip
        answer = api.ok(_send(api, table.path, player, body, "?include=board"))  # type: ignore[arg-type]
        table.note(seat, answer)
        assert answer["board"] == api.board(table.game_id, player), "the board as GET gives it"
        assert answer["board"]["viewer"] == seat, "the sender's own view, never another seat's"
        assert answer["board"]["version"] == answer["version"]
        again = api.ok(_send(api, table.path, player, body, "?include=board"))  # type: ignore[arg-type]
        assert again["repeated"] and again["board"] == answer["board"], "a retry: the same"


def test_a_command_answer_not_asked_for_the_board_has_none(api: Api) -> None:
    table = api.new_table(2)
    player = table.seats[table.pending or 0]
    board = api.board(table.game_id, player)
    answer = api.ok(api.send(table.game_id, player, board["version"], board["legal_commands"][:1]))
    assert "board" not in answer
    assert set(answer) == {"version", "first_version", "repeated", "events", "receipt"}


def test_an_include_the_server_does_not_know_is_refused_in_words_and_appends_nothing(
    api: Api,
) -> None:
    table = api.new_table(2)
    player = table.seats[table.pending or 0]
    board = api.board(table.game_id, player)
    body = {"expected_version": board["version"], "command_id": command_id(),
            "commands": board["legal_commands"][:1]}  # fmt: skip
    for query in ("?include=boards", "?include=", "?include=board%00", "?include=record"):
        refused = check_error(_send(api, table.path, player, body, query), 400, None)  # type: ignore[arg-type]
        assert "include" in refused["message"], refused
    assert api.board(table.game_id)["version"] == board["version"], "nothing appended"
