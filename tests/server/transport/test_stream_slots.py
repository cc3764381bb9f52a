"""A live stream holds a place of its client's budget of requests in flight
(`PATRICIAN_MAX_IN_FLIGHT`, `server.transport.edge`) only while the client follows it: once
the client closes it, the place is free at once, under either ASGI server, not when the next
keep-alive comment would have found the connection gone (15 to 30 s later, under uvicorn,
when the client's close came as a plain end of its input: `server.transport.joined_writes`)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from server.transport.serving import SERVERS
from tests.server.live import LiveServer, a_game_followed, serving

PROMPTLY = 5.0
"""Seconds the freed place may take at most: well under the first keep-alive (15 s)."""


@pytest.fixture(params=SERVERS)
def one_in_flight(
    request: pytest.FixtureRequest, redis_url: str, tmp_path: Path
) -> Iterator[LiveServer]:
    """`patrician serve` under each ASGI server, one request in flight per client."""
    env = {"PATRICIAN_SERVER": request.param, "PATRICIAN_MAX_IN_FLIGHT": "1"}
    yield from serving("slots", tmp_path, redis_url, env=env)


def _seconds_until_served(http: httpx.Client, path: str) -> float:
    """How long until `path` is answered 200 rather than 429 (PROMPTLY and a bit at most)."""
    started = time.monotonic()
    while (status := http.get(path).status_code) == 429:
        if time.monotonic() - started > PROMPTLY:
            break
        time.sleep(0.02)
    assert status in (200, 429), status
    return time.monotonic() - started if status == 200 else float("inf")


@pytest.mark.redis
def test_a_stream_the_client_closed_frees_its_place_in_flight_at_once(
    one_in_flight: LiveServer,
) -> None:
    """A follower up to date (nothing to send it) hangs up: the same address's next
    requests, /healthz too, are served within moments, not refused for half a minute."""
    with httpx.Client(base_url=one_in_flight.url, timeout=10) as http:
        with a_game_followed(one_in_flight.url) as stream:
            assert stream.headers["content-type"].startswith("text/event-stream")
            held = http.get("/healthz")
            assert held.status_code == 429, "the open stream holds the one place"
        waited = _seconds_until_served(http, "/healthz")
        assert waited < PROMPTLY, f"still refused {PROMPTLY} s after the stream was closed"
        assert http.get("/api/lobby").status_code == 200
