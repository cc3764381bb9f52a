"""The command lane (`server.api.command_lane`) answers `POST /api/games/{id}/commands` exactly as
the Litestar route it stands in front of: every kind of request is sent both ways, and the
status, the headers and the body must be the same but for the request id.

The Litestar route is reached by the same path with a trailing slash, which Litestar routes to
the same handler and the lane leaves to it; a spy on the lane proves which one served.
"""

from __future__ import annotations

import asyncio
import gzip
import random
from collections.abc import Iterator
from typing import Any

import httpx
import msgspec
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from server.api import command_lane
from server.config.settings import Settings
from tests.server.client import Api, Player, Table, command_id
from tests.server.live import build_app
from tests.server.sse import asgi_stream

IGNORED_HEADERS = {"x-request-id", "date"}


class Lanes:
    """One app; each request sent through the lane and through Litestar's own route."""

    def __init__(self, client: TestClient[Litestar], served: list[str]) -> None:
        self.client, self.served = client, served
        self.api = Api(client)

    def both(
        self, path: str, *, content: bytes, headers: dict[str, str]
    ) -> tuple[httpx.Response, httpx.Response]:
        before = len(self.served)
        lane = self.client.post(path, content=content, headers=headers)
        assert len(self.served) == before + 1, "the lane did not serve it"
        where, mark, query = path.partition("?")
        route = self.client.post(where + "/" + mark + query, content=content, headers=headers)
        assert len(self.served) == before + 1, "the lane served the route's request"
        return lane, route


@pytest.fixture
def lanes(monkeypatch: pytest.MonkeyPatch) -> Iterator[Lanes]:
    served: list[str] = []
    body = command_lane._body

    async def counted(scope: Any, *args: Any) -> bytes:  # every request the lane serves
        served.append(scope["path"])
        return await body(scope, *args)

    monkeypatch.setattr(command_lane, "_body", counted)
    app = build_app(Settings(embedded_workers=False, max_body=4096))
    with TestClient(app, timeout=30) as client:
        yield Lanes(client, served)


def _same(
    lane: httpx.Response, route: httpx.Response, *, ignored: frozenset[str] = frozenset()
) -> None:
    assert lane.status_code == route.status_code, (lane.text, route.text)
    ignored |= IGNORED_HEADERS
    shown = {k: v for k, v in lane.headers.items() if k not in ignored}
    assert shown == {k: v for k, v in route.headers.items() if k not in ignored}
    assert lane.headers["x-request-id"] and route.headers["x-request-id"]
    if lane.status_code != 200:
        mine, theirs = lane.json(), route.json()
        assert mine.pop("request_id") == lane.headers["x-request-id"]
        assert theirs.pop("request_id") == route.headers["x-request-id"]
        assert mine == theirs


def _table(lanes: Lanes) -> Table:
    return lanes.api.new_table(2, "towers", (), random.Random(11))


def _body(table: Table, commands: Any, version: int | None = None, cid: str = "") -> bytes:
    return msgspec.json.encode(
        {
            "expected_version": table.version if version is None else version,
            "command_id": cid or command_id(),
            "commands": commands,
        }
    )


def _legal(lanes: Lanes, table: Table, seat: int) -> list[Any]:
    board = lanes.api.board(table.game_id, table.seats[seat])
    return list(board["legal_commands"])


