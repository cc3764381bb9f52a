"""Who may do what: every endpoint against every kind of caller, and tokens kept only hashed.

The callers: no token, a wrong token (unknown to the server), the other seat (seated, but the
decision is not its own), a spectator (a valid token, not seated in the game) and the own seat
(whose decision is pending). Each cell has its expected status and error code; every refusal
is a JSON error with the status, a stable code, a message and the request id (also sent as
X-Request-ID), and writes nothing: the game's version is unchanged and a refused command's
id is still free.

Long on purpose: one short test per case, each named as a sentence, read like a table;
splitting the file would scatter cases of one ruling or one promise.
"""

from __future__ import annotations

import functools
import hashlib
import random
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from tests.server.client import Api, Json, Player, Table, command_id
from tests.server.live import LiveServer, redis_client
from tests.server.sse import Streamed, asgi_stream

pytestmark = pytest.mark.timeout(60)

Cell = tuple[int, str | None]
"""The expected status and error code (None: not a refusal)."""

CALLERS = ["none", "wrong", "other", "spectator", "own"]
OK: Cell = (200, None)
CREATED: Cell = (201, None)
UNAUTHORIZED: Cell = (401, "unauthorized")
READ: dict[str, Cell] = {"none": OK, "wrong": UNAUTHORIZED, "other": OK, "spectator": OK, "own": OK}
PUBLIC: dict[str, Cell] = dict.fromkeys(CALLERS, OK)

EXPECTED: dict[str, dict[str, Cell]] = {
    # Creating a player needs no token; one that is sent is not looked at.
    "create_player": dict.fromkeys(CALLERS, CREATED),
    "create_game": {
        "none": UNAUTHORIZED,
        "wrong": UNAUTHORIZED,
        "other": CREATED,
        "spectator": CREATED,
        "own": CREATED,
    },
    # The game has started: it is full for anybody new; a seated player joining again gets
    # its first answer again (a retried join), and nothing is written.
    "join": {
        "none": UNAUTHORIZED,
        "wrong": UNAUTHORIZED,
        "other": OK,
        "spectator": (409, "game_not_open"),
        "own": OK,
    },
    "board": READ,
    "commands": {
        "none": UNAUTHORIZED,
        "wrong": UNAUTHORIZED,
        "other": (403, "not_your_decision"),
        "spectator": (403, "not_seated"),
        "own": OK,
    },
    # A preview is refused as the same commands sent would be, and writes nothing.
    "preview": {
        "none": UNAUTHORIZED,
        "wrong": UNAUTHORIZED,
        "other": (403, "not_your_decision"),
        "spectator": (403, "not_seated"),
        "own": OK,
    },
    # A stream ticket streams what the token would: anybody with a token may have one.
    "stream_ticket": {
        "none": UNAUTHORIZED,
        "wrong": UNAUTHORIZED,
        "other": CREATED,
        "spectator": CREATED,
        "own": CREATED,
    },
    "events": READ,
    "stream": READ,
    "replay": READ,
    "at": READ,
    "record": READ,
    "me_games": {
        "none": UNAUTHORIZED,
        "wrong": UNAUTHORIZED,
        "other": OK,
        "spectator": OK,
        "own": OK,
    },
    "lobby": PUBLIC,
    "healthz": PUBLIC,
    "openapi": PUBLIC,
}


@dataclass
class Scene:
    """A started two-seat game, its seats (own decides now), and a player not seated."""

    client: TestClient[Litestar]
    app: Litestar
    api: Api
    table: Table
    own: Player
    other: Player
    spectator: Player
    own_seat: int

    def headers(self, caller: str) -> dict[str, str]:
        match caller:
            case "none":
                return {}
            case "wrong":
                return {"Authorization": "Bearer " + "x" * 43}
            case "other":
                return self.other.auth
            case "spectator":
                return self.spectator.auth
            case _:
                return self.own.auth

    def seat(self, caller: str) -> int | None:
        return {"own": self.own_seat, "other": 1 - self.own_seat}.get(caller)

    def version(self) -> int:
        version: int = self.api.board(self.table.game_id)["version"]
        return version

    def own_command(self) -> Json:
        board = self.api.board(self.table.game_id, self.own)
        return {
            "expected_version": board["version"],
            "command_id": command_id(),
            "commands": [board["legal_commands"][0]],
        }


