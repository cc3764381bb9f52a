"""Rate limits on the open doors (player and game creation, joins, audits), counted per client
address in Redis and so shared by every API process; the budget of requests in flight per client in
one process; both answered 429 with `Retry-After` and the error body of every refusal."""

from __future__ import annotations

import asyncio
from typing import Any

import msgspec
import pytest
from click.testing import CliRunner
from litestar import Litestar
from litestar.testing import TestClient

from server.cli.main import main
from server.config.settings import Settings
from server.schema.errors import ErrorBody
from server.transport.rate_limits import ClientAddress
from tests.server.client import Api
from tests.server.live import build_app
from tests.server.sse import asgi_stream


def limited(answer: Any) -> ErrorBody:
    assert answer.status_code == 429, answer.text
    assert 1 <= int(answer.headers["retry-after"]) <= 60
    body = msgspec.json.decode(answer.content, type=ErrorBody)
    assert body.error == "rate_limited" and body.request_id == answer.headers["x-request-id"]
    return body


def test_players_beyond_the_limit_from_one_address_are_refused_until_the_window_ends() -> None:
    app = build_app(Settings(embedded_workers=False, rate_players=2))
    with TestClient(app, timeout=30) as client:
        api = Api(client)
        mary, _ann = api.create_player("Mary"), api.create_player("Ann")
        body = limited(client.post("/api/players", json={"name": "Eve"}))
        assert "2 new players per 60 s" in body.message
        # nothing was made, and the other doors are not this one's
        game = api.create_game(mary, 2)
        assert api.board(game["game_id"], mary)["version"] >= 1


def test_joins_and_games_have_limits_of_their_own() -> None:
    app = build_app(Settings(embedded_workers=False, rate_games=1, rate_joins=1))
    with TestClient(app, timeout=30) as client:
        api = Api(client)
        mary, ann, eve = (api.create_player(name) for name in ("Mary", "Ann", "Eve"))
        game = api.create_game(mary, 3)
        limited(client.post("/api/games", json={"seats": 2}, headers=mary.auth))
        api.join(ann, game["game_id"], game["invite_code"])
        body = {"invite_code": game["invite_code"]}
        answer = client.post(f"/api/games/{game['game_id']}/join", json=body, headers=eve.auth)
        limited(answer)
        assert len(api.board(game["game_id"])["joined"]) == 2  # Eve's join changed nothing


def test_audits_have_the_tightest_budget_and_one_beyond_it_is_refused_before_it_is_read() -> None:
    app = build_app(Settings(embedded_workers=False, rate_audits=1))
    with TestClient(app, timeout=30) as client:
        first = client.post(
            "/api/audit", content=b"{}", headers={"content-type": "application/json"}
        )
        assert first.status_code != 429, first.text  # audited (and refused as no record)
        body = limited(client.post("/api/audit", content=b"{}"))
        assert "1 audits per 60 s" in body.message


@pytest.mark.redis
def test_the_limit_is_shared_by_every_api_process_of_one_redis(
    redis_url: str, redis_prefix: str
) -> None:
    """Two apps (two server processes) on one Redis count one address's players together."""
    settings = Settings(redis_url=redis_url, prefix=redis_prefix, rate_players=3)
    with (
        TestClient(build_app(settings), timeout=30) as one,
        TestClient(build_app(settings), timeout=30) as two,
    ):
        api = Api(one, two)  # in turn: two to the first, one to the second
        for name in ("Mary", "Ann", "Eve"):
            api.create_player(name)
        limited(one.post("/api/players", json={"name": "Bob"}))
        limited(two.post("/api/players", json={"name": "Bob"}))


