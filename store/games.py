"""The command path: the one way a game changes. Here a seat's commands (sent, or previewed:
decided the same way and appended nowhere); what the path works with is `store.command_path`,
setting a table (create, join, leave, cancel) is in `store.tables`, the reads in `store.reads`.

Load the state (cached by version), decide with the domain, append with the expected version.
Written as store operations (generators of Redis requests, see `store.protocol`) so that the
asyncio server and sync tools run the same logic; `server.services.games` runs them on an
`AsyncEventStore`.

Idempotency: a command id names one request of one seat (its commands and expected version).
Sent again, it gets the first result again, even when the game has moved on since; sent with
other content, it is refused. Concurrency: a stale expected version is a conflict that reports
the current version. A change of the table (a join, a leave) needs no expected version: it is
decided again on the newer state, a bounded number of times.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import msgspec

from domain.commands import Command
from domain.decide import canonical, decide_all
from domain.errors import CommandRefused, IllegalCommand
from domain.events import Event
from domain.shapes import stored_bytes
from domain.state import State
from store import appending, streams
from store.appending import digest, same_request
from store.command_path import CommandPath
from store.context import Context
from store.errors import (
    CommandIdReused,
    DuplicateCommand,
    HandedOver,
    NotSeated,
    VersionConflict,
)
from store.handovers import handed_over_earlier_op, handed_over_op
from store.loading import drop_snapshot_op, snapshot_if_due_op
from store.protocol import Op
from store.reads import current_op, events_op
from store.stored import AppendMeta, AppendResult, meta_decoder

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
    head_hash: str = ""
    """The chain hash of `last_version`: what a receipt of this append signs."""
    time: str = ""
    """When the append was accepted (its metadata's time, also when told again)."""


def append_op(
    path: CommandPath,
    game_id: str,
    *,
    state: State,
    events: Sequence[Event],
    after: State,
    command_id: str,
    meta: AppendMeta,
    request: str,
    unless_handed_over: str = "",
) -> Op[Outcome]:
    """Append the events decided on `state` (leading to `after`); on success cache the new
    state and snapshot when due. The events are stored in the shape of the game's own rules
    version (`after.board`, which a creation's `state` does not have yet). A player named by
    `unless_handed_over` who handed their seat over refuses it (`appending.append`)."""
    result: AppendResult = yield from appending.append(
        path.context,
        game_id,
        state.version,
        [stored_bytes(event, after.board.rules_version) for event in events],
        command_id,
        meta,  # kept compact, read back as its JSON (docs/store.md, "Stream entries")
        request_digest=request,
        unless_handed_over=unless_handed_over,
    )
    path.cache.put(game_id, after)
    if after.finished:  # nothing is decided after the end: a snapshot would never be used
        yield from drop_snapshot_op(path.context, game_id)
    else:
        yield from snapshot_if_due_op(path.context, game_id, result, after, path.snapshots)
    return Outcome(
        result.first_version,
        result.last_version,
        tuple(events),
        after,
        head_hash=result.head_hash,
        time=meta.time,
    )


def first_result_op(path: CommandPath, game_id: str, result: AppendResult) -> Op[Outcome]:
    """An earlier append of this command id, told again."""
    events = yield from events_op(path, game_id, result.first_version, result.last_version)
    state = yield from current_op(path, game_id)
    meta = yield from streams.metadata_at(path.context, game_id, result.first_version)
    return Outcome(
        result.first_version,
        result.last_version,
        events,
        state,
        repeated=True,
        head_hash=result.head_hash,
        time=meta_decoder.decode(meta).time if meta else "",
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


class Decided(msgspec.Struct, frozen=True):
    """A seat's commands decided on the state it named, not appended: the seat, that state,
    the events and the state they lead to."""

    seat: int
    state: State
    events: tuple[Event, ...]
    after: State


def seat_for(state: State, game_id: str, player: str) -> int:
    """The seat the player's commands are decided for; refused if they hold none."""
    seat = state.seat_of(player)
    if seat is None:
        if player in state.players:  # joined, but the seats are drawn when the table is full
            raise IllegalCommand("game_not_started", "R7", "the game waits for its players")
        raise NotSeated(game_id)
    return seat


def decide_op(
    path: CommandPath,
    game_id: str,
    state: State,
    seat: int,
    *,
    player: str,
    expected_version: int,
    commands: Sequence[Command],
    by: str = "",
    earlier: tuple[str, str] | None = None,
    handover_at_append: bool = False,
) -> Op[Decided]:
    """Judge a seat's commands on `state`, the game's head, as the version the player
    decided on: a game at another version is a `VersionConflict`; a player who handed their
    seat to a bot for good may not act themself (`by` says who acts for them, when it is
    not them); the rules refuse a command with `CommandRefused`. `earlier`, the command id
    and digest of the request, is looked up before any refusal: an accepted request sent
    again gets its first answer (`DuplicateCommand`), not a refusal. With
    `handover_at_append` the append that follows checks the hand-over itself (`appending`),
    so it is asked here only before a refusal of the rules, which it comes before (and, on a
    cluster, where the script cannot reach them, the hand-overs of before they moved into
    the game's slot: `store.handovers`)."""
    ctx = path.context

    def before_refusing() -> Op[None]:
        if earlier is not None:
            yield from _raise_if_known(path, game_id, *earlier)

    def handed_over(asked: Callable[[Context, str, str], Op[bool]]) -> Op[bool]:
        return (not by) and (yield from asked(ctx, game_id, player))

    if state.version != expected_version:
        yield from before_refusing()
        raise VersionConflict(state.version)
    if not handover_at_append:
        before = handed_over_op
    elif ctx.cluster:
        before = handed_over_earlier_op
    else:
        before = None
    if before is not None and (yield from handed_over(before)):
        yield from before_refusing()
        raise _handed_over_refusal()
    try:
        events, after = decide_all(state, seat, commands)
    except CommandRefused:
        yield from before_refusing()
        if handover_at_append and (yield from handed_over(handed_over_op)):
            raise _handed_over_refusal() from None
        raise
    return Decided(seat, state, tuple(events), after)


def _handed_over_refusal() -> IllegalCommand:
    return IllegalCommand(
        "seat_handed_over", "R7", "you handed this seat to a bot for good: it plays it"
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
    by: str = "",
) -> Op[Outcome]:
    """Decide and append one or more commands of the player's seat, atomically, on the
    version the player decided on (`decide_op`, after checking that a refused request is
    not a retry of one already accepted). A bot or a clock acts the same way, with the
    version it decided on, so that a move made on a game that moved on does nothing."""
    state = yield from current_op(path, game_id, expected_version)
    seat = seat_for(state, game_id, player)
    command_id = player_command_id(player, command_id)
    request = request_digest(seat, expected_version, commands)
    # The append checks the hand-over itself, in the same script: no round trip of its own,
    # and no command of the player lands after it.
    try:
        decided = yield from decide_op(
            path,
            game_id,
            state,
            seat,
            player=player,
            expected_version=expected_version,
            commands=commands,
            by=by,
            earlier=(command_id, request),
            handover_at_append=True,
        )
        outcome = yield from append_op(
            path,
            game_id,
            state=state,
            events=decided.events,
            after=decided.after,
            command_id=command_id,
            meta=AppendMeta(
                "commands",
                player,
                now,
                seat,
                tuple(canonical(state.board, c) for c in commands),
                by,
            ),
            request=request,
            unless_handed_over="" if by else player,
        )
    except DuplicateCommand as done:
        outcome = yield from first_result_op(path, game_id, done.first_result)
    except HandedOver:
        raise _handed_over_refusal() from None
    return msgspec.structs.replace(outcome, seat=seat)


def preview_op(
    path: CommandPath,
    game_id: str,
    *,
    player: str,
    expected_version: int,
    commands: Sequence[Command],
) -> Op[Decided]:
    """The player's commands decided exactly as `execute_op` decides them (the same
    refusals, in the same order), and appended nowhere. On the game's head read afresh: a
    cached state may be stale, and no append will check its version here."""
    state = yield from current_op(path, game_id)
    seat = seat_for(state, game_id, player)
    return (
        yield from decide_op(
            path,
            game_id,
            state,
            seat,
            player=player,
            expected_version=expected_version,
            commands=commands,
        )
    )


def _raise_if_known(path: CommandPath, game_id: str, command_id: str, request: str) -> Op[None]:
    """Before refusing a request, look whether its command id was accepted already: then the
    first result is the answer (`DuplicateCommand`), or the id was used for another request
    (`CommandIdReused`)."""
    known = yield from streams.command_memo(path.context, game_id, command_id)
    if known is None:
        return
    result, first_digest = known
    if not same_request(first_digest, request):
        raise CommandIdReused(command_id, result)
    raise DuplicateCommand(result)
