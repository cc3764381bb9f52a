"""Moving a finished game out of its live keys into its archive (docs/store.md, "Archive").

In three steps, each safe to stop after (a crash, a second worker doing the same game):
1. read the live stream and command memos and pack them (`store.archive`);
2. write the archive, read it back and check it byte for byte against what the live keys
   held (the events' bytes and chain hashes, every append and its command memo's digest);
3. remove the live keys in one script (`retire.lua`) that first checks the stream is the one
   the archive was made from and the archive the one verified.
Until step 3 the live keys answer every read; after it, the archive does (`store.archived`):
at every instant the game is in one form or both. Step 2 done twice writes the same bytes.
"""

from __future__ import annotations

from typing import Literal

from domain.events import decode_events
from domain.evolve import fold
from store import archive as packing
from store import streams
from store.archived import archive_bytes, archive_key
from store.client import EventStore
from store.context import Context
from store.errors import CorruptGame
from store.protocol import Call, Op, evaluate
from store.shelf import ShelfBroken
from store.stored import command_key

Outcome = Literal["archived", "gone", "unfinished", "changed"]
"""What archiving a game did: archived it; found no live keys (archived already, or no such
game); left it live, as it is not over; or left it live, as it changed meanwhile."""


def archive_game_op(ctx: Context, game_id: str) -> Op[Outcome]:
    """Archive one finished game (the steps of the module's docstring)."""
    keys = ctx.keys.game(game_id)
    entries = yield Call("xrange", (keys.events, "-", "+"))
    if not entries:
        return "gone"
    events = streams.events_of(entries)
    if not fold(decode_events(event.data for event in events)).finished:
        return "unfinished"
    memos = yield Call("hgetall", (keys.commands,))
    head = memos.pop(b"", None)
    batches = streams.batches_of(entries)
    digests: dict[str, str] = {}
    for batch in batches:  # a lean memo under 16 bytes of the id's hash, or under the id
        memo = memos.pop(command_key(batch.command_id), None)
        memo = memos.pop(batch.command_id.encode(), memo)
        if memo is not None:
            digests[batch.command_id] = streams.parse_memo(memo)[3]
    if head is None or memos or len(digests) != len(batches):
        raise CorruptGame(f"game {game_id}: its command memos are not its appends")
    try:
        made = packing.build(game_id, events, batches, digests)
        packing.verify(made, game_id)
    except (packing.ArchiveBroken, KeyError) as broken:
        raise CorruptGame(f"game {game_id} does not archive: {broken}") from None
    packed = packing.pack(made)
    key = archive_key(keys)
    kept = packed  # what the archive key holds: the archive, or the reference to its file
    if ctx.shelf is not None:
        try:
            kept = ctx.shelf.put(packed)
        except (OSError, ShelfBroken) as failed:
            raise CorruptGame(f"game {game_id}: its archive file is not kept: {failed}") from None
    yield Call("set", (key, kept))
    stored = yield Call("get", (key,))
    try:
        if stored is None or packing.unpack(archive_bytes(ctx, bytes(stored)), game_id) != made:
            raise packing.ArchiveBroken("it does not read back as the live game")
    except (packing.ArchiveBroken, ShelfBroken) as broken:
        raise CorruptGame(f"game {game_id}: its archive as written is wrong: {broken}") from None
    retired = yield from evaluate(
        "retire",
        4,
        (
            keys.events,
            keys.commands,
            keys.snapshot,
            key,
            kept,
            len(entries),
            entries[-1][0],
            head,
        ),
    )
    outcomes: dict[int, Outcome] = {1: "archived", 0: "gone"}
    return outcomes.get(int(retired), "changed")


def archive_game(store: EventStore, game_id: str) -> Outcome:
    """`archive_game_op` on a sync store."""
    return store.run(archive_game_op(store.context, game_id))
