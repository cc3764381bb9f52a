"""Appending to a game's stream: one script call, its arguments and the meaning of its reply.

The client hashes the chain (Redis's Lua has no SHA-256), so an append needs the head hash of
the version it appends after: the head cache remembers it, and a conflict reply brings the
true one. Everything else (the expected version, idempotency by command id, the outbox) is
checked by `append.lua` before its first write.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import Any, cast

from store import archived, chain
from store.context import Context
from store.errors import CommandIdReused, DuplicateCommand, HandedOver, VersionConflict
from store.handovers import legacy_handovers_key
from store.keys import check_command_id
from store.protocol import Op, evaluate
from store.stored import (
    AppendMeta,
    AppendResult,
    command_key,
    hash_text,
    pack_meta,
    short_command_id,
)


def digest(*parts: bytes) -> str:
    """The SHA-256 (hex) of a request's parts, each length-prefixed, so that no two different
    lists of parts share one byte string: the digest a command memo keeps."""
    framed = hashlib.sha256()
    for part in parts:
        framed.update(len(part).to_bytes(8, "big"))
        framed.update(part)
    return framed.hexdigest()


def stored_digest(request_digest: str) -> bytes:
    """What a lean command memo keeps of a request digest: its first 16 bytes (128 bits
    tell two requests of one command id apart), raw; a digest that is not hex, hashed."""
    try:
        raw = bytes.fromhex(request_digest)
    except ValueError:
        raw = b""
    return raw[:16] if len(raw) >= 16 else hashlib.sha256(request_digest.encode()).digest()[:16]


def same_request(recorded: str, request_digest: str) -> bool:
    """Whether the digest a command memo gives back (`streams.command_memo`: the whole
    digest from a memo of before the lean form, the hex of its 16 bytes from a lean one)
    is the one of `request_digest`."""
    return recorded in (request_digest, stored_digest(request_digest).hex())


def default_digest(expected_version: int, events: Sequence[bytes]) -> str:
    """The default digest of an append request: its expected version and its events."""
    return digest(expected_version.to_bytes(8, "big"), *events)


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
        "handed",
        "handovers",
        "hashes",
        "keys",
        "last",
        "meta_field",
        "metadata",
        "nonce",
        "previous",
        "retried",
        "stored_id",
    )

    def __init__(  # noqa: PLR0917 (the issue's signature: append(game, version, events, id, meta))
        self,
        ctx: Context,
        game_id: str,
        expected_version: int,
        events: Sequence[bytes],
        command_id: str,
        metadata: bytes | AppendMeta = b"",
        request_digest: str | None = None,
        unless_handed_over: str = "",
    ) -> None:
        self.keys = ctx.keys.game(game_id)
        check_command_id(command_id)
        # The command path's own metadata is kept compact (field `M`), anything else as given.
        self.meta_field, self.stored_id = "m", command_id
        if isinstance(metadata, AppendMeta):
            self.meta_field, self.stored_id = "M", short_command_id(command_id, metadata.player)
            metadata = pack_meta(metadata)
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
        self.nonce = hashlib.sha256(ctx.nonce().encode()).digest()[:8]
        self.previous = ctx.heads.get(game_id, expected_version)
        self.hashes: list[bytes] = []
        self.retried = False
        self.handed = unless_handed_over
        # The game's hand-overs when they refuse the call, and those of before they moved into
        # its slot (`store.handovers`) too, where the script can reach them: not on a cluster.
        self.handovers: tuple[str, ...] = ()
        if unless_handed_over:
            self.handovers = (self.keys.handed,)
            if not ctx.cluster:
                self.handovers += (legacy_handovers_key(ctx.keys.prefix, game_id),)

    @property
    def numkeys(self) -> int:
        """The script's keys: the game's four, and the hand-overs that refuse the call."""
        return 4 + len(self.handovers)

    def arguments(self) -> tuple[Any, ...]:
        """KEYS and ARGV of `append.lua` (see its header), chained from `previous`."""
        first, last, previous = self.first, self.last, self.previous
        raw = chain.ZERO_RAW if previous is None else bytes.fromhex(previous)
        self.hashes = hashes = chain.extend_raw(raw, first, self.datas)
        keys = self.keys
        expected = f"{self.expected_version} "
        args: list[Any] = [
            keys.events,
            keys.commands,
            keys.outbox,
            archived.archive_key(keys),
            *self.handovers,
            self.game_id,
            # unknown head hash: the script answers with the true one
            expected.encode() + raw if previous is not None else expected,
            f"{expected}{previous or ''}",  # the head as a game of before the lean form has it
            command_key(self.command_id),
            self.command_id,
            self.stored_id,
            self.meta_field,
            self.metadata,
            # the command memo: the call's nonce and the request's digest, 8 and 16 bytes
            f"{first} {last} ".encode() + self.nonce + stored_digest(self.digest),
            f"{last} ".encode() + hashes[-1],  # the new head
            len(self.datas),
            self.handed,
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
            result = AppendResult(self.first, self.last, self.hashes[-1].hex())
            ctx.heads.put(game_id, result.last_version, result.head_hash)
            return result
        if status in (b"again", b"duplicate", b"reused"):
            earlier = AppendResult(int(reply[1]), int(reply[2]), hash_text(reply[3]))
            ctx.heads.put(game_id, earlier.last_version, earlier.head_hash)  # a true fact
            if status == b"again":
                return earlier
            if status == b"duplicate":
                raise DuplicateCommand(earlier)
            raise CommandIdReused(self.command_id, earlier)
        if status == b"archived":
            raise archived.Archived(game_id)
        if status == b"handed":
            raise HandedOver(game_id)
        current, current_hash = int(reply[1]), hash_text(reply[2])
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
    metadata: bytes | AppendMeta = b"",
    *,
    request_digest: str | None = None,
    unless_handed_over: str = "",
) -> Op[AppendResult]:
    """Append `events` (each the canonical bytes of one event) as versions
    `expected_version + 1 ...`, wholly or not at all, and return the versions they took.

    `expected_version` is the version the caller decided on (0: the game does not exist
    yet). `command_id` makes the append idempotent: appending again with the same id and the
    same request digest (by default a digest of `expected_version` and `events`; pass the
    digest of the command itself to ignore how it was decided) writes nothing and raises
    `DuplicateCommand(first_result)`; with another digest it raises `CommandIdReused`.
    `metadata` is opaque bytes kept with the first event of the batch (seat, time, command),
    or the command path's `AppendMeta`, kept compact and read back as its JSON encoding.

    Raises `VersionConflict(current)` when the game is not at `expected_version`,
    `HandedOver` when `unless_handed_over` names a player who handed their seat to a bot for
    good (checked with the append, atomically; on a cluster the hand-overs of before they
    moved into the game's slot are out of the script's reach, and the caller asks them
    first: `store.handovers`), and `StoreUnavailable` when Redis cannot be reached: then
    whether the append landed is unknown, and retrying with the same command id is safe.

    Retries: redis-py re-sends a command after a connection or timeout error when its client
    has a `Retry` (the default in redis-py 6 and later). If the first send reached Redis and
    only the reply was lost, the re-send meets this call's own command memo (same command
    id, digest and call nonce) and the script answers with the first result, writing nothing:
    the caller gets its `AppendResult` as if nothing had happened, and the events are stored
    once. NOSCRIPT retries (after a restart) are safe as the script did not run.
    """
    call = AppendCall(
        ctx,
        game_id,
        expected_version,
        events,
        command_id,
        metadata,
        request_digest,
        unless_handed_over,
    )
    while True:
        reply = yield from evaluate("append", call.numkeys, call.arguments())
        try:
            result = call.outcome(reply)
        except archived.Archived:
            # A finished game whose live keys are gone: answered from its archive as the
            # script would have answered from the live keys (it appends nothing, ever).
            return (yield from _refused(call))
        if result is not None:
            return result


def _refused(call: AppendCall) -> Op[AppendResult]:
    """What `append.lua` would answer on the live keys of an archived game: the first result
    of a known command id (`DuplicateCommand`, or `CommandIdReused` for other content), else
    `VersionConflict` when the caller expected another version, else `Archived`."""
    game_id, command_id = call.game_id, call.command_id
    archive = yield from archived.load_archive(call.ctx, game_id)
    if archive is None:  # the archive went missing: only a hand-edited Redis can do that
        raise archived.Archived(game_id)
    batch = archive.batch(command_id)
    if batch is not None:
        earlier = AppendResult(
            batch.first_version, batch.last_version, archive.hashes[batch.last_version - 1].hex()
        )
        if not same_request(batch.digest, call.digest):
            raise CommandIdReused(command_id, earlier)
        raise DuplicateCommand(earlier)
    if call.expected_version != archive.version:
        raise VersionConflict(archive.version)
    raise archived.Archived(game_id)
