"""One request's id, end to end: the log lines of the HTTP request, of the append it made, of
the dispatch of its outbox notice, of the job that followed and of the webhook delivery it
caused all carry it (`patrician serve` on its embedded store, as `make run` starts it, its
workers in its process; a real webhook receiver on loopback; the log as the process wrote
it)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.server.client import Api
from tests.server.live import LiveServer, unique_prefix
from tests.workers.sink import Sink


@pytest.fixture
def sink() -> Iterator[Sink]:
    with Sink() as receiver:
        yield receiver


def log_lines(text: str) -> list[dict[str, Any]]:
    found = []
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            found.append(record)
    return found


def test_a_requests_id_is_in_the_log_lines_of_everything_it_caused(
    sink: Sink, tmp_path: Path
) -> None:
    env = {"PATRICIAN_WEBHOOK_ALLOW": "127.0.0.1", "PATRICIAN_ACCESS_LOG": "1"}
    with (
        LiveServer(unique_prefix("trace"), tmp_path, redis_url=None, env=env) as server,
        httpx.Client(base_url=server.url, timeout=30) as client,
    ):
        api = Api(client)
        mary = api.create_player("Mary")
        hook = {"webhook": {"url": sink.url("/mary")}}
        answer = api.ok(api.request("PUT", "/api/me/notifications", player=mary, json=hook))
        sink.secrets["/mary"] = answer["webhook"]["secret"]
        traced = f"trace-{uuid.uuid4().hex}"
        # a creation that a bot fills: the game starts, and Mary is told by her webhook
        created = client.post(
            "/api/games",
            json={"seats": 2, "bots": [{"level": "random"}]},
            headers={**mary.auth, "X-Request-ID": traced},
        )
        assert created.status_code == 201, created.text
        assert created.headers["x-request-id"] == traced
        game_id = created.json()["game_id"]
        (started,) = sink.wait("/mary", 1)
        assert started["type"] == "game.started"
        deadline = time.monotonic() + 10
        ours: list[dict[str, Any]] = []
        while time.monotonic() < deadline:  # the delivery's line comes after the delivery
            ours = [
                r for r in log_lines(server.log_path.read_text()) if r.get("request_id") == traced
            ]
            if any(r["event"] == "delivery" for r in ours):
                break
            time.sleep(0.1)
    events = {record["event"] for record in ours}
    assert {"request", "appended", "delivery"} <= events, ours
    batches = [r for r in log_lines(server.log_path.read_text()) if r["event"] == "followed"]
    assert any(traced in r["request_ids"] for r in batches), "its notice's batch names it"
    (request,) = [r for r in ours if r["event"] == "request"]
    assert (request["method"], request["route"], request["status"]) == ("POST", "/api/games", 201)
    (appended,) = [r for r in ours if r["event"] == "appended"]
    assert (appended["kind"], appended["game_id"]) == ("create", game_id)
    deliveries = [r for r in ours if r["event"] == "delivery"]
    told = {(r["channel"], r["status"], r["type"], r["game_id"]) for r in deliveries}
    assert ("webhook", "delivered", "game.started", game_id) in told
    assert not [r for r in deliveries if "url" in r or "127.0.0.1" in json.dumps(r)]