@pytest.fixture
def scene(client: TestClient[Litestar], app: Litestar) -> Scene:
    api = Api(client)
    table = api.new_table(2, "towers", ("trade_routes",), random.Random(3))
    rng = random.Random(4)
    for _ in range(5):
        table.step(rng, whole_turn=False)
    assert table.pending is not None
    own = table.seats[table.pending]
    other = table.seats[1 - table.pending]
    return Scene(client, app, api, table, own, other, api.create_player("s"), table.pending)


Call = Callable[[Scene, dict[str, str]], "Answer"]


@dataclass
class Answer:
    status: int
    headers: dict[str, str]
    body: Json


def _http(response: httpx.Response) -> Answer:
    return Answer(response.status_code, dict(response.headers), response.json())


def _stream(scene: Scene, headers: dict[str, str]) -> Answer:
    got: Streamed = scene.client.blocking_portal.call(
        functools.partial(
            asgi_stream, scene.app, f"{scene.table.path}/stream", scene.version(), headers
        )
    )
    if got.status != 200:
        return Answer(got.status, got.headers, got.json())
    return Answer(got.status, got.headers, [m.data for m in got.messages])


def _post(path: str, body: Callable[[Scene], Json]) -> Call:
    def call(scene: Scene, headers: dict[str, str]) -> Answer:
        return _http(
            scene.client.post(path.format(g=scene.table.path), json=body(scene), headers=headers)
        )

    return call


def _get(path: str) -> Call:
    def call(scene: Scene, headers: dict[str, str]) -> Answer:
        return _http(scene.client.get(path.format(g=scene.table.path), headers=headers))

    return call


ENDPOINTS: dict[str, Call] = {
    "create_player": _post("/api/players", lambda s: {"name": "new"}),
    "create_game": _post("/api/games", lambda s: {"seats": 3}),
    "join": _post("{g}/join", lambda s: {"invite_code": s.table.invite_code}),
    "board": _get("{g}"),
    "commands": _post("{g}/commands", lambda s: s.own_command()),
    "preview": _post(
        "{g}/preview",
        lambda s: {k: v for k, v in s.own_command().items() if k != "command_id"},
    ),
    "stream_ticket": _post("{g}/stream-ticket", lambda s: None),
    "events": _get("{g}/events"),
    "stream": _stream,
    "replay": _get("{g}/replay"),
    "at": _get("{g}/at/12"),
    "record": _get("{g}/record"),
    "me_games": _get("/api/me/games"),
    "lobby": _get("/api/lobby"),
    "healthz": _get("/healthz"),
    "openapi": _get("/schema/openapi.json"),
}


def check_refusal(answer: Answer, status: int, error: str | None) -> None:
    assert answer.status == status, answer.body
    body = answer.body
    assert body["status"] == status and body["error"] == error, body
    assert isinstance(body["message"], str) and body["message"]
    assert body["request_id"] and body["request_id"] == answer.headers["x-request-id"]
    if status == 401:
        assert answer.headers["www-authenticate"] == "Bearer"


def check_viewer(endpoint: str, answer: Answer, seat: int | None) -> None:
    """A read answered for the right viewer: a seat sees its own seat, anyone else a
    spectator's view; nobody sees a hand dealt to another seat."""
    body = answer.body
    if endpoint in ("board", "at"):
        assert body["viewer"] == seat
        assert (body["hand"] != []) == (seat is not None)
        mine = seat is not None and body["pending"]["seat"] == seat
        assert (body["legal_commands"] != []) == mine
    elif endpoint == "replay":
        assert body["viewer"] == seat
    if endpoint in ("events", "stream", "replay", "record"):
        if endpoint == "events":
            events = [item["event"] for item in body["events"]]
        elif endpoint == "replay":
            events = [step["event"] for step in body["steps"]]
        elif endpoint == "record":
            assert body["complete"] is False
            events = [entry["data"] for entry in body["events"]]
        else:
            events = body
        dealt = sum(
            1
            for e in events
            if (e["type"] == "hand_dealt" if isinstance(e, dict) else '"hand_dealt"' in e)
        )
        assert dealt == (1 if seat is not None else 0)


