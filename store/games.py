"""The command path: the one way a game changes (create, join, commands).

Load the state (cached by version), decide with the domain, append with the expected version.
Written as store operations (generators of Redis requests, see `store.protocol`) so that the asyncio
server and sync tools run the same logic; `server.game_service` runs them on an
`AsyncEventStore`; the reads are in `store.reads`.

Idempotency: a command id names one request of one seat (its commands and expected version).
Sent again, it gets the first result again, even when the game has moved on since; sent with
other content, it is refused. Concurrency: a stale expected version is a conflict that reports
the current version. A change of the table (a join, a leave) needs no expected version: it is
decided again on the newer state, a bounded number of times.
"""

from __future__ import annotations

import hashlib
import hmac
from collections.abc import Callable, Sequence

import msgspec
from cachetools import LRUCache

from domain.commands import Command
from domain.decide import canonical, decide_all
from domain.errors import CommandRefused, IllegalCommand
from domain.events import Event, encoder
from domain.evolve import fold
from domain.gamedata import GameData
from domain.setup import cancel_game, create_game, join_game, leave_game
from domain.state import NEW_GAME, State
from store import appending, streams
from store.appending import digest
from store.context import Context
from store.errors import (
    CommandIdReused,
    DuplicateCommand,
    NotSeated,
    VersionConflict,
    WrongInvite,
)
from store.keys import check_game_id
from store.loading import SnapshotPolicy, snapshot_if_due_op
from store.protocol import Call, Op
from store.reads import current_op, events_op
from store.records import AppendMeta, AppendResult

_commands_encoder = msgspec.json.Encoder()


class Outcome(msgspec.Struct, frozen=True):
    """An accepted request: the versions it took, its events (unredacted: the caller redacts
    for whoever it answers) and the state after them. `repeated` when the command id had
    already been accepted and this is its first result again."""

    first_version: int
    last_version: int
    events: tuple[Event, ...]
    state: State
    repeated: bool = False
    seat: int | None = None
    """The seat the commands were decided for (the caller answers that seat)."""


_meta_encoder = msgspec.json.Encoder()


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


class CommandPath:
    """What the command path needs besides Redis: the store context, the card data new games
    are created with, the state cache and the snapshot policy."""

    def __init__(
        self,
        context: Context,
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


def invite_code_of(state: State) -> str:
    """The code that opens a waiting game's table: derived from its secret seed (HMAC), so it
    is kept nowhere and can be shown again to the players at the table. Once the seed is
    published the table is closed for good, so the code opens nothing any more."""
    seed = bytes.fromhex(state.server_seed)
    return hmac.new(seed, b"patrician-invite", hashlib.sha256).hexdigest()[:24]


def _append_op(
    path: CommandPath,
    game_id: str,
    *,
    state: State,
    events: Sequence[Event],
    after: State,
    command_id: str,
    meta: AppendMeta,
    request: str,
) -> Op[Outcome]:
    """Append the events decided on `state` (leading to `after`); on success cache the new
    state and snapshot when due."""
    result: AppendResult = yield from appending.append(
        path.context,
        game_id,
        state.version,
        [encoder.encode(event) for event in events],
        command_id,
        _meta_encoder.encode(meta),
        request_digest=request,
    )
    path.cache.put(game_id, after)
    yield from snapshot_if_due_op(path.context, game_id, result, after, path.snapshots)
    return Outcome(result.first_version, result.last_version, tuple(events), after)


def _first_result_op(path: CommandPath, game_id: str, result: AppendResult) -> Op[Outcome]:
    """An earlier append of this command id, told again."""
    events = yield from events_op(path, game_id, result.first_version, result.last_version)
    state = yield from current_op(path, game_id)
    return Outcome(result.first_version, result.last_version, events, state, repeated=True)


def create_op(
    path: CommandPath,
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
    listings: Sequence[Call] = (),
) -> Op[Outcome]:
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
        game_data=path.game_data,
        server_seed=server_seed,
        player=player,
        entropy=entropy,
        name=name,
    )
    yield from _each(listings)
    try:
        return (
            yield from _append_op(
                path,
                game_id,
                state=NEW_GAME,
                events=events,
                after=fold(events),
                command_id="create",
                meta=AppendMeta("create", player, now),
                request=digest(b"create", player.encode()),
            )
        )
    except DuplicateCommand as done:
        return (yield from _first_result_op(path, game_id, done.first_result))


def _each(calls: Sequence[Call]) -> Op[None]:
    """Make each call in turn (a plain `yield from` a list could not be sent the replies)."""
    for call in calls:  # noqa: UP028 (see above)
        yield call