def test_a_client_with_too_many_requests_in_flight_is_refused_and_others_are_not() -> None:
    """A budget of one request in flight: a second stream from the same address is refused
    while the first stays open, another address is served, and once the first ends the
    address is served again."""
    app = build_app(Settings(embedded_workers=False, max_in_flight=1))
    with TestClient(app, timeout=30) as client:
        api = Api(client)
        mary = api.create_player("Mary")
        game = api.create_game(mary, 2)
        stream = f"/api/games/{game['game_id']}/stream"

        async def stays_open(seconds: float) -> bool:
            """Whether a stream opened now is served (it stays open, waiting for events)."""
            try:
                await asgi_stream(app, stream, 999, timeout=seconds)
            except TimeoutError:
                return True
            return False

        async def two_streams() -> tuple[bool, Any]:
            held = asyncio.ensure_future(stays_open(1.5))
            await asyncio.sleep(0.3)  # the first is open and waits for events
            refused = await asgi_stream(app, stream, 999, timeout=5)
            return await held, refused

        first_open, refused = client.blocking_portal.call(two_streams)
        assert first_open
        assert refused.status == 429 and refused.headers["retry-after"] == "1"
        body = msgspec.json.decode(refused.body, type=ErrorBody)
        assert (body.error, body.message) == (
            "rate_limited", "at most 1 requests at once from one address"
        )  # fmt: skip
        assert client.get("/api/lobby").status_code == 200  # the test client's own address
        assert client.blocking_portal.call(stays_open, 0.5)  # the first one's place is free


@pytest.mark.parametrize(
    ("peer", "forwarded", "trusted", "client"),
    [
        ("10.0.0.5", "203.0.113.9", "", "10.0.0.5"),  # no trusted proxy: the header is not read
        ("10.0.0.5", "203.0.113.9", "10.0.0.0/8", "203.0.113.9"),
        ("10.0.0.5", "198.51.100.1, 203.0.113.9, 10.0.0.7", "10.0.0.0/8", "203.0.113.9"),
        ("192.0.2.1", "203.0.113.9", "10.0.0.0/8", "192.0.2.1"),  # a peer that is no proxy
        ("10.0.0.5", "junk, 203.0.113.9", "10.0.0.0/8", "203.0.113.9"),
        ("10.0.0.5", "203.0.113.9, junk", "10.0.0.0/8", "10.0.0.5"),  # forged after the proxy
        ("::1", "2001:db8::1", "::1", "2001:db8::1"),
    ],
)
def test_the_client_behind_trusted_proxies_is_the_last_address_they_did_not_add(
    peer: str, forwarded: str, trusted: str, client: str
) -> None:
    scope = {"client": (peer, 40000), "headers": [(b"x-forwarded-for", forwarded.encode())]}
    assert ClientAddress(trusted).of(scope) == client


def test_a_trusted_proxy_that_is_no_address_stops_the_start() -> None:
    with pytest.raises(ValueError, match=r"not an address or a network: 'proxy\.example'"):
        Settings(trusted_proxies="10.0.0.1, proxy.example")


def test_the_defaults_do_not_throttle_a_busy_test_or_benchmark(
    client: TestClient[Litestar],
) -> None:
    api = Api(client)
    for number in range(60):
        api.create_player(f"p{number}")


@pytest.mark.parametrize(
    ("variable", "given", "said"),
    [
        ("PATRICIAN_RATE_PLAYERS", "lots", "PATRICIAN_RATE_PLAYERS must be a whole number"),
        ("PATRICIAN_RATE_WINDOW_SECONDS", "0", "of 1 or more, not '0'"),
        ("PATRICIAN_MAX_IN_FLIGHT", "-3", "PATRICIAN_MAX_IN_FLIGHT must be a whole number"),
        ("PATRICIAN_TRUSTED_PROXIES", "10.0.0.1, proxy", "not an address or a network: 'proxy'"),
    ],
)
def test_a_limit_that_cannot_be_used_stops_the_server_in_one_line(
    variable: str, given: str, said: str
) -> None:
    outcome = CliRunner().invoke(main, ["serve"], env={variable: given})
    assert outcome.exit_code == 2
    assert said in outcome.output and "Traceback" not in outcome.output


def test_changes_of_notification_settings_have_a_budget_so_nobody_mails_strangers_through_it() -> (
    None
):
    app = build_app(Settings(embedded_workers=False, rate_notifications=1))
    with TestClient(app, timeout=30) as client:
        api = Api(client)
        me = api.create_player("Mary")
        first = {"email": {"address": "mary@example.org"}}
        api.ok(api.request("PUT", "/api/me/notifications", player=me, json=first))
        second = {"email": {"address": "stranger@example.org"}}
        body = limited(api.request("PUT", "/api/me/notifications", player=me, json=second))
        assert "1 changes of notification settings per 60 s" in body.message
        shown = api.ok(api.request("GET", "/api/me/notifications", player=me))
        assert shown["email"]["address"] == "mary@example.org"  # the refused one changed nothing
