"""Timekeeping: the clocks of a timed game, from the times of its appends alone, obey the
clock's rules for any sequence of turns (docs/api.md, "Clocks")."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from projections.timekeeping import GRACE_SECONDS, Append, deadline_seconds, timeline
from store.time_controls import TimeControl

SEATS = 3
START = 1_800_000_000.0

turns = st.lists(
    st.tuples(
        st.floats(min_value=0, max_value=200_000, allow_nan=False),  # how long it took
        st.sampled_from(["", "clock:greedy", "bot:greedy"]),  # who played it
        st.integers(min_value=1, max_value=2),  # in how many appends
    ),
    max_size=40,
)
controls = st.builds(
    TimeControl,
    per_move_hours=st.floats(min_value=0.01, max_value=48),
    bank_hours=st.floats(min_value=0, max_value=24),
    max_bank_hours=st.one_of(st.none(), st.floats(min_value=24, max_value=72)),
    hand_over_after=st.integers(min_value=1, max_value=4),
)


def _log(played: list[tuple[float, str, int]]) -> list[Append]:
    """A started game (its last join) and the turns, seat after seat."""
    log = [Append("join", None, START, "", 1)]
    moment, version = START, 2
    for turn, (took, by, appends) in enumerate(played):
        for part in range(appends):
            moment += took / appends
            log.append(Append("commands", turn % SEATS, moment, by, version + part))
        version += appends
    return log


@given(controls, turns)
def test_banks_stay_between_none_and_the_most_they_may_hold(
    control: TimeControl, played: list[tuple[float, str, int]]
) -> None:
    log = _log(played)
    most = max(control.max_bank_seconds, control.bank_seconds)
    for clock in timeline(control, log, len(played) % SEATS, SEATS):
        assert all(0 <= seat.bank_seconds <= most + 1e-6 for seat in clock.seats)


@given(controls, turns)
def test_a_turn_in_time_never_lowers_the_bank_and_a_late_one_draws_exactly_its_lateness(
    control: TimeControl, played: list[tuple[float, str, int]]
) -> None:
    log = _log(played)
    clocks = timeline(control, log, len(played) % SEATS, SEATS)
    ends = [index for index in range(1, len(log)) if index + 1 == len(log) or
            log[index + 1].seat != log[index].seat]  # fmt: skip
    for turn, end in enumerate(ends):
        seat = log[end].seat
        assert seat is not None
        before = clocks[end - played[turn][2]].seats[seat].bank_seconds
        after = clocks[end].seats[seat].bank_seconds
        took, per_move = played[turn][0], control.per_move_seconds
        if took <= per_move:
            assert after >= before - 1e-6
        else:
            assert abs(after - max(0.0, before - (took - per_move))) < 1e-3


@given(controls, turns)
def test_the_deadline_is_the_turns_start_and_its_allowance_or_a_minute_once_handed_over(
    control: TimeControl, played: list[tuple[float, str, int]]
) -> None:
    log = _log(played)
    deciding = len(played) % SEATS
    clock = timeline(control, log, deciding, SEATS)[-1]
    assert clock.running == deciding
    streak = 0  # the seat's turns in a row that the clock played
    for _took, by, _appends in played[deciding::SEATS]:
        streak = streak + 1 if by.startswith("clock:") else 0 if by == "" else streak
    assert clock.seats[deciding].timeouts == streak
    due = deadline_seconds(clock)
    assert due is not None
    started = log[-1].time
    if clock.seats[deciding].timeouts >= control.hand_over_after:
        assert abs(due - (started + GRACE_SECONDS)) < 0.01
    else:
        allowance = control.per_move_seconds + clock.seats[deciding].bank_seconds
        assert abs(due - (started + allowance)) < 0.01


def test_a_game_that_is_over_has_no_clock_running() -> None:
    control = TimeControl(per_move_hours=1)
    clock = timeline(control, _log([(10.0, "", 1)] * 4), None, SEATS)[-1]
    assert clock.running is None and clock.deadline is None
