"""The event store over a Redis client: `EventStore` (sync) and `AsyncEventStore` (asyncio).

Both are thin: every operation is written once as a generator of Redis requests
(`store.protocol`; the operations are in `store.appending` and `store.streams`), and a store
only carries the requests to its client (`run`), throws a Redis error reply into the
operation (which may handle it) and translates Redis failures into `StoreUnavailable`. The
public methods are those operations bound to a store, so their signatures and docstrings are
the ones of the operations. Clients are passed in, never made
here: `redis.Redis`, `redis.cluster.RedisCluster`, `fakeredis.FakeRedis` and their asyncio
counterparts all work. They must not decode responses: events are bytes, hashed as bytes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from functools import wraps
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

from redis.exceptions import ResponseError

from store import appending, streams
from store.cluster import on_cluster
from store.context import Context
from store.errors import translated_errors
from store.keys import KeySpace
from store.protocol import Op, Request, dispatch
from store.records import StoredEvent
from store.shelf import Shelf

P = ParamSpec("P")
T = TypeVar("T")


class _Store:
    """What both stores hold: the client, its registered scripts and the shared context."""

    def __init__(
        self,
        client: Any,
        *,
        prefix: str = "patrician",
        shards: int = 16,
        head_cache_size: int = 10_000,
        archive_dir: str | None = None,
    ) -> None:
        """`archive_dir`: the folder of the archive files (`store.shelf`); None keeps each
        archive in Redis."""
        encoder = client.get_encoder() if hasattr(client, "get_encoder") else None
        if getattr(encoder, "decode_responses", False):
            raise ValueError("the event store needs a client with decode_responses=False")
        self.client = client
        shelf = Shelf(Path(archive_dir)) if archive_dir else None
        self.context = Context(
            KeySpace(prefix, shards), head_cache_size, shelf, cluster=on_cluster(client)
        )

    @property
    def keys(self) -> KeySpace:
        return self.context.keys


def _sync(
    op: Callable[Concatenate[Context, P], Op[T]],
) -> Callable[Concatenate[EventStore, P], T]:
    @wraps(op)
    def method(self: EventStore, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return self.run(op(self.context, *args, **kwargs))

    return method


def _async(
    op: Callable[Concatenate[Context, P], Op[T]],
) -> Callable[Concatenate[AsyncEventStore, P], Coroutine[Any, Any, T]]:
    @wraps(op)
    async def method(self: AsyncEventStore, /, *args: P.args, **kwargs: P.kwargs) -> T:
        return await self.run(op(self.context, *args, **kwargs))

    return method


class _Idle:
    """How long each blocking read of `follow` may wait, so that it ends once `timeout`
    seconds pass with no new event (never, when `timeout` is None). One read is always made,
    so `timeout=0` returns what is there without waiting."""

    def __init__(self, timeout: float | None, poll: float) -> None:
        self._timeout = timeout
        self._poll_ms = max(1, int(poll * 1000))
        self._read_since_reset = False
        self.reset()

    def reset(self) -> None:
        self._deadline = None if self._timeout is None else time.monotonic() + self._timeout
        self._read_since_reset = False

    def next_block(self) -> tuple[bool, int | None]:
        """(go on?, milliseconds the next XREAD may block, None for not at all)."""
        first, self._read_since_reset = not self._read_since_reset, True
        if self._deadline is None:
            return True, self._poll_ms
        left_ms = int((self._deadline - time.monotonic()) * 1000)
        if left_ms <= 0:
            return first, None
        return True, min(self._poll_ms, left_ms)


class EventStore(_Store):
    """The event store for a sync client (`redis.Redis`, `RedisCluster`, `FakeRedis`)."""

    def game_ids(self, *, archived: bool = True) -> Iterator[str]:
        """The id of every game in the store, live or archived (from the names of their event
        streams and archives; the live ones alone without `archived`), by SCAN: for the tools
        that go over all games, never for a request."""
        keys, seen = self.keys, set()
        kinds = ("events", "archive") if archived else ("events",)
        for kind in kinds:  # live games, then archived ones (docs/store.md, "Archive")
            for key in self.client.scan_iter(f"{keys.prefix}:{{s*}}:game:*:{kind}", 1000):
                name = key.decode() if isinstance(key, bytes) else str(key)
                game_id = name.split(":game:", 1)[1].removesuffix(f":{kind}")
                if game_id not in seen:  # a game being archived has both
                    seen.add(game_id)
                    yield game_id

    def run(self, op: Op[T]) -> T:
        """Carry out one operation on this store's client."""
        step, reply = op.send, None
        with translated_errors:
            while True:
                try:
                    request = step(reply)
                except StopIteration as done:
                    result: T = done.value
                    return result
                try:
                    step, reply = op.send, dispatch(self.client, request)
                except ResponseError as error:  # for the operation to handle, or not
                    step, reply = op.throw, error

    def gather(self, *ops: Op[Any]) -> list[Any]:
        """Carry out independent operations together, their results in order: each round
        sends the next request of every one still going in one pipeline, so that k
        operations of one request each cost one round trip to Redis rather than k."""
        results: list[Any] = [None] * len(ops)
        steps: list[tuple[Callable[[Any], Request], Any]] = [(op.send, None) for op in ops]
        going = list(range(len(ops)))
        with translated_errors:
            while going:
                requests: list[tuple[int, Request]] = []
                for index in going:
                    step, reply = steps[index]
                    try:
                        requests.append((index, step(reply)))
                    except StopIteration as done:
                        results[index] = done.value
                if not requests:
                    break
                pipeline = self.client.pipeline(transaction=False)
                for _index, request in requests:
                    dispatch(pipeline, request)
                replies = pipeline.execute(raise_on_error=False)
                for (index, _request), reply in zip(requests, replies, strict=True):
                    op = ops[index]
                    steps[index] = (op.throw, reply) if isinstance(reply, ResponseError) else (
                        op.send, reply
                    )  # fmt: skip
                going = [index for index, _request in requests]
        return results

    append = _sync(appending.append)
    head = _sync(streams.head)
    read = _sync(streams.read)
    batches = _sync(streams.batches)
    command_result = _sync(streams.command_result)
    command_record = _sync(streams.command_record)
    last_batch = _sync(streams.last_batch)
    verify = _sync(streams.verify)
    read_outbox = _sync(streams.read_outbox)

    def follow(
        self, game_id: str, after: int = 0, *, timeout: float | None = None, poll: float = 1.0
    ) -> Iterator[StoredEvent]:
        """Yield the game's events after version `after` as they are appended, ending once
        `timeout` seconds pass without one (None: never). Each XREAD blocks at most `poll`
        seconds, which must stay below the client's socket timeout."""
        idle = _Idle(timeout, poll)
        go_on, block = idle.next_block()
        while go_on:
            events = self.run(streams.poll(self.context, game_id, after, block, 100))
            if events:
                idle.reset()
                after = events[-1].version
                yield from events
            go_on, block = idle.next_block()


