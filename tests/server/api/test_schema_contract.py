"""The OpenAPI document says exactly what the server accepts: each bound the server keeps is in
the document (and nothing the document allows is refused as malformed), a body is read as JSON
Schema reads JSON, what JSON readers read differently is refused naming where, and every
refusal of a malformed request reads alike and repeats little of what it was sent.

Each test stands for one gap an integrator's fuzzing found (schemathesis's
`positive_data_acceptance`, now on in test_schemathesis.py)."""

from __future__ import annotations

import json
import random
from typing import Any

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from projections.timekeeping import GRACE_SECONDS, Append, deadline_seconds, timeline
from server.api.openapi import _own_schemas
from server.schema import errors, limits
from store.time_controls import HOUR, MIN_PER_MOVE_HOURS, TimeControl
from tests.server.client import Api, Json, Player

pytestmark = pytest.mark.timeout(60)

JSON_TYPE = {"Content-Type": "application/json"}


@pytest.fixture
def document(client: TestClient[Litestar]) -> dict[str, Any]:
    return dict(client.get("/schema/openapi.json").json())


def _parameter(document: dict[str, Any], path: str, name: str) -> dict[str, Any]:
    (found,) = [p for p in document["paths"][path]["get"]["parameters"] if p["name"] == name]
    schema: dict[str, Any] = found["schema"]
    return schema


def _refused(answer: Any, field: str) -> Json:
    """A 400 naming `field`, in the one style of every malformed request."""
    assert answer.status_code == 400, answer.text
    body: Json = answer.json()
    msgspec.convert(body, errors.ErrorBody)
    assert body["error"] == "bad_request" and body["field"] == field, body
    assert body["message"].startswith(f"{field}: "), body
    return body


def _post(api: Api, path: str, player: Player, content: str | bytes) -> Any:
    return api.request("POST", path, player=player, content=content, headers=JSON_TYPE)


def test_the_seat_a_past_board_is_seen_as_is_bounded_in_the_document_and_named_as_sent(
    api: Api, document: dict[str, Any]
) -> None:
    seat = _parameter(document, "/api/games/{game_id}/at/{version}", "as")
    assert (seat.get("minimum"), seat.get("maximum")) == (0, 4), seat
    table = api.new_table(2, rng=random.Random(1))
    answer = api.request("GET", f"{table.path}/at/1", params={"as": -1})
    body = _refused(answer, "as")
    assert "as_seat" not in answer.text and table.game_id not in body["message"]


def test_the_document_gives_the_talks_after_the_pattern_of_the_message_ids_the_server_takes(
    api: Api, document: dict[str, Any]
) -> None:
    after = _parameter(document, "/api/games/{game_id}/talk", "after")
    assert after.get("pattern") == limits.MESSAGE_ID
    table = api.new_table(2, rng=random.Random(2))
    path, ada = f"{table.path}/talk", table.seats[0]
    said = api.ok(api.request("POST", path, player=ada, json={"text": "hello"}), 201)
    largest = "18446744073709551615"  # a stream id's numbers are 64 bits, the pattern 20 digits
    for taken, heard in (("0-0", 1), (said["id"], 0), ("0007-0", 1), (f"{largest}-{largest}", 0),
                         ("99999999999999999999-1", 0), ("1-99999999999999999999", 1)):  # fmt: skip
        thread = api.ok(api.request("GET", path, player=ada, params={"after": taken}))
        assert len(thread) == heard, (taken, thread)
    for refused in ("1", "1-", "-1", "1-2-3", "1-x", "1" * 21 + "-0"):
        _refused(api.request("GET", path, player=ada, params={"after": refused}), "after")


def test_every_bound_the_server_keeps_on_a_body_is_in_the_document(
    document: dict[str, Any],
) -> None:
    """Litestar left out a bound of 0 on an optional field (`clock.max_bank_hours`, whose
    static least is 0; that it is at least `bank_hours` no schema can say) and every bound
    on the items of a list (`reminder_hours`, each above 0 and at most 1440)."""
    schemas = document["components"]["schemas"]
    bank = schemas["ClockSetting"]["properties"]["max_bank_hours"]
    assert (bank.get("minimum"), bank.get("maximum")) == (0, limits.MAX_HOURS), bank
    reminder = schemas["NotificationSettings"]["properties"]["reminder_hours"]["items"]
    assert (reminder.get("exclusiveMinimum"), reminder.get("maximum")) == (0, limits.MAX_HOURS)
    missing = []
    for name, own in _own_schemas().items():
        for member, bounds in own.get("properties", {}).items():
            shown = schemas[name]["properties"][member]
            value = next((b for b in bounds.get("anyOf", ()) if "type" in b), bounds)
            for bound in ("minimum", "exclusiveMinimum", "maximum", "exclusiveMaximum",
                          "minLength", "maxLength", "pattern", "minItems", "maxItems"):  # fmt: skip
                if bound in value and shown.get(bound) != value[bound]:
                    missing.append(f"{name}.{member}: {bound}")
    assert not missing, missing


