"""`/readyz`: ready when Redis answers, holds the store's scripts and a worker was seen
recently; otherwise a 503 naming the check that failed. `/healthz` stays as it was."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
import redis
from litestar import Litestar
from litestar.testing import TestClient
from rq.worker import Worker

from server.config.settings import Settings
from server.schema.errors import ErrorBody
from store.scripts import ScriptName, sha
from tests.server.live import build_app
from tests.store.servers import RedisServer
from workers.settings import queue_of


def checks(answer: Any) -> dict[str, bool]:
    return {check["name"]: check["ok"] for check in answer.json()["checks"]}


def refusal(answer: Any) -> ErrorBody:
    assert answer.status_code == 503, answer.text
    return msgspec.json.decode(answer.content, type=ErrorBody)


@pytest.fixture
def beating(request: pytest.FixtureRequest) -> Iterator[Any]:
    """Make a worker beat on a queue (RQ's own registration, as `patrician worker` keeps it),
    and end it afterwards."""
    made: list[Worker] = []

    def beat(connection: redis.Redis, prefix: str) -> Worker:
        worker = Worker([queue_of(connection, prefix)], connection=connection,
                        name=f"test-{uuid.uuid4().hex[:8]}")  # fmt: skip
        worker.register_birth()  # type: ignore[no-untyped-call]
        worker.heartbeat()
        made.append(worker)
        return worker

    yield beat
    for worker in made:
        try:
            worker.register_death()  # type: ignore[no-untyped-call]
            worker.connection.delete(worker.key)
        except redis.exceptions.ConnectionError:
            pass  # its Redis is gone, and its keys with it


def test_the_embedded_server_with_its_workers_is_ready() -> None:
    with TestClient(build_app(Settings()), timeout=30) as client:
        answer = client.get("/readyz")
        assert answer.status_code == 200, answer.text
        assert answer.json()["status"] == "ready"
        assert checks(answer) == {"redis": True, "scripts": True, "workers": True}


def test_a_server_whose_workers_do_not_run_is_not_ready_and_says_so_but_lives(
    client: TestClient[Litestar],
) -> None:
    body = refusal(client.get("/readyz"))
    assert (body.error, body.field) == ("not_ready", "workers")
    assert "workers" in body.message and body.request_id
    assert client.get("/healthz").json() == {"status": "ok", "redis": "ok"}


@pytest.mark.redis
def test_a_server_on_redis_is_ready_once_a_worker_was_seen(
    redis_url: str, redis_prefix: str, beating: Any
) -> None:
    app = build_app(Settings(redis_url=redis_url, prefix=redis_prefix))
    with TestClient(app, timeout=30) as client:
        body = refusal(client.get("/readyz"))
        assert body.field == "workers"
        beating(redis.Redis.from_url(redis_url), redis_prefix)
        answer = client.get("/readyz")
        assert answer.status_code == 200, answer.text
        assert checks(answer) == {"redis": True, "scripts": True, "workers": True}


@pytest.mark.redis
def test_scripts_a_restarted_redis_forgot_are_loaded_and_a_redis_gone_is_named(
    tmp_path: Path, beating: Any
) -> None:
    with RedisServer(tmp_path) as server:
        url = f"redis://127.0.0.1:{server.port}/0"
        direct = redis.Redis.from_url(url)
        app = build_app(Settings(redis_url=url, prefix="ready"))
        with TestClient(app, timeout=30) as client:
            beating(direct, "ready")
            direct.script_flush()  # as after a restart without the scripts
            answer = client.get("/readyz")
            assert answer.status_code == 200, answer.text
            (scripts,) = [c for c in answer.json()["checks"] if c["name"] == "scripts"]
            assert scripts["detail"].startswith("loaded now")
            names: tuple[ScriptName, ...] = ("append", "snapshot", "load")
            assert direct.script_exists(*(sha(name) for name in names)) == [True] * 3
            direct.close()
            server.kill()
            body = refusal(client.get("/readyz"))
            assert (body.error, body.field) == ("not_ready", "redis")
