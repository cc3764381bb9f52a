"""The reliability record counts turns, not appends: a turn sent in two appends is one, a turn
the clock played (or finished) is one timed out, a turn of a seat handed over is counted
apart, a turn still going on is not counted yet; a turn the clock played during a vacation or
in quiet hours counts as on time."""

from __future__ import annotations

from projections.reliability import Record, record_of, seat_turns
from projections.timekeeping import Append
from store.reliability import SeatTurns


def _log(*appends: tuple[int | None, str]) -> list[Append]:
    """Appends of seats in order (None: a join), each `(seat, by)`, an hour apart."""
    return [
        Append("commands" if seat is not None else "join", seat, 3600.0 * n, by, 10 * n + 1)
        for n, (seat, by) in enumerate(appends)
    ]


def test_a_turn_sent_in_two_appends_is_one_turn_and_one_the_clock_finished_is_timed_out() -> None:
    log = _log((None, ""), (0, ""), (0, ""), (1, ""), (0, ""), (0, "clock:greedy"), (1, ""))
    assert seat_turns(log, 0, "ann", bot_player=False, deciding=None) == SeatTurns(
        "ann", own=1, clocked=((51, 5 * 3600.0),)
    )
    assert seat_turns(log, 1, "bob", bot_player=False, deciding=None).own == 2


def test_a_turn_still_going_on_is_not_counted_yet() -> None:
    log = _log((0, ""), (1, ""), (0, ""))
    assert seat_turns(log, 0, "ann", bot_player=False, deciding=0).own == 1
    assert seat_turns(log, 0, "ann", bot_player=False, deciding=1).own == 2


def test_a_bots_turns_are_a_bot_players_own_and_apart_for_a_seat_handed_over() -> None:
    log = _log((0, "bot:greedy"), (1, ""), (0, "bot:greedy"), (1, ""))
    assert seat_turns(log, 0, "bot", bot_player=True, deciding=None).own == 2
    handed = seat_turns(log, 0, "ann", bot_player=False, deciding=None)
    assert (handed.own, handed.handed, handed.clocked) == (0, 2, ())


def test_the_clocks_turns_during_a_vacation_or_quiet_hours_count_as_on_time() -> None:
    seat = SeatTurns("ann", own=7, clocked=((11, 100.0), (21, 200.0), (31, 300.0)))
    assert record_of([("g1", seat)], away=(), quiet=frozenset()) == Record(1, 10, 3, 0, 0)
    record = record_of([("g1", seat)], away=((150.0, 250.0),), quiet=frozenset({"g1:31"}))
    assert record == Record(1, 10, 1, 2, 0)
    assert record.per_100 == 10.0
    assert Record().per_100 is None
