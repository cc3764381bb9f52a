"""The event store over a Redis client: `EventStore` (sync) and `AsyncEventStore` (asyncio).

Both are thin: every operation is written once as a generator of Redis requests
(`store.protocol`; the operations are in `store.appending` and `store.streams`), and a store
only carries the requests to its client (`run`), throws a Redis error reply into the
operation (which may handle it) and translates Redis failures into `StoreUnavailable`. The
public methods are those operations bound once for both stores (`_operation`), so their
signatures and docstrings are the ones of the operations. What the two stores would
otherwise each write, the stepping of an operation and the polling of `follow`, is in
`store.stepping`; here is only how a request reaches the client, called or awaited.
Clients are passed in, never made here: `redis.Redis`, `redis.cluster.RedisCluster`,
`fakeredis.FakeRedis` and their asyncio counterparts all work. They must not decode
responses: events are bytes, hashed as bytes.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator, Sequence
from functools import wraps
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar, cast, overload

from redis.exceptions import ResponseError

from store import appending, streams
from store.cluster import on_cluster
from store.context import Context
from store.errors import translated_errors
from store.keys import KeySpace
from store.protocol import Op, Request, dispatch
from store.shelf import Shelf
from store.stepping import Polling, Stepping
from store.stored import StoredEvent

P = ParamSpec("P")
T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)


class _Bound(Protocol[P, T_co]):
    """What `_operation` makes, for the type checker: an operation taking `P` and returning
    `T_co`, as a method of each store."""

    @overload
    def __get__(
        self, store: None, owner: type[Any], /
    ) -> Callable[Concatenate[EventStore | AsyncEventStore, P], Any]: ...
    @overload
    def __get__(self, store: EventStore, owner: type[Any], /) -> Callable[P, T_co]: ...
    @overload
    def __get__(
        self, store: AsyncEventStore, owner: type[Any], /
    ) -> Callable[P, Coroutine[Any, Any, T_co]]: ...


def _operation(op: Callable[Concatenate[Context, P], Op[T]]) -> _Bound[P, T]:
    """`op` as a method of both stores: `store.run(op(store.context, ...))`, which is the
    result on an `EventStore` and a coroutine of it on an `AsyncEventStore` (no coroutine of
    its own around that one). A plain function, bound to the store as any method is (no
    `__get__` of ours runs on each call); `_Bound` tells the type checker what each gives."""

    @wraps(op)
    def method(store: EventStore | AsyncEventStore, /, *args: P.args, **kwargs: P.kwargs) -> Any:
        return store.run(op(store.context, *args, **kwargs))

    return cast("_Bound[P, T]", method)


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

    append = _operation(appending.append)
    head = _operation(streams.head)
    read = _operation(streams.read)
    batches = _operation(streams.batches)
    command_result = _operation(streams.command_result)
    command_memo = _operation(streams.command_memo)
    last_batch = _operation(streams.last_batch)
    verify = _operation(streams.verify)
    read_outbox = _operation(streams.read_outbox)


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
        stepping = Stepping(op)
        step: Callable[[Any], Request | None] = stepping.send
        reply: Any = None
        with translated_errors:
            while (request := step(reply)) is not None:
                try:
                    step, reply = stepping.send, dispatch(self.client, request)
                except ResponseError as error:  # for the operation to handle, or not
                    step, reply = stepping.throw, error
        return stepping.result

    def gather(self, *ops: Op[Any]) -> list[Any]:
        """Carry out independent operations together, their results in order: each round
        sends the next request of every one still going in one pipeline, so that k
        operations of one request each cost one round trip to Redis rather than k."""
        steppings = [Stepping(op) for op in ops]
        replies: list[Any] = [None] * len(ops)  # the first step of each sends None
        going: Sequence[int] = range(len(ops))
        with translated_errors:
            while going:
                requests: list[tuple[int, Request]] = []
                for index in going:
                    stepping, reply = steppings[index], replies[index]
                    if isinstance(reply, ResponseError):
                        request = stepping.throw(reply)
                    else:
                        request = stepping.send(reply)
                    if request is not None:
                        requests.append((index, request))
                if not requests:
                    break
                pipeline = self.client.pipeline(transaction=False)
                for _index, request in requests:
                    dispatch(pipeline, request)
                for (index, _request), reply in zip(
                    requests, pipeline.execute(raise_on_error=False), strict=True
                ):
                    replies[index] = reply
                going = [index for index, _request in requests]
        return [stepping.result for stepping in steppings]

    def follow(
        self, game_id: str, after: int = 0, *, timeout: float | None = None, poll: float = 1.0
    ) -> Iterator[StoredEvent]:
        """Yield the game's events after version `after` as they are appended, ending once
        `timeout` seconds pass without one (None: never). Each XREAD blocks at most `poll`
        seconds, which must stay below the client's socket timeout."""
        polling = Polling(self.context, game_id, after, timeout, poll)
        while (read := polling.next_read()) is not None:
            events = self.run(read)
            polling.found(events)
            yield from events


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
        """Carry out one operation on this store's client. The stepping of `Stepping`, written
        out: this is on the path of every request of the server, where its object and its
        calls cost some 0.15 us an operation, on the 1 to 2 us of CPU the store's own part of
        an operation costs (a client that answers at once, measured side by side)."""
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

    async def follow(
        self, game_id: str, after: int = 0, *, timeout: float | None = None, poll: float = 1.0
    ) -> AsyncIterator[StoredEvent]:
        """The asyncio twin of `EventStore.follow` (its timeout starts again once the events
        of a read were taken, not when they came)."""
        polling = Polling(self.context, game_id, after, timeout, poll)
        while (read := polling.next_read()) is not None:
            events = await self.run(read)
            for event in events:
                yield event
            polling.found(events)
