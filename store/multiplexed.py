"""A Redis client for the busiest path of a server process: its commands all go over one
connection, written together and answered in order (multiplexed), with redis-py's commands,
argument handling and reply parsing unchanged.

Why: redis-py's asyncio client takes a connection from its pool for each command, wraps it in
retries and observability hooks and waits on the socket for that one reply. Measured on two
cores, a bare ASGI endpoint making one script call cost 257 us of server CPU a request with
it and 84 us with this client; the store's appends cost their writers 127 us of CPU each on
redis-py's client (pipelined by the store) and 80 us on this one (bench/store.py). Here a
command is packed by hiredis, appended to the connection's buffer and awaits a future; the
buffer goes out in one write per turn of the event loop, however many requests added to it,
and hiredis parses the replies as they come, handing each to its future in order. Redis reads
them in one go too, and with `appendfsync always` one fsync covers them all. With `gather`
(the server's `PATRICIAN_GATHER_SECONDS`, 1 ms) the buffer goes out that long after its first
command instead: a busy process's requests rarely meet within one turn of the loop, and each
write costs both sides a system call and Redis a turn of its own loop (its reads, its replies,
its AOF write); waiting 1 ms made a command cost 0.88 of the server and Redis CPU it cost
sent at once, beside boardgame.io (docs/operations.md), and each round trip of a request up
to 1 ms more (a command makes one).

What cannot share a connection is sent by redis-py's own path, on a pooled connection of its
own: a command that blocks (it would hold up every other), a transaction's or a connection's
state (MULTI, WATCH, SELECT, CLIENT...), and pipelines, which redis-py builds on its pool.

A lost connection fails every command waiting on it with redis-py's `ConnectionError` (the
store says `StoreUnavailable`); the next command connects again. Whether a command that was
in flight ran is unknown, as with any client: the store's writes are idempotent by command
id, so a client sends it again.
"""

from __future__ import annotations

import asyncio
import inspect
import socket
from collections import deque
from collections.abc import Callable
from typing import Any, NamedTuple, cast

import hiredis
from redis._parsers.base import BaseParser
from redis.asyncio import Redis
from redis.asyncio.connection import SSLConnection, UnixDomainSocketConnection
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import InvalidResponse
from redis.exceptions import TimeoutError as RedisTimeoutError
from redis.utils import DEFAULT_RESP_VERSION

_OWN_CONNECTION = frozenset(
    {
        "BLPOP", "BRPOP", "BLMOVE", "BRPOPLPUSH", "BLMPOP", "BZPOPMIN", "BZPOPMAX", "BZMPOP",
        "WAIT", "WAITAOF", "MULTI", "EXEC", "DISCARD", "WATCH", "UNWATCH", "SELECT", "AUTH",
        "HELLO", "CLIENT", "MONITOR", "SUBSCRIBE", "PSUBSCRIBE", "SSUBSCRIBE", "RESET", "QUIT",
        "SYNC", "PSYNC", "SHUTDOWN",
    }
)  # fmt: skip
"""Commands that block, or set state on their connection: never multiplexed."""

KEEPALIVE = {socket.TCP_KEEPIDLE: 5, socket.TCP_KEEPINTVL: 1, socket.TCP_KEEPCNT: 3}
"""A Redis that vanished without closing the connection is found by TCP keep-alive in about
8 s: no per-command timeout (arming one costs as much as the command)."""


_BLOCK_IF_ASKED = frozenset({"XREAD", "XREADGROUP"})
"""Commands that block when given BLOCK."""


def _blocks(args: tuple[Any, ...]) -> bool:
    """Whether a command of `_BLOCK_IF_ASKED` was given BLOCK."""
    return any(isinstance(arg, str | bytes) and arg.upper() in ("BLOCK", b"BLOCK") for arg in args)


class _Known(NamedTuple):
    """What is decided once per command name: whether it keeps off the shared connection
    (always, or when it blocks), how it is spelled, and redis-py's parsing of its reply."""

    own_connection: bool
    blocking_if_asked: bool
    words: tuple[Any, ...]
    callback: Callable[..., Any] | None


def _packed(args: tuple[Any, ...]) -> bytes:
    """A command in RESP, packed by hiredis (str, bytes, int and float arguments)."""
    return cast(bytes, hiredis.pack_command(args))


