"""CORS: off by default; `PATRICIAN_CORS_ORIGINS` lets the pages of the origins it names call
the API from a browser (a bearer token and JSON bodies; the request id and `Retry-After`
readable), and no other origin."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from litestar import Litestar
from litestar.testing import TestClient

from server.config.settings import Settings
from tests.server.live import build_app

ALLOWED = "https://bots.example.org"
PREFLIGHT = {
    "Access-Control-Request-Method": "POST",
    "Access-Control-Request-Headers": "authorization, content-type",
}


@pytest.fixture
def cors_client() -> Iterator[TestClient[Litestar]]:
    settings = Settings(embedded_workers=False, cors_origins=f"{ALLOWED}, https://b.example")
    with TestClient(build_app(settings), timeout=30) as client:
        yield client


def test_a_preflight_from_an_allowed_origin_is_let_through(
    cors_client: TestClient[Litestar],
) -> None:
    answer = cors_client.options("/api/games", headers={"Origin": ALLOWED, **PREFLIGHT})
    assert answer.status_code in (200, 204), answer.text
    assert answer.headers["access-control-allow-origin"] == ALLOWED
    assert "POST" in answer.headers["access-control-allow-methods"]
    allowed = answer.headers["access-control-allow-headers"].lower()
    assert "authorization" in allowed and "content-type" in allowed
    assert "access-control-allow-credentials" not in answer.headers


def test_an_allowed_origin_reads_the_request_id_and_retry_after(
    cors_client: TestClient[Litestar],
) -> None:
    answer = cors_client.get("/api/lobby", headers={"Origin": ALLOWED})
    assert answer.status_code == 200
    assert answer.headers["access-control-allow-origin"] == ALLOWED
    exposed = answer.headers["access-control-expose-headers"].lower()
    assert "x-request-id" in exposed and "retry-after" in exposed


def test_another_origin_gets_no_cors_headers(cors_client: TestClient[Litestar]) -> None:
    origin = {"Origin": "https://evil.example"}
    preflight = cors_client.options("/api/games", headers={**origin, **PREFLIGHT})
    assert "access-control-allow-origin" not in preflight.headers
    answer = cors_client.get("/api/lobby", headers=origin)
    assert "access-control-allow-origin" not in answer.headers


def test_cors_is_off_by_default(client: TestClient[Litestar]) -> None:
    preflight = client.options("/api/games", headers={"Origin": ALLOWED, **PREFLIGHT})
    assert "access-control-allow-origin" not in preflight.headers
    answer = client.get("/api/lobby", headers={"Origin": ALLOWED})
    assert answer.status_code == 200
    assert not [name for name in answer.headers if name.startswith("access-control-")]
