"""The outbox dispatcher: each append's notice becomes one job, acknowledged once the job is
enqueued; a dead consumer's notices are taken over, a notice delivered too often goes to the
dead letters, acknowledged notices are trimmed. On fakeredis and on the real Redis."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import fakeredis
import pytest
import redis

from store.client import EventStore
from tests.server.live import REDIS_URL, delete_prefix
from workers.dispatcher import Dispatcher, job_id
from workers.settings import queue_of

E = b'{"type":"a"}'


@pytest.fixture(params=["fakeredis", pytest.param("redis", marks=pytest.mark.redis)])
def client(request: pytest.FixtureRequest) -> Iterator[Any]:
    if request.param == "fakeredis":
        yield fakeredis.FakeRedis()
        return
    real = redis.Redis.from_url(REDIS_URL)
    yield real
    real.close()


@pytest.fixture
def prefix(client: Any) -> Iterator[str]:
    name = f"test-dispatch-{uuid.uuid4().hex[:8]}"
    yield name
    if isinstance(client, redis.Redis) and not isinstance(client, fakeredis.FakeRedis):
        delete_prefix(name)


def _dispatcher(client: Any, prefix: str, consumer: str, **options: Any) -> Dispatcher:
    store = EventStore(client, prefix=prefix, shards=4)
    dispatcher = Dispatcher(client, store.keys, queue_of(client, prefix), consumer=consumer,
                            **options)  # fmt: skip
    dispatcher.ensure_groups()
    return dispatcher


def _appends(client: Any, prefix: str, games: int) -> None:
    """Two appends to each of `games` games."""
    store = EventStore(client, prefix=prefix, shards=4)
    for n in range(games):
        store.append(f"g{n}", 0, [E, E], "c1")
        store.append(f"g{n}", 2, [E], "c2")


def test_every_notice_becomes_one_job_named_by_its_game_and_version(
    client: Any, prefix: str
) -> None:
    _appends(client, prefix, 5)
    first = _dispatcher(client, prefix, "one")
    second = _dispatcher(client, prefix, "two")
    assert first.step() + second.step() == 10, "each notice once, to one of the consumers"
    queue = queue_of(client, prefix)
    ids = set(queue.job_ids)
    assert ids == {job_id(f"g{n}", v) for n in range(5) for v in (2, 3)}
    job = queue.fetch_job(job_id("g3", 3))
    assert job is not None and job.func_name == "workers.jobs.game_moved"
    assert job.args == ["g3", 3, 3], "the game and the versions its append added"
    assert queue.fetch_job(job_id("g3", 2)).args == ["g3", 1, 2]  # type: ignore[union-attr]
    assert first.health().pending == 0, "all acknowledged"


def test_the_notices_of_a_dead_consumer_are_taken_over_and_too_many_deliveries_give_up(
    client: Any, prefix: str
) -> None:
    _appends(client, prefix, 3)
    dead = _dispatcher(client, prefix, "dead")
    reply = client.xreadgroup("dispatch", "dead", dict.fromkeys(dead.feeds, ">"), count=100)
    assert sum(len(entries) for _, entries in reply) == 6  # read, then the process died
    assert dead.health().pending == 6
    alive = _dispatcher(client, prefix, "alive", claim_idle_ms=0)
    assert alive.reclaim() == 6
    assert alive.health() == alive.health().__class__(pending=0, dead=0)
    # A notice whose consumers keep dying: delivered again and again, then given up on.
    stuck = _dispatcher(client, prefix, "stuck", claim_idle_ms=0, max_deliveries=2)
    client.xadd(stuck.feeds[0], {b"g": b"gx", b"c": b"1 1 00 n d"})
    client.xreadgroup("dispatch", "stuck", {stuck.feeds[0]: ">"}, count=100)
    for _ in range(2):  # two more consumers took it and died
        client.xautoclaim(stuck.feeds[0], "dispatch", "another", 0, "0-0", count=100)
    assert stuck.reclaim() == 0
    assert stuck.health().dead == 1 and stuck.health().pending == 0


def test_acknowledged_notices_are_trimmed_and_the_event_streams_never(
    client: Any, prefix: str
) -> None:
    _appends(client, prefix, 6)
    dispatcher = _dispatcher(client, prefix, "one")
    dispatcher.step()
    dispatcher.trim()
    left = sum(int(client.xlen(feed)) for feed in dispatcher.feeds)
    assert left <= len(dispatcher.feeds), "at most the last acknowledged notice of each feed"
    store = EventStore(client, prefix=prefix, shards=4)
    assert all(store.head(f"g{n}").version == 3 for n in range(6))
