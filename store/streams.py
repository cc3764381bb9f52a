"""Reading a game's stream and command memos: the head, a range of events, a blocking poll, the
appends (batches) with their metadata, command memos, the outbox feeds; and the parsing of
redis-py's replies, in each shape it gives them, and of the entries in each form the store has
written (the lean form and the one before it, docs/store.md "Stream entries").

Each read that finds no live keys answers from the game's archive, if it has one
(`store.archived`): the archive is written before the live keys go.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from store import chain
from store.archived import known_archive, load_archive
from store.context import Context
from store.errors import CorruptGame
from store.keys import check_command_id, entry_id
from store.protocol import Call, Op, reply_text
from store.stored import (
    AppendMeta,
    AppendResult,
    Batch,
    Head,
    OutboxEntry,
    StoredEvent,
    command_key,
    encode_meta,
    full_command_id,
    meta_decoder,
    unpack_meta,
)


def stream_version(stream_id: bytes) -> int:
    return int(stream_id.partition(b"-")[0])


def entry_hash(fields: Mapping[bytes, bytes]) -> str:
    """An entry's chain hash, in hex: field `H` (32 raw bytes) or, before the lean form, `h`."""
    raw = fields.get(b"H")
    return raw.hex() if raw is not None else fields[b"h"].decode()


def entry_batch(fields: Mapping[bytes, bytes], first: int, last: int) -> Batch | None:
    """The append an entry begins (None if it begins none): its command id and metadata, `M`
    (the command path's, compact) read back as its JSON with the id `c` spelled out, or `m`
    as it was given (b"" if neither)."""
    stored = fields.get(b"c")
    if stored is None:
        return None
    command_id = stored.decode()
    packed = fields.get(b"M")
    if packed is None:
        return Batch(command_id, bytes(fields.get(b"m", b"")), first, last)
    meta = unpack_meta(packed)
    return Batch(full_command_id(command_id, meta.player), encode_meta(meta), first, last)


