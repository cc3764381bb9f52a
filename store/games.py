"""The command path: the one way a game changes (create, join, commands).

Load the state (cached by version), decide with the domain, append with the expected version.
Written as store operations (generators of Redis requests, see `store.ops`) so that the asyncio
server and sync tools run the same logic; `GameService` runs them on an `AsyncEventStore`.

Idempotency: a command id names one request of one seat (its commands and expected version).
Sent again, it gets the first result again, even when the game has moved on since; sent with
other content, it is refused. Concurrency: a stale expected version is a conflict that reports
the current version; a caller without an expected version (a bot, a timer) is retried a bounded
number of times on a conflict, as long as its command is still legal.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Sequence
from typing import Literal

import msgspec
from cachetools import LRUCache

from domain.commands import Command
from domain.decide import play_all
from domain.errors import CommandRefused, IllegalCommand
from domain.events import Event, encoder, event_decoder, events_decoder
from domain.evolve import fold
from domain.gamedata import GameData
from domain.setup import cancel_game, create_game, join_game, leave_game
from domain.state import NEW_GAME, State
from store import ops
from store.errors import CommandIdReused, DuplicateCommand, StoreError, VersionConflict
from store.keys import check_game_id
from store.loading import SnapshotPolicy, load_op, snapshot_if_due_op
from store.records import AppendResult, Batch

_commands_encoder = msgspec.json.Encoder()


class GameNotFound(StoreError):
    """No game has this id."""


class NotSeated(StoreError):
    """The player holds no seat in this game, so it cannot act in it."""


class WrongInvite(StoreError):
    """The invite code does not open this game."""


class Meta(msgspec.Struct, frozen=True):
    """What the store keeps with every append, in the batch metadata: who asked, when, what."""

    kind: Literal["create", "join", "commands", "leave", "cancel"]
    player: str
    time: str
    seat: int | None = None
    commands: tuple[Command, ...] = ()


class Outcome(msgspec.Struct, frozen=True):
    """An accepted request: the versions it took, its events (unredacted: the caller redacts
    for whoever it answers) and the state after them. `repeated` when the command id had
    already been accepted and this is its first result again."""

    first_version: int
    last_version: int
    events: tuple[Event, ...]
    state: State
    repeated: bool = False


_meta_encoder = msgspec.json.Encoder()
meta_decoder = msgspec.json.Decoder(Meta)


class StateCache:
    """The latest states of recently used games, by game id. A cached state is only a
    starting point: the append checks the version, and reads catch up from Redis."""

    def __init__(self, size: int = 2048) -> None:
        self._states: LRUCache[str, State] = LRUCache(size)

    def get(self, game_id: str) -> State | None:
        return self._states.get(game_id)

    def put(self, game_id: str, state: State) -> None:
        known = self._states.get(game_id)
        if known is None or known.version <= state.version:
            self._states[game_id] = state


class Games:
    """What the command path needs besides Redis: the store context, the card data new games
    are created with, the state cache and the snapshot policy."""

    def __init__(
        self,
        context: ops.Context,
        game_data: GameData,
        *,
        cache: StateCache | None = None,
        snapshots: SnapshotPolicy | None = None,
        conflict_retries: int = 3,
    ) -> None:
        self.context = context
        self.game_data = game_data
        self.cache = cache or StateCache()
        self.snapshots = snapshots or SnapshotPolicy()
        self.conflict_retries = conflict_retries


def digest(*parts: bytes) -> str:
    return hashlib.sha256(b"\x00".join(parts)).hexdigest()


def invite_code_of(state: State) -> str:
    """The code that opens a waiting game's table: derived from its secret seed (HMAC), so it
    is kept nowhere and can be shown again to the players at the table. Once the seed is
    published the table is closed for good, so the code opens nothing any more."""
    seed = bytes.fromhex(state.server_seed)
    return hmac.new(seed, b"patrician-invite", hashlib.sha256).hexdigest()[:24]


def seat_of(state: State, player: str) -> int | None:
    """The seat `player` holds in this game (one per player), or None."""
    for seat, joined in enumerate(state.seat_players):
        if state.players[joined] == player:
            return seat
    return None


# --- reading -------------------------------------------------------------------------------


def current_op(games: Games, game_id: str, expected: int | None = None) -> ops.Op[State]:
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
    state = games.cache.get(game_id)
    if state is not None and (state.version == expected or state.finished):
        return state
    if state is None:
        loaded = yield from load_op(games.context, game_id)
        state = loaded.state
    else:
        newer = yield from ops.read(games.context, game_id, after=state.version)
        if newer:
            state = fold(
                events_decoder.decode(b"[" + b",".join(e.data for e in newer) + b"]"), state
            )
    if state.version == 0:
        raise GameNotFound(game_id)
    games.cache.put(game_id, state)
    return state


def log_op(games: Games, game_id: str) -> ops.Op[list[tuple[int, Event, bytes, str]]]:
    """The whole log: (version, event, exact bytes, chain hash) per event."""
    stored = yield from ops.read(games.context, game_id)
    if not stored:
        raise GameNotFound(game_id)
    return [(e.version, event_decoder.decode(e.data), e.data, e.hash) for e in stored]


def batches_op(games: Games, game_id: str) -> ops.Op[list[Batch]]:
    return (yield from ops.batches(games.context, game_id))


def last_change_op(games: Games, game_id: str) -> ops.Op[str | None]:
    """When the game last changed: the time of its last append (from the batch metadata)."""
    batch = yield from ops.last_batch(games.context, game_id)
    return None if batch is None else meta_decoder.decode(batch.metadata).time


def events_op(games: Games, game_id: str, first: int, last: int) -> ops.Op[tuple[Event, ...]]:
    stored = yield from ops.read(games.context, game_id, after=first - 1, to=last)
    return tuple(event_decoder.decode(e.data) for e in stored)


# --- writing -------------------------------------------------------------------------------


def _append_op(
    games: Games,
    game_id: str,
    *,
    state: State,
    events: Sequence[Event],
    after: State,
    command_id: str,
    meta: Meta,
    request: str,
) -> ops.Op[Outcome]:
    """Append the events decided on `state` (leading to `after`); on success cache the new
    state and snapshot when due."""
    result: AppendResult = yield from ops.append(
        games.context,
        game_id,
        state.version,
        [encoder.encode(event) for event in events],
        command_id,
        _meta_encoder.encode(meta),
        request_digest=request,
    )
    games.cache.put(game_id, after)
    yield from snapshot_if_due_op(games.context, game_id, result, after, games.snapshots)
    return Outcome(result.first_version, result.last_version, tuple(events), after)


def _first_result_op(games: Games, game_id: str, result: AppendResult) -> ops.Op[Outcome]:
    """An earlier append of this command id, told again."""
    events = yield from events_op(games, game_id, result.first_version, result.last_version)
    state = yield from current_op(games, game_id)
    return Outcome(result.first_version, result.last_version, events, state, repeated=True)


def create_op(
    games: Games,
    game_id: str,
    *,
    player: str,
    name: str,
    edition: str,
    seats: int,
    modules: Sequence[str],
    entropy: str,
    server_seed: bytes,
    now: str,
    listings: Sequence[ops.Call] = (),
) -> ops.Op[Outcome]:
    """Create a game with its creator in the first seat; raises `InvalidOptions`. Creating
    it again (the same id: a retried request) answers the first creation.

    `listings` are the writes that list the game (the lobby, the creator's games). They are
    made after every check and before the append: should the append fail or the process die
    in between, a listed game that does not exist is skipped by its readers, whereas listing
    after the append could leave a game in no list at all."""
    check_game_id(game_id)
    events = create_game(
        edition=edition,
        seats=seats,
        modules=modules,
        game_data=games.game_data,
        server_seed=server_seed,
        player=player,
        entropy=entropy,
        name=name,
    )
    yield from _each(listings)
    try:
        return (
            yield from _append_op(
                games,
                game_id,
                state=NEW_GAME,
                events=events,
                after=fold(events),
                command_id="create",
                meta=Meta("create", player, now),
                request=digest(b"create", player.encode()),
            )
        )
    except DuplicateCommand as done:
        return (yield from _first_result_op(games, game_id, done.first_result))


def _each(calls: Sequence[ops.Call]) -> ops.Op[None]:
    """Make each call in turn (a plain `yield from` a list could not be sent the replies)."""
    for call in calls:  # noqa: UP028 (see above)
        yield call


def join_op(
    games: Games,
    game_id: str,
    *,
    player: str,
    name: str,
    invite_code: str,
    entropy: str,
    now: str,
    listings: Sequence[ops.Call] = (),
) -> ops.Op[Outcome]:
    """Take a seat with the invite code; the last seat starts and deals the game.

    `listings` (the player's game list) are written after the invite is checked and before
    the append, as in `create_op`: a listed game where the player holds no seat (the table
    filled in between) is skipped by its readers."""
    state = yield from current_op(games, game_id)
    offered = invite_code.encode("utf-8", "surrogatepass")
    if state.finished or not hmac.compare_digest(invite_code_of(state).encode(), offered):
        raise WrongInvite(game_id)
    if player in state.players:  # a retried join: its first answer again
        first = state.players[0] == player
        known = yield from ops.command_record(
            games.context, game_id, "create" if first else _join_id(state, player)
        )
        if known is not None:
            yield from _each(listings)  # so that a retry restores a listing lost since
            return (yield from _first_result_op(games, game_id, known[0]))
    join_game(state, player, entropy, name)  # refuses a full table before any listing
    yield from _each(listings)
    return (
        yield from _seating_op(
            games,
            game_id,
            state,
            Meta("join", player, now),
            decide=lambda state: join_game(state, player, entropy, name),
            command_id=lambda state: _join_id(state, player),
        )
    )


def _join_id(state: State, player: str) -> str:
    """A player may join, leave and join again: each join has its own command id."""
    times = state.left.count(player)
    return f"join:{player}" + (f":{times}" if times else "")


def _seating_op(
    games: Games,
    game_id: str,
    state: State,
    meta: Meta,
    *,
    decide: Callable[[State], list[Event]],
    command_id: Callable[[State], str],
) -> ops.Op[Outcome]:
    """Append a change of the table (a join, a leave, a cancellation) decided on `state`, and
    decided again on a newer state after a conflict."""
    for _attempt in range(games.conflict_retries + 1):
        events = decide(state)
        try:
            return (
                yield from _append_op(
                    games,
                    game_id,
                    state=state,
                    events=events,
                    after=fold(events, state),
                    command_id=command_id(state),
                    meta=meta,
                    request=digest(meta.kind.encode(), meta.player.encode()),
                )
            )
        except DuplicateCommand as done:
            return (yield from _first_result_op(games, game_id, done.first_result))
        except VersionConflict:
            state = yield from current_op(games, game_id)
    raise VersionConflict(state.version)


def leave_op(games: Games, game_id: str, *, player: str, now: str) -> ops.Op[Outcome]:
    """Give up a place at a table that waits (not the creator's: they cancel). Leaving again
    after a lost answer is answered with the first answer."""
    state = yield from current_op(games, game_id)
    if player not in state.players and player in state.left:
        previous = f"leave:{player}:{state.left.count(player) - 1}"
        known = yield from ops.command_record(games.context, game_id, previous)
        if known is not None:
            return (yield from _first_result_op(games, game_id, known[0]))
    return (
        yield from _seating_op(
            games,
            game_id,
            state,
            Meta("leave", player, now),
            decide=lambda state: leave_game(state, player),
            command_id=lambda state: f"leave:{player}:{state.left.count(player)}",
        )
    )


def cancel_op(games: Games, game_id: str, *, player: str, now: str) -> ops.Op[Outcome]:
    """Call off a game that has not started (its creator only); answered again if retried."""
    state = yield from current_op(games, game_id)
    if state.phase == "cancelled" and state.players[:1] == (player,):
        known = yield from ops.command_record(games.context, game_id, "cancel")
        if known is not None:
            return (yield from _first_result_op(games, game_id, known[0]))
    return (
        yield from _seating_op(
            games,
            game_id,
            state,
            Meta("cancel", player, now),
            decide=lambda state: cancel_game(state, player),
            command_id=lambda _state: "cancel",
        )
    )


def player_command_id(player: str, command_id: str) -> str:
    """Command ids are each player's own: two players may use the same one."""
    return f"cmd:{player}:{command_id}"


def client_command_id(stored: str, player: str) -> str:
    """The command id as its player sent it (`create` and `join:...` stay as they are)."""
    return stored.removeprefix(f"cmd:{player}:")


def request_digest(seat: int, expected_version: int | None, commands: Sequence[Command]) -> str:
    return digest(
        b"commands",
        str(seat).encode(),
        str(expected_version).encode(),
        _commands_encoder.encode(list(commands)),
    )


def execute_op(
    games: Games,
    game_id: str,
    *,
    player: str,
    expected_version: int | None,
    command_id: str,
    commands: Sequence[Command],
    now: str,
) -> ops.Op[Outcome]:
    """Decide and append one or more commands of the player's seat, atomically.

    With `expected_version`, a game at another version is a `VersionConflict` (after checking
    that this is not a retry of a command already accepted). Without it, the commands are
    decided on the current state and retried on a conflict while they are still legal.
    """
    state = yield from current_op(games, game_id, expected_version)
    seat = seat_of(state, player)
    if seat is None:
        if player in state.players:  # joined, but the seats are drawn when the table is full
            raise IllegalCommand("game_not_started", "R7", "the game waits for its players")
        raise NotSeated(game_id)
    command_id = player_command_id(player, command_id)
    request = request_digest(seat, expected_version, commands)
    meta = Meta("commands", player, now, seat, tuple(commands))
    try:
        for _attempt in range(games.conflict_retries + 1):
            if expected_version is not None and state.version != expected_version:
                yield from _raise_if_known(games, game_id, command_id, request)
                raise VersionConflict(state.version)
            try:
                events, after = play_all(state, seat, commands)
            except CommandRefused:
                yield from _raise_if_known(games, game_id, command_id, request)
                raise
            try:
                return (
                    yield from _append_op(
                        games,
                        game_id,
                        state=state,
                        events=events,
                        after=after,
                        command_id=command_id,
                        meta=meta,
                        request=request,
                    )
                )
            except VersionConflict:
                state = yield from current_op(games, game_id)
        raise VersionConflict(state.version)
    except DuplicateCommand as done:
        return (yield from _first_result_op(games, game_id, done.first_result))


def _raise_if_known(games: Games, game_id: str, command_id: str, request: str) -> ops.Op[None]:
    """Before refusing a request, look whether its command id was accepted already: then the
    first result is the answer (`DuplicateCommand`), or the id was used for another request
    (`CommandIdReused`)."""
    known = yield from ops.command_record(games.context, game_id, command_id)
    if known is None:
        return
    result, first_digest = known
    if first_digest != request:
        raise CommandIdReused(command_id, result)
    raise DuplicateCommand(result)