class _AutoPipeline:
    """Send the requests that concurrent operations make in the same turn of the event loop
    as one pipeline: one write and one read on the socket for all of them, instead of one of
    each per request. On this path of every request, system calls cost more than Redis does.

    The first request of a turn leads: it lets the other tasks run for `gather` seconds (0:
    one turn of the loop; they may add their requests), then sends the batch and hands each
    reply to its waiter; a busy server gains more from a wider window than it loses waiting.
    Each request still starts after its caller asked for it, so nothing is read earlier than
    it would be alone; the requests of one operation stay in order, since an operation sends
    its next request only after the reply to the previous one."""

    def __init__(self, client: Any, gather: float) -> None:
        self._client = client
        self._gather = gather
        self._batch: list[tuple[Request, asyncio.Future[Any] | None]] | None = None

    async def send(self, request: Request) -> Any:
        if self._batch is not None:  # a batch is gathering: join it
            future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
            self._batch.append((request, future))
            return await future
        batch = self._batch = [(request, None)]
        try:
            await asyncio.sleep(self._gather)
        except BaseException:  # the leader was cancelled: its followers are still served
            self._batch = None
            if len(batch) > 1:
                task = asyncio.ensure_future(self._deliver(batch[1:]))
                _pending.add(task)
                task.add_done_callback(_pending.discard)
            raise
        self._batch = None
        replies = await self._deliver(batch)
        if isinstance(replies[0], BaseException):
            raise replies[0]
        return replies[0]

    async def _deliver(self, batch: list[tuple[Request, Any]]) -> list[Any]:
        """Send the batch and hand each waiter its reply; return the replies."""
        replies = await self._execute(batch)
        for (_request, waiter), reply in zip(batch, replies, strict=True):
            if waiter is None or waiter.done():
                continue
            if isinstance(reply, BaseException):
                waiter.set_exception(reply)
            else:
                waiter.set_result(reply)
        return replies

    async def _execute(self, batch: list[tuple[Request, Any]]) -> list[Any]:
        """The replies, in order; an error stands in the place of its request."""
        try:
            if len(batch) == 1:
                return [await _settled(dispatch(self._client, batch[0][0]))]
            pipe = self._client.pipeline(transaction=False)
            for request, _waiter in batch:
                dispatch(pipe, request)
            return list(await pipe.execute(raise_on_error=False))
        except Exception as error:  # the connection failed: every request of the batch did
            return [error] * len(batch)
        except BaseException as error:  # cancelled: the waiters must not wait forever
            for _request, waiter in batch[1:]:
                if waiter is not None and not waiter.done():
                    waiter.set_exception(error)
            raise


