"""Per-ruling tests of the Architetto, the third builder of 2-seat `towers` games (R20-R25, R49).

Each test names the ruling of `docs/rulings.md` it checks. The Architetto is
builder 2 (its number is the seat count). In most tests seat 0 plays BOL-1 (two Bologna
crests), takes Bologna's face-up card, the refill uses the first card of the draw pile, and the
Architetto reveals the next ones.

Long on purpose: one short test per case, each named as a sentence, read like a table;
splitting the file would scatter cases of one ruling or one promise.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pytest

from domain.commands import ChooseArchitettoSite, PlaceFloor, PlayCard, TakeCard
from domain.events import (
    ArchitettoRevealed,
    CardRevealed,
    CardTaken,
    CityScored,
    Event,
    FloorPlaced,
    GameEnded,
    SeedRevealed,
    StepStarted,
)
from domain.legal import legal_commands
from domain.scoring import final_scores
from domain.state import State
from domain.view import view
from tests.domain.table import act, of_type, refused, sites, table

ARCHITETTO = 2
CHOOSE = [ChooseArchitettoSite(0), ChooseArchitettoSite(1)]

Towers = Mapping[str, tuple[Sequence[int], Sequence[int]]]


def two_crest_turn(
    draw: Sequence[str],
    towers: Towers | None = None,
    seat: int = 0,
    supply: Mapping[int, int] | None = None,
) -> tuple[list[Event], State]:
    """`seat` plays its two-crest Bologna card, places both floors and takes Bologna's card."""
    card = "BOL-1" if seat == 0 else "BOL-2"
    state = table(
        2,
        hands={0: ["BOL-1", "ROM-7"], 1: ["BOL-2", "ROM-5"]},
        face_up={"Bologna": "SIE-1"},
        draw=draw,
        towers=towers or {},
        supply=supply,
        active=seat,
    )
    return act(state, seat, PlayCard(card), PlaceFloor(0), PlaceFloor(1), TakeCard("Bologna"))


def architetto_floors(events: list[Event]) -> list[tuple[str, int]]:
    return [(e.city, e.site) for e in of_type(events, FloorPlaced) if e.seat == ARCHITETTO]


# --- R20 trigger ---------------------------------------------------------------------------


def test_r20_after_a_two_crest_card_the_architetto_reveals_the_top_card_and_builds() -> None:
    events, after = two_crest_turn(["VER-4", "LUC-5", "SIE-5"], {"Lucca": ((0, 0), (1,))})
    assert of_type(events, ArchitettoRevealed) == [ArchitettoRevealed("LUC-5", "draw", 0)]
    assert architetto_floors(events) == [("Lucca", 1)]
    assert after.played[ARCHITETTO] == ("LUC-5",)
    assert after.draw == ("SIE-5",)
    assert after.supply[ARCHITETTO] == 29 - 1
    seen = view(after, 1).architetto
    assert seen is not None and (seen.top_card, seen.discard_count) == ("LUC-5", 1)
    assert after.pending == StepStarted(1, "play_card")


def test_r20_a_single_crest_card_does_not_wake_the_architetto() -> None:
    state = table(
        2,
        hands={0: ["ROM-7"], 1: ["ROM-5"]},
        face_up={"Roma": "SIE-1"},
        draw=["VER-4", "LUC-5"],
    )
    events, after = act(state, 0, PlayCard("ROM-7"), PlaceFloor(0), TakeCard("Roma"))
    assert not of_type(events, ArchitettoRevealed)
    assert after.draw == ("LUC-5",)
    assert after.played[ARCHITETTO] == ()


def test_r20_with_the_draw_pile_empty_after_the_refill_the_architetto_does_not_act() -> None:
    events, after = two_crest_turn(["VER-4"])
    assert of_type(events, CardRevealed) == [CardRevealed("Bologna", "VER-4")]
    assert not of_type(events, ArchitettoRevealed)
    assert after.pending == StepStarted(1, "play_card")


