"""Reading: version ranges, the head, the batches (commands) of a game, and the blocking
follow for live updates; on fakeredis, on a real Redis and on a Redis Cluster."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from store.chain import ZERO_HASH, verify
from store.client import EventStore
from store.records import Batch, Head
from tests.store.conftest import WITH_CLUSTER, AsyncStoreFactory, run_async

pytestmark = pytest.mark.parametrize("backend", WITH_CLUSTER, indirect=True)


def _event(n: int) -> bytes:
    return b'{"n":%d}' % n


def _fill(store: EventStore, game_id: str, batches: list[int]) -> None:
    version = 0
    for index, size in enumerate(batches):
        events = [_event(version + i + 1) for i in range(size)]
        store.append(game_id, version, events, f"cmd-{index}", b'{"i":%d}' % index)
        version += size


def test_a_game_with_no_events_reads_empty_at_version_zero(store: EventStore) -> None:
    assert store.read("nothing") == []
    assert store.head("nothing") == Head(0, ZERO_HASH)
    assert store.batches("nothing") == []


def test_a_range_reads_the_versions_after_and_up_to(store: EventStore) -> None:
    _fill(store, "g1", [3, 2, 5])
    assert [e.version for e in store.read("g1")] == list(range(1, 11))
    assert [e.version for e in store.read("g1", after=4)] == list(range(5, 11))
    assert [e.version for e in store.read("g1", after=4, to=6)] == [5, 6]
    assert store.read("g1", after=10) == []
    assert store.read("g1", after=6, to=6) == []
    assert [e.data for e in store.read("g1", after=9)] == [_event(10)]


def test_the_head_is_the_last_version_and_its_hash(store: EventStore) -> None:
    _fill(store, "g1", [3, 2])
    assert store.head("g1") == Head(5, verify(store.read("g1")))
    assert store.verify("g1") == store.head("g1")


def test_the_batches_list_every_command_with_its_metadata_and_versions(
    store: EventStore,
) -> None:
    _fill(store, "g1", [3, 1, 4])
    assert store.batches("g1") == [
        Batch("cmd-0", b'{"i":0}', 1, 3),
        Batch("cmd-1", b'{"i":1}', 4, 4),
        Batch("cmd-2", b'{"i":2}', 5, 8),
    ]


def test_follow_yields_what_is_there_and_then_what_is_appended(store: EventStore) -> None:
    _fill(store, "g1", [2])

    def later() -> None:
        time.sleep(0.2)
        store.append("g1", 2, [_event(3)], "late-1")
        time.sleep(0.2)
        store.append("g1", 3, [_event(4), _event(5)], "late-2")

    writer = threading.Thread(target=later)
    writer.start()
    try:
        seen = [e.version for e in store.follow("g1", after=1, timeout=1.5, poll=0.1)]
    finally:
        writer.join()
    assert seen == [2, 3, 4, 5]


def test_follow_ends_after_its_timeout_without_new_events(store: EventStore) -> None:
    _fill(store, "g1", [1])
    start = time.monotonic()
    assert list(store.follow("g1", after=1, timeout=0.3, poll=0.1)) == []
    assert 0.25 < time.monotonic() - start < 3
    assert [e.version for e in store.follow("g1", timeout=0)] == [1]


def test_the_async_store_reads_and_follows(async_store: AsyncStoreFactory) -> None:
    async def scenario() -> None:
        async with async_store() as store:
            await store.append("g1", 0, [_event(1), _event(2)], "cmd-0", b"{}")

            async def later() -> None:
                await asyncio.sleep(0.2)
                await store.append("g1", 2, [_event(3)], "cmd-1")

            task = asyncio.create_task(later())
            seen = [e.version async for e in store.follow("g1", timeout=1.0, poll=0.1)]
            await task
            assert seen == [1, 2, 3]
            assert [e.version for e in await store.read("g1", after=1, to=2)] == [2]
            assert await store.batches("g1") == [
                Batch("cmd-0", b"{}", 1, 2),
                Batch("cmd-1", b"", 3, 3),
            ]
            assert (await store.verify("g1")).version == 3

    run_async(scenario())
