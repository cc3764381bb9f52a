"""The halves the two stores share (`store.stepping`, and the operations bound once for both
in `store.client`), sans-IO: no Redis, a clock of the test's own."""

from __future__ import annotations

import asyncio
import pydoc
import types
import uuid
from typing import Any

import fakeredis
import pytest

from store import appending, stepping, streams
from store.client import AsyncEventStore, EventStore
from store.context import Context
from store.keys import KeySpace
from store.protocol import Call, Op
from store.stepping import Polling, Stepping
from store.stored import StoredEvent


def _two_reads(key: str) -> Op[tuple[Any, Any]]:
    first = yield Call("get", (key,))
    second = yield Call("get", (key,))
    return first, second


def _forgiving(key: str) -> Op[str]:
    """Sends again once after an error reply, as `evaluate` does after NOSCRIPT."""
    try:
        return str((yield Call("incr", (key,))))
    except ValueError:
        return f"again {(yield Call('incr', (key,)))}"


def test_stepping_hands_each_reply_in_and_keeps_the_result() -> None:
    driven = Stepping(_two_reads("k"))
    assert driven.send(None) == Call("get", ("k",))
    assert driven.send(b"1") == Call("get", ("k",))
    assert driven.send(b"2") is None
    assert driven.result == (b"1", b"2")


def test_stepping_throws_an_error_reply_into_the_operation() -> None:
    driven = Stepping(_forgiving("k"))
    driven.send(None)
    assert driven.throw(ValueError("WRONGTYPE")) == Call("incr", ("k",))
    assert driven.send(3) is None
    assert driven.result == "again 3"


def test_stepping_lets_an_error_the_operation_does_not_handle_out() -> None:
    driven = Stepping(_two_reads("k"))
    driven.send(None)
    with pytest.raises(ValueError, match="refused"):
        driven.throw(ValueError("refused"))


class _Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> _Clock:
    clock = _Clock()
    monkeypatch.setattr(stepping, "time", types.SimpleNamespace(monotonic=clock.monotonic))
    return clock


def _xread(read: Op[list[StoredEvent]] | None) -> tuple[str, int | None]:
    """The entry id a read of `follow` starts after, and how long it may block."""
    assert read is not None
    request = read.send(None)
    assert isinstance(request, Call)
    assert request.method == "xread"
    streams_after, _count, block = request.args
    [after] = streams_after.values()
    return after, block


def _polling(after: int, timeout: float | None, poll: float) -> Polling:
    context = Context(KeySpace(f"test-{uuid.uuid4().hex[:12]}", 16))
    return Polling(context, "g1", after, timeout, poll)


def test_polling_without_timeout_reads_for_ever(clock: _Clock) -> None:
    polling = _polling(3, None, 0.25)
    for _ in range(3):
        clock.now += 1000
        assert _xread(polling.next_read()) == ("3-1", 250)
        polling.found([])


def test_polling_with_timeout_zero_reads_once_without_blocking(clock: _Clock) -> None:
    polling = _polling(0, 0, 1.0)
    assert _xread(polling.next_read()) == ("0-1", None)
    polling.found([])
    assert polling.next_read() is None


def test_polling_blocks_no_longer_than_the_time_left(clock: _Clock) -> None:
    polling = _polling(0, 1.0, 0.4)
    assert _xread(polling.next_read()) == ("0-1", 400)
    clock.now += 0.8
    polling.found([])
    assert _xread(polling.next_read()) == ("0-1", 200)
    clock.now += 0.2
    polling.found([])
    assert polling.next_read() is None


def test_polling_starts_the_timeout_again_after_the_last_event_found(clock: _Clock) -> None:
    polling = _polling(0, 1.0, 0.4)
    _xread(polling.next_read())
    clock.now += 0.9
    polling.found([StoredEvent(1, b"{}", "00"), StoredEvent(2, b"{}", "00")])
    assert _xread(polling.next_read()) == ("2-1", 400)
    clock.now += 1.0
    polling.found([])
    assert polling.next_read() is None


def test_the_operations_are_bound_once_for_both_stores_and_keep_their_docs() -> None:
    assert AsyncEventStore.append is EventStore.append
    assert EventStore.append.__doc__ == appending.append.__doc__
    assert EventStore.head.__name__ == "head"
    assert EventStore.read_outbox.__wrapped__ is streams.read_outbox  # type: ignore[attr-defined]
    store = EventStore(fakeredis.FakeRedis())
    assert "request_digest" in pydoc.render_doc(store.append)
    assert "The latest version of the game and its hash" in pydoc.render_doc(store.head)


def test_a_bound_operation_is_a_value_on_the_sync_store_and_awaited_on_the_async_one() -> None:
    store = EventStore(fakeredis.FakeRedis())
    assert store.head("g1").version == 0

    async def head_of_the_async_store() -> int:
        async_store = AsyncEventStore(fakeredis.FakeAsyncRedis())
        return (await async_store.head("g1")).version

    assert asyncio.run(head_of_the_async_store()) == 0