def test_r20_a_two_crest_reveal_chains_another_reveal() -> None:
    # The Architetto reveals MIL-1 (two Milano crests): the first floor goes on the shorter
    # site (R21c), the second, with both sites at 3, is seat 0's choice (R21b) and completes
    # Milano. MIL-1 had two crests, so LUC-5 is revealed next; its floor is forced.
    events, after = two_crest_turn(
        ["VER-4", "MIL-1", "LUC-5", "SIE-5"],
        {"Milano": ((0, 0, 0), (1, 1)), "Lucca": ((0, 0), (1,))},
    )
    assert of_type(events, ArchitettoRevealed) == [ArchitettoRevealed("MIL-1", "draw", 0)]
    assert architetto_floors(events) == [("Milano", 1)]
    assert after.pending == StepStarted(0, "architetto_site")
    events, after = act(after, 0, ChooseArchitettoSite(1))
    assert events[:3] == [
        FloorPlaced(ARCHITETTO, "Milano", 1),
        CityScored("Milano", ARCHITETTO, 7, 0, 4),
        ArchitettoRevealed("LUC-5", "draw", 0),
    ]
    assert architetto_floors(events) == [("Milano", 1), ("Lucca", 1)]
    assert after.played[ARCHITETTO] == ("MIL-1", "LUC-5")
    assert after.draw == ("SIE-5",)
    assert after.pending == StepStarted(1, "play_card")


def test_r20_the_chain_stops_when_the_draw_pile_runs_out() -> None:
    # ROM-1 has two crests, but nothing is left to reveal after it.
    events, after = two_crest_turn(["VER-4", "ROM-1"], {"Roma": ((0, 0, 0, 0), (1, 1))})
    assert [e.card for e in of_type(events, ArchitettoRevealed)] == ["ROM-1"]
    assert architetto_floors(events) == [("Roma", 1), ("Roma", 1)]
    assert after.draw == ()
    assert after.pending == StepStarted(1, "play_card")


def test_r20_a_single_crest_reveal_ends_the_architettos_turn() -> None:
    events, after = two_crest_turn(["VER-4", "LUC-5", "MIL-1"], {"Lucca": ((0, 0), (1,))})
    assert [e.card for e in of_type(events, ArchitettoRevealed)] == ["LUC-5"]
    assert after.draw == ("MIL-1",)


# --- R21 placement ---------------------------------------------------------------------


def test_r21a_r12_overrides_the_architettos_majority_placement() -> None:
    # Milano (VII) holds 6 floors, all on site 0 where the Architetto holds the majority.
    # By R21c it would build on the taller site 0; its floor is the last one, so R12 sends it
    # to the empty site 1, with no choice offered to anyone.
    events, after = two_crest_turn(["VER-4", "MIL-5"], {"Milano": ((2, 2, 2, 0, 0, 2), ())})
    assert architetto_floors(events) == [("Milano", 1)]
    assert not [e for e in of_type(events, StepStarted) if e.step == "architetto_site"]
    assert sites(after, "Milano") == ((2, 2, 2, 0, 0, 2), (2,))
    assert of_type(events, CityScored) == [CityScored("Milano", 2, 7, 2, 4)]


def test_r21b_a_tie_where_the_seat_whose_turn_ended_chooses_the_site() -> None:
    events, after = two_crest_turn(["VER-4", "LUC-5", "SIE-5"], {"Lucca": ((0,), (1,))})
    assert events[-1] == StepStarted(0, "architetto_site")
    assert architetto_floors(events) == []
    assert legal_commands(after, 0) == CHOOSE
    assert legal_commands(after, 1) == []
    pending = view(after, 1).pending
    assert pending is not None
    assert (pending.seat, pending.step, pending.card, pending.city) == (
        0,
        "architetto_site",
        "LUC-5",
        "Lucca",
    )
    events, after = act(after, 0, ChooseArchitettoSite(1))
    assert events == [FloorPlaced(ARCHITETTO, "Lucca", 1), StepStarted(1, "play_card")]
    assert sites(after, "Lucca") == ((0,), (1, 2))


def test_r21b_both_sites_empty_count_as_equal() -> None:
    _, after = two_crest_turn(["VER-4", "LUC-5"])
    assert after.pending == StepStarted(0, "architetto_site")
    _, after = act(after, 0, ChooseArchitettoSite(0))
    assert sites(after, "Lucca") == ((2,), ())


