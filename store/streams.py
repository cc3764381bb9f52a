"""Reading a game's stream and records: the head, a range of events, a blocking poll, the
appends (batches) with their metadata, command records, the outbox feeds; and the parsing of
redis-py's replies, in each shape it gives them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from store import chain
from store.context import Context
from store.errors import CorruptGame
from store.keys import check_command_id, entry_id
from store.protocol import Call, Op, reply_text
from store.records import AppendResult, Batch, Head, OutboxEntry, StoredEvent


def stream_version(stream_id: bytes) -> int:
    return int(stream_id.partition(b"-")[0])


def _events(entries: Sequence[Any]) -> list[StoredEvent]:
    """Events from XRANGE/XREVRANGE/XREAD entries as redis-py parses them: (id, {field: value})."""
    return [
        StoredEvent(stream_version(entry_id_), fields[b"d"], fields[b"h"].decode())
        for entry_id_, fields in entries
    ]


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
        version = stream_version(stream_id)
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


def metadata_at(ctx: Context, game_id: str, first_version: int) -> Op[bytes]:
    """The metadata of the append that began at `first_version` (b"" if none began there)."""
    key = ctx.keys.game(game_id).events
    at = entry_id(first_version)
    entries = yield Call("xrange", (key, at, at))
    return bytes(entries[0][1].get(b"m", b"")) if entries else b""


def last_batch(ctx: Context, game_id: str) -> Op[Batch | None]:
    """The game's last append, read from the end of the stream: its first entry is the last
    one that carries a command id (a batch is rarely longer than a few dozen events)."""
    key = ctx.keys.game(game_id).events
    end, last_version = "+", 0
    while True:
        entries = yield Call("xrevrange", (key, end, "-", 32))
        if not entries:
            return None
        last_version = last_version or stream_version(entries[0][0])
        for stream_id, fields in entries:
            command_id = fields.get(b"c")
            if command_id is not None:
                first = stream_version(stream_id)
                return Batch(command_id.decode(), fields.get(b"m", b""), first, last_version)
        end = "(" + reply_text(entries[-1][0])


def verify(ctx: Context, game_id: str) -> Op[Head]:
    """Read the whole game and check its hash chain; return its head or raise `CorruptGame`."""
    events = yield from read(ctx, game_id)
    try:
        last = chain.verify(events)
    except chain.ChainBroken as broken:
        raise CorruptGame(f"game {game_id}: {broken}") from broken
    return Head(len(events), last)


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
