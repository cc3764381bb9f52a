"""Load a game's `domain.state.State` from the store: the latest usable snapshot, plus the
events after it, decoded and folded. Also the snapshot policy that keeps loading cheap.

This is the one module of `store` that knows the domain: the rest of the store keeps opaque
bytes. A snapshot is a cache, never a source of truth, so it is used only when it was made
by the same rules and the same State layout (its tag says which: the rules version and a hash
of State's JSON schema), when it decodes, and when it sits on the game's hash chain (checked
by `read_from_snapshot`). Anything else and the game is folded from its first event.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from functools import cache
from typing import Any, NamedTuple

import msgspec

from domain.board import RULES_VERSION
from domain.events import decode_events
from domain.evolve import fold
from domain.state import NEW_GAME, State
from store import chain
from store.archived import load_archive
from store.client import EventStore
from store.context import Context
from store.errors import CorruptGame, StoreError
from store.protocol import Call, Op, evaluate
from store.stored import AppendResult, Head, Snapshot, StoredEvent
from store.streams import entry_hash, stream_version

_state_encoder = msgspec.json.Encoder()
_state_decoder = msgspec.json.Decoder(State)


@cache
def snapshot_tag() -> str:
    """The tag snapshots are saved and loaded under: it changes with `RULES_VERSION` and with
    any change to the layout of State (a field added, removed or retyped, here or nested)."""
    schema = msgspec.json.encode(msgspec.json.schema(State), order="sorted")
    return f"rules{RULES_VERSION}-state{hashlib.sha256(schema).hexdigest()[:16]}"


class LoadedGame(msgspec.Struct, frozen=True):
    """A game's state at its head, and how it was built."""

    state: State
    version: int
    head_hash: str
    snapshot_version: int
    """The version of the snapshot loading started from; 0 when it folded from the start."""
    events_folded: int


class SnapshotPolicy(msgspec.Struct, frozen=True):
    """Save a snapshot whenever an append crosses a multiple of `every` events, so that a
    load folds fewer than `every` events (plus those of one batch)."""

    every: int = 50

    def __post_init__(self) -> None:
        if self.every < 1:
            raise ValueError("a snapshot policy needs every >= 1")

    def due(self, result: AppendResult) -> bool:
        return result.last_version // self.every > (result.first_version - 1) // self.every


def encode_state(state: State) -> bytes:
    return _state_encoder.encode(state)


def _decoded_snapshot(data: bytes, version: int) -> State | None:
    try:
        state = _state_decoder.decode(data)
    except msgspec.MsgspecError:
        return None
    return state if state.version == version else None


def load_op(ctx: Context, game_id: str) -> Op[LoadedGame]:
    """The operation behind `load_game` and `load_game_async`."""
    tail = yield from read_from_snapshot(ctx, game_id, snapshot_tag())
    state: State | None = NEW_GAME
    if tail.snapshot is not None:
        state = _decoded_snapshot(tail.snapshot.state, tail.snapshot.version)
        if state is None:  # does not decode as today's State: fold from the start instead
            tail = yield from read_from_snapshot(ctx, game_id, "-")  # "-": no snapshot's tag
            state = NEW_GAME
    assert state is not None
    try:
        decoded = decode_events(tail.datas)
    except msgspec.MsgspecError as error:
        raise CorruptGame(f"game {game_id}: an event does not decode: {error}") from error
    state = fold(decoded, state)
    if state.version != tail.head.version:
        raise CorruptGame(f"game {game_id}: folded to {state.version}, not {tail.head.version}")
    start = 0 if tail.snapshot is None else tail.snapshot.version
    return LoadedGame(state, tail.head.version, tail.head.hash, start, len(tail.datas))


def save_state_op(ctx: Context, game_id: str, state: State) -> Op[bool]:
    """Save `state` as the game's snapshot at `state.version`; return whether it was saved
    (not when a snapshot as new is already there)."""
    tag = snapshot_tag()
    return (yield from save_snapshot(ctx, game_id, state.version, tag, encode_state(state)))


def snapshot_if_due_op(
    ctx: Context, game_id: str, result: AppendResult, state: State, policy: SnapshotPolicy
) -> Op[bool]:
    """After the append `result`, with `state` the game's state after it, save a snapshot
    when `policy` says so. Returns whether one was saved."""
    if not policy.due(result):
        return False
    if state.version != result.last_version:
        raise ValueError(
            f"the state is at {state.version}, the append ended at {result.last_version}"
        )
    return (yield from save_state_op(ctx, game_id, state))


def load_game(store: EventStore, game_id: str) -> LoadedGame:
    """Load the game's state at its head: snapshot plus the events after it."""
    return store.run(load_op(store.context, game_id))


def save_state(store: EventStore, game_id: str, state: State) -> bool:
    return store.run(save_state_op(store.context, game_id, state))


def snapshot_if_due(
    store: EventStore, game_id: str, result: AppendResult, state: State, policy: SnapshotPolicy
) -> bool:
    return store.run(snapshot_if_due_op(store.context, game_id, result, state, policy))


# --- snapshots in the store ---------------------------------------------------------------


def rules_tag(rules_version: str | int) -> str:
    tag = str(rules_version)
    if not 0 < len(tag) <= 100 or any(char.isspace() for char in tag):
        raise ValueError(f"a rules version is 1-100 characters without spaces, not {tag!r}")
    return tag


def _snapshot(raw: bytes) -> Snapshot:
    """A saved snapshot: "<version> <hash> <tag>\\n<state bytes>"."""
    header, _, state = raw.partition(b"\n")
    version, hash_hex, tag = header.split(b" ")
    return Snapshot(int(version), hash_hex.decode(), tag.decode(), state)


def _lua_events(entries: Sequence[Any]) -> list[StoredEvent]:
    """Events from XRANGE run inside a script: [id, [field, value, ...]], fields in the order
    the append script writes them (d, H, then c and M on the first event of a batch; h, the
    hash in hex, before the lean form)."""
    events = []
    for entry_id_, fields in entries:
        if fields[0] == b"d" and fields[2] == b"H":
            events.append(StoredEvent(stream_version(entry_id_), fields[1], fields[3].hex()))
        else:  # an entry of before the lean form, or written some other way
            named = dict(zip(fields[::2], fields[1::2], strict=True))
            events.append(StoredEvent(stream_version(entry_id_), named[b"d"], entry_hash(named)))
    return events


def drop_snapshot_op(ctx: Context, game_id: str) -> Op[None]:
    """Remove the game's snapshot: at its end (a finished game's state is final and cached,
    and loading it again folds its log once), some 10 KB of memory it would keep for ever."""
    yield Call("delete", (ctx.keys.game(game_id).snapshot,))


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
        archive = yield from load_archive(ctx, game_id)
        if archive is None:
            return Tail(None, [], Head(0, chain.ZERO_HASH))
        return Tail(None, list(archive.datas), Head(archive.version, archive.hashes[-1].hex()))
    last_id, last_fields = reply[-1]
    head = Head(stream_version(last_id), entry_hash(last_fields))
    if head.version != len(reply):
        raise CorruptGame(f"game {game_id} has {len(reply)} events up to version {head.version}")
    ctx.heads.put(game_id, head.version, head.hash)
    return Tail(None, [fields[b"d"] for _id, fields in reply], head)