def test_r21b_after_seat_1s_turn_seat_1_chooses() -> None:
    _, after = two_crest_turn(["VER-4", "LUC-5"], seat=1)
    assert after.pending == StepStarted(1, "architetto_site")
    assert legal_commands(after, 0) == []
    error = refused(after, 0, ChooseArchitettoSite(0))
    assert (error.code, error.rule) == ("not_your_decision", "R44")
    _, after = act(after, 1, ChooseArchitettoSite(1))
    assert after.pending == StepStarted(0, "play_card")


def test_r21b_only_sites_0_and_1_are_offered() -> None:
    _, after = two_crest_turn(["VER-4", "LUC-5"])
    bad = ChooseArchitettoSite(2)  # type: ignore[arg-type]
    error = refused(after, 0, bad)
    assert (error.code, error.rule) == ("unknown_site", "R21")
    assert refused(after, 0, PlaceFloor(0)).code == "wrong_step"


def test_r21c_a_forced_architetto_majority_placement() -> None:
    # Site 0 (2,1,2) is the taller; there the Architetto's floor gives it 3 of 4. On the
    # shorter site 1 (0,0) it would lose to seat 0. So it builds on the taller site.
    events, after = two_crest_turn(["VER-4", "MIL-5"], {"Milano": ((2, 1, 2), (0, 0))})
    assert architetto_floors(events) == [("Milano", 0)]
    assert not [e for e in of_type(events, StepStarted) if e.step == "architetto_site"]
    assert sites(after, "Milano") == ((2, 1, 2, 2), (0, 0))


def test_r21c_a_tie_broken_by_the_architettos_own_top_floor_counts_as_holding() -> None:
    # On site 0 (0,2,0) its floor makes 2-2 with its floor highest: it would hold the tower.
    events, _ = two_crest_turn(["VER-4", "MIL-5"], {"Milano": ((0, 2, 0), (1, 1))})
    assert architetto_floors(events) == [("Milano", 0)]


def test_r21c_holding_both_towers_it_builds_on_the_taller() -> None:
    events, after = two_crest_turn(["VER-4", "MIL-5"], {"Milano": ((1,), (2, 0))})
    assert architetto_floors(events) == [("Milano", 1)]
    assert sites(after, "Milano") == ((1,), (2, 0, 2))


@pytest.mark.parametrize(
    ("milano", "site"),
    [(((0, 0, 0), (1, 1)), 1), (((1, 1), (0, 0, 0)), 0)],
)
def test_r21c_the_shorter_tower_fallback_when_it_holds_neither(
    milano: tuple[tuple[int, ...], tuple[int, ...]], site: int
) -> None:
    events, _ = two_crest_turn(["VER-4", "MIL-5"], {"Milano": milano})
    assert architetto_floors(events) == [("Milano", site)]


def test_r21_each_floor_of_a_two_crest_card_is_decided_in_turn() -> None:
    # Roma empty: the first floor is the seat's choice; then the sites differ (1 and 0) and
    # the Architetto would hold both, so the second goes on the taller (R21c).
    _, after = two_crest_turn(["VER-4", "ROM-1"])
    assert after.pending == StepStarted(0, "architetto_site")
    events, after = act(after, 0, ChooseArchitettoSite(1))
    assert architetto_floors(events) == [("Roma", 1), ("Roma", 1)]
    assert sites(after, "Roma") == ((), (2, 2))


# --- R22 the Architetto builds and scores like a seat -----------------------------------


def test_r22_a_city_the_architetto_completes_is_scored_at_once_and_it_wins_tokens() -> None:
    events, after = two_crest_turn(["VER-4", "VER-3", "SIE-5"], {"Verona": ((2, 2, 0), (0,))})
    assert architetto_floors(events) == [("Verona", 0)]
    assert of_type(events, CityScored) == [CityScored("Verona", ARCHITETTO, 5, 0, 2)]
    i = events.index(CityScored("Verona", ARCHITETTO, 5, 0, 2))
    assert events[i - 1] == FloorPlaced(ARCHITETTO, "Verona", 0)
    seen = view(after, 0).architetto
    assert seen is not None and seen.tokens == (5,)


