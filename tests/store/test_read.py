"""Reading: version ranges, the head, the batches (commands) of a game, and the blocking
follow for live updates; on fakeredis, on a real Redis and on a Redis Cluster."""

from __future__ import annotations

import asyncio
import threading
import time
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store.chain import ZERO_HASH, verify
from store.client import EventStore
from store.stored import Batch, Head
from store.streams import BATCH_LOOKBACK, batches_around
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


@settings(
    max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    sizes=st.lists(st.integers(1, 2 * BATCH_LOOKBACK + 5), min_size=1, max_size=8),
    data=st.data(),
)
def test_the_appends_around_some_versions_are_those_of_the_whole_game_that_hold_them(
    store: EventStore, sizes: list[int], data: st.DataObject
) -> None:
    """What a notification tells happened since a seat's last decision, read from that part
    of the stream alone: the same appends as the whole game's list, the last one cut at the
    version told (appends longer than one look back included)."""
    game_id = f"g{uuid.uuid4().hex[:10]}"
    _fill(store, game_id, sizes)
    every, total = store.batches(game_id), sum(sizes)
    for _ in range(8):
        since = data.draw(st.integers(0, total), label="since")
        version = data.draw(st.integers(max(since, 1), total), label="version")
        expected = [
            Batch(b.command_id, b.metadata, b.first_version, min(b.last_version, version))
            for b in every
            if b.last_version >= max(since, 1) and b.first_version <= version
        ]
        assert store.run(batches_around(store.context, game_id, since, version)) == expected


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
