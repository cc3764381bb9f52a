"""The logic of every store operation, written once for the sync and the asyncio stores.

Each operation is a generator that yields the Redis requests it needs (`Call`, `Eval`) and is
sent their replies: it does no I/O itself. `EventStore` and `AsyncEventStore` (store.client)
only carry requests to their client and replies back, so checks, key building, hashing and
parsing exist once, and so does every multi-step flow (an append that learns the head hash
from a conflict and tries again, a load that falls back when a snapshot does not check out).
"""

from __future__ import annotations

import hashlib
import itertools
import secrets
from collections.abc import Generator, Mapping, Sequence
from typing import Any, NamedTuple, TypeVar, cast

from redis.exceptions import NoScriptError

from store import chain
from store.errors import (
    CommandIdReused,
    CorruptGame,
    DuplicateCommand,
    StoreError,
    VersionConflict,
)
from store.keys import KeySpace, check_command_id, entry_id
from store.records import AppendResult, Batch, Head, OutboxEntry, Snapshot, StoredEvent
from store.scripts import ScriptName, sha, source

T = TypeVar("T")


class Call(NamedTuple):
    """Call the client's method `method` with positional `args`."""

    method: str
    args: tuple[Any, ...]


class Eval(NamedTuple):
    """Run one of the store's scripts by its SHA1. (Named tuples: an append makes one per
    call, and they are cheap.)"""

    script: ScriptName
    numkeys: int
    keys_and_args: tuple[Any, ...]


Request = Call | Eval
Op = Generator[Request, Any, T]
"""An operation: yields requests, is sent each reply, returns its result."""


def dispatch(client: Any, request: Request) -> Any:
    """Start `request` on `client`: a reply for a sync client, an awaitable for an async one.
    A store sends the op a NoScriptError raised here (`op.throw`), for `evaluate` to handle."""
    if isinstance(request, Eval):
        return client.evalsha(sha(request.script), request.numkeys, *request.keys_and_args)
    return getattr(client, request.method)(*request.args)


def evaluate(script: ScriptName, numkeys: int, keys_and_args: tuple[Any, ...]) -> Op[Any]:
    """Run a script by SHA1, loading it first if the server does not know it (NOSCRIPT: it
    did not run, so sending again is safe). Not redis-py's `Script`: that costs more per call
    on the path of every append, and the two stores would each need their own."""
    request = Eval(script, numkeys, keys_and_args)
    try:
        return (yield request)
    except NoScriptError:
        yield Call("script_load", (source(script),))
        return (yield request)


class HeadCache:
    """The last known version and hash of recently used games, so that an append needs no
    read first: the client must hash from the head hash (Redis's Lua has no SHA-256).

    An entry may be old but is never wrong: the hash of a version never changes once written.
    The script checks it anyway, and a conflict reply brings the true head, so even a game
    deleted and rewritten behind the cache's back costs one extra round trip, never a bad link.
    """

    def __init__(self, size: int) -> None:
        self._size = size
        # A plain dict: each get, set and pop is atomic under the GIL, and no lock is taken on
        # the path of every append. Insertion order makes the eviction least recently stored.
        self._heads: dict[str, tuple[int, str]] = {}

    def get(self, game_id: str, version: int) -> str | None:
        """The hash of `version` of the game if it is the version last seen, else None."""
        if version == 0:
            return chain.ZERO_HASH
        known = self._heads.get(game_id)
        return known[1] if known is not None and known[0] == version else None

    def put(self, game_id: str, version: int, hash_hex: str) -> None:
        if self._size <= 0 or version <= 0:
            return
        self._heads.pop(game_id, None)
        self._heads[game_id] = (version, hash_hex)
        if len(self._heads) > self._size:
            self._heads.pop(next(iter(self._heads)), None)


class Context:
    """What the operations of one store share: the key space and the head cache."""

    def __init__(self, keys: KeySpace, head_cache_size: int = 10_000) -> None:
        self.keys = keys
        self.heads = HeadCache(head_cache_size)
        # Every append call gets a nonce the script records with the command, so that a
        # re-send of that very call (the client's own retry after a lost reply) is told
        # apart from another call reusing the command id: the first gets its result back,
        # the second a DuplicateCommand.
        self._nonce_prefix = secrets.token_hex(8)
        self._counter = itertools.count()

    def nonce(self) -> str:
        return f"{self._nonce_prefix}{next(self._counter):x}"