def test_r22_the_architetto_takes_no_cards() -> None:
    events, after = two_crest_turn(["VER-4", "LUC-5", "SIE-5"], {"Lucca": ((0, 0), (1,))})
    assert [taken.seat for taken in of_type(events, CardTaken)] == [0]
    assert after.face_up[after.board.city_index["Lucca"]] is not None
    assert after.face_up[after.board.city_index["Bologna"]] == "VER-4"
    assert [len(hand) for hand in after.hands] == [2, 2]


@pytest.mark.parametrize("card", ["MIL-3", "LUC-3"])
def test_r22_the_architetto_takes_no_special_action(card: str) -> None:
    # MIL-3 shows the move symbol, LUC-3 "take any": the Architetto only builds.
    city = "Milano" if card == "MIL-3" else "Lucca"
    events, after = two_crest_turn(
        ["VER-4", card], {city: ((2, 1, 2), (0, 0)), "Roma": ((2,), (0,))}
    )
    assert architetto_floors(events) == [(city, 0)]
    assert events[-1] == StepStarted(1, "play_card")
    assert sites(after, "Roma") == ((2,), (0,))


def test_r22_the_architettos_discard_pile_scores_portraits() -> None:
    state = table(2, played={ARCHITETTO: ["BOL-6", "BOL-4", "MIL-3"]})
    score = final_scores(state).scores[ARCHITETTO]
    assert (score.seat, score.portraits) == (ARCHITETTO, 6)


def test_r41_an_architetto_without_floors_places_none() -> None:
    events, after = two_crest_turn(
        ["VER-4", "LUC-5", "SIE-5"], {"Lucca": ((0, 0), (1,))}, supply={ARCHITETTO: 0}
    )
    assert of_type(events, ArchitettoRevealed) == [ArchitettoRevealed("LUC-5", "draw", 0)]
    assert architetto_floors(events) == []
    assert after.played[ARCHITETTO] == ("LUC-5",)
    assert after.pending == StepStarted(1, "play_card")


# --- R23 no markers, no delegates ------------------------------------------------------


def test_r23_the_architetto_holds_no_trade_route_markers() -> None:
    state = table(2, "towers", ["trade_routes"])
    assert state.markers_left == (2, 2)
    seen = view(state, 0)
    assert [seat.markers_left for seat in seen.players] == [2, 2]


def test_r23_the_architetto_holds_no_delegates_cards() -> None:
    # The Architetto holds every 2-, 4- and 6-point token and the whole Verona-Parma-Ferrara
    # set; no seat holds any, so nobody gets a Delegates card.
    state = table(
        2,
        "towers",
        ["delegates"],
        winners=dict.fromkeys(
            ("Verona", "Parma", "Ferrara", "Milano", "Roma"), (ARCHITETTO, ARCHITETTO)
        ),
    )
    for score in final_scores(state).scores:
        assert score.delegate_cards == ()
        assert score.delegates == 0


# --- R24 the end -----------------------------------------------------------------------


def _last_turn(active: int) -> State:
    return table(
        2,
        hands={active: ["ROM-7"], 1 - active: []},
        clear_face_up=True,
        draw=[],
        hidden=["LUC-5", "VER-4", "SIE-5"],
        towers={"Verona": ((0, 0), (1,)), "Siena": ((1,), (0,))},
        active=active,
    )


def test_r24_the_hidden_cards_are_placed_at_the_end_with_choices_by_the_seat_that_played_last() -> (
    None
):
    state = _last_turn(1)
    events, after = act(state, 1, PlayCard("ROM-7"), PlaceFloor(0))
    assert events[-2:] == [
        ArchitettoRevealed("LUC-5", "hidden", 1),
        StepStarted(1, "architetto_site"),
    ]
    assert legal_commands(after, 0) == []
    assert legal_commands(after, 1) == CHOOSE
    hidden_view = view(after, 0).architetto
    assert hidden_view is not None and hidden_view.hidden_count == 2
    events, after = act(after, 1, ChooseArchitettoSite(0))
    assert events == [
        FloorPlaced(ARCHITETTO, "Lucca", 0),
        ArchitettoRevealed("VER-4", "hidden", 1),
        FloorPlaced(ARCHITETTO, "Verona", 1),  # forced (R21c)
        ArchitettoRevealed("SIE-5", "hidden", 1),
        StepStarted(1, "architetto_site"),  # Siena 1-1: seat 1 chooses again
    ]
    events, after = act(after, 1, ChooseArchitettoSite(1))
    assert events[0] == FloorPlaced(ARCHITETTO, "Siena", 1)
    assert of_type(events, GameEnded)
    assert isinstance(events[-1], SeedRevealed)
    assert after.played[ARCHITETTO] == ("LUC-5", "VER-4", "SIE-5")
    assert after.hidden == ()
    assert after.phase == "over"


