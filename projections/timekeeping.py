"""Timekeeping: a timed game's clocks at any version, from the times of its appends alone.

Only the seat to decide may send commands, so whoever sent an append was the seat whose clock
ran since the append before it, and whoever sends the next one is the seat whose clock runs
after it: the appends' times (`time` in each command of the record) are all the clocks need.
A turn is a run of appends of one seat (the clock's own may take two: an append ends where a
hidden card is turned up, R42). It may take `per_move` before the seat's bank is drawn on;
what a turn leaves of `per_move` goes to the bank, up to the most it may hold. The deadline
of the turn running is its start plus `per_move` plus the bank; after `hand_over_after`
turns in a row that the clock played (any of), it is its start plus `GRACE_SECONDS`, the
shortest turn a clock may give, so that the bot plays the seat at once but a person who comes
back can still take their turn (and with it their seat: one turn played by the person and the
count is back to 0).

A player on vacation has their clocks stand still in every game: a turn is charged its time
less what the player's vacations cover, and its deadline moves on by as much.

Pure: the board, the replay, the workers' deadlines and the player's list of games all read
time through this one function, so they always agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import NamedTuple

from domain.state import State
from domain.view import ClockView, SeatClock
from store.accounts import Accounts
from store.clock import iso
from store.command_path import CommandPath
from store.protocol import Op
from store.reads import batches_op
from store.stored import Batch, meta_decoder
from store.time_controls import HOUR, MIN_PER_MOVE_HOURS, TimeControl
from store.vacations import vacations_op

GRACE_SECONDS = MIN_PER_MOVE_HOURS * HOUR
"""What a turn may take once the seat is played by the bot after its timeouts: the shortest
turn any clock gives (a minute), so a handed-over seat never waits longer than a played one."""
CLOCK_BY = "clock:"
"""How the record's `by` begins in a turn the clock played (`clock:greedy`)."""


class Append(NamedTuple):
    """What timekeeping reads of one append."""

    kind: str
    seat: int | None
    time: float
    """Seconds since the epoch."""
    by: str
    first_version: int


def appends(batches: Sequence[Batch]) -> list[Append]:
    """The appends of a game as timekeeping reads them."""
    found = []
    for batch in batches:
        meta = meta_decoder.decode(batch.metadata)
        moment = datetime.fromisoformat(meta.time).timestamp()
        found.append(Append(meta.kind, meta.seat, moment, meta.by, batch.first_version))
    return found


def planned_append(seat: int, time: str, first_version: int) -> Append:
    """A seat's own commands, as they would be read once appended at `time` (the command
    path's format, `store.clock.iso`): for a preview of what they lead to."""
    return Append("commands", seat, datetime.fromisoformat(time).timestamp(), "", first_version)


Away = Sequence[tuple[float, float]]
"""A seat's player's vacations: (start, end) in seconds since the epoch, in order."""


def timeline(
    control: TimeControl,
    log: Sequence[Append],
    deciding: int | None,
    seats: int,
    away: Sequence[Away] = (),
) -> list[ClockView]:
    """The clocks after each append of `log` (the game's appends in order); `deciding` is
    the seat to decide after the last one (None: nobody, the game is not in play); `away`,
    each seat's player's vacations, during which its clock stands still."""
    away = list(away) + [()] * (seats - len(away))
    per_move, most = control.per_move_seconds, control.max_bank_seconds
    banks = [control.bank_seconds] * seats
    timeouts = [0] * seats
    running: int | None = None
    started = 0.0
    clocked = person = False  # in the turn running: the clock played, its person played
    clocks = []
    for index, append in enumerate(log):
        after = deciding if index + 1 == len(log) else _sender(log[index + 1])
        seat = append.seat
        if append.kind == "commands" and seat is not None and 0 <= seat < seats:
            clocked = clocked or append.by.startswith(CLOCK_BY)
            person = person or not append.by
            if after != seat:  # its turn is over: what it left goes to the bank
                if clocked:
                    timeouts[seat] += 1
                elif person:
                    timeouts[seat] = 0
                left = per_move - (
                    append.time - started - _overlap(away[seat], started, append.time)
                )
                if left >= 0:  # banked, up to the most the bank may hold
                    banks[seat] = max(banks[seat], min(most, banks[seat] + left))
                else:  # drawn from the bank
                    banks[seat] = max(0.0, banks[seat] + left)
        if after != running:
            running, started = after, append.time
            clocked = person = False
        clocks.append(_view(control, banks, timeouts, running, started, away=away))
    return clocks


def _overlap(away: Away, start: float, end: float) -> float:
    """How much of `start..end` the vacations cover."""
    return sum(max(0.0, min(end, until) - max(start, begun)) for begun, until in away)


def _deadline(away: Away, start: float, allowance: float) -> float:
    """When a clock started at `start` has run `allowance`, standing still on vacation."""
    moment, left = start, allowance
    for begun, until in away:
        if until <= moment:
            continue
        if begun - moment >= left:
            break
        left -= max(0.0, begun - moment)
        moment = max(moment, until)
    return moment + left


def _sender(append: Append) -> int | None:
    return append.seat if append.kind == "commands" else None


def _view(
    control: TimeControl, banks: list[float], timeouts: list[int], running: int | None,
    started: float, *, away: Sequence[Away],
) -> ClockView:  # fmt: skip
    deadline = None
    if running is not None:
        if timeouts[running] >= control.hand_over_after:
            allowance = GRACE_SECONDS
        else:
            allowance = control.per_move_seconds + banks[running]
        deadline = _deadline(away[running], started, allowance)
    return ClockView(
        per_move_seconds=control.per_move_seconds,
        max_bank_seconds=control.max_bank_seconds,
        hand_over_after=control.hand_over_after,
        running=running,
        turn_started=None if running is None else _iso(started),
        deadline=None if deadline is None else _iso(deadline),
        seats=tuple(SeatClock(seat, banks[seat], timeouts[seat]) for seat in range(len(banks))),
    )


def _iso(seconds: float) -> str:
    return iso(datetime.fromtimestamp(seconds, UTC))


def deadline_seconds(clock: ClockView) -> float | None:
    """The deadline of the turn running, in seconds since the epoch."""
    return None if clock.deadline is None else datetime.fromisoformat(clock.deadline).timestamp()


def clocks_op(
    path: CommandPath,
    accounts: Accounts,
    game_id: str,
    state: State,
    control: TimeControl,
    *,
    planned: Append | None = None,
) -> Op[tuple[list[tuple[int, ClockView]], list[Away]]]:
    """The one read of a timed game's clocks, for the server and the workers alike: after
    each append up to the state's version (and after `planned`, the append that would lead
    to that state, not made), with the append's first version; and each seat's player's
    vacations."""
    batches = yield from batches_op(path, game_id)
    seats = state.board.seats
    players = (  # none while the table waits: the seats are drawn when it fills
        [state.players[state.seat_players[seat]] for seat in range(seats)]
        if state.seat_players
        else []
    )
    away: list[Away] = list((yield from vacations_op(accounts, players))) if players else []
    log = appends([batch for batch in batches if batch.last_version <= state.version])
    if planned is not None:
        log.append(planned)
    deciding = state.pending.seat if state.pending is not None else None
    views = timeline(control, log, deciding, seats, away)
    return [(a.first_version, view) for a, view in zip(log, views, strict=True)], away


def away_until(away: Away, now: float) -> str | None:
    """The end of the vacation going on at `now` (UTC, ISO 8601; None: none is)."""
    until = next((until for begun, until in away if begun <= now < until), None)
    return None if until is None else _iso(until)