# --- parsing ------------------------------------------------------------------------------


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _version(stream_id: bytes) -> int:
    return int(stream_id.partition(b"-")[0])


def _events(entries: Sequence[Any]) -> list[StoredEvent]:
    """Events from XRANGE/XREVRANGE/XREAD entries as redis-py parses them: (id, {field: value})."""
    return [
        StoredEvent(_version(entry_id_), fields[b"d"], fields[b"h"].decode())
        for entry_id_, fields in entries
    ]


def _lua_events(entries: Sequence[Any]) -> list[StoredEvent]:
    """Events from XRANGE run inside a script: [id, [field, value, ...]], fields in the order
    the append script writes them (d, h, then c and m on the first event of a batch)."""
    events = []
    for entry_id_, fields in entries:
        if fields[0] == b"d" and fields[2] == b"h":
            events.append(StoredEvent(_version(entry_id_), fields[1], fields[3].decode()))
        else:  # an entry written some other way: look the fields up
            named = dict(zip(fields[::2], fields[1::2], strict=True))
            events.append(StoredEvent(_version(entry_id_), named[b"d"], named[b"h"].decode()))
    return events


def _xread_entries(reply: Any) -> Sequence[Any]:
    """The entries of the one stream an XREAD asked for, in any of redis-py's reply shapes:
    RESP2 `[[key, entries]]`, RESP3 `{key: [entries]}` or the unified `{key: entries}`."""
    if not reply:
        return []
    streams = list(reply.values()) if isinstance(reply, Mapping) else [item[1] for item in reply]
    entries: Sequence[Any] = streams[0]
    if entries and isinstance(entries[0], list):  # RESP3 wraps the entries in one more list
        entries = entries[0]
    return entries


def _first_result(record: bytes) -> AppendResult:
    """A command record: "<first> <last> <hash> <nonce> <digest>"."""
    first, last, hash_hex, _rest = record.split(b" ", 3)
    return AppendResult(int(first), int(last), hash_hex.decode())


def _snapshot(raw: bytes) -> Snapshot:
    """A saved snapshot: "<version> <hash> <tag>\\n<state bytes>"."""
    header, _, state = raw.partition(b"\n")
    version, hash_hex, tag = header.split(b" ")
    return Snapshot(int(version), hash_hex.decode(), tag.decode(), state)


def default_digest(expected_version: int, events: Sequence[bytes]) -> str:
    """The default digest of an append request: the expected version and the events, each
    length-prefixed so that no two different requests share one byte string."""
    parts = [expected_version.to_bytes(8, "big")]
    for data in events:
        parts += (len(data).to_bytes(8, "big"), data)
    return hashlib.sha256(b"".join(parts)).hexdigest()


def rules_tag(rules_version: str | int) -> str:
    tag = str(rules_version)
    if not 0 < len(tag) <= 100 or any(char.isspace() for char in tag):
        raise ValueError(f"a rules version is 1-100 characters without spaces, not {tag!r}")
    return tag


# --- operations ---------------------------------------------------------------------------


