"""What a reader is shown of a game's analysis (`projections.analysis`): a decision made for a
player (a turn the clock played, a seat handed to a bot) is shown but counts in none of the
seat's figures; the first slice not kept is the one a reader's request asks for again."""

from __future__ import annotations

from bots.analysis import Judgement, accuracy
from domain.commands import PlaceFloor
from projections.analysis import SLICE, Slice, encode_slice, missing_slice, read_analysis


def _judged(version: int, seat: int, after: float) -> Judgement:
    return Judgement(version, seat, PlaceFloor(1), PlaceFloor(0), 0.6, after, 2)


def test_a_decision_made_for_a_player_is_shown_but_counts_in_none_of_their_figures() -> None:
    own, timed_out = _judged(20, 0, 0.54), _judged(30, 0, 0.3)  # a 6 and a 30 point loss
    other = _judged(25, 1, 0.6)
    part = Slice(3, (own, other, timed_out), ("", "", "clock:greedy"))
    read = read_analysis(2, 3, {0: encode_slice(part)})
    assert read.complete and read.analysed == 3
    assert read.judged == [(own, ""), (other, ""), (timed_out, "clock:greedy")]
    seat = read.seats[0]
    assert (seat.own_decisions, seat.inaccuracies, seat.blunders) == (1, 1, 0)
    assert seat.accuracy == accuracy([own.loss])
    assert read.seats[1].accuracy == accuracy([0.0]) and read.seats[1].own_decisions == 1


def test_the_first_slice_not_kept_is_the_one_asked_for_again() -> None:
    kept = {0: b"", SLICE: b"", 3 * SLICE: b""}
    assert missing_slice(0, {}) == 0
    assert missing_slice(4 * SLICE + 1, kept) == 2 * SLICE
    assert missing_slice(2 * SLICE, {0: b"", SLICE: b""}) == 0  # complete: from the start