class _Connection(asyncio.Protocol):
    """One connection: the futures of the commands sent, in order, and what is still to be
    written, at the end of this turn of the loop or `gather` seconds after the first of it."""

    def __init__(self, loop: asyncio.AbstractEventLoop, gather: float = 0.0) -> None:
        self.loop = loop
        self.gather = gather
        self.reader = hiredis.Reader(
            protocolError=InvalidResponse, replyError=BaseParser.parse_error
        )
        self.waiting: deque[asyncio.Future[Any]] = deque()
        self.outgoing: list[bytes] = []
        self.transport: asyncio.Transport | None = None
        self.lost: Exception | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = cast(asyncio.Transport, transport)  # uvloop's is not a subclass
        sock = transport.get_extra_info("socket")
        if sock is not None and sock.family in (socket.AF_INET, socket.AF_INET6):
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)
            for option, value in KEEPALIVE.items():
                sock.setsockopt(socket.IPPROTO_TCP, option, value)

    def send(self, packed: bytes) -> asyncio.Future[Any]:
        if self.lost is not None:
            raise self.lost
        future = self.loop.create_future()
        self.waiting.append(future)
        if not self.outgoing:
            if self.gather > 0:
                self.loop.call_later(self.gather, self._flush)
            else:
                self.loop.call_soon(self._flush)
        self.outgoing.append(packed)
        return future

    def _flush(self) -> None:
        if self.transport is not None and self.lost is None and self.outgoing:
            self.transport.write(b"".join(self.outgoing))
        self.outgoing.clear()

    def data_received(self, data: bytes) -> None:
        reader = self.reader
        try:
            reader.feed(data)
            while (reply := reader.gets()) is not False:
                if isinstance(reply, hiredis.PushNotification):  # nothing subscribes here
                    continue
                future = self.waiting.popleft()
                if future.done():  # its caller gave up waiting (cancelled)
                    continue
                if isinstance(reply, Exception):  # an error reply (parse_error made it)
                    future.set_exception(reply)
                else:
                    future.set_result(reply)
        except (InvalidResponse, IndexError) as error:  # a reply nobody asked for, or garbage
            self._fail(RedisConnectionError(f"protocol error from Redis: {error}"))
            if self.transport is not None:
                self.transport.abort()

    def connection_lost(self, exc: Exception | None) -> None:
        self._fail(RedisConnectionError(f"connection to Redis lost: {exc or 'closed'}"))

    def _fail(self, error: Exception) -> None:
        if self.lost is None:
            self.lost = error
        while self.waiting:
            future = self.waiting.popleft()
            if not future.done():
                future.set_exception(error)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()


class MultiplexedRedis(Redis):
    """`redis.asyncio.Redis` whose single commands share one connection (module docstring).
    Built like it (`from_url`); pipelines, blocking and connection-state commands use its
    pool as redis-py does."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.gather = 0.0
        """How long the first command of a moment waits for the commands of other requests
        to go out with it (0: until the end of the loop's turn); set before the first."""
        self._mux: _Connection | None = None
        self._connecting: asyncio.Lock | None = None
        self._known: dict[Any, _Known] = {}

    async def execute_command(self, *args: Any, **options: Any) -> Any:
        name = args[0]
        known = self._known.get(name)
        if known is None:
            known = self._known[name] = self._decide(name)
        if known.own_connection or (known.blocking_if_asked and _blocks(args)):
            return await super().execute_command(*args, **options)  # type: ignore[no-untyped-call]
        connection = self._mux
        if connection is None or connection.lost is not None:
            connection = await self._connect()
        words = known.words
        response = await connection.send(_packed((*words, *args[1:]) if words else args))
        callback = known.callback
        if callback is None:
            return response
        options.pop("keys", None)
        options.pop("never_decode", None)
        parsed = callback(response, **options)
        return await parsed if inspect.isawaitable(parsed) else parsed

    def _decide(self, name: Any) -> _Known:
        spelled = str(name.decode() if isinstance(name, bytes) else name).upper()
        return _Known(
            spelled.split()[0] in _OWN_CONNECTION,  # CLIENT SETNAME, say
            spelled in _BLOCK_IF_ASKED,
            # redis-py names some commands in two words ("SCRIPT LOAD"), sent as two arguments
            tuple(spelled.split()) if " " in spelled else (),
            self.response_callbacks.get(name),
        )

    async def _connect(self) -> _Connection:
        """The shared connection, made (with its AUTH and SELECT) by the first command to
        find it missing or lost; the others wait for it."""
        if self._connecting is None:
            self._connecting = asyncio.Lock()
        async with self._connecting:
            if self._mux is not None and self._mux.lost is None:
                return self._mux
            pool = self.connection_pool
            settings = pool.connection_kwargs
            loop = asyncio.get_running_loop()
            timeout = settings.get("socket_connect_timeout") or 5

            def protocol() -> _Connection:
                return _Connection(loop, self.gather)

            try:
                if issubclass(pool.connection_class, UnixDomainSocketConnection):
                    made = loop.create_unix_connection(protocol, settings["path"])
                else:
                    ssl = None
                    if issubclass(pool.connection_class, SSLConnection):
                        ssl = pool.make_connection().ssl_context.get()  # type: ignore[no-untyped-call]
                    made = loop.create_connection(
                        protocol,
                        settings.get("host", "localhost"),
                        settings.get("port", 6379),
                        ssl=ssl,
                    )
                _transport, connection = await asyncio.wait_for(made, timeout)
            except TimeoutError as error:  # an OSError too: first
                raise RedisTimeoutError(f"cannot connect to Redis in {timeout} s") from error
            except OSError as error:
                raise RedisConnectionError(f"cannot connect to Redis: {error}") from error
            try:
                await self._greet(connection, settings)
            except BaseException:
                connection.close()
                raise
            self._mux = connection
            return connection

    @staticmethod
    async def _greet(connection: _Connection, settings: dict[str, Any]) -> None:
        """What redis-py says on a new connection: the protocol its replies are parsed for
        (RESP3 unless the URL says 2), the login, the database."""
        protocol = int(settings.get("protocol") or DEFAULT_RESP_VERSION)
        password, username = settings.get("password"), settings.get("username")
        if protocol >= 3:
            login: tuple[Any, ...] = ("AUTH", username or "default", password) if password else ()
            await connection.send(_packed(("HELLO", protocol, *login)))
        elif password:
            login = ("AUTH", username, password) if username else ("AUTH", password)
            await connection.send(_packed(login))
        if settings.get("db"):
            await connection.send(_packed(("SELECT", settings["db"])))

    async def aclose(self, close_connection_pool: bool | None = None) -> None:
        if self._mux is not None:
            self._mux.close()
            self._mux = None
        await super().aclose(close_connection_pool)