@pytest.mark.parametrize("caller", CALLERS)
@pytest.mark.parametrize("endpoint", list(ENDPOINTS))
def test_each_endpoint_answers_each_kind_of_caller_as_the_contract_says(
    scene: Scene, endpoint: str, caller: str
) -> None:
    status, error = EXPECTED[endpoint][caller]
    before = scene.version()
    lobby = scene.client.get("/api/lobby").json()
    headers = scene.headers(caller)
    body_id: str | None = None
    if endpoint == "commands":
        command = scene.own_command()
        body_id = command["command_id"]
        answer = _http(
            scene.client.post(f"{scene.table.path}/commands", json=command, headers=headers)
        )
    else:
        answer = ENDPOINTS[endpoint](scene, headers)
    if error is not None:
        check_refusal(answer, status, error)
        assert scene.version() == before, "a refusal wrote nothing"
        assert scene.client.get("/api/lobby").json() == lobby, "nor opened a game"
        if body_id is not None:
            # The refused request's id was not recorded: the own seat may use it now.
            retry = scene.own_command() | {"command_id": body_id}
            accepted = scene.client.post(
                f"{scene.table.path}/commands", json=retry, headers=scene.own.auth
            )
            assert accepted.status_code == 200 and accepted.json()["repeated"] is False
        return
    assert answer.status == status, answer.body
    if endpoint == "commands":
        assert scene.version() > before
    else:
        assert scene.version() == before, "a read or an account call wrote nothing to the game"
        check_viewer(endpoint, answer, scene.seat(caller))


@pytest.mark.parametrize(
    "header",
    ["Bearer", "Bearer ", "Basic dXNlcjpwYXNz", "Token abc", "Bearer a b", "bearer"],
)
@pytest.mark.parametrize("endpoint", ["board", "events", "record", "commands", "me_games"])
def test_a_malformed_authorization_header_is_401_on_reads_and_acts(
    scene: Scene, endpoint: str, header: str
) -> None:
    before = scene.version()
    if endpoint == "commands":
        answer = _http(
            scene.client.post(
                f"{scene.table.path}/commands",
                json=scene.own_command(),
                headers={"Authorization": header},
            )
        )
    else:
        answer = ENDPOINTS[endpoint](scene, {"Authorization": header})
    check_refusal(answer, 401, "unauthorized")
    assert scene.version() == before


def test_the_scheme_is_case_insensitive_and_the_token_trimmed(scene: Scene) -> None:
    token = scene.own.token
    for header in (f"bearer {token}", f"BEARER {token}", f"Bearer   {token}  "):
        board = scene.client.get(scene.table.path, headers={"Authorization": header})
        assert board.status_code == 200 and board.json()["viewer"] == scene.own_seat


def test_every_read_of_an_unknown_game_is_404_for_every_caller(scene: Scene) -> None:
    for caller in ("none", "spectator", "own"):
        for suffix in ("", "/events", "/replay", "/at/1", "/record"):
            answer = _http(
                scene.client.get(f"/api/games/gunknown{suffix}", headers=scene.headers(caller))
            )
            check_refusal(answer, 404, "game_not_found")
    answer = _http(
        scene.client.post(
            "/api/games/gunknown/commands", json=scene.own_command(), headers=scene.own.auth
        )
    )
    check_refusal(answer, 404, "game_not_found")


