"""Load a game's `domain.state.State` from the store: the latest usable snapshot, plus the
events after it, decoded and folded. Also the snapshot policy that keeps loading cheap.

This is the one module of `store` that knows the domain: the rest of the store keeps opaque
bytes. A snapshot is a cache, never a source of truth, so it is used only when it was made
by the same rules and the same State layout (its tag says which: the rules version and a hash
of State's JSON schema), when it decodes, and when it sits on the game's hash chain (checked
by `store.ops.read_from_snapshot`). Anything else and the game is folded from its first event.
"""

from __future__ import annotations

import hashlib
from functools import cache

import msgspec

from domain.board import RULES_VERSION
from domain.events import events_decoder
from domain.evolve import fold
from domain.state import NEW_GAME, State
from store import ops
from store.client import AsyncEventStore, EventStore
from store.errors import CorruptGame
from store.records import AppendResult

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


def load_op(ctx: ops.Context, game_id: str) -> ops.Op[LoadedGame]:
    """The operation behind `load_game` and `load_game_async`."""
    tail = yield from ops.read_from_snapshot(ctx, game_id, snapshot_tag())
    state: State | None = NEW_GAME
    if tail.snapshot is not None:
        state = _decoded_snapshot(tail.snapshot.state, tail.snapshot.version)
        if state is None:  # does not decode as today's State: fold from the start instead
            tail = yield from ops.read_from_snapshot(ctx, game_id, "-")  # "-": no snapshot's tag
            state = NEW_GAME
    assert state is not None
    try:
        decoded = events_decoder.decode(b"[" + b",".join(tail.datas) + b"]")
    except msgspec.MsgspecError as error:
        raise CorruptGame(f"game {game_id}: an event does not decode: {error}") from error
    state = fold(decoded, state)
    if state.version != tail.head.version:
        raise CorruptGame(f"game {game_id}: folded to {state.version}, not {tail.head.version}")
    start = 0 if tail.snapshot is None else tail.snapshot.version
    return LoadedGame(state, tail.head.version, tail.head.hash, start, len(tail.datas))


def save_state_op(ctx: ops.Context, game_id: str, state: State) -> ops.Op[bool]:
    """Save `state` as the game's snapshot at `state.version`; return whether it was saved
    (not when a snapshot as new is already there)."""
    tag = snapshot_tag()
    return (yield from ops.save_snapshot(ctx, game_id, state.version, tag, encode_state(state)))


def snapshot_if_due_op(
    ctx: ops.Context, game_id: str, result: AppendResult, state: State, policy: SnapshotPolicy
) -> ops.Op[bool]:
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


async def load_game_async(store: AsyncEventStore, game_id: str) -> LoadedGame:
    """The asyncio twin of `load_game`."""
    return await store.run(load_op(store.context, game_id))


def save_state(store: EventStore, game_id: str, state: State) -> bool:
    return store.run(save_state_op(store.context, game_id, state))


async def save_state_async(store: AsyncEventStore, game_id: str, state: State) -> bool:
    return await store.run(save_state_op(store.context, game_id, state))


def snapshot_if_due(
    store: EventStore, game_id: str, result: AppendResult, state: State, policy: SnapshotPolicy
) -> bool:
    return store.run(snapshot_if_due_op(store.context, game_id, result, state, policy))


async def snapshot_if_due_async(
    store: AsyncEventStore,
    game_id: str,
    result: AppendResult,
    state: State,
    policy: SnapshotPolicy,
) -> bool:
    return await store.run(snapshot_if_due_op(store.context, game_id, result, state, policy))