def events_of(entries: Sequence[Any]) -> list[StoredEvent]:
    """Events from XRANGE/XREVRANGE/XREAD entries as redis-py parses them: (id, {field: value})."""
    return [
        StoredEvent(stream_version(entry_id_), fields[b"d"], entry_hash(fields))
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


def parse_memo(memo: bytes) -> tuple[int, int, str | None, str]:
    """A command memo: first and last version, the hash if the memo names it, and the
    request digest as `command_memo` gives it. Lean: "<first> <last> <nonce><digest>" (8
    and 16 raw bytes); before: "<first> <last> <hash> <nonce> <digest>", all hex."""
    first, last, rest = bytes(memo).split(b" ", 2)
    if len(rest) == 24:
        return int(first), int(last), None, rest[8:].hex()
    hash_hex, _nonce, digest = rest.split(b" ", 2)  # a memo of before the lean form
    return int(first), int(last), hash_hex.decode(), digest.decode()


def head(ctx: Context, game_id: str) -> Op[Head]:
    """The latest version of the game and its hash (version 0 and the zero hash if none)."""
    reply = yield Call("xrevrange", (ctx.keys.game(game_id).events, "+", "-", 1))
    events = events_of(reply)
    if not events:
        archive = yield from load_archive(ctx, game_id)
        if archive is None:
            return Head(0, chain.ZERO_HASH)
        events = archive.events(archive.version - 1)
    ctx.heads.put(game_id, events[0].version, events[0].hash)
    return Head(events[0].version, events[0].hash)


def read(
    ctx: Context, game_id: str, after: int = 0, to: int | None = None
) -> Op[list[StoredEvent]]:
    """The events with `after < version <= to` (to the head when `to` is None), in order.

    The range read starts at `after` itself, so that a live game always answers with at
    least that entry: an empty reply then means no live stream (an archived game, or none),
    without a second round trip to tell which on the path of every catching up."""
    if after < 0 or (to is not None and to <= after):
        return []
    end = "+" if to is None else entry_id(to)
    start = entry_id(after) if after else "-"
    reply = yield Call("xrange", (ctx.keys.game(game_id).events, start, end))
    if not reply:
        archive = yield from load_archive(ctx, game_id)
        return [] if archive is None else archive.events(after, to)
    events = events_of(reply)
    if events[0].version == after:
        del events[0]
    if events and to is None:
        ctx.heads.put(game_id, events[-1].version, events[-1].hash)
    return events


def poll(
    ctx: Context, game_id: str, after: int, block_ms: int | None, count: int
) -> Op[list[StoredEvent]]:
    """One XREAD of the events after `after`, blocking up to `block_ms` (None: not at all);
    when none came, those of the game's archive (which never gets more). An archive this
    process has at hand answers at once: an XREAD would block on a stream that is no more."""
    known = known_archive(ctx, game_id)
    if known is not None:
        return known.events(after, after + count)
    stream = ctx.keys.game(game_id).events
    reply = yield Call("xread", ({stream: entry_id(after)}, count, block_ms))
    events = events_of(_xread_entries(reply))
    if not events:
        archive = yield from load_archive(ctx, game_id)
        if archive is not None:
            return archive.events(after, after + count)
    return events


def batches(ctx: Context, game_id: str) -> Op[list[Batch]]:
    """Every append of the game, in order: command id, metadata and versions."""
    reply = yield Call("xrange", (ctx.keys.game(game_id).events, "-", "+"))
    if not reply:
        archive = yield from load_archive(ctx, game_id)
        return [] if archive is None else archive.as_batches()
    return batches_of(reply)


BATCH_LOOKBACK = 32
"""Entries read back at a time to find where an append began (one is rarely longer)."""


def batches_around(ctx: Context, game_id: str, since: int, version: int) -> Op[list[Batch]]:
    """The appends that hold the versions `since` to `version` (from 1 when `since` is 0),
    the last one cut at `version`: what a seat is told happened since its last decision,
    read from that part of the stream alone (the whole game grows with every move)."""
    key = ctx.keys.game(game_id).events
    start = max(since, 1)
    low = max(start - BATCH_LOOKBACK + 1, 1)
    entries = list((yield Call("xrange", (key, entry_id(low), entry_id(version)))))
    found = batches_of(entries)
    while entries and low > 1 and (not found or found[0].first_version > start):
        # the append that holds `start` began further back
        end, low = entry_id(low), max(low - BATCH_LOOKBACK, 1)
        earlier = yield Call("xrange", (key, entry_id(low), "(" + end))
        entries = [*earlier, *entries] if earlier else []  # none: archived meanwhile
        found = batches_of(entries)
    if not entries:  # archived (or no such game): from the whole game as it is kept
        every = yield from batches(ctx, game_id)
        return [
            _closed(b, min(b.last_version, version))
            for b in every
            if b.last_version >= start and b.first_version <= version
        ]
    return [batch for batch in found if batch.last_version >= start]


def batches_of(entries: Sequence[Any]) -> list[Batch]:
    """The appends of a whole stream read by XRANGE: each runs from an entry with a command
    id to the entry before the next one."""
    found: list[Batch] = []
    last = 0
    for stream_id, fields in entries:
        version = stream_version(stream_id)
        batch = entry_batch(fields, version, version)
        if batch is not None:
            if found:
                found[-1] = _closed(found[-1], version - 1)
            found.append(batch)
        last = version
    if found:
        found[-1] = _closed(found[-1], last)
    return found


def _closed(batch: Batch, last_version: int) -> Batch:
    return Batch(batch.command_id, batch.metadata, batch.first_version, last_version)


def command_result(ctx: Context, game_id: str, command_id: str) -> Op[AppendResult | None]:
    """The result of the append that used `command_id` in this game, or None if none did."""
    known = yield from command_memo(ctx, game_id, command_id)
    return None if known is None else known[0]


def command_memo(
    ctx: Context, game_id: str, command_id: str
) -> Op[tuple[AppendResult, str] | None]:
    """The first result of `command_id` in this game and the digest of its request, so that a
    caller can tell a retry of an accepted request from a reused id (`appending.same_request`:
    a lean memo keeps 16 bytes of the digest, given here in hex)."""
    check_command_id(command_id)
    keys = ctx.keys.game(game_id)
    lean, old = yield Call("hmget", (keys.commands, [command_key(command_id), command_id]))
    memo = lean if lean is not None else old
    if memo is None:
        archive = yield from load_archive(ctx, game_id)
        batch = None if archive is None else archive.batch(command_id)
        if archive is None or batch is None:
            return None
        last_hash = archive.hashes[batch.last_version - 1].hex()
        return AppendResult(batch.first_version, batch.last_version, last_hash), batch.digest
    first, last, hash_hex, request_digest = parse_memo(memo)
    if hash_hex is None:  # a lean memo: the hash is its last entry's
        at = entry_id(last)
        entries = yield Call("xrange", (keys.events, at, at))
        hash_hex = entry_hash(entries[0][1])
    return AppendResult(first, last, hash_hex), request_digest


def metadata_at(ctx: Context, game_id: str, first_version: int) -> Op[bytes]:
    """The metadata of the append that began at `first_version` (b"" if none began there)."""
    key = ctx.keys.game(game_id).events
    at = entry_id(first_version)
    entries = yield Call("xrange", (key, at, at))
    batch = entry_batch(entries[0][1], first_version, first_version) if entries else None
    if batch is not None:
        return batch.metadata
    if entries:
        return b""
    archive = yield from load_archive(ctx, game_id)
    kept = [] if archive is None else archive.batches
    return next((b.metadata for b in kept if b.first_version == first_version), b"")


def last_batch(ctx: Context, game_id: str) -> Op[Batch | None]:
    """The game's last append, read from the end of the stream: its first entry is the last
    one that carries a command id (a batch is rarely longer than a few dozen events)."""
    key = ctx.keys.game(game_id).events
    end, last_version = "+", 0
    while True:
        entries = yield Call("xrevrange", (key, end, "-", 32))
        if not entries:
            if last_version:
                return None
            archive = yield from load_archive(ctx, game_id)
            return None if archive is None or not archive.batches else archive.as_batches()[-1]
        last_version = last_version or stream_version(entries[0][0])
        for stream_id, fields in entries:
            batch = entry_batch(fields, stream_version(stream_id), last_version)
            if batch is not None:
                return batch
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
    return [outbox_entry(stream_id, fields) for stream_id, fields in _xread_entries(reply)]


def outbox_entry(stream_id: bytes | str, fields: Mapping[bytes, bytes]) -> OutboxEntry:
    """An outbox notice as Redis gives it (its id and fields), read leniently: metadata that
    is missing (a notice of before it was carried) or not the command path's is None."""
    first, last = fields[b"c"].split(b" ", 2)[:2]
    meta: AppendMeta | None = None
    try:
        if (packed := fields.get(b"M")) is not None:
            meta = unpack_meta(packed)
        elif (given := fields.get(b"m")) is not None:
            meta = meta_decoder.decode(given)
    except (msgspec.DecodeError, ValueError, TypeError):
        meta = None
    entry_id = stream_id.decode() if isinstance(stream_id, bytes) else stream_id
    return OutboxEntry(entry_id, fields[b"g"].decode(), int(first), int(last), meta)