class AppendCall:
    """One append, prepared: the arguments of the script and the meaning of its reply.

    Shared by the `append` operation (both stores) and the sync store's direct path, so the
    rules of an append exist once. `arguments()` gives the script's keys and arguments for the
    head hash currently believed; `outcome(reply)` gives the result, raises the typed error,
    or returns None when the script reported a head hash the call did not know: then
    `arguments()` chains from it and the call is sent again (once).
    """

    __slots__ = (
        "command_id",
        "ctx",
        "datas",
        "digest",
        "expected_version",
        "first",
        "game_id",
        "hashes",
        "keys",
        "last",
        "metadata",
        "nonce",
        "previous",
        "retried",
    )

    def __init__(  # noqa: PLR0917 (the issue's signature: append(game, version, events, id, meta))
        self,
        ctx: Context,
        game_id: str,
        expected_version: int,
        events: Sequence[bytes],
        command_id: str,
        metadata: bytes = b"",
        request_digest: str | None = None,
    ) -> None:
        self.keys = ctx.keys.game(game_id)
        check_command_id(command_id)
        if type(cast(object, events)) in (bytes, str) or not events:  # bytes: a Sequence of ints
            raise ValueError("append takes a non-empty sequence of encoded events")
        if type(metadata) is not bytes:
            raise TypeError("metadata is bytes")
        if expected_version < 0:
            raise ValueError("expected_version is 0 for a new game, else the last version seen")
        datas = list(events)
        if any(type(data) is not bytes for data in datas):
            raise TypeError("each event is the bytes of its canonical encoding")
        self.ctx, self.game_id, self.command_id, self.metadata = ctx, game_id, command_id, metadata
        self.expected_version, self.datas = expected_version, datas
        self.first, self.last = expected_version + 1, expected_version + len(datas)
        self.digest = (
            default_digest(expected_version, datas) if request_digest is None else request_digest
        )
        self.nonce = ctx.nonce()
        self.previous = ctx.heads.get(game_id, expected_version)
        self.hashes: list[str] = []
        self.retried = False

    def arguments(self) -> tuple[Any, ...]:
        """KEYS and ARGV of `append.lua` (see its header), chained from `previous`."""
        first, last, previous = self.first, self.last, self.previous
        self.hashes = hashes = chain.extend(previous or chain.ZERO_HASH, first, self.datas)
        keys = self.keys
        args: list[Any] = [
            keys.events,
            keys.commands,
            keys.outbox,
            self.game_id,
            # unknown head hash: the script answers with the true one
            f"{self.expected_version} {previous or ''}",
            self.command_id,
            self.metadata,
            f"{first} {last} {hashes[-1]} {self.nonce} {self.digest}",  # the command record
            f"{last} {hashes[-1]}",  # the new head
            len(self.datas),
        ]
        for version, data, link_hash in zip(
            range(first, last + 1), self.datas, hashes, strict=True
        ):
            args += (f"{version}-1", data, link_hash)  # entry_id(version), inlined
        return tuple(args)

    def outcome(self, reply: Any) -> AppendResult | None:
        ctx, game_id = self.ctx, self.game_id
        status = reply[0]
        if status == b"ok":
            result = AppendResult(self.first, self.last, self.hashes[-1])
            ctx.heads.put(game_id, result.last_version, result.head_hash)
            return result
        if status in (b"again", b"duplicate", b"reused"):
            earlier = AppendResult(int(reply[1]), int(reply[2]), _text(reply[3]))
            ctx.heads.put(game_id, earlier.last_version, earlier.head_hash)  # a true fact
            if status == b"again":
                return earlier
            if status == b"duplicate":
                raise DuplicateCommand(earlier)
            raise CommandIdReused(self.command_id, earlier)
        current, current_hash = int(reply[1]), _text(reply[2])
        ctx.heads.put(game_id, current, current_hash)
        if (
            status == b"conflict"
            and current == self.expected_version
            and self.previous != current_hash
            and not self.retried
        ):
            # The version is right but the hash we chained from was unknown or stale. The
            # script wrote nothing; chain from the head it reported and send again.
            self.previous, self.retried = current_hash, True
            return None
        raise VersionConflict(current)


def append(  # noqa: PLR0917 (the issue's signature: append(game, version, events, id, meta))
    ctx: Context,
    game_id: str,
    expected_version: int,
    events: Sequence[bytes],
    command_id: str,
    metadata: bytes = b"",
    *,
    request_digest: str | None = None,
) -> Op[AppendResult]:
    """Append `events` (each the canonical bytes of one event) as versions
    `expected_version + 1 ...`, wholly or not at all, and return the versions they took.

    `expected_version` is the version the caller decided on (0: the game does not exist
    yet). `command_id` makes the append idempotent: appending again with the same id and the
    same request digest (by default a digest of `expected_version` and `events`; pass the
    digest of the command itself to ignore how it was decided) writes nothing and raises
    `DuplicateCommand(first_result)`; with another digest it raises `CommandIdReused`.
    `metadata` is opaque bytes kept with the first event of the batch (seat, time, command).

    Raises `VersionConflict(current)` when the game is not at `expected_version`, and
    `StoreUnavailable` when Redis cannot be reached: then whether the append landed is
    unknown, and retrying with the same command id is safe.

    Retries: redis-py re-sends a command after a connection or timeout error when its client
    has a `Retry` (the default in redis-py 6 and later). If the first send reached Redis and
    only the reply was lost, the re-send meets this call's own command record (same command
    id, digest and call nonce) and the script answers with the first result, writing nothing:
    the caller gets its `AppendResult` as if nothing had happened, and the events are stored
    once. NOSCRIPT retries (after a restart) are safe as the script did not run.
    """
    call = AppendCall(ctx, game_id, expected_version, events, command_id, metadata, request_digest)
    while True:
        reply = yield from evaluate("append", 3, call.arguments())
        result = call.outcome(reply)
        if result is not None:
            return result


