"""The composition root: how the app is built, its limits, and what it answers when its
store is out of reach."""

from __future__ import annotations

import time
import uuid
import warnings
from pathlib import Path

from litestar.testing import TestClient

from server.app import create_app
from server.config.settings import Settings
from tests.processes import free_port
from tests.server.live import LiveServer, build_app, unique_prefix
from tests.store.servers import RedisServer


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
    one per request, or the client's own when it looks like an id (a UUID, a ULID, up to 64
    letters, digits and `.` `_` `:` `-`)."""
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
            for sane in (
                "abc123",
                str(uuid.uuid4()),
                "01ARZ3NDEKTSV4RRFFQ69G5FAV",
                "req-7.retry_2:a",
                "x" * 64,
            ):
                mine = client.get(path, headers={"X-Request-ID": sane})
                assert mine.headers["x-request-id"] == sane, (path, sane)
            for odd in (b"a b;c", b"\xe9t\xe9", b"x" * 65, b"-x", b'a"b', b"a\tb"):
                answer = client.get(path, headers={b"X-Request-ID": odd})
                (echoed,) = [v for k, v in answer.headers.raw if k.lower() == b"x-request-id"]
                assert echoed not in (odd, b""), (path, odd)


def test_a_store_that_refuses_the_password_is_named_in_the_log_without_the_password(
    tmp_path: Path,
) -> None:
    """`patrician serve` still starts (the store may come back), /healthz says unavailable,
    and the log says why: the error Redis gave, with the URL but not its password."""
    with RedisServer(tmp_path, "--requirepass", "the-right-one") as redis_server:
        url = f"redis://:a-wrong-password@127.0.0.1:{redis_server.port}/0"
        server = LiveServer(unique_prefix(), tmp_path, url)
        try:
            server.start(ready_status=503)
        finally:
            server.stop()
        logged = server.log()
    assert "the store does not answer" in logged
    assert "invalid username-password pair" in logged, logged
    assert "a-wrong-password" not in logged and f"127.0.0.1:{redis_server.port}" in logged