@pytest.mark.parametrize(
    ("case", "status"),
    [
        ("truncated JSON", 400),
        ("empty body", 400),
        ("a string for a number", 400),
        ("an unknown field", 400),
        ("an unknown command type", 400),
        ("a form, not JSON", 415),
        ("a body over the limit", 413),
        ("no token", 401),
        ("not a bearer token", 401),
        ("an unknown token", 401),
        ("another seat's decision", 403),
        ("a player without a seat", 403),
        ("no such game", 404),
        ("a stale version", 409),
        ("a command the rules refuse", 422),
        ("an insane request id", 422),
        ("an include of something else", 400),
        ("the board included twice", 400),
    ],
)
def test_every_refusal_is_the_routes_refusal(lanes: Lanes, case: str, status: int) -> None:
    table = _table(lanes)
    pending = table.pending
    assert pending is not None
    mover, waiter = table.seats[pending], table.seats[1 - pending]
    legal = _legal(lanes, table, pending)
    headers = {**mover.auth, "Content-Type": "application/json"}
    path = f"{table.path}/commands"
    content = _body(table, legal[:1])
    match case:
        case "truncated JSON":
            content = b'{"expected_version": 1'
        case "empty body":
            content = b""
        case "a string for a number":
            content = _body(table, legal[:1]).replace(
                f'"expected_version":{table.version}'.encode(),
                f'"expected_version":"{table.version}"'.encode(),
            )
        case "an unknown field":
            content = content[:-1] + b',"hurry":true}'
        case "an unknown command type":
            content = _body(table, [{"type": "win"}])
        case "a form, not JSON":
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        case "a body over the limit":
            content = b"{" + b" " * 5000 + b"}"
        case "no token":
            del headers["Authorization"]
        case "not a bearer token":
            headers["Authorization"] = "Basic dXNlcjpwYXNz"
        case "an unknown token":
            headers["Authorization"] = "Bearer nobody-has-this"
        case "another seat's decision":
            headers.update(waiter.auth)
        case "a player without a seat":
            headers.update(lanes.api.create_player("Stranger").auth)
        case "no such game":
            path = "/api/games/gnosuchgame000000000/commands"
        case "a stale version":
            content = _body(table, legal[:1], version=table.version - 1)
        case "a command the rules refuse":
            content = _body(table, [{"type": "skip"}])
        case "an insane request id":
            headers["X-Request-ID"] = 'forged"\nline'
            content = _body(table, [{"type": "skip"}])
        case "an include of something else":
            path += "?include=record"
        case "the board included twice":
            path += "?include=board&include=board"
    lane, route = lanes.both(path, content=content, headers=headers)
    _same(lane, route)
    assert lane.status_code == status, lane.text
    assert "forged" not in lane.headers["x-request-id"]
    assert lanes.api.board(table.game_id)["version"] == table.version  # nothing changed


def test_an_accepted_command_is_answered_as_the_route_answers_it_told_again(
    lanes: Lanes,
) -> None:
    """The lane accepts a turn; the same command id sent to the route gets the first result
    again (`repeated`), which must be the lane's answer but for that flag."""
    table = _table(lanes)
    assert table.pending is not None
    seat = table.pending
    headers = {
        **table.seats[seat].auth,
        "Content-Type": "application/json",
        "X-Request-ID": "my-own-id-1",
        "Accept-Encoding": "identity",
    }
    content = _body(table, _legal(lanes, table, seat)[:1], cid="lane-turn-1")
    lane, route = lanes.both(f"{table.path}/commands", content=content, headers=headers)
    _same(lane, route, ignored=frozenset({"content-length"}))  # "repeated": true is longer
    assert lane.status_code == 200 and lane.headers["x-request-id"] == "my-own-id-1"
    assert int(lane.headers["content-length"]) == len(lane.content)
    first, again = lane.json(), route.json()
    assert (first.pop("repeated"), again.pop("repeated")) == (False, True)
    assert first == again
    assert lanes.api.board(table.game_id)["version"] == first["version"]


def test_a_command_answered_with_the_board_is_answered_so_by_both(lanes: Lanes) -> None:
    table = _table(lanes)
    assert table.pending is not None
    seat = table.pending
    headers = {**table.seats[seat].auth, "Content-Type": "application/json",
               "Accept-Encoding": "identity"}  # fmt: skip
    content = _body(table, _legal(lanes, table, seat)[:1], cid="lane-board-1")
    path = f"{table.path}/commands?include=board"
    lane, route = lanes.both(path, content=content, headers=headers)
    _same(lane, route, ignored=frozenset({"content-length"}))
    first, again = lane.json(), route.json()
    assert first["board"] == again["board"] == lanes.api.board(table.game_id, table.seats[seat])


