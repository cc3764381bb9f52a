"""The stores' shared halves, sans-IO: the stepping of one operation and the polling of
`follow`. `EventStore` and `AsyncEventStore` (store.client) differ only in how a request
reaches Redis (called, or awaited); everything else they do is here, once, so that the two
can never drift apart. Nothing here does I/O.
"""

from __future__ import annotations

import time
from typing import Any, Generic, TypeVar

from store import streams
from store.context import Context
from store.protocol import Op, Request
from store.stored import StoredEvent

T = TypeVar("T")

FOLLOW_COUNT = 100
"""Events asked for by each read of `follow`."""


class Stepping(Generic[T]):
    """One operation being carried out: give it the reply to its request (`send`), or the
    error reply Redis gave (`throw`: the operation may handle it, as `evaluate` does
    NOSCRIPT), and get its next request, or None once it returned (then its `result`).

    A store's `run` starts with `send(None)`. `EventStore.run` and `EventStore.gather` step
    their operations with it; `AsyncEventStore.run`, on the path of every request of the
    server, writes the same steps out, which spares this object and its calls."""

    __slots__ = ("_op", "result")

    result: T

    def __init__(self, op: Op[T]) -> None:
        self._op = op

    def send(self, reply: Any) -> Request | None:
        try:
            return self._op.send(reply)
        except StopIteration as done:
            self.result = done.value
            return None

    def throw(self, error: BaseException) -> Request | None:
        try:
            return self._op.throw(error)
        except StopIteration as done:
            self.result = done.value
            return None


class Polling:
    """The reads of `follow`, sans-IO: `next_read` is the next blocking read to make (None
    once `timeout` seconds passed with no new event; never, when `timeout` is None) and
    `found` is told what each read found. Each read blocks at most `poll` seconds, and less
    when the timeout is nearer. One read is always made, so `timeout=0` returns what is there
    without waiting."""

    def __init__(
        self, context: Context, game_id: str, after: int, timeout: float | None, poll: float
    ) -> None:
        self._context = context
        self._game_id = game_id
        self._after = after
        self._timeout = timeout
        self._poll_ms = max(1, int(poll * 1000))
        self._reset()

    def _reset(self) -> None:
        self._deadline = None if self._timeout is None else time.monotonic() + self._timeout
        self._read_since_reset = False

    def next_read(self) -> Op[list[StoredEvent]] | None:
        first, self._read_since_reset = not self._read_since_reset, True
        block: int | None = self._poll_ms
        if self._deadline is not None:
            left_ms = int((self._deadline - time.monotonic()) * 1000)
            if left_ms <= 0 and not first:
                return None
            block = None if left_ms <= 0 else min(self._poll_ms, left_ms)
        return streams.poll(self._context, self._game_id, self._after, block, FOLLOW_COUNT)

    def found(self, events: list[StoredEvent]) -> None:
        """A new event starts the timeout again; the next read starts after the last one."""
        if events:
            self._reset()
            self._after = events[-1].version
