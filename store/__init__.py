"""The event store: the only place where events are written and read.

Every player action becomes events appended to the game's Redis stream by one Lua script
(expected version, command-id idempotency, hash chain, outbox, all or nothing); everything
else (state, boards, replays, inboxes, audits) is derived from these streams. See
docs/store.md for the key layout, the entry format and the chain.

`EventStore` takes a sync client, `AsyncEventStore` an asyncio one; `store.loading` turns a
stream back into a `domain.state.State`, using snapshots. Nothing here makes a client.
"""

from store.chain import ZERO_HASH, ChainBroken
from store.client import AsyncEventStore, EventStore
from store.errors import (
    CommandIdReused,
    CorruptGame,
    DuplicateCommand,
    StoreError,
    StoreUnavailable,
    VersionConflict,
)
from store.keys import KeySpace
from store.records import AppendResult, Batch, Head, OutboxEntry, Snapshot, StoredEvent

__all__ = [
    "ZERO_HASH",
    "AppendResult",
    "AsyncEventStore",
    "Batch",
    "ChainBroken",
    "CommandIdReused",
    "CorruptGame",
    "DuplicateCommand",
    "EventStore",
    "Head",
    "KeySpace",
    "OutboxEntry",
    "Snapshot",
    "StoreError",
    "StoreUnavailable",
    "StoredEvent",
    "VersionConflict",
]
