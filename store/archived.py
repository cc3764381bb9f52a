"""Reading a game whose live keys were archived: where its archive is, and the archive itself,
unpacked, verified and kept in memory (docs/store.md, "Archive").

Every read of the store looks at the live keys first and at the archive only when they hold
nothing: the archiving writes the archive before it removes the live keys (`store.archiving`),
so at every instant a game is in one form or both, and a read that finds the live keys gone
finds the archive. An archive never changes and is never removed, so a process keeps the last
ones it read.
"""

from __future__ import annotations

from store.archive import ArchiveBroken, GameArchive, unpack
from store.context import Context
from store.errors import CorruptGame, StoreError
from store.keys import GameKeys
from store.protocol import Call, Op
from store.shared_lru import SharedLRU
from store.shelf import ShelfBroken, is_reference


class Archived(StoreError):
    """The game is archived: a finished game, which takes no append."""

    def __init__(self, game_id: str) -> None:
        super().__init__(f"game {game_id} is archived: it takes no append")
        self.game_id = game_id


def archive_key(keys: GameKeys) -> str:
    """The key of a game's archive, beside its live keys (and under their hash tag)."""
    return keys.events.removesuffix("events") + "archive"


_unpacked: SharedLRU[str, GameArchive] = SharedLRU(64)
"""The archives read last, by key: an archive never changes (docs/store.md, "Caches"); shared
by the threads of a follower."""


def known_archive(ctx: Context, game_id: str) -> GameArchive | None:
    """The game's archive if this process has it at hand (no round trip), else None."""
    return _unpacked.get(archive_key(ctx.keys.game(game_id)))


def load_archive(ctx: Context, game_id: str) -> Op[GameArchive | None]:
    """The game's archive, verified, or None when it has none (a live game, or no game)."""
    key = archive_key(ctx.keys.game(game_id))
    archive = _unpacked.get(key)
    if archive is not None:
        return archive
    packed = yield Call("get", (key,))
    if packed is None:
        return None
    try:
        archive = unpack(archive_bytes(ctx, bytes(packed)), game_id)
    except (ArchiveBroken, ShelfBroken) as broken:
        raise CorruptGame(f"game {game_id}: its archive does not read: {broken}") from None
    _unpacked.put(key, archive)
    return archive


def archive_bytes(ctx: Context, stored: bytes) -> bytes:
    """The archive's bytes from what its key holds: the archive itself, or the reference to
    its file (`store.shelf`, a deployment with `PATRICIAN_ARCHIVE_DIR`)."""
    if not is_reference(stored):
        return stored
    if ctx.shelf is None:
        raise ShelfBroken("it is kept in a folder, and this process is given none")
    return ctx.shelf.get(stored)
