"""The archive of a finished game: its whole log as one compressed value, and the checks that
it is whole and untouched (docs/store.md, "Archive").

A finished game never changes again, yet its live form (a stream, a hash of command memos,
a snapshot) keeps some 100 KB of Redis memory; packed and compressed it is a fifth of that.
This module is pure (msgspec, zlib and `store.chain` only): packing, unpacking and verifying,
so that the archiving job, the readers and any offline tool share one definition of the
format. Where an archive is kept and how the live keys give way to it is `store.archived`.
"""

from __future__ import annotations

import zlib
from collections.abc import Sequence

import msgspec

from store import chain
from store.stored import Batch, StoredEvent

MAGIC = b"patrician-archive 1\n"
"""The first bytes of every archive: the format and its version."""
LEVEL = 9
"""zlib's compression level: an archive is written once and read rarely."""
MAX_UNPACKED = 64 * 1024 * 1024
"""No game's log comes near this: a larger body is refused before it is decompressed whole."""


class ArchiveBroken(ValueError):
    """Bytes that are not a whole, untouched archive of a game (the reason says what)."""


class ArchivedBatch(msgspec.Struct, frozen=True, array_like=True, gc=False):
    """One append: its command id, its metadata (as `Batch.metadata` gives it), its versions
    and the request digest its command memo kept (as `streams.command_memo` gives it)."""

    command_id: str
    metadata: bytes
    first_version: int
    last_version: int
    digest: str


class GameArchive(msgspec.Struct, frozen=True, array_like=True):
    """Everything a finished game's reads and its command path need, and nothing else: the
    events' bytes and raw chain hashes (version `i + 1` at index `i`) and the appends."""

    game_id: str
    datas: list[bytes]
    hashes: list[bytes]
    batches: list[ArchivedBatch]

    @property
    def version(self) -> int:
        return len(self.datas)

    def events(self, after: int = 0, to: int | None = None) -> list[StoredEvent]:
        """The events with `after < version <= to` (to the last when `to` is None)."""
        end = self.version if to is None else min(to, self.version)
        return [
            StoredEvent(version, self.datas[version - 1], self.hashes[version - 1].hex())
            for version in range(max(after, 0) + 1, end + 1)
        ]

    def as_batches(self) -> list[Batch]:
        return [
            Batch(b.command_id, b.metadata, b.first_version, b.last_version) for b in self.batches
        ]

    def batch(self, command_id: str) -> ArchivedBatch | None:
        return next((b for b in self.batches if b.command_id == command_id), None)


_encoder = msgspec.msgpack.Encoder()
_decoder = msgspec.msgpack.Decoder(GameArchive)


def build(
    game_id: str, events: Sequence[StoredEvent], batches: Sequence[Batch], digests: dict[str, str]
) -> GameArchive:
    """The archive of a game read from its live keys: its events, its appends and the digest
    of each append's command memo (by command id)."""
    return GameArchive(
        game_id,
        [event.data for event in events],
        [bytes.fromhex(event.hash) for event in events],
        [
            ArchivedBatch(
                b.command_id, b.metadata, b.first_version, b.last_version, digests[b.command_id]
            )
            for b in batches
        ],
    )


def pack(archive: GameArchive) -> bytes:
    """The archive's bytes: `MAGIC`, then the zlib-compressed MessagePack of the archive."""
    return MAGIC + zlib.compress(_encoder.encode(archive), LEVEL)


def unpack(packed: bytes, game_id: str | None = None) -> GameArchive:
    """The archive `packed` holds, verified (`verify`); raises `ArchiveBroken` otherwise."""
    if not packed.startswith(MAGIC):
        raise ArchiveBroken("not an archive of this format (its first line)")
    inflate = zlib.decompressobj()
    try:
        body = inflate.decompress(packed[len(MAGIC) :], MAX_UNPACKED)
    except zlib.error as error:
        raise ArchiveBroken(f"its body does not decompress: {error}") from None
    if inflate.unconsumed_tail or not inflate.eof or inflate.unused_data:
        raise ArchiveBroken("its body is cut short, too long, or followed by other bytes")
    try:
        archive = _decoder.decode(body)
    except msgspec.MsgspecError as error:
        raise ArchiveBroken(f"its body does not decode: {error}") from None
    verify(archive, game_id)
    return archive


def verify(archive: GameArchive, game_id: str | None = None) -> None:
    """Check that the archive is a whole game: its hash chain from version 1 to the last,
    and appends that cover every version once, in order. Raises `ArchiveBroken`."""
    if game_id is not None and archive.game_id != game_id:
        raise ArchiveBroken(f"it is the archive of game {archive.game_id!r}, not {game_id!r}")
    if not archive.datas or len(archive.hashes) != len(archive.datas):
        raise ArchiveBroken("it holds no events, or not one hash per event")
    if any(len(raw) != 32 for raw in archive.hashes):
        raise ArchiveBroken("a chain hash is not 32 bytes")
    try:
        chain.verify(archive.events())
    except chain.ChainBroken as broken:
        raise ArchiveBroken(str(broken)) from None
    expected = 1
    for batch in archive.batches:
        if batch.first_version != expected or batch.last_version < batch.first_version:
            raise ArchiveBroken(f"the append of {batch.command_id!r} does not start at {expected}")
        expected = batch.last_version + 1
    if expected != archive.version + 1:
        raise ArchiveBroken(f"its appends end at {expected - 1}, its events at {archive.version}")
    if len({batch.command_id for batch in archive.batches}) != len(archive.batches):
        raise ArchiveBroken("a command id names two appends")