def test_a_reminder_or_a_bank_outside_the_documented_bounds_is_refused_and_inside_taken(
    api: Api,
) -> None:
    ada = api.create_player("Ada")
    for hours, field in (([0], "reminder_hours[0]"), ([24, 1441], "reminder_hours[1]")):
        body = {"reminder_hours": hours}
        _refused(api.request("PUT", "/api/me/notifications", player=ada, json=body), field)
    taken = {"reminder_hours": [0.5, 1440]}
    kept = api.ok(api.request("PUT", "/api/me/notifications", player=ada, json=taken))
    assert sorted(kept["reminder_hours"]) == [0.5, 1440]
    clock = {"per_move_hours": 1, "max_bank_hours": -1}
    answer = api.request("POST", "/api/games", player=ada, json={"seats": 2, "clock": clock})
    _refused(answer, "clock.max_bank_hours")
    clock["max_bank_hours"] = 0
    api.ok(api.request("POST", "/api/games", player=ada, json={"seats": 2, "clock": clock}), 201)


def test_a_whole_number_written_as_a_float_is_taken_as_the_integer_it_is(api: Api) -> None:
    """JSON has one kind of number, and JSON Schema's `integer` is any number without a
    fraction: `2.0` and `2e0` are integers to every client built on it."""
    ada = api.create_player("Ada")
    created = _post(api, "/api/games", ada, '{"seats": 2.0, "clock": {"per_move_hours": 24, '
                    '"hand_over_after": 3e0}}')  # fmt: skip
    assert created.status_code == 201, created.text
    _refused(_post(api, "/api/games", ada, '{"seats": 2.5}'), "seats")
    table = api.new_table(2, rng=random.Random(3))
    mover = table.seats[table.pending or 0]
    board = api.board(table.game_id, mover)
    body = json.dumps({"expected_version": 0, "command_id": "c1",
                       "commands": [board["legal_commands"][0]]})  # fmt: skip
    body = body.replace('"expected_version": 0', f'"expected_version": {board["version"]}.0')
    api.ok(_post(api, f"{table.path}/commands", mover, body))  # the command lane's reading too
    assert api.board(table.game_id)["version"] > board["version"]
    vacation = api.ok(_post(api, "/api/me/vacation", ada, '{"days": 1.0}'))
    assert vacation["until"] is not None
    settings = '{"email": {"address": "ada@example.org"}, "digest": {"hour": 0.0}}'
    answer = api.request("PUT", "/api/me/notifications", player=ada, content=settings,
                         headers=JSON_TYPE)  # fmt: skip
    assert api.ok(answer)["digest"]["hour"] == 0


def test_a_turn_shorter_than_a_minute_is_refused_and_the_document_says_the_least(
    api: Api, document: dict[str, Any]
) -> None:
    per_move = document["components"]["schemas"]["ClockSetting"]["properties"]["per_move_hours"]
    assert per_move.get("minimum") == MIN_PER_MOVE_HOURS == 1 / 60, per_move
    assert "exclusiveMinimum" not in per_move
    ada = api.create_player("Ada")
    for tiny in ("1e-320", "0.0166"):
        clock = f'{{"seats": 2, "clock": {{"per_move_hours": {tiny}}}}}'
        _refused(_post(api, "/api/games", ada, clock), "clock.per_move_hours")
    assert api.ok(api.request("GET", "/api/me/games", player=ada)) == []
    clock_json = {"seats": 2, "clock": {"per_move_hours": 1 / 60}}
    api.ok(api.request("POST", "/api/games", player=ada, json=clock_json), 201)


