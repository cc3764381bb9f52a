"""`patrician check-rules`: before new code is deployed, every stored game (or a sample)
decided again with it, so that a change of the rules or of an event's shape that would no
longer explain a game in the store is found before a player meets it.

For each game: the hash chain of its stream; every append decided again from nothing by the
game's own rules version, each giving its stored events byte for byte (the offline audit's
`redecide`, on the server's unredacted log, for games in play too); and the state the server
would load (its snapshot and the events after it) equal to the whole log folded.
"""

from __future__ import annotations

import random
from collections.abc import Iterator

import msgspec

from domain.events import SeedSealed
from domain.evolve import fold
from evidence.appends import command_of
from evidence.checks import Refusal
from evidence.record import LoggedEvent, RecordEvent, build_record
from evidence.redecide import redecide
from store import streams
from store.client import EventStore
from store.command_path import CommandPath, StateCache
from store.errors import CorruptGame, GameNotFound
from store.reads import batches_op, current_op, log_op


class Finding(msgspec.Struct, frozen=True):
    """A game the code no longer explains: which, and why, in words."""

    game_id: str
    reason: str


def chosen(store: EventStore, sample: int | None, seed: int = 0) -> list[str]:
    """The games to check: all, or `sample` of them drawn with `seed`."""
    games = sorted(store.game_ids())
    if sample is not None and sample < len(games):
        games = sorted(random.Random(seed).sample(games, sample))
    return games


def check_games(store: EventStore, path: CommandPath, games: list[str]) -> Iterator[Finding]:
    """The findings of each game in turn (none for a game the code still explains)."""
    for game_id in games:
        reason = check_game(store, path, game_id)
        if reason is not None:
            yield Finding(game_id, reason)


def check_game(store: EventStore, path: CommandPath, game_id: str) -> str | None:
    """Why the code no longer explains this game, or None."""
    try:
        store.run(streams.verify(path.context, game_id))
        log = store.run(log_op(path, game_id))
    except (CorruptGame, GameNotFound) as error:
        return str(error)
    except msgspec.DecodeError as error:
        return f"an event the code cannot read: {error}"
    events = [event for _v, event, _d, _h in log]
    sealed = next((e for e in events if isinstance(e, SeedSealed)), None)
    if sealed is None:
        return "the log holds no sealed seed"
    state = fold(events)
    batches = store.run(batches_op(path, game_id))
    commands = [command_of(batch) for batch in batches]
    record = build_record(game_id, state, [LoggedEvent(*entry) for entry in log], commands, None)
    everything = tuple(RecordEvent(v, h, d.decode()) for v, _e, d, h in log)
    record = msgspec.structs.replace(record, events=everything)
    try:
        redecide(record, events, bytes.fromhex(sealed.server_seed), to_the_end=False)
    except Refusal as refusal:
        return refusal.check.detail
    # The state as a server starting now would load it: from the snapshot, no cache.
    fresh = CommandPath(path.context, path.game_data, cache=StateCache(1), snapshots=path.snapshots)
    loaded = store.run(current_op(fresh, game_id))
    if loaded != state:
        return f"the state loaded from its snapshot (version {loaded.version}) is not its log"
    return None