def test_a_large_answer_is_gzipped_for_a_client_that_takes_it_as_the_route_gzips_it(
    lanes: Lanes,
) -> None:
    table = _table(lanes)
    rng = random.Random(2)
    while table.pending is not None:  # until a command's answer is over 1 KiB (the game's end)
        seat = table.pending
        headers = {**table.seats[seat].auth, "Content-Type": "application/json"}
        headers["Accept-Encoding"] = "gzip"
        content = _body(table, [rng.choice(_legal(lanes, table, seat))])
        lane, route = lanes.both(f"{table.path}/commands", content=content, headers=headers)
        _same(lane, route, ignored=frozenset({"content-length"}))  # told again: "repeated"
        table.note(seat, lane.json())
        if lane.headers.get("content-encoding") == "gzip":
            assert lane.headers["vary"] == "Accept-Encoding"
            raw = lanes.client.post(
                f"{table.path}/commands", content=content,
                headers={**headers, "Accept-Encoding": "identity"},
            )  # fmt: skip
            assert "content-encoding" not in raw.headers and len(raw.content) >= 1024
            return
    pytest.fail("no answer was large enough to be gzipped")


def test_a_client_over_its_budget_of_requests_in_flight_is_refused_by_both_alike() -> None:
    app = build_app(Settings(embedded_workers=False, max_in_flight=1))
    with TestClient(app, timeout=30) as client:
        api = Api(client)
        table = api.new_table(2, "towers", (), random.Random(5))
        mover: Player = table.seats[table.pending or 0]
        body = _body(table, [{"type": "skip"}])

        async def refused_while_a_stream_is_open(path: str) -> tuple[int, dict[str, str], Any]:
            held = asyncio.ensure_future(
                asgi_stream(app, f"{table.path}/stream", 10**6, timeout=1.0)
            )
            await asyncio.sleep(0.3)
            answer = await _asgi_post(app, path, body, mover.auth)
            with pytest.raises(TimeoutError):
                await held
            return answer

        lane = client.blocking_portal.call(refused_while_a_stream_is_open, f"{table.path}/commands")
        route = client.blocking_portal.call(
            refused_while_a_stream_is_open, f"{table.path}/commands/"
        )
    assert lane[0] == route[0] == 429
    assert {k: v for k, v in lane[1].items() if k not in IGNORED_HEADERS} == {
        k: v for k, v in route[1].items() if k not in IGNORED_HEADERS
    }
    assert lane[1]["retry-after"] == "1"
    mine, theirs = lane[2], route[2]
    mine.pop("request_id"), theirs.pop("request_id")
    assert mine == theirs


async def _asgi_post(
    app: Any, path: str, body: bytes, headers: dict[str, str]
) -> tuple[int, dict[str, str], Any]:
    """One POST straight to the app's ASGI entry, from the stream helper's client address."""
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "POST",
        "scheme": "http", "path": path, "raw_path": path.encode(), "root_path": "",
        "query_string": b"", "client": ("127.0.0.1", 50001), "server": ("testserver", 80),
        "headers": [(b"host", b"testserver"), (b"content-type", b"application/json")]
        + [(k.lower().encode(), v.encode()) for k, v in headers.items()],
        "state": {},
    }  # fmt: skip
    got: dict[str, Any] = {"body": b""}
    sent = False

    async def receive() -> dict[str, Any]:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        await asyncio.sleep(30)
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            got["status"] = message["status"]
            got["headers"] = {k.decode(): v.decode() for k, v in message["headers"]}
        else:
            got["body"] += message.get("body", b"")

    await app(scope, receive, send)
    raw = got["body"]
    if got["headers"].get("content-encoding") == "gzip":
        raw = gzip.decompress(raw)
    return got["status"], got["headers"], msgspec.json.decode(raw)
