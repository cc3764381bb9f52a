"""`/metrics`: requests by route template and status, refusals by code, appends, the gauges
read from Redis at scrape time, nothing secret in it, and the counts of several processes
added up in multiprocess mode (real `patrician serve` and `patrician worker` processes)."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import httpx
import pytest
import redis
from litestar import Litestar
from litestar.testing import TestClient
from prometheus_client.parser import text_string_to_metric_families

from server.config.settings import Settings
from store.keys import KeySpace
from store.timers import timers_key
from tests.processes import stop_process
from tests.server.client import Api
from tests.server.live import LiveServer, build_app
from workers.follower import Follower, dead_letters_key
from workers.settings import queue_of

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def samples(text: str) -> Samples:
    """Every sample of an exposition by name and labels."""
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def value(found: Samples, name: str, **labels: str) -> float:
    return found.get((name, frozenset(labels.items())), 0.0)


def grew(before: Samples, after: Samples, name: str, **labels: str) -> float:
    return value(after, name, **labels) - value(before, name, **labels)


def scrape_text(client: httpx.Client) -> str:
    time.sleep(1.05)  # a scrape answers from a reading at most a second old
    answer = client.get("/metrics")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    return answer.text


def scrape(client: httpx.Client) -> Samples:
    return samples(scrape_text(client))


def delete_queue(url: str, prefix: str) -> None:
    """The RQ keys of the jobs' queue under `prefix`, and of the jobs in its registries (a
    job's own keys do not name the queue)."""
    sync = redis.Redis.from_url(url, decode_responses=True)
    try:
        registries = [str(key) for key in sync.keys(f"rq:*{prefix}*")]
        jobs = [
            str(job)
            for key in registries
            if sync.type(key) == "zset"
            for job in sync.zrange(key, 0, -1)
        ]
        jobs += [str(job) for job in sync.lrange(f"rq:queue:{prefix}:patrician", 0, -1)]
        stale = [*registries, *(f"rq:{kind}:{job}" for job in jobs for kind in ("job", "results"))]
        if stale:
            sync.delete(*stale)
    finally:
        sync.close()


def test_requests_are_counted_by_route_template_and_status_and_nothing_secret_is_shown(
    api: Api, client: TestClient[Litestar]
) -> None:
    before = scrape(client)
    mary = api.create_player("Mary Secretname")
    game = api.create_game(mary, 2)
    api.board(game["game_id"], mary)
    api.board(game["game_id"], mary)
    assert client.get("/api/games/gnosuchgame").status_code == 404
    bad = api.send(game["game_id"], mary, 99, [{"type": "skip"}])
    assert bad.status_code == 409
    text = scrape_text(client)
    after = samples(text)
    board = {"method": "GET", "route": "/api/games/{game_id}"}
    count = "patrician_http_request_duration_seconds_count"
    assert grew(before, after, count, **board, status="200") == 2
    assert grew(before, after, count, **board, status="404") == 1
    commands = {"method": "POST", "route": "/api/games/{game_id}/commands", "status": "409"}
    assert grew(before, after, count, **commands) == 1
    for code in ("game_not_started", "game_not_found"):
        assert grew(before, after, "patrician_refusals_total", code=code) == 1
    assert grew(before, after, "patrician_appends_total", kind="create", by="player") == 1
    # the latency of a request is in the buckets: a board takes well under a second
    bucket = "patrician_http_request_duration_seconds_bucket"
    assert value(after, bucket, **board, status="200", le="1.0") >= 2
    for secret in (game["game_id"], game["invite_code"], mary.token, mary.player_id, "Secretname"):
        assert secret not in text


