"""The timers of timed games live in Redis: a Redis restart (with the AOF written at every
command, as `deploy/redis.conf` sets it) loses none and fires none twice; a timer set late for
an older version never replaces a newer one's."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
import redis
from rq.job import Job

from server.config.card_data import load_game_data
from store.timers import Timer, due_op, set_timers_op
from tests.store.servers import RedisServer
from workers.context import WorkerContext
from workers.deadlines import fire_due
from workers.settings import WorkerSettings, context_for

PREFIX = "drill"
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.fixture
def server(tmp_path: Path) -> Iterator[RedisServer]:
    with RedisServer(tmp_path, "--appendonly", "yes", "--appendfsync", "always") as running:
        yield running


def _context(server: RedisServer) -> WorkerContext:
    client = redis.Redis(port=server.port, socket_timeout=5)
    settings = WorkerSettings(prefix=PREFIX, shards=4)
    return context_for(client, load_game_data(), settings, clock=lambda: NOW)


def _restart(server: RedisServer) -> WorkerContext:
    server.kill()  # SIGKILL: no shutdown, no last save
    server.start()
    return _context(server)


def test_a_redis_restart_loses_no_timer_and_fires_none_twice(server: RedisServer) -> None:
    context = _context(server)
    now = NOW.timestamp()
    timers = [
        (Timer("remind", "g1", 7, 1.0), now - 3600),
        (Timer("timeout", "g1", 7), now - 1),
        (Timer("timeout", "g2", 3), now + 3600),  # not due yet
    ]
    assert context.store.run(set_timers_op(PREFIX, "g1", 7, timers[:2]))
    assert context.store.run(set_timers_op(PREFIX, "g2", 3, timers[2:]))
    context = _restart(server)
    assert context.store.run(due_op(PREFIX, now)) == [timers[0][0], timers[1][0]]
    assert fire_due(context) == 2
    context = _restart(server)
    assert context.store.run(due_op(PREFIX, now)) == [], "fired once"
    assert fire_due(context) == 0
    queued = sorted(context.queue.job_ids)
    assert queued == ["remind60m-7-g1", "timeout-7-g1"]
    job = Job.fetch("timeout-7-g1", connection=context.queue.connection,
                    serializer=context.queue.serializer)  # fmt: skip
    assert job.func_name == "workers.deadlines.timed_out" and job.args == ["g1", 7]
    assert context.store.run(due_op(PREFIX, now + 7200)) == [timers[2][0]], "the other is kept"


def test_timers_set_late_for_an_older_version_leave_the_newer_ones(server: RedisServer) -> None:
    context = _context(server)
    now = NOW.timestamp()
    newer = [(Timer("timeout", "g1", 9), now + 60)]
    assert context.store.run(set_timers_op(PREFIX, "g1", 9, newer))
    older = [(Timer("timeout", "g1", 8), now - 60)]
    assert not context.store.run(set_timers_op(PREFIX, "g1", 8, older))
    assert context.store.run(due_op(PREFIX, now + 120)) == [newer[0][0]]
    assert context.store.run(set_timers_op(PREFIX, "g1", 10, []))  # the game needs none now
    assert context.store.run(due_op(PREFIX, now + 120)) == []
