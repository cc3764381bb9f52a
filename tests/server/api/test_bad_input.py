"""Bad input: malformed JSON, wrong types, unknown fields and tags, oversized bodies, bad ids
and versions, wrong content types. Each is a 4xx with a clear JSON error (`status`, `error`,
`message`, `request_id`, the same id in X-Request-ID), never a 5xx, and writes nothing.

Long on purpose: one short test per case, each named as a sentence, read like a table;
splitting the file would scatter cases of one ruling or one promise.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st
from litestar import Litestar
from litestar.testing import TestClient

from server.schema.errors import BadParameter
from server.schema.limits import MAX_VERSION, VERSION_PATTERN, parse_version
from tests.server.client import Api, Json, Player, Table, command_id

pytestmark = pytest.mark.timeout(60)

MAX_BODY = 64 * 1024


@dataclass
class Game:
    client: TestClient[Litestar]
    api: Api
    table: Table
    own: Player
    own_seat: int

    def version(self) -> int:
        version: int = self.api.board(self.table.game_id)["version"]
        return version

    def legal(self) -> Json:
        return self.api.board(self.table.game_id, self.own)["legal_commands"][0]

    def body(self, **changes: Json) -> Json:
        body = {
            "expected_version": self.version(),
            "command_id": command_id(),
            "commands": [self.legal()],
        }
        return body | changes


@pytest.fixture
def game(client: TestClient[Litestar]) -> Game:
    api = Api(client)
    table = api.new_table(2, "towers", ("trade_routes",), random.Random(11))
    assert table.pending is not None
    return Game(client, api, table, table.seats[table.pending], table.pending)


def check_error(response: httpx.Response, status: int | tuple[int, ...], error: str | None) -> Json:
    """A clear JSON refusal: never a 5xx, the expected status and code, a message for
    people and the request id (in the body and the header)."""
    assert response.status_code < 500, f"a 5xx for bad input: {response.text}"
    statuses = status if isinstance(status, tuple) else (status,)
    assert response.status_code in statuses, response.text
    assert response.headers["content-type"].startswith("application/json")
    body: Json = response.json()
    assert body.get("status") == response.status_code, body
    if error is not None:
        assert body["error"] == error, body
    assert isinstance(body["message"], str) and len(body["message"]) > 3
    assert body.get("request_id"), f"every refusal carries its request id: {body}"
    assert response.headers.get("x-request-id") == body["request_id"]
    return body


# --- the commands endpoint -----------------------------------------------------------------

JSON_TYPE = {"Content-Type": "application/json"}


@dataclass(frozen=True)
class Case:
    name: str
    make: Callable[[Game], dict[str, Json]]
    """The request (httpx keyword arguments) for the game as it is now."""
    status: int
    error: str

    def __str__(self) -> str:
        return self.name


def raw(
    name: str, content: Callable[[Game], bytes | str], status: int = 400, error: str = "bad_request"
) -> Case:
    return Case(
        name, lambda g: {"content": content(g), "headers": JSON_TYPE | g.own.auth}, status, error
    )


def body(
    name: str, make: Callable[[Game], Json], status: int = 400, error: str = "bad_request"
) -> Case:
    return Case(name, lambda g: {"json": make(g), "headers": g.own.auth}, status, error)


def _route(side: str, cities: list[str]) -> Json:
    return {"type": "place_trade_route", "cities": cities, "side": side}


def _with_deep_command(game: Game) -> str:
    text = json.dumps(game.body(commands=["HERE"]))
    return text.replace('"HERE"', "[" * 3000 + "]" * 3000)


COMMAND_CASES = [
    raw("malformed JSON", lambda g: "{bad"),
    raw("a truncated object", lambda g: json.dumps(g.body())[:-1]),
    raw("trailing garbage", lambda g: json.dumps(g.body()) + "}"),
    raw("an array, not an object", lambda g: "[1, 2]"),
    raw("null", lambda g: "null"),
    raw("an empty body", lambda g: ""),
    raw("invalid UTF-8", lambda g: b'{"command_id": "\xff\xfe"}'),
    raw("NaN", lambda g: json.dumps(g.body()).replace('"expected_version": ', '"x": NaN, "e":')),
    raw("a nesting 100 deep", lambda g: "[" * 100 + "]" * 100),
    raw("a nesting 5000 deep", lambda g: "[" * 5000 + "]" * 5000),
    raw("a command nested 3000 deep", _with_deep_command),
    body("expected_version as a string", lambda g: g.body(expected_version=str(g.version()))),
    body("expected_version as a float", lambda g: g.body(expected_version=g.version() + 0.5)),
    body("expected_version true", lambda g: g.body(expected_version=True)),
    body("a negative expected_version", lambda g: g.body(expected_version=-1)),
    body("no expected_version", lambda g: {"command_id": "x", "commands": [g.legal()]}),
    body("command_id a number", lambda g: g.body(command_id=5)),
    body("an empty command_id", lambda g: g.body(command_id="")),
    body("a 129-character command_id", lambda g: g.body(command_id="c" * 129)),
    body("a 60 KB command_id", lambda g: g.body(command_id="c" * 60_000)),
    body("commands an object", lambda g: g.body(commands=g.legal())),
    body("an empty commands list", lambda g: g.body(commands=[])),
    body("31 commands", lambda g: g.body(commands=[{"type": "skip"}] * 31)),
    body("an unknown field", lambda g: g.body(extra=1)),
    body("an unknown command type", lambda g: g.body(commands=[{"type": "fly"}])),
    body("a command without a type", lambda g: g.body(commands=[{"card": "ROM-1"}])),
    body("a command as a string", lambda g: g.body(commands=["skip"])),
    body("an unknown field in a command", lambda g: g.body(commands=[{"type": "skip", "x": 1}])),
    body("a card as a number", lambda g: g.body(commands=[{"type": "play_card", "card": 5}])),
    body("a card id as a list", lambda g: g.body(commands=[{"type": "play_card", "card": [1]}])),
    body("a site as a string", lambda g: g.body(commands=[{"type": "place_floor", "site": "0"}])),
    body("a site out of range", lambda g: g.body(commands=[{"type": "place_floor", "site": 2}])),
    body(
        "a route of three cities",
        lambda g: g.body(commands=[_route("trader", ["Roma", "Siena", "Parma"])]),
    ),
    body("a route of one city", lambda g: g.body(commands=[_route("trader", ["Roma"])])),
    body("an unknown side", lambda g: g.body(commands=[_route("pirate", ["Roma", "Siena"])])),
    # Well formed, refused by the rules or the version: not bad input, still a clear 4xx.
    body(
        "an unknown card",
        lambda g: g.body(commands=[{"type": "play_card", "card": "XXX-9"}]),
        422,
        "card_not_in_hand",
    ),
    body(
        "an expected_version beyond MAX_VERSION",
        lambda g: g.body(expected_version=2**53),
        400,
        "bad_request",
    ),
    body(
        "an expected_version over 64 bits",
        lambda g: g.body(expected_version=2**70),
        400,
        "bad_request",
    ),
]


@pytest.mark.parametrize("case", COMMAND_CASES, ids=str)
def test_a_malformed_command_request_is_a_clear_4xx_and_writes_nothing(
    game: Game, case: Case
) -> None:
    before = game.version()
    response = game.client.post(f"{game.table.path}/commands", **case.make(game))
    check_error(response, case.status, case.error)
    assert game.version() == before, "nothing was written"


def test_a_body_over_64_kib_is_413_and_one_under_is_read(game: Game) -> None:
    path = f"{game.table.path}/commands"
    body = game.body()
    before = game.version()
    padded = json.dumps(body | {"pad": ""}).encode()
    over = padded.replace(b'"pad": ""', b'"pad": "' + b"x" * (MAX_BODY + 1 - len(padded)) + b'"')
    assert len(over) == MAX_BODY + 1
    check_error(
        game.client.post(path, content=over, headers=JSON_TYPE | game.own.auth),
        413,
        "body_too_large",
    )
    # Just under the limit the body is read (and refused for its unknown field).
    under = over.replace(b"x" * 2, b"", 1)
    check_error(
        game.client.post(path, content=under, headers=JSON_TYPE | game.own.auth), 400, "bad_request"
    )
    # A big body without a length (chunked) is cut at the limit too.
    chunks = (b" " * 4096 for _ in range(40))
    check_error(
        game.client.post(path, content=chunks, headers=JSON_TYPE | game.own.auth),
        413,
        "body_too_large",
    )
    # And a 1 MB one on the other endpoints that take a body.
    huge = b'{"name": "' + b"x" * 1_000_000 + b'"}'
    for other in ("/api/players", "/api/games", f"{game.table.path}/join"):
        check_error(
            game.client.post(other, content=huge, headers=JSON_TYPE | game.own.auth),
            413,
            "body_too_large",
        )
    assert game.version() == before


@pytest.mark.parametrize(
    "content_type", ["text/plain", "application/x-www-form-urlencoded", "application/xml"]
)
def test_a_command_with_a_wrong_content_type_is_refused_and_writes_nothing(
    game: Game, content_type: str
) -> None:
    """The body is JSON, the declared type is not: a 4xx (415), not a move."""
    before = game.version()
    headers = game.own.auth | {"Content-Type": content_type}
    response = game.client.post(
        f"{game.table.path}/commands", content=json.dumps(game.body()), headers=headers
    )
    check_error(response, (400, 415), None)
    assert game.version() == before


def test_a_whole_turn_refused_part_way_writes_nothing_and_names_the_index(game: Game) -> None:
    before = game.version()
    board = game.api.board(game.table.game_id, game.own)
    assert board["pending"]["step"] == "play_card"
    turn = [board["legal_commands"][0], {"type": "place_floor", "site": 0}, {"type": "skip"}]
    response = game.api.send(game.table.game_id, game.own, before, turn)
    body = check_error(response, 422, None)
    assert (
        body["index"] == 2 and body["rule"] and body["error"] in ("wrong_step", "step_not_optional")
    )
    assert game.version() == before
    first = game.api.send(game.table.game_id, game.own, before, turn[:1])
    assert first.status_code == 200


def test_a_stale_expected_version_is_409_with_the_current_version(game: Game) -> None:
    current = game.version()
    for stale in (0, 1, current - 1, current + 1, current + 1000):
        body = check_error(
            game.client.post(
                f"{game.table.path}/commands",
                json=game.body(expected_version=stale),
                headers=game.own.auth,
            ),
            409,
            "version_conflict",
        )
        assert body["current_version"] == current
    assert game.version() == current


# --- the other bodies ------------------------------------------------------------------------


def short(value: object) -> str:
    """A readable test id: the body as JSON, cut short."""
    text = value if isinstance(value, str) else json.dumps(value)
    return text if len(text) <= 40 else text[:37] + "..."


@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        ({}, 400, "bad_request"),
        ({"name": ""}, 422, "invalid_option"),
        ({"name": "x" * 41}, 422, "invalid_option"),
        ({"name": 7}, 400, "bad_request"),
        ({"name": None}, 400, "bad_request"),
        ({"name": "ok", "token": "mine"}, 400, "bad_request"),
        (["ok"], 400, "bad_request"),
    ],
    ids=short,
)
def test_a_bad_new_player_is_refused_400_or_422_naming_the_name(
    client: TestClient[Litestar], body: Json, status: int, error: str
) -> None:
    check_error(client.post("/api/players", json=body), status, error)


@pytest.mark.parametrize(
    ("body", "status", "error"),
    [
        ({}, 400, "bad_request"),
        ({"seats": "2"}, 400, "bad_request"),
        ({"seats": 2.5}, 400, "bad_request"),
        ({"seats": True}, 400, "bad_request"),
        ({"seats": 2, "modules": "delegates"}, 400, "bad_request"),
        ({"seats": 2, "edition": 1}, 400, "bad_request"),
        ({"seats": 2, "entropy": "e" * 257}, 400, "bad_request"),
        ({"seats": 2, "colour": "red"}, 400, "bad_request"),
        ({"seats": 1}, 422, "invalid_option"),
        ({"seats": 6}, 422, "invalid_option"),
        ({"seats": -2}, 422, "invalid_option"),
        ({"seats": 2**70}, 422, "invalid_option"),
        ({"seats": 2, "edition": "deluxe"}, 422, "invalid_option"),
        ({"seats": 2, "modules": ["pirates"]}, 422, "invalid_option"),
        ({"seats": 2, "modules": ["delegates", "delegates"]}, 422, "invalid_option"),
        ({"seats": 2, "edition": "classic", "modules": ["delegates"]}, 422, "invalid_option"),
    ],
    ids=short,
)
def test_a_bad_new_game_is_a_clear_4xx_and_creates_nothing(
    client: TestClient[Litestar], body: Json, status: int, error: str
) -> None:
    api = Api(client)
    player = api.create_player()
    answer = check_error(client.post("/api/games", json=body, headers=player.auth), status, error)
    if status == 422:
        assert answer["field"] in ("seats", "edition", "modules")
    assert api.ok(client.get("/api/lobby")) == []
    assert api.ok(client.get("/api/me/games", headers=player.auth)) == []


@pytest.mark.parametrize(
    "body",
    [
        {},
        {"invite_code": 5},
        {"invite_code": "x" * 129},
        {"invite_code": "", "seat": 0},
        {"invite_code": "abc", "entropy": "e" * 257},
        None,
    ],
    ids=short,
)
def test_a_bad_join_is_400_and_seats_nobody(client: TestClient[Litestar], body: Json) -> None:
    api = Api(client)
    creator, joiner = api.create_player(), api.create_player()
    created = api.create_game(creator, 2)
    path = f"/api/games/{created['game_id']}/join"
    check_error(client.post(path, json=body, headers=joiner.auth), 400, "bad_request")
    assert api.board(created["game_id"])["version"] == created["version"]


# --- addresses -------------------------------------------------------------------------------


MALFORMED_GAME_IDS = ["bad id", "a" * 129, "-leading-dash", "g%C3%A9", "%00", "g{s01}", "g:x"]


@pytest.mark.parametrize("suffix", ["", "/events", "/replay", "/record", "/at/1", "/stream"])
def test_reading_a_malformed_game_id_is_404_not_a_server_error(
    client: TestClient[Litestar], suffix: str
) -> None:
    """Game ids are 1-128 of [A-Za-z0-9_.-] starting alphanumeric (store/keys.py); any other
    id names no game."""
    failures = []
    for game_id in MALFORMED_GAME_IDS:
        try:
            check_error(client.get(f"/api/games/{game_id}{suffix}"), (400, 404), None)
        except AssertionError as failure:
            failures.append(f"{game_id[:20]!r}: {str(failure).splitlines()[0]}")
    assert not failures, "\n".join(failures)


@pytest.mark.parametrize("action", ["commands", "join"])
def test_acting_on_a_malformed_game_id_is_404_not_a_server_error(
    client: TestClient[Litestar], action: str
) -> None:
    player = Api(client).create_player()
    body: Json = {"expected_version": 1, "command_id": "c", "commands": [{"type": "skip"}]}
    if action == "join":
        body = {"invite_code": "x"}
    failures = []
    for game_id in MALFORMED_GAME_IDS:
        response = client.post(f"/api/games/{game_id}/{action}", json=body, headers=player.auth)
        try:
            check_error(response, (400, 404), None)
        except AssertionError as failure:
            failures.append(f"{game_id[:20]!r}: {str(failure).splitlines()[0]}")
    assert not failures, "\n".join(failures)


def test_bad_versions_and_queries_are_clear_4xx(game: Game) -> None:
    path = game.table.path
    version = game.version()
    for bad in (0, version + 1, 2**53 - 1):  # versions this game does not have
        check_error(game.client.get(f"{path}/at/{bad}"), 404, "not_found")
    for bad in (10**30, -1):  # not versions at all
        check_error(game.client.get(f"{path}/at/{bad}"), 400, "bad_request")
    for query in ("after=-1", "after=abc", "after=1.5", "after="):
        check_error(game.client.get(f"{path}/events?{query}"), 400, "bad_request")
        check_error(game.client.get(f"{path}/stream?{query}"), 400, "bad_request")


def test_an_unknown_path_or_method_is_a_json_refusal_with_a_request_id(
    client: TestClient[Litestar],
) -> None:
    check_error(client.get("/api/nothing"), 404, "not_found")
    check_error(client.get("/api/games/g1/at/abc"), 400, "bad_request")
    check_error(client.delete("/api/games/g1"), 405, "method_not_allowed")
    check_error(client.put("/api/players"), 405, "method_not_allowed")


def test_a_405_names_the_allowed_methods_in_an_allow_header(client: TestClient[Litestar]) -> None:
    """RFC 9110 §15.5.6: a 405 MUST carry Allow (Litestar puts it on the exception)."""
    response = client.delete("/api/lobby")
    assert response.status_code == 405
    allowed = {method.strip() for method in response.headers.get("allow", "").split(",")}
    assert "GET" in allowed and "DELETE" not in allowed and "POST" not in allowed


def test_a_body_that_does_not_decode_names_the_field_it_is_about(
    client: TestClient[Litestar],
) -> None:
    """Which field: by its path in the body, or the one that is not known."""
    api = Api(client)
    player = api.create_player("Ada")
    for body, field in (
        ({"digest": {"hour": "8"}}, "digest.hour"),
        ({"webhook": {"url": "https://example.org", "secret": "x"}}, "webhook.secret"),
        ({"bogus": 1}, "bogus"),
    ):
        answer = api.request("PUT", "/api/me/notifications", player=player, json=body)
        assert answer.status_code == 400 and answer.json()["field"] == field, answer.text
    answer = api.request("POST", "/api/games", player=player, json={"seats": "4"})
    assert answer.status_code == 400 and answer.json()["field"] == "seats"


@given(
    st.one_of(
        st.integers(min_value=0, max_value=2 * MAX_VERSION).map(str),
        st.integers(min_value=MAX_VERSION - 1000, max_value=MAX_VERSION + 1000).map(str),
        st.text(alphabet="0123456789", min_size=1, max_size=18),
        st.text(max_size=18),
    )
)
def test_the_documented_pattern_of_a_version_admits_exactly_what_the_server_takes(
    text: str,
) -> None:
    try:
        parse_version(text, "version")
        taken = True
    except BadParameter:
        taken = False
    assert bool(re.fullmatch(VERSION_PATTERN, text)) == taken
