"""Reading a game through the command path: its current state (from the state cache or a
snapshot, caught up with the stream), its whole log, its appends and when it last changed.
"""

from __future__ import annotations

from domain.events import Event, decode_events, event_decoder
from domain.evolve import fold
from domain.state import State
from store import streams
from store.command_path import CommandPath
from store.errors import GameNotFound
from store.keys import check_game_id
from store.loading import load_op
from store.protocol import Op
from store.stored import Batch, StoredEvent, meta_decoder


def current_op(path: CommandPath, game_id: str, expected: int | None = None) -> Op[State]:
    """The game's state at its head: the cached state caught up with the events after it,
    or loaded from the latest snapshot. Raises `GameNotFound`.

    With `expected`, a cached state at exactly that version is taken as it is, without a read:
    the caller is about to append at that version, and the append itself refuses a stale one.
    So is a cached state of a game that is over: its last append (final scores and the seed)
    was its last, as nothing is decided after the end (R19).
    """
    try:
        check_game_id(game_id)
    except ValueError:
        raise GameNotFound(game_id) from None  # no game can have such an id
    state = path.cache.get(game_id)
    if state is not None and (state.version == expected or state.finished):
        return state
    if state is None:
        loaded = yield from load_op(path.context, game_id)
        state = loaded.state
    else:
        newer = yield from streams.read(path.context, game_id, after=state.version)
        if not newer:  # the cached state is the head: nothing to fold, nothing to store
            return state
        state = fold(decode_events(e.data for e in newer), state)
    if state.version == 0:
        raise GameNotFound(game_id)
    path.cache.put(game_id, state)
    return state


def log_op(path: CommandPath, game_id: str) -> Op[list[tuple[int, Event, bytes, str]]]:
    """The whole log: (version, event, exact bytes, chain hash) per event."""
    stored = yield from streams.read(path.context, game_id)
    if not stored:
        raise GameNotFound(game_id)
    return [(e.version, event_decoder.decode(e.data), e.data, e.hash) for e in stored]


def batches_op(path: CommandPath, game_id: str) -> Op[list[Batch]]:
    return (yield from streams.batches(path.context, game_id))


def batches_around_op(path: CommandPath, game_id: str, since: int, to: int) -> Op[list[Batch]]:
    """The appends that hold the versions `since` to `to` (`streams.batches_around`)."""
    return (yield from streams.batches_around(path.context, game_id, since, to))


def metadata_at_op(path: CommandPath, game_id: str, first_version: int) -> Op[bytes]:
    """The metadata of the append that began at `first_version`."""
    return (yield from streams.metadata_at(path.context, game_id, first_version))


def read_op(path: CommandPath, game_id: str, after: int, to: int) -> Op[list[StoredEvent]]:
    """The stored events after version `after` up to `to`."""
    return (yield from streams.read(path.context, game_id, after=after, to=to))


def hash_at_op(path: CommandPath, game_id: str, version: int) -> Op[str]:
    """The chain hash of the event at `version`."""
    stored = yield from streams.read(path.context, game_id, after=version - 1, to=version)
    return stored[-1].hash


def last_batch_op(path: CommandPath, game_id: str) -> Op[Batch | None]:
    return (yield from streams.last_batch(path.context, game_id))


def last_change_op(path: CommandPath, game_id: str) -> Op[str | None]:
    """When the game last changed: the time of its last append (from the batch metadata)."""
    batch = yield from streams.last_batch(path.context, game_id)
    return None if batch is None else meta_decoder.decode(batch.metadata).time


def events_op(path: CommandPath, game_id: str, first: int, last: int) -> Op[tuple[Event, ...]]:
    stored = yield from streams.read(path.context, game_id, after=first - 1, to=last)
    return tuple(event_decoder.decode(e.data) for e in stored)