def test_joining_an_open_game_needs_its_invite_code_and_a_wrong_one_writes_nothing(
    client: TestClient[Litestar],
) -> None:
    api = Api(client)
    creator, joiner = api.create_player("c"), api.create_player("j")
    created = api.create_game(creator, 3)
    path = f"/api/games/{created['game_id']}"
    for code in ("", "0" * 24, created["invite_code"].upper(), created["invite_code"] + "0"):
        answer = _http(client.post(f"{path}/join", json={"invite_code": code}, headers=joiner.auth))
        check_refusal(answer, 403, "wrong_invite")
    assert api.board(created["game_id"])["version"] == created["version"]
    assert [g["joined"] for g in api.ok(client.get("/api/lobby"))] == [[creator.player_id]]
    joined = api.join(joiner, created["game_id"], created["invite_code"])
    assert joined["started"] is False and joined["seat"] is None
    again = _http(
        client.post(
            f"{path}/join", json={"invite_code": created["invite_code"]}, headers=joiner.auth
        )
    )
    # A retried join (its answer was lost, say) gets its first answer again; nothing written.
    assert again.status == 200 and again.body == joined
    assert api.board(created["game_id"])["version"] == joined["version"]


def test_the_invite_code_is_shown_only_on_the_boards_of_the_players_at_the_table(
    client: TestClient[Litestar],
) -> None:
    api = Api(client)
    mary, john = api.create_player("m"), api.create_player("j")
    mine = api.create_game(mary, 2)
    his = api.create_game(john, 3)
    lobby = client.get("/api/lobby").text
    assert mine["invite_code"] not in lobby and his["invite_code"] not in lobby
    games = api.ok(client.get("/api/me/games", headers=mary.auth))
    assert [g["game_id"] for g in games] == [mine["game_id"]]
    for path in ("", "/record", "/replay", "/events", "/at/1"):
        for headers in ({}, mary.auth, john.auth):
            text = client.get(f"/api/games/{mine['game_id']}{path}", headers=headers).text
            assert mary.token not in text
            shown = path == "" and headers == mary.auth
            assert (mine["invite_code"] in text) is shown, (path, headers)


# --- tokens at rest -------------------------------------------------------------------------


def _every_stored_byte(prefix: str) -> Iterator[bytes]:
    """Every key name and value under a prefix of the real Redis."""
    client = redis_client()
    try:
        for key in client.scan_iter(match=f"{prefix}:*", count=1000):
            yield key
            kind = client.type(key)
            value: Any
            if kind == b"string":
                value = [client.get(key)]
            elif kind == b"hash":
                value = [part for pair in client.hgetall(key).items() for part in pair]
            elif kind == b"zset":
                value = client.zrange(key, 0, -1)
            elif kind == b"set":
                value = list(client.smembers(key))
            elif kind == b"list":
                value = client.lrange(key, 0, -1)
            elif kind == b"stream":
                entries: Any = client.xrange(key)
                value = [
                    part for _id, fields in entries for pair in fields.items() for part in pair
                ]
            else:
                raise AssertionError(f"a key of an unexpected type {kind!r}: {key!r}")
            yield from (bytes(part) for part in value if part is not None)
    finally:
        client.close()


def _check_hashed_only(prefix: str, players: list[Player]) -> None:
    stored = list(_every_stored_byte(prefix))
    assert stored, "the scan found the game's keys"
    for player in players:
        token = player.token.encode()
        assert not any(token in chunk for chunk in stored), "a token is stored in clear"
        digest = hashlib.sha256(token).hexdigest().encode()
        assert any(digest in chunk for chunk in stored), "its SHA-256 is what is kept"


@pytest.mark.redis
def test_the_store_keeps_only_a_hash_of_each_token(
    redis_client_app: TestClient[Litestar], redis_prefix: str
) -> None:
    api = Api(redis_client_app)
    table = api.new_table(3, "towers", ("delegates",), random.Random(2))
    rng = random.Random(2)
    for _ in range(10):
        table.step(rng, whole_turn=True)
    _check_hashed_only(redis_prefix, table.seats)


@pytest.mark.redis
def test_a_live_server_keeps_tokens_out_of_redis_and_out_of_its_log(
    live_server: LiveServer, live_api: Api
) -> None:
    table = live_api.new_table(2, "classic", (), random.Random(6))
    rng = random.Random(6)
    for _ in range(6):
        table.step(rng, whole_turn=False)
    wrong = live_api.request("GET", table.path, headers={"Authorization": "Bearer secretish"})
    assert wrong.status_code == 401
    _check_hashed_only(live_server.prefix, table.seats)
    log = live_server.log()
    for player in table.seats:
        assert player.token not in log
    assert "secretish" not in log
