"""The pipelined asyncio store: concurrent operations share round trips, and each still gets
exactly its own answer, error or NOSCRIPT recovery, as if it had been alone."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import fakeredis
import pytest
import redis.asyncio

from store.chain import verify
from store.client import AsyncEventStore
from store.errors import DuplicateCommand, StoreUnavailable, VersionConflict
from tests.store.conftest import BACKENDS, run_async, unique_prefix

on_every_backend = pytest.mark.parametrize("backend", BACKENDS, indirect=True)


@asynccontextmanager
async def pipelined(
    backend: str, request: pytest.FixtureRequest
) -> AsyncIterator[tuple[AsyncEventStore, Any]]:
    """A pipelined store (and its client) under a fresh prefix, cleaned up afterwards."""
    if backend == "fakeredis":
        client: Any = fakeredis.FakeAsyncRedis()
    else:
        client = redis.asyncio.Redis.from_url(request.getfixturevalue("redis_url"))
    prefix = unique_prefix()
    try:
        yield AsyncEventStore(client, prefix=prefix, pipelined=True), client
    finally:
        async for key in client.scan_iter(match=f"{prefix}:*"):
            await client.delete(key)
        await client.aclose()


@on_every_backend
def test_concurrent_appends_to_many_games_all_land_in_order(
    backend: str, request: pytest.FixtureRequest
) -> None:
    async def scenario() -> None:
        async with pipelined(backend, request) as (store, _client):

            async def play(game: str) -> None:
                for version in range(20):
                    await store.append(
                        game, version, [f'{{"n":{version}}}'.encode()], f"c{version}"
                    )

            await asyncio.gather(*(play(f"g{index}") for index in range(16)))
            for index in range(16):
                events = await store.read(f"g{index}")
                assert [event.version for event in events] == list(range(1, 21))
                verify(events)

    run_async(scenario())


@on_every_backend
def test_each_operation_of_a_shared_round_trip_gets_its_own_error(
    backend: str, request: pytest.FixtureRequest
) -> None:
    async def scenario() -> None:
        async with pipelined(backend, request) as (store, _client):
            await store.append("g", 0, [b"{}"], "first")
            results = await asyncio.gather(
                store.append("g", 1, [b"{}"], "second"),
                store.append("g", 0, [b"{}"], "stale"),
                store.append("g", 0, [b"{}"], "first"),
                store.read("g"),
                return_exceptions=True,
            )
            assert results[0].last_version == 2
            assert isinstance(results[1], VersionConflict)
            assert isinstance(results[2], DuplicateCommand)
            assert not isinstance(results[3], BaseException)

    run_async(scenario())


@on_every_backend
def test_concurrent_appends_recover_together_when_redis_forgot_the_scripts(
    backend: str, request: pytest.FixtureRequest
) -> None:
    async def scenario() -> None:
        async with pipelined(backend, request) as (store, client):
            await store.append("warm", 0, [b"{}"], "c")
            await client.script_flush()
            await asyncio.gather(*(store.append(f"g{i}", 0, [b"{}"], "c") for i in range(8)))
            for index in range(8):
                assert (await store.head(f"g{index}")).version == 1

    run_async(scenario())


def test_a_lost_connection_fails_every_waiting_operation_as_unavailable() -> None:
    async def scenario() -> None:
        client = redis.asyncio.Redis(host="127.0.0.1", port=1, socket_connect_timeout=0.2)
        store = AsyncEventStore(client, prefix=unique_prefix(), pipelined=True)
        results = await asyncio.gather(
            store.append("g", 0, [b"{}"], "c"), store.read("g"), return_exceptions=True
        )
        assert all(isinstance(result, StoreUnavailable) for result in results)
        await client.aclose()

    run_async(scenario())
