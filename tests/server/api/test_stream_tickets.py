"""Stream tickets: a browser's EventSource sends no Authorization header, so a seat's token buys
a ticket that opens one stream of one game within 60 s, as the token would, and does nothing
else. Spent by its first use (wherever that is refused), refused once spent, on another
game, or past its minute; never named in a refusal; kept only as its hash. On the embedded
fakeredis and on the real Redis, with one fake clock for the server."""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from server.config.settings import Settings
from tests.server.client import Api, Player, Table
from tests.server.live import REDIS_URL, build_app, delete_prefix, redis_client, unique_prefix
from tests.server.sse import Streamed, asgi_stream
from tests.workers.test_clocks import FakeClock

pytestmark = pytest.mark.timeout(120)


@dataclass
class Site:
    """A server (its app, its client, the fake clock it keeps time by) and a game in play."""

    app: Litestar
    client: TestClient[Litestar]
    api: Api
    clock: FakeClock
    prefix: str | None
    """The key prefix on the real Redis (None: the embedded fakeredis)."""
    table: Table

    def ticket(self, player: Player, table: Table | None = None) -> str:
        path = (table or self.table).path
        answer = self.api.request("POST", f"{path}/stream-ticket", player=player)
        assert answer.status_code == 201, answer.text
        body = answer.json()
        assert set(body) == {"ticket", "expires"}
        ticket: str = body["ticket"]
        return ticket

    def stream(self, query: str = "", headers: dict[str, str] | None = None) -> Streamed:
        path = f"{self.table.path}/stream{query}"
        streamed: Streamed = self.client.blocking_portal.call(
            asgi_stream, self.app, path, self.table.version, headers
        )
        return streamed

    def refused(self, streamed: Streamed, ticket: str, status: int, error: str) -> None:
        """A clear refusal that names no ticket."""
        assert streamed.status == status, streamed.body
        body = streamed.json()
        assert body["status"] == status and body["error"] == error, body
        assert body["request_id"] == streamed.headers["x-request-id"]
        if ticket:
            assert ticket not in streamed.body.decode()
            assert not any(ticket in value for value in streamed.headers.values())


@pytest.fixture(params=["embedded", pytest.param("redis", marks=pytest.mark.redis)])
def site(request: pytest.FixtureRequest) -> Iterator[Site]:
    clock = FakeClock()
    prefix = None if request.param == "embedded" else unique_prefix("tickets")
    settings = Settings(embedded_workers=False)
    if prefix is not None:
        settings = Settings(redis_url=REDIS_URL, prefix=prefix)
    try:
        with TestClient(build_app(settings, clock=clock), timeout=30) as client:
            api = Api(client)
            table = api.new_table(2, "towers", (), random.Random(5))
            rng = random.Random(5)
            for _ in range(3):
                table.step(rng, whole_turn=False)
            yield Site(client.app, client, api, clock, prefix, table)
    finally:
        if prefix is not None:
            delete_prefix(prefix)


def _hands(streamed: Streamed) -> list[int]:
    return [m.data["seat"] for m in streamed.messages if m.event == "hand_dealt"]


def test_a_ticket_streams_what_the_seats_token_would_and_a_spectator_sees_no_hand(
    site: Site,
) -> None:
    player = site.table.seats[0]
    by_ticket = site.stream(f"?ticket={site.ticket(player)}")
    assert by_ticket.status == 200, by_ticket.body
    assert _hands(by_ticket) == [0], "its own hand, and nobody else's"
    by_token = site.stream(headers=player.auth)
    assert by_ticket.messages == by_token.messages
    spectator = site.stream()
    assert spectator.status == 200 and _hands(spectator) == []
    assert [m.id for m in spectator.messages] != [m.id for m in by_ticket.messages]


def test_a_ticket_opens_one_stream_and_a_replayed_one_is_401_invalid_ticket(site: Site) -> None:
    ticket = site.ticket(site.table.seats[1])
    assert site.stream(f"?ticket={ticket}").status == 200
    again = site.stream(f"?ticket={ticket}")
    site.refused(again, ticket, 401, "invalid_ticket")
    assert again.headers["www-authenticate"] == "Bearer"


def test_two_openings_at_once_with_one_ticket_stream_once(site: Site) -> None:
    ticket = site.ticket(site.table.seats[0])
    path = f"{site.table.path}/stream?ticket={ticket}"
    portal = site.client.blocking_portal
    both = [portal.start_task_soon(asgi_stream, site.app, path, site.table.version) for _ in "ab"]
    statuses = sorted(future.result(timeout=20).status for future in both)
    assert statuses == [200, 401]


def test_a_ticket_for_one_game_opens_no_other_and_is_spent_by_trying(site: Site) -> None:
    player = site.table.seats[0]
    other = site.api.new_table(2, "classic", (), random.Random(6))
    ticket = site.ticket(player, other)
    site.refused(site.stream(f"?ticket={ticket}"), ticket, 401, "invalid_ticket")
    elsewhere: Streamed = site.client.blocking_portal.call(
        asgi_stream, site.app, f"{other.path}/stream?ticket={ticket}", other.version
    )
    site.refused(elsewhere, ticket, 401, "invalid_ticket")