def test_r24_seat_0_chooses_when_it_played_the_last_card() -> None:
    _, after = act(_last_turn(0), 0, PlayCard("ROM-7"), PlaceFloor(0))
    assert after.pending == StepStarted(0, "architetto_site")


def test_r24_the_hidden_cards_wait_until_both_seats_have_played_their_last_card() -> None:
    state = table(
        2,
        hands={0: ["ROM-7"], 1: ["ROM-5"]},
        clear_face_up=True,
        draw=[],
        hidden=["LUC-5", "VER-4", "SIE-5"],
    )
    events, after = act(state, 0, PlayCard("ROM-7"), PlaceFloor(0))
    assert not of_type(events, ArchitettoRevealed)
    assert after.pending == StepStarted(1, "play_card")
    assert after.hidden == ("LUC-5", "VER-4", "SIE-5")


def test_r24_a_two_crest_last_card_with_an_empty_draw_pile_reveals_only_the_hidden_cards() -> None:
    state = table(
        2,
        hands={0: ["BOL-1"], 1: []},
        clear_face_up=True,
        draw=[],
        hidden=["VER-4"],
        towers={"Verona": ((0, 0), (1,))},
    )
    events, _ = act(state, 0, PlayCard("BOL-1"), PlaceFloor(0), PlaceFloor(1))
    assert of_type(events, ArchitettoRevealed) == [ArchitettoRevealed("VER-4", "hidden", 0)]
    assert of_type(events, GameEnded)


# --- R25, R49 the Architetto among the winners -------------------------------------------


def test_r25_an_architetto_win_is_reported_as_such() -> None:
    state = table(
        2,
        hands={0: [], 1: ["ROM-7"]},
        clear_face_up=True,
        draw=[],
        hidden=[],
        winners={"Bologna": (ARCHITETTO, 0), "Firenze": (ARCHITETTO, 1)},
        active=1,
    )
    events, after = act(state, 1, PlayCard("ROM-7"), PlaceFloor(0))
    (ended,) = of_type(events, GameEnded)
    assert [score.total for score in ended.scores] == [6, 6, 18]
    assert ended.winners == (ARCHITETTO,)
    assert ended.architetto_won
    result = view(after, 0).result
    assert result is not None and result.architetto_won


def _architetto_tie(seat0_left: int, architetto_left: int) -> GameEnded:
    # Seat 0 and the Architetto both score 15 (Bologna and Firenze, high and low).
    state = table(
        2,
        winners={"Bologna": (ARCHITETTO, 0), "Firenze": (0, ARCHITETTO)},
        supply={0: seat0_left, 1: 29, ARCHITETTO: architetto_left},
    )
    ended = final_scores(state)
    assert [score.total for score in ended.scores] == [15, 0, 15]
    return ended


def test_r49_the_tie_break_counts_the_architettos_floors_like_a_seats() -> None:
    ended = _architetto_tie(seat0_left=20, architetto_left=25)  # 9 against 4 on the board
    assert ended.winners == (ARCHITETTO,)
    assert ended.architetto_won


def test_r49_a_shared_win_names_the_architetto_among_the_winners() -> None:
    ended = _architetto_tie(seat0_left=22, architetto_left=22)
    assert ended.winners == (0, ARCHITETTO)
    assert ended.architetto_won


def test_r49_a_seat_with_fewer_floors_beats_a_tied_architetto() -> None:
    ended = _architetto_tie(seat0_left=25, architetto_left=20)
    assert ended.winners == (0,)
    assert not ended.architetto_won


def test_r49_without_the_architetto_among_the_winners_the_result_does_not_name_it() -> None:
    state = table(2, winners={"Bologna": (0, ARCHITETTO)})
    ended = final_scores(state)
    assert ended.winners == (0,)
    assert not ended.architetto_won
