"""A Redis that cannot serve is `StoreUnavailable`, never a conflict or a duplicate."""

from __future__ import annotations

from typing import Any

import fakeredis
import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from store.client import EventStore
from store.errors import StoreError, StoreUnavailable
from store.loading import save_snapshot
from tests.processes import free_port


def test_an_unreachable_redis_is_unavailable_not_a_conflict() -> None:
    client = redis.Redis(port=free_port(), socket_timeout=0.5, retry=Retry(NoBackoff(), 0))
    store = EventStore(client, prefix="unreachable")
    with pytest.raises(StoreUnavailable):
        store.append("g1", 0, [b"{}"], "cmd-1")
    with pytest.raises(StoreUnavailable):
        store.read("g1")
    with pytest.raises(StoreUnavailable):
        list(store.follow("g1", timeout=0))


class _Failing:
    """A client whose every command fails with `error`, as Redis does in that state."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def get_encoder(self) -> None:
        return None

    def __getattr__(self, name: str) -> Any:
        def fail(*args: Any, **kwargs: Any) -> Any:
            raise self.error

        return fail


@pytest.mark.parametrize(
    "error",
    [
        redis.exceptions.BusyLoadingError("LOADING Redis is loading the dataset in memory"),
        redis.exceptions.TimeoutError("Timeout reading from socket"),
        redis.exceptions.ConnectionError("Connection reset by peer"),
        redis.exceptions.ReadOnlyError("READONLY You can't write against a read only replica"),
        redis.exceptions.OutOfMemoryError("OOM command not allowed"),
        redis.exceptions.ClusterDownError("CLUSTERDOWN The cluster is down"),
        redis.exceptions.TryAgainError("TRYAGAIN Multiple keys request during rehashing"),
    ],
)
def test_each_kind_of_outage_is_unavailable(error: Exception) -> None:
    store = EventStore(_Failing(error), prefix="failing")
    with pytest.raises(StoreUnavailable):
        store.append("g1", 1, [b"{}"], "cmd-1")
    with pytest.raises(StoreUnavailable):
        store.head("g1")


def test_any_other_redis_error_is_a_store_error_but_not_unavailable() -> None:
    store = EventStore(_Failing(redis.exceptions.ResponseError("WRONGTYPE")), prefix="x")
    with pytest.raises(StoreError) as raised:
        store.read("g1")
    assert not isinstance(raised.value, StoreUnavailable)


def test_a_server_that_forgot_the_script_gets_it_again_and_appends_once() -> None:
    client = fakeredis.FakeRedis()
    store = EventStore(client, prefix="noscript")
    store.append("g1", 0, [b"1"], "cmd-1")
    client.script_flush()
    assert store.append("g1", 1, [b"2"], "cmd-2").last_version == 2
    client.script_flush()
    store.run(save_snapshot(store.context, "g1", 2, "r1", b"state"))
    client.script_flush()
    assert [e.version for e in store.read("g1")] == [1, 2]