def test_a_ticket_is_good_for_60_seconds_by_the_servers_clock(site: Site) -> None:
    player = site.table.seats[0]
    kept = site.ticket(player)
    site.clock.advance(59)
    assert site.stream(f"?ticket={kept}").status == 200
    late = site.ticket(player)
    site.clock.advance(60)
    site.refused(site.stream(f"?ticket={late}"), late, 401, "invalid_ticket")


def test_an_unknown_or_empty_ticket_is_401_invalid_ticket(site: Site) -> None:
    for ticket in ("x" * 43, "", "%00", "%ff%fe", "\u00e9" * 300):
        site.refused(site.stream(f"?ticket={ticket}"), ticket, 401, "invalid_ticket")


def test_a_ticket_beside_an_authorization_header_or_another_ticket_is_400_and_stays_good(
    site: Site,
) -> None:
    player = site.table.seats[0]
    ticket = site.ticket(player)
    for headers in (player.auth, {"Authorization": "Bearer nobody"}, {"Authorization": "x"}):
        both = site.stream(f"?ticket={ticket}", headers)
        site.refused(both, ticket, 400, "bad_request")
        assert both.json()["field"] == "ticket"
    twice = site.stream(f"?ticket={ticket}&ticket={ticket}")
    site.refused(twice, ticket, 400, "bad_request")
    assert twice.json()["field"] == "ticket"
    assert site.stream(f"?ticket={ticket}").status == 200


def test_a_ticket_is_no_bearer_token_and_opens_nothing_but_the_stream(site: Site) -> None:
    """Sent as a token it is unknown (401); on other reads it is not looked at (they answer
    a spectator) and not spent; it authorizes no command."""
    table = site.table
    assert table.pending is not None
    player = table.seats[table.pending]
    ticket = site.ticket(player)
    as_token = {"Authorization": f"Bearer {ticket}"}
    board = site.api.board(table.game_id, player)
    command = {"expected_version": board["version"], "commands": board["legal_commands"][:1]}
    for method, path, body in [
        ("GET", table.path, None),
        ("GET", f"{table.path}/events", None),
        ("POST", f"{table.path}/commands", {**command, "command_id": "c1"}),
        ("POST", f"{table.path}/preview", command),
        ("POST", f"{table.path}/stream-ticket", None),
    ]:
        answer = site.client.request(method, path, json=body, headers=as_token)
        assert answer.status_code == 401 and answer.json()["error"] == "unauthorized", path
        assert ticket not in answer.text
    for path in (table.path, f"{table.path}/events", f"{table.path}/replay"):
        read = site.client.get(path, params={"ticket": ticket})
        assert read.status_code == 200
        assert read.json().get("viewer") is None, "a spectator's answer"
    assert site.api.board(table.game_id)["version"] == board["version"], "no command was sent"
    assert _hands(site.stream(f"?ticket={ticket}")) == [board["viewer"]], "still good"


def test_a_ticket_needs_a_token_and_a_game_and_takes_no_body(site: Site) -> None:
    path = f"{site.table.path}/stream-ticket"
    player = site.table.seats[0]
    assert site.api.request("POST", path).json()["error"] == "unauthorized"
    wrong = site.api.request("POST", path, headers={"Authorization": "Bearer nobody"})
    assert wrong.status_code == 401
    missing = site.api.request("POST", "/api/games/gnone/stream-ticket", player=player)
    assert missing.status_code == 404 and missing.json()["error"] == "game_not_found"
    body = site.api.request("POST", path, player=player, json={"ticket": "mine"})
    assert body.status_code == 400 and body.json()["field"] == "body"


def test_a_player_without_a_seat_gets_a_spectators_stream_by_ticket(site: Site) -> None:
    """A ticket streams what its player's token would: for someone not at the table, what
    anyone may see."""
    outsider = site.api.create_player("Olga")
    streamed = site.stream(f"?ticket={site.ticket(outsider)}")
    assert streamed.status == 200 and _hands(streamed) == []
    assert streamed.messages == site.stream().messages


@pytest.mark.redis
@pytest.mark.parametrize("site", ["redis"], indirect=True)
def test_the_store_keeps_only_a_tickets_hash_for_a_minute_and_drops_it_once_used(
    site: Site,
) -> None:
    assert site.prefix is not None
    ticket = site.ticket(site.table.seats[0])
    redis = redis_client()
    try:
        key = f"{site.prefix}:stream-ticket:{hashlib.sha256(ticket.encode()).hexdigest()}"
        assert 0 < redis.ttl(key) <= 60
        stored = [
            name + (redis.dump(name) or b"") for name in redis.scan_iter(match=f"{site.prefix}:*")
        ]
        assert not any(ticket.encode() in chunk for chunk in stored), "kept in clear"
        value = redis.get(key)
        assert value is not None and site.table.game_id.encode() in value
        assert site.table.seats[0].player_id.encode() in value
        assert site.stream(f"?ticket={ticket}").status == 200
        assert redis.exists(key) == 0
    finally:
        redis.close()