def join_op(
    path: CommandPath,
    game_id: str,
    *,
    player: str,
    name: str,
    invite_code: str,
    entropy: str,
    now: str,
    listings: Sequence[Call] = (),
) -> Op[Outcome]:
    """Take a seat with the invite code; the last seat starts and deals the game.

    `listings` (the player's game list) are written after the invite is checked and before
    the append, as in `create_op`: a listed game where the player holds no seat (the table
    filled in between) is skipped by its readers."""
    state = yield from current_op(path, game_id)
    offered = invite_code.encode("utf-8", "surrogatepass")
    if state.finished or not hmac.compare_digest(invite_code_of(state).encode(), offered):
        raise WrongInvite(game_id)
    if player in state.players:  # a retried join: its first answer again
        first = state.players[0] == player
        known = yield from streams.command_record(
            path.context, game_id, "create" if first else _join_id(state, player)
        )
        if known is not None:
            yield from _each(listings)  # so that a retry restores a listing lost since
            return (yield from _first_result_op(path, game_id, known[0]))
    join_game(state, player, entropy, name)  # refuses a full table before any listing
    yield from _each(listings)
    return (
        yield from _seating_op(
            path,
            game_id,
            state,
            AppendMeta("join", player, now),
            decide=lambda state: join_game(state, player, entropy, name),
            command_id=lambda state: _join_id(state, player),
        )
    )


def _join_id(state: State, player: str) -> str:
    """A player may join, leave and join again: each join has its own command id."""
    times = state.left.count(player)
    return f"join:{player}" + (f":{times}" if times else "")


def _seating_op(
    path: CommandPath,
    game_id: str,
    state: State,
    meta: AppendMeta,
    *,
    decide: Callable[[State], list[Event]],
    command_id: Callable[[State], str],
) -> Op[Outcome]:
    """Append a change of the table (a join, a leave, a cancellation) decided on `state`, and
    decided again on a newer state after a conflict."""
    for _attempt in range(path.conflict_retries + 1):
        events = decide(state)
        try:
            return (
                yield from _append_op(
                    path,
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
            return (yield from _first_result_op(path, game_id, done.first_result))
        except VersionConflict:
            state = yield from current_op(path, game_id)
    raise VersionConflict(state.version)


def leave_op(path: CommandPath, game_id: str, *, player: str, now: str) -> Op[Outcome]:
    """Give up a place at a table that waits (not the creator's: they cancel). Leaving again
    after a lost answer is answered with the first answer."""
    state = yield from current_op(path, game_id)
    if player not in state.players and player in state.left:
        previous = f"leave:{player}:{state.left.count(player) - 1}"
        known = yield from streams.command_record(path.context, game_id, previous)
        if known is not None:
            return (yield from _first_result_op(path, game_id, known[0]))
    return (
        yield from _seating_op(
            path,
            game_id,
            state,
            AppendMeta("leave", player, now),
            decide=lambda state: leave_game(state, player),
            command_id=lambda state: f"leave:{player}:{state.left.count(player)}",
        )
    )


def cancel_op(path: CommandPath, game_id: str, *, player: str, now: str) -> Op[Outcome]:
    """Call off a game that has not started (its creator only); answered again if retried."""
    state = yield from current_op(path, game_id)
    if state.phase == "cancelled" and state.players[:1] == (player,):
        known = yield from streams.command_record(path.context, game_id, "cancel")
        if known is not None:
            return (yield from _first_result_op(path, game_id, known[0]))
    return (
        yield from _seating_op(
            path,
            game_id,
            state,
            AppendMeta("cancel", player, now),
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


def request_digest(seat: int, expected_version: int, commands: Sequence[Command]) -> str:
    return digest(
        b"commands",
        str(seat).encode(),
        str(expected_version).encode(),
        _commands_encoder.encode(list(commands)),
    )


def execute_op(
    path: CommandPath,
    game_id: str,
    *,
    player: str,
    expected_version: int,
    command_id: str,
    commands: Sequence[Command],
    now: str,
) -> Op[Outcome]:
    """Decide and append one or more commands of the player's seat, atomically, on the
    version the player decided on: a game at another version is a `VersionConflict` (after
    checking that this is not a retry of a command already accepted). A bot or a clock acts
    the same way, with the version it decided on, so that a move made on a game that moved
    on does nothing."""
    state = yield from current_op(path, game_id, expected_version)
    seat = state.seat_of(player)
    if seat is None:
        if player in state.players:  # joined, but the seats are drawn when the table is full
            raise IllegalCommand("game_not_started", "R7", "the game waits for its players")
        raise NotSeated(game_id)
    command_id = player_command_id(player, command_id)
    request = request_digest(seat, expected_version, commands)
    try:
        if state.version != expected_version:
            yield from _raise_if_known(path, game_id, command_id, request)
            raise VersionConflict(state.version)
        try:
            events, after = decide_all(state, seat, commands)
        except CommandRefused:
            yield from _raise_if_known(path, game_id, command_id, request)
            raise
        outcome = yield from _append_op(
            path,
            game_id,
            state=state,
            events=events,
            after=after,
            command_id=command_id,
            meta=AppendMeta(
                "commands", player, now, seat, tuple(canonical(state.board, c) for c in commands)
            ),
            request=request,
        )
    except DuplicateCommand as done:
        outcome = yield from _first_result_op(path, game_id, done.first_result)
    return msgspec.structs.replace(outcome, seat=seat)


def _raise_if_known(path: CommandPath, game_id: str, command_id: str, request: str) -> Op[None]:
    """Before refusing a request, look whether its command id was accepted already: then the
    first result is the answer (`DuplicateCommand`), or the id was used for another request
    (`CommandIdReused`)."""
    known = yield from streams.command_record(path.context, game_id, command_id)
    if known is None:
        return
    result, first_digest = known
    if first_digest != request:
        raise CommandIdReused(command_id, result)
    raise DuplicateCommand(result)
