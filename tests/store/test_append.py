"""Appending: the expected version, idempotency by command id, the chain, the outbox, and
all-or-nothing batches; on fakeredis, on a real Redis and on a Redis Cluster."""

from __future__ import annotations

from typing import Any

import pytest

from store import appending
from store.chain import ZERO_HASH, extend, link, verify
from store.client import EventStore
from store.errors import CommandIdReused, DuplicateCommand, StoreError, VersionConflict
from store.protocol import dispatch
from store.scripts import source
from store.stored import AppendResult
from tests.store.conftest import WITH_CLUSTER, AsyncStoreFactory, run_async

pytestmark = pytest.mark.parametrize("backend", WITH_CLUSTER, indirect=True)

E1, E2, E3 = b'{"type":"a"}', b'{"type":"b"}', b'{"type":"c"}'


def test_the_first_append_of_a_game_takes_versions_from_one(store: EventStore) -> None:
    result = store.append("g1", 0, [E1, E2], "cmd-1", b'{"seat":0}')
    assert result == AppendResult(1, 2, extend(ZERO_HASH, 1, [E1, E2])[-1])
    assert [(e.version, e.data) for e in store.read("g1")] == [(1, E1), (2, E2)]


def test_each_entry_carries_the_hash_chain(store: EventStore) -> None:
    store.append("g1", 0, [E1, E2], "cmd-1")
    store.append("g1", 2, [E3], "cmd-2")
    events = store.read("g1")
    assert verify(events) == store.head("g1").hash
    assert events[2].hash == link(events[1].hash, 3, E3)


def test_a_stale_writer_is_refused_with_the_current_version(store: EventStore) -> None:
    store.append("g1", 0, [E1], "cmd-1")
    store.append("g1", 1, [E2], "cmd-2")
    with pytest.raises(VersionConflict) as conflict:
        store.append("g1", 1, [E3], "cmd-3")
    assert conflict.value.current == 2
    assert len(store.read("g1")) == 2


def test_a_writer_ahead_of_the_game_is_refused(store: EventStore) -> None:
    store.append("g1", 0, [E1], "cmd-1")
    with pytest.raises(VersionConflict) as conflict:
        store.append("g1", 5, [E2], "cmd-2")
    assert conflict.value.current == 1


def test_creating_a_game_that_exists_is_a_conflict(store: EventStore) -> None:
    store.append("g1", 0, [E1], "cmd-1")
    with pytest.raises(VersionConflict) as conflict:
        store.append("g1", 0, [E2], "cmd-2")
    assert conflict.value.current == 1


def test_a_retry_with_the_same_command_id_returns_the_first_result_and_writes_nothing(
    store: EventStore,
) -> None:
    first = store.append("g1", 0, [E1, E2], "cmd-1")
    store.append("g1", 2, [E3], "cmd-2")
    with pytest.raises(DuplicateCommand) as duplicate:
        store.append("g1", 0, [E1, E2], "cmd-1")
    assert duplicate.value.first_result == first
    assert store.head("g1").version == 3
    assert len(store.read_outbox(store.keys.shard("g1"))) == 2


def test_a_resent_call_gets_its_own_first_result_back(store: EventStore) -> None:
    # What redis-py's Retry does after a lost reply: the very same EVALSHA again.
    store.client.script_load(source("append"))
    op = appending.append(store.context, "g1", 0, [E1], "cmd-1")
    request = next(op)
    first_reply = dispatch(store.client, request)
    again_reply = dispatch(store.client, request)
    assert first_reply[0] == b"ok"
    assert again_reply[0] == b"again"
    with pytest.raises(StopIteration) as done:
        op.send(again_reply)
    assert done.value.value == AppendResult(1, 1, link(ZERO_HASH, 1, E1))
    assert store.head("g1").version == 1


def test_the_same_command_id_with_other_content_is_refused(store: EventStore) -> None:
    store.append("g1", 0, [E1], "cmd-1")
    with pytest.raises(CommandIdReused) as reused:
        store.append("g1", 1, [E2], "cmd-1")
    assert reused.value.first_result is not None
    assert reused.value.first_result.first_version == 1
    assert store.head("g1").version == 1


def test_a_caller_digest_makes_a_redecided_retry_a_duplicate(store: EventStore) -> None:
    first = store.append("g1", 0, [E1], "cmd-1", request_digest="play card x")
    store.append("g1", 1, [E2], "cmd-2")
    with pytest.raises(DuplicateCommand) as duplicate:
        store.append("g1", 2, [E3], "cmd-1", request_digest="play card x")
    assert duplicate.value.first_result == first


def test_command_ids_are_per_game(store: EventStore) -> None:
    store.append("g1", 0, [E1], "cmd-1")
    assert store.append("g2", 0, [E2], "cmd-1").first_version == 1