_pending: set[asyncio.Future[list[Any]]] = set()


async def _settled(awaitable: Any) -> Any:
    try:
        return await awaitable
    except Exception as error:  # handed to the waiting operation, which may expect it
        return error


class AsyncEventStore(_Store):
    """The event store for an asyncio client (`redis.asyncio.Redis`, its `RedisCluster`,
    `FakeAsyncRedis`). With `pipelined`, requests of concurrent operations are sent together
    (`_AutoPipeline`); never for a store that makes blocking reads (`follow`)."""

    def __init__(
        self,
        client: Any,
        *,
        prefix: str = "patrician",
        shards: int = 16,
        head_cache_size: int = 10_000,
        archive_dir: str | None = None,
        pipelined: bool = False,
        gather: float = 0.0,
    ) -> None:
        super().__init__(
            client, prefix=prefix, shards=shards, head_cache_size=head_cache_size,
            archive_dir=archive_dir,
        )  # fmt: skip
        self._pipeline = _AutoPipeline(client, gather) if pipelined else None

    async def run(self, op: Op[T]) -> T:
        """Carry out one operation on this store's client."""
        step, reply = op.send, None
        pipeline = self._pipeline
        with translated_errors:
            while True:
                try:
                    request = step(reply)
                except StopIteration as done:
                    result: T = done.value
                    return result
                try:
                    if pipeline is None:
                        reply = await dispatch(self.client, request)
                    else:
                        reply = await pipeline.send(request)
                    step = op.send
                except ResponseError as error:  # for the operation to handle, or not
                    step, reply = op.throw, error

    append = _async(appending.append)
    head = _async(streams.head)
    read = _async(streams.read)
    batches = _async(streams.batches)
    command_result = _async(streams.command_result)
    command_record = _async(streams.command_record)
    last_batch = _async(streams.last_batch)
    verify = _async(streams.verify)
    read_outbox = _async(streams.read_outbox)

    async def follow(
        self, game_id: str, after: int = 0, *, timeout: float | None = None, poll: float = 1.0
    ) -> AsyncIterator[StoredEvent]:
        """The asyncio twin of `EventStore.follow`."""
        idle = _Idle(timeout, poll)
        go_on, block = idle.next_block()
        while go_on:
            for event in (
                events := await self.run(streams.poll(self.context, game_id, after, block, 100))
            ):
                yield event
            if events:
                idle.reset()
                after = events[-1].version
            go_on, block = idle.next_block()
