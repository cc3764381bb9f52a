"""Fixtures of the store's tests: the same tests on fakeredis, on a real Redis and (where a
module asks for it) on a local Redis Cluster, each with a unique key prefix and clean-up.

The real Redis is the machine's at 127.0.0.1:6379 (or PATRICIAN_TEST_REDIS_URL); when none
answers there, a private redis-server is started for the session, so the suite runs on any
machine with redis-server installed. Async tests drive their coroutine with `asyncio.run`:
async clients are made inside the loop that uses them, through the factories below.
"""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import fakeredis
import pytest
import redis
import redis.asyncio
import redis.asyncio.cluster
import redis.cluster

from store.client import AsyncEventStore, EventStore
from store.multiplexed import MultiplexedRedis
from tests.store.servers import REDIS_CLI, REDIS_SERVER, RedisClusterServers, RedisServer

BACKENDS = [
    pytest.param("fakeredis", id="fakeredis"),
    pytest.param("redis", id="redis", marks=pytest.mark.redis),
]
WITH_CLUSTER = [
    *BACKENDS,
    pytest.param("cluster", id="cluster", marks=pytest.mark.redis),
]

AsyncStoreFactory = Callable[[], AbstractAsyncContextManager[AsyncEventStore]]


def unique_prefix() -> str:
    return f"test-{uuid.uuid4().hex[:12]}"


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    url = os.environ.get("PATRICIAN_TEST_REDIS_URL", "redis://127.0.0.1:6379/0")
    client = redis.Redis.from_url(url, socket_timeout=2)
    try:
        client.ping()
        yield url
        return
    except redis.exceptions.ConnectionError:
        if REDIS_SERVER is None:
            pytest.fail(f"no Redis answers at {url} and redis-server is not installed")
    finally:
        client.close()
    with RedisServer(tmp_path_factory.mktemp("redis")) as server:
        yield f"redis://127.0.0.1:{server.port}/0"


@pytest.fixture(scope="session")
def cluster_port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    if REDIS_SERVER is None or REDIS_CLI is None:
        pytest.fail("the cluster tests need redis-server and redis-cli")
    with RedisClusterServers(tmp_path_factory.mktemp("cluster")) as cluster:
        yield cluster.port


def _delete_prefix(client: Any, prefix: str) -> None:
    keys = list(client.scan_iter(match=f"{prefix}:*", count=1000))
    for key in keys:  # one by one: on a cluster the keys live in several slots
        client.delete(key)


@pytest.fixture
def backend(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture
def prefix() -> str:
    return unique_prefix()


@pytest.fixture
def client(backend: str, request: pytest.FixtureRequest, prefix: str) -> Iterator[Any]:
    """A sync client of `backend`; on real servers the test's keys are deleted afterwards."""
    made: Any
    if backend == "fakeredis":
        made = fakeredis.FakeRedis()
    elif backend == "redis":
        made = redis.Redis.from_url(request.getfixturevalue("redis_url"))
    else:
        made = redis.cluster.RedisCluster(
            host="127.0.0.1", port=request.getfixturevalue("cluster_port")
        )
    try:
        yield made
    finally:
        if backend != "fakeredis":
            _delete_prefix(made, prefix)
        made.close()


@pytest.fixture
def store(client: Any, prefix: str) -> EventStore:
    return EventStore(client, prefix=prefix)


@pytest.fixture
def async_store(backend: str, request: pytest.FixtureRequest, prefix: str) -> AsyncStoreFactory:
    """A factory of async stores on `backend`, to enter inside the test's event loop."""
    url = request.getfixturevalue("redis_url") if backend == "redis" else ""
    port = request.getfixturevalue("cluster_port") if backend == "cluster" else 0
    server = fakeredis.FakeServer()

    @asynccontextmanager
    async def make() -> AsyncIterator[AsyncEventStore]:
        made: Any
        if backend == "fakeredis":
            made = fakeredis.FakeAsyncRedis(server=server)
        elif backend == "redis":  # the server's own client (`server.config.redis_clients`)
            made = MultiplexedRedis.from_url(url)
        else:
            made = redis.asyncio.cluster.RedisCluster(host="127.0.0.1", port=port)
        try:
            yield AsyncEventStore(made, prefix=prefix)
        finally:
            if backend != "fakeredis":
                async for key in made.scan_iter(match=f"{prefix}:*"):
                    await made.delete(key)
            await made.aclose()

    return make


def run_async(coroutine: Any) -> Any:
    """Run one test coroutine on a fresh event loop."""
    return asyncio.run(coroutine)


@pytest.fixture
def workdir(tmp_path: Path) -> Path:
    return tmp_path
