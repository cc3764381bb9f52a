"""The composition root: how the app is built, its limits, and what it answers when its
store is out of reach."""

from __future__ import annotations

import time
import warnings

from litestar.testing import TestClient

from server.app import MAX_BODY, Settings, create_app
from tests.processes import free_port
from tests.server.live import build_app


def test_the_body_limit_is_64_kib() -> None:
    assert MAX_BODY == Settings().max_body == 64 * 1024


def test_the_app_builds_without_deprecation_warnings() -> None:
    """Litestar 2.25 deprecates inferred dependencies, path parameters and bodies: each
    handler declaration below stops working in Litestar 3 (the suite builds the app through
    `build_app`, which silences them, to reach everything else)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        create_app(Settings())
    messages = sorted({str(w.message).split("] ", 1)[-1][:100] for w in caught})
    assert not messages, "\n".join(messages)


def test_an_unreachable_store_is_503_unavailable_quickly() -> None:
    """The store cannot be reached: reads and commands answer 503 `unavailable` (retry with
    the same command_id), /healthz too, and fast rather than hanging."""
    app = build_app(Settings(redis_url=f"redis://127.0.0.1:{free_port()}/0"))
    with TestClient(app, timeout=30) as client:
        started = time.monotonic()
        for method, path, body in [
            ("GET", "/healthz", None),
            ("GET", "/api/games/g123", None),
            ("POST", "/api/players", {"name": "x"}),
        ]:
            answer = client.request(method, path, json=body)
            assert answer.status_code == 503, answer.text
            assert answer.json()["error"] == "unavailable"
        assert time.monotonic() - started < 10


def test_every_answer_carries_a_request_id_and_a_sane_one_sent_comes_back() -> None:
    """A success, a refusal by a handler and a routing error each carry `X-Request-ID`: a new
    one per request, or the client's own when it is at most 64 letters and digits."""
    with TestClient(build_app(), timeout=30) as client:
        created = client.post("/api/players", json={"name": "Mary"})
        answers = [
            created,
            client.get("/api/lobby"),
            client.get("/api/games/g404"),
            client.get("/no/such/path"),
            client.delete("/api/lobby"),
        ]
        ids = [answer.headers.get("x-request-id") for answer in answers]
        assert all(ids) and len(set(ids)) == len(ids), ids
        for path in ("/api/lobby", "/api/games/g404", "/no/such/path"):
            mine = client.get(path, headers={"X-Request-ID": "abc123"})
            assert mine.headers["x-request-id"] == "abc123", path
            for odd in (b"a b;c", b"\xe9t\xe9", b"x" * 65):
                answer = client.get(path, headers={b"X-Request-ID": odd})
                (echoed,) = [v for k, v in answer.headers.raw if k.lower() == b"x-request-id"]
                assert echoed not in (odd, b""), (path, odd)
