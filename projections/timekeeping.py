"""Timekeeping: a timed game's clocks at any version, from the times of its appends alone.

Only the seat to decide may send commands, so whoever sent an append was the seat whose clock
ran since the append before it, and whoever sends the next one is the seat whose clock runs
after it: the appends' times (`time` in each command of the record) are all the clocks need.
A turn is a run of appends of one seat (the clock's own may take two: an append ends where a
hidden card is turned up, R42). It may take `per_move` before the seat's bank is drawn on;
what a turn leaves of `per_move` goes to the bank, up to the most it may hold. The deadline
of the turn running is its start plus `per_move` plus the bank; after `hand_over_after`
turns in a row that the clock played (any of), it is its start plus `GRACE_SECONDS`, so that
the bot plays the seat at once but a person who comes back can still take their turn (and
with it their seat: one turn played by the person and the count is back to 0).

Pure: the board, the replay, the workers' deadlines and the player's list of games all read
time through this one function, so they always agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import NamedTuple

from domain.view import ClockView, SeatClock
from store.clock import iso
from store.records import Batch, meta_decoder
from store.time_controls import TimeControl

GRACE_SECONDS = 60.0
"""What a turn may take once the seat is played by the bot after its timeouts."""
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


def timeline(
    control: TimeControl, log: Sequence[Append], deciding: int | None, seats: int
) -> list[ClockView]:
    """The clocks after each append of `log` (the game's appends in order); `deciding` is
    the seat to decide after the last one (None: nobody, the game is not in play)."""
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
                left = per_move - (append.time - started)
                if left >= 0:  # banked, up to the most the bank may hold
                    banks[seat] = max(banks[seat], min(most, banks[seat] + left))
                else:  # drawn from the bank
                    banks[seat] = max(0.0, banks[seat] + left)
        if after != running:
            running, started = after, append.time
            clocked = person = False
        clocks.append(_view(control, banks, timeouts, running, started))
    return clocks


def _sender(append: Append) -> int | None:
    return append.seat if append.kind == "commands" else None


def _view(
    control: TimeControl, banks: list[float], timeouts: list[int], running: int | None,
    started: float,
) -> ClockView:  # fmt: skip
    deadline = None
    if running is not None:
        if timeouts[running] >= control.hand_over_after:
            deadline = started + GRACE_SECONDS
        else:
            deadline = started + control.per_move_seconds + banks[running]
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