def head(ctx: Context, game_id: str) -> Op[Head]:
    """The latest version of the game and its hash (version 0 and the zero hash if none)."""
    reply = yield Call("xrevrange", (ctx.keys.game(game_id).events, "+", "-", 1))
    events = _events(reply)
    if not events:
        return Head(0, chain.ZERO_HASH)
    ctx.heads.put(game_id, events[0].version, events[0].hash)
    return Head(events[0].version, events[0].hash)


def read(
    ctx: Context, game_id: str, after: int = 0, to: int | None = None
) -> Op[list[StoredEvent]]:
    """The events with `after < version <= to` (to the head when `to` is None), in order."""
    if after < 0 or (to is not None and to <= after):
        return []
    end = "+" if to is None else entry_id(to)
    reply = yield Call("xrange", (ctx.keys.game(game_id).events, entry_id(after + 1), end))
    events = _events(reply)
    if events and to is None:
        ctx.heads.put(game_id, events[-1].version, events[-1].hash)
    return events


def poll(
    ctx: Context, game_id: str, after: int, block_ms: int | None, count: int
) -> Op[list[StoredEvent]]:
    """One XREAD of the events after `after`, blocking up to `block_ms` (None: not at all)."""
    stream = ctx.keys.game(game_id).events
    reply = yield Call("xread", ({stream: entry_id(after)}, count, block_ms))
    return _events(_xread_entries(reply))


def batches(ctx: Context, game_id: str) -> Op[list[Batch]]:
    """Every append of the game, in order: command id, metadata and versions."""
    reply = yield Call("xrange", (ctx.keys.game(game_id).events, "-", "+"))
    found: list[Batch] = []
    last = 0
    for stream_id, fields in reply:
        version = _version(stream_id)
        command_id = fields.get(b"c")
        if command_id is not None:
            if found:
                found[-1] = _closed(found[-1], version - 1)
            found.append(Batch(command_id.decode(), fields.get(b"m", b""), version, version))
        last = version
    if found:
        found[-1] = _closed(found[-1], last)
    return found


def _closed(batch: Batch, last_version: int) -> Batch:
    return Batch(batch.command_id, batch.metadata, batch.first_version, last_version)


def command_result(ctx: Context, game_id: str, command_id: str) -> Op[AppendResult | None]:
    """The result of the append that used `command_id` in this game, or None if none did."""
    check_command_id(command_id)
    record = yield Call("hget", (ctx.keys.game(game_id).commands, command_id))
    return None if record is None else _first_result(record)


def command_record(
    ctx: Context, game_id: str, command_id: str
) -> Op[tuple[AppendResult, str] | None]:
    """The first result of `command_id` in this game and the digest of its request, so that a
    caller can tell a retry of an accepted request (same digest) from a reused id."""
    check_command_id(command_id)
    record = yield Call("hget", (ctx.keys.game(game_id).commands, command_id))
    if record is None:
        return None
    first, last, hash_hex, _nonce, digest = bytes(record).split(b" ", 4)
    return AppendResult(int(first), int(last), hash_hex.decode()), digest.decode()


def last_batch(ctx: Context, game_id: str) -> Op[Batch | None]:
    """The game's last append, read from the end of the stream: its first entry is the last
    one that carries a command id (a batch is rarely longer than a few dozen events)."""
    key = ctx.keys.game(game_id).events
    end, last_version = "+", 0
    while True:
        entries = yield Call("xrevrange", (key, end, "-", 32))
        if not entries:
            return None
        last_version = last_version or _version(entries[0][0])
        for stream_id, fields in entries:
            command_id = fields.get(b"c")
            if command_id is not None:
                return Batch(
                    command_id.decode(), fields.get(b"m", b""), _version(stream_id), last_version
                )
        end = "(" + _text(entries[-1][0])