@pytest.mark.redis
def test_the_gauges_are_read_from_redis_when_scraped(redis_url: str, redis_prefix: str) -> None:
    """Outbox lag per shard, the jobs' queue, deadlines and dead letters: what Redis holds now,
    whoever wrote it (here, the test, under the keys the workers use)."""
    app = build_app(Settings(redis_url=redis_url, prefix=redis_prefix, shards=2))
    keys = KeySpace(redis_prefix, 2)
    sync = redis.Redis.from_url(redis_url)
    queue = queue_of(sync, redis_prefix)
    try:
        with TestClient(app, timeout=30) as client:
            api = Api(client)
            empty = scrape(client)
            assert value(empty, "patrician_gauges_read") == 1
            assert value(empty, "patrician_job_queue_depth", state="queued") == 0
            Follower(sync, keys, print, consumer="test").ensure_groups()  # the group reads
            mary = api.create_player("Mary")
            for _ in range(3):
                api.create_game(mary, 2)  # three appends, three notices not read yet
            queue.enqueue("workers.jobs.game_moved", "gnone", 1, 1, job_id=f"{redis_prefix}-job")
            sync.zadd(timers_key(redis_prefix), {"timeout gnone 1": time.time() + 60})
            sync.xadd(dead_letters_key(redis_prefix), {"g": "gnone", "c": "1 1"})
            found = scrape(client)
        lag = sum(value(found, "patrician_outbox_lag", shard=str(shard)) for shard in (0, 1))
        assert lag == 3
        assert value(found, "patrician_outbox_pending", shard="0") == 0
        assert value(found, "patrician_job_queue_depth", state="queued") == 1
        assert value(found, "patrician_pending_deadlines") == 1
        assert value(found, "patrician_dead_letters", kind="notices") == 1
        assert value(found, "patrician_dead_letters", kind="jobs") == 0
    finally:
        sync.close()
        delete_queue(redis_url, redis_prefix)


def test_a_scrape_within_a_second_of_another_is_answered_from_the_same_reading(
    client: TestClient[Litestar],
) -> None:
    """Scraping in a loop costs Redis one reading a second, whatever the rate."""
    time.sleep(1.05)
    first = client.get("/metrics").text
    for _ in range(20):
        client.get("/api/lobby")
    again = client.get("/metrics").text
    assert again == first


@pytest.fixture
def multiprocess_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "metrics"
    folder.mkdir()
    return folder


@pytest.mark.redis
@pytest.mark.slow
def test_the_counts_of_every_process_of_a_machine_add_up_in_multiprocess_mode(
    redis_url: str, redis_prefix: str, multiprocess_dir: Path, tmp_path: Path
) -> None:
    """Two API processes and a worker process, one metrics folder: a scrape of either API
    process counts the requests both served and the jobs the worker ran."""
    env = {"PROMETHEUS_MULTIPROC_DIR": str(multiprocess_dir)}
    first = LiveServer(redis_prefix, tmp_path, redis_url, env=env)
    second = LiveServer(redis_prefix, tmp_path, redis_url, env=env)
    worker_log = (tmp_path / "worker.log").open("wb")
    worker = subprocess.Popen(
        [sys.executable, "-c", "from server.cli.main import main; main()", "worker",
         "--redis-url", redis_url],
        env={**os.environ, **env, "PATRICIAN_PREFIX": redis_prefix},
        stdout=worker_log, stderr=subprocess.STDOUT, cwd=tmp_path,
    )  # fmt: skip
    try:
        starting = [threading.Thread(target=server.start) for server in (first, second)]
        for thread in starting:  # at once: a start takes seconds on a busy machine
            thread.start()
        for thread in starting:
            thread.join()
        with (
            httpx.Client(base_url=first.url, timeout=10) as one,
            httpx.Client(base_url=second.url, timeout=10) as two,
        ):
            api = Api(one, two)  # requests in turn, one to each process
            mary = api.create_player("Mary")
            api.ok(
                    api.request("POST", "/api/games", player=mary,
                                json={"seats": 2, "bots": [{"level": "random"}]}),
                    201,
                )  # fmt: skip
            deadline = time.monotonic() + 20
            followed = 0.0
            while time.monotonic() < deadline and not followed:
                found = scrape(two)
                followed = value(found, "patrician_followed_notices_total", outcome="ok")
        assert followed >= 1, "the worker's follow-ups, counted in its process, are scraped"
        count = "patrician_http_request_duration_seconds_count"
        assert value(found, count, method="POST", route="/api/players", status="201") == 1
        assert value(found, count, method="POST", route="/api/games", status="201") == 1
        assert value(found, "patrician_appends_total", kind="create", by="player") == 1
        assert value(found, "patrician_gauges_read") == 1
    finally:
        first.stop()
        second.stop()
        stop_process(worker)
        worker_log.close()
        delete_queue(redis_url, redis_prefix)
