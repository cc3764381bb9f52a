"""A player's reliability record: how many of their turns timed out, per 100 turns, over their
last `WINDOW` games (in play or finished), from the games' appends alone.

A turn is a run of one seat's appends (as `projections.timekeeping` reads them: a bot or the
clock may take two, an append ending where a hidden card is turned up, R42); it counts once
over, when another seat's append follows it or the game ends. Each of the player's turns is:

- the player's own: some append of it was theirs (`by` ""; for a bot player, its own `bot:`);
- timed out: the clock played it when its deadline passed (`by` `clock:<level>`; a turn the
  player began and the clock finished too), and so are the turns the clock plays at once
  after `hand_over_after` timeouts in a row (the player is away: so it is for the table);
- handed over: a bot played it after the player gave the seat up (resigned); counted apart,
  neither on time nor timed out.

Vacations and quiet hours count as on time: a turn the clock played while the player was on
vacation (the clocks stand still then, so the workers never play one; this holds if they
did), or during the quiet hours the player had set when the clock played it, is on time
(`excused`). Pure: the store keeps the turns of finished games (`store.reliability`).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

import msgspec

from projections.timekeeping import CLOCK_BY, Append
from store.reliability import SeatTurns, quiet_member
from store.vacations import Vacations

WINDOW = 100
"""The games the record looks back over, the latest first."""


class Record(msgspec.Struct, frozen=True):
    """The record over some games: turns on time and timed out."""

    games: int = 0
    turns: int = 0
    """The player's turns: their own and the timed out (handed-over ones apart)."""
    timed_out: int = 0
    excused: int = 0
    """Turns the clock played during a vacation or quiet hours: counted as on time."""
    handed_over: int = 0

    @property
    def per_100(self) -> float | None:
        """Turns timed out per 100 turns, to one decimal (None: no turn yet)."""
        return round(100 * self.timed_out / self.turns, 1) if self.turns else None


def seat_turns(
    log: Sequence[Append], seat: int, player: str, *, bot_player: bool, deciding: int | None
) -> SeatTurns:
    """One seat's turns over a game's appends (`deciding`: the seat whose decision is
    pending after the last of them, None once over; a turn of its still goes on)."""
    own = handed = 0
    clocked: list[tuple[int, float]] = []
    running: int | None = None
    clock: tuple[int, float] | None = None
    person = False

    def close() -> None:
        nonlocal own, handed
        if clock is not None:
            clocked.append(clock)
        elif person or bot_player:
            own += 1
        else:
            handed += 1

    for append in log:
        sender = append.seat if append.kind == "commands" else None
        if sender != running:
            if running == seat:
                close()
            running, clock, person = sender, None, False
        if sender == seat:
            if append.by.startswith(CLOCK_BY):
                clock = clock or (append.first_version, append.time)
            elif not append.by:
                person = True
    if running == seat and deciding != seat:
        close()
    return SeatTurns(player, own, handed, tuple(clocked))


def game_turns(
    log: Sequence[Append], players: Sequence[str], bots: Collection[str], deciding: int | None
) -> tuple[SeatTurns, ...]:
    """Every seat's turns (`players`: each seat's player; `bots`: those a bot plays as)."""
    return tuple(
        seat_turns(log, seat, player, bot_player=player in bots, deciding=deciding)
        for seat, player in enumerate(players)
    )


def record_of(
    games: Sequence[tuple[str, SeatTurns]], away: Vacations, quiet: Collection[str]
) -> Record:
    """The record over these games (each: its id and the player's seat's turns); `away`,
    the player's vacations; `quiet`, their turns the clock played in quiet hours."""
    turns = timed_out = excused = handed = 0
    for game_id, seat in games:
        turns += seat.own + len(seat.clocked)
        handed += seat.handed
        for version, moment in seat.clocked:
            on_vacation = any(begun <= moment < until for begun, until in away)
            if on_vacation or quiet_member(game_id, version) in quiet:
                excused += 1
            else:
                timed_out += 1
    return Record(len(games), turns, timed_out, excused, handed)
