"""What the event store hands back: small frozen msgspec Structs, cheap to build by the
hundred on every load and safe to pass between threads, tasks and processes."""

from __future__ import annotations

from typing import Literal

import msgspec

from domain.commands import Command


class AppendResult(msgspec.Struct, frozen=True, gc=False):
    """The versions one append took, and the chain hash of its last event."""

    first_version: int
    last_version: int
    head_hash: str


class StoredEvent(msgspec.Struct, frozen=True, gc=False):
    """One event as stored: its version, its canonical bytes, and its chain hash (hex)."""

    version: int
    data: bytes
    hash: str


class Head(msgspec.Struct, frozen=True, gc=False):
    """The latest version of a game and its chain hash; version 0 for a game with no events."""

    version: int
    hash: str


class Batch(msgspec.Struct, frozen=True, gc=False):
    """One append as recorded in the stream: the command id, the caller's metadata and the
    versions it took. Every append is one batch, so the batches of a game list its commands."""

    command_id: str
    metadata: bytes
    first_version: int
    last_version: int


class Snapshot(msgspec.Struct, frozen=True, gc=False):
    """A saved state at `version`, `hash` being the chain hash of that version's event."""

    version: int
    hash: str
    rules_version: str
    state: bytes


class OutboxEntry(msgspec.Struct, frozen=True, gc=False):
    """One outbox notice: the game and the versions an append added."""

    entry_id: str
    game_id: str
    first_version: int
    last_version: int


class AppendMeta(msgspec.Struct, frozen=True):
    """What the command path keeps with every append, as the batch's metadata: who asked,
    when, what (read leniently: a field added later gets its default)."""

    kind: Literal["create", "join", "commands", "leave", "cancel"]
    player: str
    time: str
    seat: int | None = None
    commands: tuple[Command, ...] = ()
    by: str = ""
    """Who acted for the player: "" the player, else what did ("bot:greedy")."""


meta_decoder = msgspec.json.Decoder(AppendMeta)