def test_a_seat_handed_over_to_its_bot_gets_the_shortest_turn_a_clock_may_give() -> None:
    """Never more than a seat whose person plays: the grace after `hand_over_after` timeouts
    follows the least `per_move_hours`."""
    assert GRACE_SECONDS == MIN_PER_MOVE_HOURS * HOUR
    control = TimeControl(per_move_hours=MIN_PER_MOVE_HOURS, hand_over_after=1)
    start = 1_800_000_000.0
    log = [Append("join", None, start, "", 1), Append("commands", 0, start + 60, "clock:greedy", 2),
           Append("commands", 1, start + 70, "", 3)]  # fmt: skip
    handed, played = timeline(control, log, 0, 2)[-1], timeline(control, log[:2], 1, 2)[-1]
    assert handed.seats[0].timeouts == 1 and played.seats[1].timeouts == 0
    handed_gets = (deadline_seconds(handed) or 0) - (start + 70)
    played_gets = (deadline_seconds(played) or 0) - (start + 60)
    assert handed_gets == played_gets == GRACE_SECONDS


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/api/players", '{"name": "a", "name": "b"}', "name"),
        ("/api/games", '{"seats": 2, "clock": {"per_move_hours": 1, "per_move_hours": 2}}',
         "clock.per_move_hours"),
        ("/api/games", '{"seats": 2, "bots": [{"level": "random"}, {"level": "greedy", '
         '"level": "random"}]}', "bots[1].level"),
    ],
)  # fmt: skip
def test_a_member_named_twice_is_refused_naming_it_and_changes_nothing(
    api: Api, path: str, body: str, field: str
) -> None:
    """Readers keep the first or the last of them: the audit refuses such a record, and the
    server such a request, by the same check (`evidence.json_alike.members_named_once`)."""
    ada = api.create_player("Ada")
    body_ = _refused(_post(api, path, ada, body), field)
    assert "twice" in body_["message"]
    assert api.ok(api.request("GET", "/api/me/games", player=ada)) == []


def test_a_command_with_a_member_named_twice_is_refused_and_appends_nothing(api: Api) -> None:
    table = api.new_table(2, rng=random.Random(4))
    mover = table.seats[table.pending or 0]
    version = api.board(table.game_id)["version"]
    body = (f'{{"expected_version": {version}, "command_id": "c", "command_id": "d", '
            '"commands": [{"type": "skip"}]}')  # fmt: skip
    _refused(_post(api, f"{table.path}/commands", mover, body), "command_id")
    assert api.board(table.game_id)["version"] == version


@pytest.mark.parametrize(
    ("body", "field"),
    [('{"name": "\\ud800"}', "name"), ('{"name": "x\\udc00y"}', "name"),
     ('{"name": "\\ud800\\u0041"}', "name")],
)  # fmt: skip
def test_a_lone_surrogate_is_refused_as_what_it_is_naming_the_field(
    api: Api, body: str, field: str
) -> None:
    answer = _refused(api.request("POST", "/api/players", content=body, headers=JSON_TYPE), field)
    assert "lone UTF-16 surrogate" in answer["message"] and "truncated" not in answer["message"]
    paired = '{"name": "Ada \\ud83d\\ude00"}'
    assert api.request("POST", "/api/players", content=paired, headers=JSON_TYPE).status_code == 201


def test_a_refusal_cuts_a_long_id_or_field_it_repeats_and_says_how_much(api: Api) -> None:
    long_id = "p" * 3000
    answer = api.request("GET", f"/api/players/{long_id}")
    assert answer.status_code == 404
    message = answer.json()["message"]
    assert len(message) < 200 and long_id not in message, message
    repeated = len(f"'{long_id}'")  # the id, quoted, is one run without a space
    assert f"({repeated - errors.MAX_ECHO:,} more characters cut)" in message, message
    ada = api.create_player("Ada")
    unknown = "x" * 3000
    refused = api.request("POST", "/api/games", player=ada, json={"seats": 2, unknown: 1})
    assert refused.status_code == 400 and len(refused.text) < 600, refused.text
    assert refused.json()["field"].startswith("x" * errors.MAX_ECHO + "... (")


def test_a_refused_query_parameter_reads_like_a_refused_body_field(api: Api) -> None:
    """One style for every malformed part of a request: `field` names it as it is sent (or
    by its path in the body), and the message says it, then what is wrong, for people,
    without repeating the request's address."""
    table = api.new_table(2, rng=random.Random(5))
    ada = table.seats[0]
    answers = {
        "as": api.request("GET", f"{table.path}/at/1", params={"as": "x"}),
        "after": api.request("GET", f"{table.path}/events", params={"after": "abc"}),
        "days": api.request("POST", "/api/me/vacation", player=ada, json={"days": "x"}),
        "clock.hand_over_after": api.request(
            "POST", "/api/games", player=ada,
            json={"seats": 2, "clock": {"per_move_hours": 1, "hand_over_after": "x"}},
        ),
    }  # fmt: skip
    for field, answer in answers.items():
        body = _refused(answer, field)
        assert set(body) == {"status", "error", "message", "request_id", "field"}, body
        assert "/api/" not in body["message"] and "Validation failed" not in body["message"]