def test_a_conflicting_batch_writes_nothing_at_all(store: EventStore) -> None:
    store.append("g1", 0, [E1], "cmd-1")
    with pytest.raises(VersionConflict):
        store.append("g1", 0, [E1, E2, E3], "cmd-2")
    assert [e.version for e in store.read("g1")] == [1]
    assert store.command_result("g1", "cmd-2") is None
    assert len(store.read_outbox(store.keys.shard("g1"))) == 1


def test_every_append_writes_one_outbox_entry_on_the_games_shard(store: EventStore) -> None:
    store.append("g1", 0, [E1, E2], "cmd-1")
    store.append("g1", 2, [E3], "cmd-2")
    entries = store.read_outbox(store.keys.shard("g1"))
    assert [(e.game_id, e.first_version, e.last_version) for e in entries] == [
        ("g1", 1, 2),
        ("g1", 3, 3),
    ]


def test_the_result_of_a_command_can_be_looked_up(store: EventStore) -> None:
    first = store.append("g1", 0, [E1, E2], "cmd-1")
    assert store.command_result("g1", "cmd-1") == first
    assert store.command_result("g1", "nope") is None


def test_a_store_without_the_head_hash_learns_it_from_the_script(
    store: EventStore, client: Any, prefix: str
) -> None:
    store.append("g1", 0, [E1], "cmd-1")
    fresh = EventStore(client, prefix=prefix)  # an empty head cache
    assert fresh.append("g1", 1, [E2], "cmd-2").last_version == 2
    assert verify(store.read("g1")) == fresh.head("g1").hash


def test_a_stale_head_hash_in_the_cache_is_corrected_not_chained_from(
    store: EventStore, client: Any
) -> None:
    store.append("g1", 0, [E1], "cmd-1")
    store.context.heads.put("g1", 1, "ab" * 32)  # a wrong hash for version 1
    store.append("g1", 1, [E2], "cmd-2")
    verify(store.read("g1"))


def test_redis_itself_refuses_an_entry_id_at_or_below_the_top(
    store: EventStore, client: Any
) -> None:
    store.append("g1", 0, [E1, E2], "cmd-1")
    with pytest.raises(Exception, match="equal or smaller"):
        client.xadd(store.keys.game("g1").events, {"d": E3}, id="2-1")


def test_streams_are_never_capped_or_expired(store: EventStore, client: Any) -> None:
    for version in range(30):
        store.append("g1", version, [E1], f"cmd-{version}")
    keys = store.keys.game("g1")
    assert client.xlen(keys.events) == 30
    assert client.ttl(keys.events) == -1
    assert client.ttl(keys.commands) == -1


@pytest.mark.parametrize(
    ("events", "error"),
    [([], ValueError), (E1, ValueError), ([E1, "text"], TypeError)],
)
def test_malformed_appends_are_refused_before_redis(
    store: EventStore, events: Any, error: type[Exception]
) -> None:
    with pytest.raises(error):
        store.append("g1", 0, events, "cmd-1")
    assert store.head("g1").version == 0


def test_an_empty_command_id_is_refused(store: EventStore) -> None:
    with pytest.raises(ValueError, match="command id"):
        store.append("g1", 0, [E1], "")


def test_a_client_that_decodes_responses_is_refused(client: Any) -> None:
    import fakeredis

    with pytest.raises(ValueError, match="decode_responses"):
        EventStore(fakeredis.FakeRedis(decode_responses=True))
    assert not isinstance(client, StoreError)


def test_the_async_store_appends_and_refuses_like_the_sync_one(
    async_store: AsyncStoreFactory,
) -> None:
    async def scenario() -> None:
        async with async_store() as store:
            first = await store.append("g1", 0, [E1, E2], "cmd-1", b"{}")
            assert first.last_version == 2
            with pytest.raises(VersionConflict) as conflict:
                await store.append("g1", 1, [E3], "cmd-2")
            assert conflict.value.current == 2
            with pytest.raises(DuplicateCommand):
                await store.append("g1", 0, [E1, E2], "cmd-1")
            assert (await store.append("g1", 2, [E3], "cmd-3")).last_version == 3
            assert verify(await store.read("g1")) == (await store.head("g1")).hash
            assert await store.command_result("g1", "cmd-1") == first

    run_async(scenario())


def test_a_stream_edited_behind_the_stores_back_refuses_appends_and_keeps_them_out(
    store: EventStore, client: Any
) -> None:
    store.append("g1", 0, [E1], "cmd-1")
    client.xadd(store.keys.game("g1").events, {"d": E2, "h": "00"}, id="2-1")  # by hand
    with pytest.raises(StoreError):
        store.append("g1", 1, [E3], "cmd-2")
    assert [event.data for event in store.read("g1")] == [E1, E2]
    assert store.command_result("g1", "cmd-2") is None
