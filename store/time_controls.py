"""A game's time control (its clock, in the API): how long each seat may take per move, its
bank of extra time, and what happens when a deadline passes. Set once, when the game is
created, and kept beside the game, not in its rules log (a clock is no rule: the record shows
what it did in each command's `by`). Store operations in the style of `store.protocol`."""

from __future__ import annotations

import msgspec

from store.protocol import Call, Op

HOUR = 3600.0
MIN_PER_MOVE_HOURS = 1 / 60
"""The shortest turn a clock may give (one minute): a deadline the workers fire within about a
second of can still be met by a person. It is also what a seat handed over to its bot gets
(`projections.timekeeping.GRACE_SECONDS`): never more than a seat whose person plays."""


class TimeControl(msgspec.Struct, frozen=True):
    """A game's clock as kept (read leniently: a field added later gets its default)."""

    per_move_hours: float
    """What each turn may take before the bank is drawn on."""
    bank_hours: float = 0.0
    """Each seat's bank at the start."""
    max_bank_hours: float | None = None
    """The most the bank may hold: unused per-move time is banked up to this (`bank_hours`
    when absent: the bank refills to where it started, never beyond)."""
    on_timeout: str = "greedy"
    """The bot level that plays a turn whose deadline passed."""
    hand_over_after: int = 3
    """Consecutive timeouts after which the bot plays the seat's turns at once (the person
    takes the seat back by playing a turn themselves)."""

    @property
    def per_move_seconds(self) -> float:
        return self.per_move_hours * HOUR

    @property
    def bank_seconds(self) -> float:
        return self.bank_hours * HOUR

    @property
    def max_bank_seconds(self) -> float:
        most = self.bank_hours if self.max_bank_hours is None else self.max_bank_hours
        return most * HOUR


_encoder = msgspec.json.Encoder()
_decoder = msgspec.json.Decoder(TimeControl)


def time_control_key(prefix: str, game_id: str) -> str:
    return f"{prefix}:clock:{game_id}"


def set_time_control(prefix: str, game_id: str, control: TimeControl) -> Call:
    """The write that sets a new game's clock (made with its creation, before its append:
    whoever sees the game sees its clock)."""
    return Call("set", (time_control_key(prefix, game_id), _encoder.encode(control)))


def time_control_op(prefix: str, game_id: str) -> Op[TimeControl | None]:
    """The game's clock, or None for an untimed game."""
    raw = yield Call("get", (time_control_key(prefix, game_id),))
    return None if raw is None else _decoder.decode(raw)