def verify(ctx: Context, game_id: str) -> Op[Head]:
    """Read the whole game and check its hash chain; return its head or raise `CorruptGame`."""
    events = yield from read(ctx, game_id)
    try:
        last = chain.verify(events)
    except chain.ChainBroken as broken:
        raise CorruptGame(f"game {game_id}: {broken}") from broken
    return Head(len(events), last)


def save_snapshot(
    ctx: Context, game_id: str, version: int, rules_version: str | int, state: bytes
) -> Op[bool]:
    """Save `state` as the game's state at `version`, unless the snapshot kept for the same
    rules version is as new or newer; return whether it was saved. `rules_version` is any tag
    without spaces that changes whenever the state's meaning or layout does."""
    keys = ctx.keys.game(game_id)
    if type(state) is not bytes:
        raise TypeError("a snapshot's state is bytes")
    reply = yield from evaluate(
        "snapshot", 2, (keys.snapshot, keys.events, version, rules_tag(rules_version), state)
    )
    if int(reply) < 0:
        raise StoreError(f"game {game_id} has no version {version} to snapshot")
    return int(reply) == 1


def load_snapshot(ctx: Context, game_id: str, rules_version: str | int) -> Op[Snapshot | None]:
    """The latest snapshot of the game if it was saved under `rules_version`, else None."""
    tag = rules_tag(rules_version)
    raw = yield Call("get", (ctx.keys.game(game_id).snapshot,))
    if raw is None:
        return None
    snapshot = _snapshot(raw)
    return snapshot if snapshot.rules_version == tag else None


class Tail(NamedTuple):
    """What loading a game needs: the usable snapshot (or None), the bytes of the events
    after it (all events without one), and the game's head."""

    snapshot: Snapshot | None
    datas: list[bytes]
    head: Head


def read_from_snapshot(ctx: Context, game_id: str, rules_version: str | int) -> Op[Tail]:
    """The usable snapshot and the events after it. A snapshot is used only if the event of
    its version is in the stream with the hash the snapshot names, so that a snapshot never
    outlives the log it was made from. With a usable snapshot this is one round trip; without,
    two (the second a plain XRANGE). Event bytes only, no `StoredEvent`s: this is the path of
    every load, and a game's whole log without a snapshot."""
    keys = ctx.keys.game(game_id)
    raw, entries = yield from evaluate(
        "load", 2, (keys.snapshot, keys.events, rules_tag(rules_version))
    )
    if raw:
        snapshot = _snapshot(raw)
        events = _lua_events(entries)
        if events and events[0].version == snapshot.version and events[0].hash == snapshot.hash:
            last = events[-1]
            ctx.heads.put(game_id, last.version, last.hash)
            datas = [event.data for event in events[1:]]
            return Tail(snapshot, datas, Head(last.version, last.hash))
    reply = yield Call("xrange", (keys.events, "-", "+"))
    if not reply:
        return Tail(None, [], Head(0, chain.ZERO_HASH))
    last_id, last_fields = reply[-1]
    head = Head(_version(last_id), last_fields[b"h"].decode())
    if head.version != len(reply):
        raise CorruptGame(f"game {game_id} has {len(reply)} events up to version {head.version}")
    ctx.heads.put(game_id, head.version, head.hash)
    return Tail(None, [fields[b"d"] for _id, fields in reply], head)


def read_outbox(
    ctx: Context, shard: int, after: str = "0-0", count: int = 100
) -> Op[list[OutboxEntry]]:
    """Up to `count` outbox entries of `shard` after the entry id `after` (for tools and
    tests; the workers read the feeds with consumer groups)."""
    reply = yield Call("xread", ({ctx.keys.outbox(shard): after}, count, None))
    return [
        OutboxEntry(
            stream_id.decode(),
            fields[b"g"].decode(),
            *(int(version) for version in fields[b"c"].split(b" ", 2)[:2]),
        )
        for stream_id, fields in _xread_entries(reply)
    ]
