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

from store import chain
from store.context import Context
from store.errors import CommandIdReused, DuplicateCommand, VersionConflict
from store.keys import check_command_id
from store.protocol import Op, evaluate, reply_text
from store.records import AppendResult


def digest(*parts: bytes) -> str:
    """The SHA-256 (hex) of a request's parts, each length-prefixed, so that no two different
    lists of parts share one byte string: the digest a command record keeps."""
    framed = hashlib.sha256()
    for part in parts:
        framed.update(len(part).to_bytes(8, "big"))
        framed.update(part)
    return framed.hexdigest()


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
            earlier = AppendResult(int(reply[1]), int(reply[2]), reply_text(reply[3]))
            ctx.heads.put(game_id, earlier.last_version, earlier.head_hash)  # a true fact
            if status == b"again":
                return earlier
            if status == b"duplicate":
                raise DuplicateCommand(earlier)
            raise CommandIdReused(self.command_id, earlier)
        current, current_hash = int(reply[1]), reply_text(reply[2])
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
