"""Per-ruling tests of a turn: play, place, take, move, refill and whose turn is next
(R10-R19, R38 classic order, R41 empty supply, R44 decisions, R45 the city built in, R46 moves).

Each test names the ruling of `docs/rulings.md` it checks. Tables are 3 seats of
`towers` unless the ruling needs another setting. City order of the 9-city board: Bologna,
Milano, Firenze, Ferrara, Lucca, Siena, Parma, Roma, Verona.

Long on purpose: one short test per case, each named as a sentence, read like a table;
splitting the file would scatter cases of one ruling or one promise.
"""

from __future__ import annotations

import pytest

from domain.commands import MoveFloor, PlaceFloor, PlayCard, Skip, TakeCard
from domain.events import (
    ArchitettoRevealed,
    CardPlayed,
    CardRevealed,
    CardTaken,
    CityScored,
    Event,
    FloorMoved,
    FloorPlaced,
    GameEnded,
    StepSkipped,
    StepStarted,
)
from domain.legal import legal_commands
from domain.state import State
from domain.view import view
from tests.domain.table import act, of_type, refused, sites, table

MOVE_STEP = StepStarted(0, "move_floor")
TAKE_STEP = StepStarted(0, "take_card")


def steps(events: list[Event]) -> list[tuple[int, str]]:
    return [(event.seat, event.step) for event in of_type(events, StepStarted)]


# --- R10 play a card ---------------------------------------------------------------------


def test_r10_the_seat_may_play_any_card_of_its_hand() -> None:
    state = table(3, hands={0: ["SIE-5", "MIL-1", "ROM-7"]})
    assert legal_commands(state, 0) == [PlayCard("MIL-1"), PlayCard("ROM-7"), PlayCard("SIE-5")]


def test_r10_a_played_card_goes_from_the_hand_onto_the_seats_own_played_stack() -> None:
    state = table(3, hands={0: ["MIL-1", "ROM-7", "SIE-5"]}, played={0: ["BOL-7"]})
    events, after = act(state, 0, PlayCard("ROM-7"))
    assert events[0] == CardPlayed(0, "ROM-7")
    assert after.hands[0] == ("MIL-1", "SIE-5")
    assert after.played[0] == ("BOL-7", "ROM-7")
    seen = view(after, 1).players[0]
    assert (seen.top_card, seen.played_count, seen.hand_size) == ("ROM-7", 2, 2)


def test_r10_a_card_not_in_the_hand_is_refused() -> None:
    state = table(3, hands={0: ["MIL-1", "ROM-7", "SIE-5"], 1: ["VER-4"]})
    error = refused(state, 0, PlayCard("VER-4"))
    assert (error.code, error.rule) == ("card_not_in_hand", "R10")


# --- R11 place floors -----------------------------------------------------------------


def test_r11_a_two_crest_card_places_two_floors_one_command_each() -> None:
    state = table(3, hands={0: ["MIL-1", "ROM-7", "SIE-5"]})
    _, after = act(state, 0, PlayCard("MIL-1"))
    assert after.pending == StepStarted(0, "place_floor")
    assert legal_commands(after, 0) == [PlaceFloor(0), PlaceFloor(1)]
    events, after = act(after, 0, PlaceFloor(0))
    assert of_type(events, FloorPlaced) == [FloorPlaced(0, "Milano", 0)]
    assert after.pending == StepStarted(0, "place_floor")
    events, after = act(after, 0, PlaceFloor(0))
    assert of_type(events, FloorPlaced) == [FloorPlaced(0, "Milano", 0)]
    assert after.pending == TAKE_STEP
    assert sites(after, "Milano") == ((0, 0), ())
    assert after.supply[0] == state.supply[0] - 2


def test_r11_a_single_crest_card_places_one_floor_in_its_city() -> None:
    state = table(3, hands={0: ["MIL-1", "ROM-7", "SIE-5"]})
    events, after = act(state, 0, PlayCard("ROM-7"), PlaceFloor(1))
    assert of_type(events, FloorPlaced) == [FloorPlaced(0, "Roma", 1)]
    assert after.pending == TAKE_STEP


def test_r11_a_floor_goes_on_top_of_the_chosen_sites_tower() -> None:
    state = table(3, hands={0: ["ROM-7"]}, towers={"Roma": ((1, 2), (2,))})
    _, after = act(state, 0, PlayCard("ROM-7"), PlaceFloor(0))
    assert sites(after, "Roma") == ((1, 2, 0), (2,))


def test_r11_a_city_never_holds_more_than_its_floor_count() -> None:
    # Verona (V) already holds 4 floors; a two-crest card can add only one.
    state = table(3, hands={0: ["VER-1"]}, towers={"Verona": ((1, 1), (2, 2))})
    events, after = act(state, 0, PlayCard("VER-1"), PlaceFloor(0))
    assert len(of_type(events, FloorPlaced)) == 1
    assert after.city_floors(after.board.city_index["Verona"]) == 5
    assert after.pending == TAKE_STEP
    assert after.supply[0] == state.supply[0] - 1


# --- R12 the last floor fills an empty site -------------------------------------------


def test_r12_last_floor_must_fill_an_empty_site() -> None:
    state = table(3, hands={0: ["VER-4"]}, towers={"Verona": ((1, 1, 2, 2), ())})
    _, after = act(state, 0, PlayCard("VER-4"))
    assert legal_commands(after, 0) == [PlaceFloor(1)]
    error = refused(after, 0, PlaceFloor(0))
    assert (error.code, error.rule) == ("last_floor_must_fill_empty_site", "R12")
    events, after = act(after, 0, PlaceFloor(1))
    assert sites(after, "Verona") == ((1, 1, 2, 2), (0,))
    # R13: the full city is scored at once: the taller site's top floor (seat 2) takes the
    # high token (5, Verona's floor count), the shorter's (seat 0) the low one (5 - 3).
    assert of_type(events, CityScored) == [CityScored("Verona", 2, 5, 0, 2)]


def test_r12_last_floor_fills_an_empty_site_0_as_well() -> None:
    state = table(3, hands={0: ["VER-4"]}, towers={"Verona": ((), (1, 1, 2, 2))})
    _, after = act(state, 0, PlayCard("VER-4"))
    assert legal_commands(after, 0) == [PlaceFloor(0)]


def test_r12_a_floor_that_is_not_the_last_may_go_on_either_site() -> None:
    state = table(3, hands={0: ["VER-4"]}, towers={"Verona": ((1, 1, 2), ())})
    _, after = act(state, 0, PlayCard("VER-4"))
    assert legal_commands(after, 0) == [PlaceFloor(0), PlaceFloor(1)]


def test_r12_the_last_floor_is_free_when_both_sites_hold_floors() -> None:
    state = table(3, hands={0: ["VER-4"]}, towers={"Verona": ((1, 1, 2), (2,))})
    _, after = act(state, 0, PlayCard("VER-4"))
    assert legal_commands(after, 0) == [PlaceFloor(0), PlaceFloor(1)]


def test_r12_the_second_floor_of_a_two_crest_card_can_be_the_forced_one() -> None:
    # Verona holds 3 floors on site 0: the first floor is free, the second (last) is forced.
    state = table(3, hands={0: ["VER-1"]}, towers={"Verona": ((1, 1, 2), ())})
    _, after = act(state, 0, PlayCard("VER-1"), PlaceFloor(0))
    assert legal_commands(after, 0) == [PlaceFloor(1)]


# --- R14 take a card -------------------------------------------------------------------


def test_r14_the_seat_takes_the_face_up_card_of_the_city_it_built_in() -> None:
    state = table(3, hands={0: ["MIL-5", "ROM-7"]}, face_up={"Milano": "SIE-1", "Roma": "ROM-1"})
    _, after = act(state, 0, PlayCard("MIL-5"), PlaceFloor(0))
    assert legal_commands(after, 0) == [TakeCard("Milano")]
    error = refused(after, 0, TakeCard("Roma"))
    assert (error.code, error.rule) == ("must_take_built_city", "R14")
    events, after = act(after, 0, TakeCard("Milano"))
    assert of_type(events, CardTaken) == [CardTaken(0, "Milano", "SIE-1")]
    assert "SIE-1" in after.hands[0]


def test_r14_with_no_face_up_card_on_the_built_city_any_citys_card_may_be_taken() -> None:
    state = table(
        3,
        hands={0: ["MIL-5", "ROM-7"]},
        clear_face_up=True,
        face_up={"Siena": "SIE-1", "Roma": "ROM-1"},
    )
    _, after = act(state, 0, PlayCard("MIL-5"), PlaceFloor(0))
    assert legal_commands(after, 0) == [TakeCard("Siena"), TakeCard("Roma")]
    error = refused(after, 0, TakeCard("Milano"))
    assert (error.code, error.rule) == ("no_face_up_card", "R14")
    events, after = act(after, 0, TakeCard("Roma"))
    assert of_type(events, CardTaken) == [CardTaken(0, "Roma", "ROM-1")]
    assert after.hands[0] == ("ROM-7", "ROM-1")


def test_r14_a_take_any_card_may_take_any_citys_face_up_card() -> None:
    # FIR-3 shows the "take any" symbol; Firenze's own card is one of the options.
    state = table(
        3,
        hands={0: ["FIR-3", "ROM-7"]},
        clear_face_up=True,
        face_up={"Firenze": "BOL-1", "Roma": "ROM-1", "Verona": "VER-1"},
    )
    _, after = act(state, 0, PlayCard("FIR-3"), PlaceFloor(0))
    assert legal_commands(after, 0) == [TakeCard("Firenze"), TakeCard("Roma"), TakeCard("Verona")]
    events, _ = act(after, 0, TakeCard("Verona"))
    assert of_type(events, CardTaken) == [CardTaken(0, "Verona", "VER-1")]


def test_r14_with_no_face_up_card_on_the_board_the_take_is_skipped() -> None:
    state = table(3, hands={0: ["MIL-5", "ROM-7"]}, clear_face_up=True)
    events, after = act(state, 0, PlayCard("MIL-5"), PlaceFloor(0))
    assert not of_type(events, CardTaken)
    assert (0, "take_card") not in steps(events)
    assert after.hands[0] == ("ROM-7",)
    assert after.pending == StepStarted(1, "play_card")


# --- R15 move a floor ----------------------------------------------------------------------


def _move_table() -> State:
    """Seat 0 has MIL-3 (Milano, move symbol). It owns floors in Milano (built in), Parma,
    Roma and Verona (scored); Siena holds only other seats' floors."""
    return table(
        3,
        hands={0: ["MIL-3", "ROM-7"]},
        face_up={"Milano": "SIE-1"},
        draw=["VER-4", "LUC-5"],
        towers={
            "Milano": ((0,), ()),
            "Parma": ((0,), ()),
            "Roma": ((0, 1), (1,)),
            "Siena": ((1,), (2,)),
            "Verona": ((0, 0, 1), (1, 2)),
        },
        winners={"Verona": (0, 1)},
    )


def _at_move() -> State:
    _, after = act(_move_table(), 0, PlayCard("MIL-3"), PlaceFloor(0), TakeCard("Milano"))
    assert after.pending == MOVE_STEP
    return after


def test_r15_the_move_offers_unscored_other_cities_where_the_seat_owns_a_floor() -> None:
    assert legal_commands(_at_move(), 0) == [
        MoveFloor("Parma", 0),
        MoveFloor("Roma", 0),
        MoveFloor("Roma", 1),
        Skip(),
    ]


@pytest.mark.parametrize(
    ("command", "code", "rule"),
    [
        (MoveFloor("Milano", 0), "move_in_built_city", "R15"),
        (MoveFloor("Verona", 0), "city_already_scored", "R15"),
        (MoveFloor("Siena", 0), "no_floor_owned", "R15"),
        (MoveFloor("Parma", 1), "site_empty", "R46"),
        (MoveFloor("Atlantis", 0), "unknown_city", "R2"),
    ],
)
def test_r15_each_move_restriction_is_refused_with_its_reason(
    command: MoveFloor, code: str, rule: str
) -> None:
    error = refused(_at_move(), 0, command)
    assert (error.code, error.rule) == (code, rule)


def test_r15_the_top_floor_moves_onto_the_other_site_of_the_same_city() -> None:
    events, after = act(_at_move(), 0, MoveFloor("Roma", 0))
    assert of_type(events, FloorMoved) == [FloorMoved(0, "Roma", 0)]
    assert sites(after, "Roma") == ((0,), (1, 1))
    assert after.supply == _at_move().supply


def test_r15_the_move_is_optional_and_skip_declines_it() -> None:
    before = _at_move()
    events, after = act(before, 0, Skip())
    assert of_type(events, StepSkipped) == [StepSkipped(0, "move_floor")]
    assert after.towers == before.towers
    assert after.pending == StepStarted(1, "play_card")


def test_r15_with_no_qualifying_city_the_move_is_skipped_without_a_command() -> None:
    # Seat 0 owns floors only in Milano, the city it builds in.
    state = table(
        3,
        hands={0: ["MIL-3", "ROM-7"]},
        face_up={"Milano": "SIE-1"},
        towers={"Milano": ((0,), ()), "Siena": ((1,), (2,))},
    )
    events, after = act(state, 0, PlayCard("MIL-3"), PlaceFloor(0), TakeCard("Milano"))
    assert (0, "move_floor") not in steps(events)
    assert after.pending == StepStarted(1, "play_card")


def test_r15_a_card_without_the_move_symbol_has_no_move_step() -> None:
    state = table(
        3,
        hands={0: ["MIL-5", "ROM-7"]},
        face_up={"Milano": "SIE-1"},
        towers={"Roma": ((0, 1), (1,))},
    )
    events, after = act(state, 0, PlayCard("MIL-5"), PlaceFloor(0), TakeCard("Milano"))
    assert (0, "move_floor") not in steps(events)
    assert after.pending == StepStarted(1, "play_card")


# --- R16 refill ----------------------------------------------------------------------------


def test_r16_the_top_draw_card_refills_the_city_whose_card_was_taken() -> None:
    state = table(3, hands={0: ["MIL-5"]}, face_up={"Milano": "SIE-1"}, draw=["VER-4", "LUC-5"])
    events, after = act(state, 0, PlayCard("MIL-5"), PlaceFloor(0), TakeCard("Milano"))
    assert of_type(events, CardRevealed) == [CardRevealed("Milano", "VER-4")]
    assert after.face_up[after.board.city_index["Milano"]] == "VER-4"
    assert after.draw == ("LUC-5",)


def test_r16_the_refill_goes_where_the_card_was_taken_not_where_it_was_built() -> None:
    state = table(
        3,
        hands={0: ["FIR-3"]},
        face_up={"Firenze": "BOL-1", "Roma": "ROM-1"},
        draw=["VER-4"],
    )
    events, after = act(state, 0, PlayCard("FIR-3"), PlaceFloor(0), TakeCard("Roma"))
    assert of_type(events, CardRevealed) == [CardRevealed("Roma", "VER-4")]
    assert after.face_up[after.board.city_index["Firenze"]] == "BOL-1"


def test_r16_with_an_empty_draw_pile_nothing_is_refilled() -> None:
    state = table(3, hands={0: ["MIL-5"]}, face_up={"Milano": "SIE-1"}, draw=[])
    events, after = act(state, 0, PlayCard("MIL-5"), PlaceFloor(0), TakeCard("Milano"))
    assert not of_type(events, CardRevealed)
    assert after.face_up[after.board.city_index["Milano"]] is None
    assert after.pending == StepStarted(1, "play_card")


# --- R17, R18 the module steps close the turn ----------------------------------------------


def test_r17_the_trade_route_step_comes_after_the_refill() -> None:
    state = table(
        3,
        "towers",
        ["trade_routes"],
        hands={0: ["SIE-3"]},
        face_up={"Siena": "BOL-1"},
        draw=["VER-4"],
    )
    events, after = act(state, 0, PlayCard("SIE-3"), PlaceFloor(0), TakeCard("Siena"))
    assert events[-3:] == [
        CardTaken(0, "Siena", "BOL-1"),
        CardRevealed("Siena", "VER-4"),
        StepStarted(0, "trade_route"),
    ]
    assert after.pending == StepStarted(0, "trade_route")


def test_r18_the_architetto_acts_after_the_seats_whole_turn() -> None:
    # Two seats: seat 0 plays a two-crest Bologna card; the Architetto reveals LUC-5 after
    # the take and the refill, and its floor in Lucca is forced (R21c).
    state = table(
        2,
        hands={0: ["BOL-1"], 1: ["ROM-7"]},
        face_up={"Bologna": "SIE-1"},
        draw=["VER-4", "LUC-5", "SIE-5"],
        towers={"Lucca": ((0, 0), (1,))},
    )
    events, after = act(
        state, 0, PlayCard("BOL-1"), PlaceFloor(0), PlaceFloor(1), TakeCard("Bologna")
    )
    tail = events[-5:]
    assert tail == [
        CardTaken(0, "Bologna", "SIE-1"),
        CardRevealed("Bologna", "VER-4"),
        ArchitettoRevealed("LUC-5", "draw", 0),
        FloorPlaced(2, "Lucca", 1),
        StepStarted(1, "play_card"),
    ]
    assert after.hands[0] == ("SIE-1",)


# --- R19 the next seat -----------------------------------------------------------------


def test_r19_turns_pass_to_the_next_seat_in_order() -> None:
    state = table(3, hands={2: ["MIL-5", "ROM-7"]}, clear_face_up=True, active=2)
    _, after = act(state, 2, PlayCard("MIL-5"), PlaceFloor(0))
    assert after.pending == StepStarted(0, "play_card")


def test_r19_a_seat_with_an_empty_hand_is_skipped() -> None:
    state = table(3, hands={0: ["MIL-5", "ROM-7"], 1: [], 2: ["SIE-5"]}, clear_face_up=True)
    events, after = act(state, 0, PlayCard("MIL-5"), PlaceFloor(0))
    assert events[-1] == StepStarted(2, "play_card")
    assert legal_commands(after, 1) == []


def test_r19_the_game_ends_when_no_seat_has_a_card_in_hand() -> None:
    state = table(3, hands={0: ["MIL-5"], 1: [], 2: []}, clear_face_up=True, draw=[])
    events, after = act(state, 0, PlayCard("MIL-5"), PlaceFloor(0))
    (ended,) = of_type(events, GameEnded)
    assert [score.total for score in ended.scores] == [0, 0, 0]
    # R37: tied on score, the seats with the fewest floors on the board win (seat 0 built one).
    assert [score.floors_on_board for score in ended.scores] == [1, 0, 0]
    assert ended.winners == (1, 2)
    assert after.phase == "over"
    assert after.pending is None
    error = refused(after, 0, PlayCard("ROM-7"))
    assert error.code == "game_over"


# --- R38 classic order --------------------------------------------------------------------


def _classic_move_table() -> State:
    return table(
        3,
        "classic",
        hands={0: ["MIL-3", "ROM-7"]},
        face_up={"Milano": "SIE-1"},
        draw=["VER-4"],
        towers={"Roma": ((0,), (1,))},
    )


def test_r38_classic_moves_before_taking_a_card() -> None:
    events, after = act(_classic_move_table(), 0, PlayCard("MIL-3"), PlaceFloor(0))
    assert after.pending == MOVE_STEP
    assert not of_type(events, CardTaken)
    assert legal_commands(after, 0) == [MoveFloor("Roma", 0), MoveFloor("Roma", 1), Skip()]
    error = refused(after, 0, TakeCard("Milano"))
    assert (error.code, error.rule) == ("wrong_step", "R44")
    events, after = act(after, 0, MoveFloor("Roma", 1))
    assert sites(after, "Roma") == ((0, 1), ())
    assert after.pending == TAKE_STEP


def test_r38_classic_takes_then_refills_after_the_move() -> None:
    _, after = act(_classic_move_table(), 0, PlayCard("MIL-3"), PlaceFloor(0), MoveFloor("Roma", 0))
    events, after = act(after, 0, TakeCard("Milano"))
    assert events == [
        CardTaken(0, "Milano", "SIE-1"),
        CardRevealed("Milano", "VER-4"),
        StepStarted(1, "play_card"),
    ]


def test_r38_classic_skipping_the_move_goes_on_to_the_take() -> None:
    _, after = act(_classic_move_table(), 0, PlayCard("MIL-3"), PlaceFloor(0), Skip())
    assert after.pending == TAKE_STEP


def test_r38_classic_with_two_seats_has_no_architetto_after_a_two_crest_card() -> None:
    state = table(2, "classic", hands={0: ["BOL-1"], 1: ["ROM-7"]}, face_up={"Bologna": "SIE-1"})
    events, after = act(
        state, 0, PlayCard("BOL-1"), PlaceFloor(0), PlaceFloor(0), TakeCard("Bologna")
    )
    assert not of_type(events, ArchitettoRevealed)
    assert after.pending == StepStarted(1, "play_card")
    assert len(after.supply) == 2


def test_r38_classic_has_no_trade_route_step_after_a_star_card() -> None:
    state = table(3, "classic", hands={0: ["SIE-3"]}, face_up={"Siena": "BOL-1"})
    _, after = act(state, 0, PlayCard("SIE-3"), PlaceFloor(0), TakeCard("Siena"))
    assert after.pending == StepStarted(1, "play_card")


# --- R41 empty supply ------------------------------------------------------------------


def test_r41_a_seat_with_no_floors_left_places_none() -> None:
    state = table(3, hands={0: ["MIL-1", "ROM-7"]}, face_up={"Milano": "SIE-1"}, supply={0: 0})
    events, after = act(state, 0, PlayCard("MIL-1"))
    assert not of_type(events, FloorPlaced)
    assert after.pending == TAKE_STEP
    assert sites(after, "Milano") == ((), ())
    assert refused(after, 0, PlaceFloor(0)).code == "wrong_step"


def test_r41_a_seat_with_one_floor_left_places_one_of_two_crests() -> None:
    state = table(3, hands={0: ["MIL-1", "ROM-7"]}, face_up={"Milano": "SIE-1"}, supply={0: 1})
    events, after = act(state, 0, PlayCard("MIL-1"), PlaceFloor(1))
    assert len(of_type(events, FloorPlaced)) == 1
    assert after.supply[0] == 0
    assert after.pending == TAKE_STEP


def test_r41_a_city_left_incomplete_at_the_end_is_never_scored() -> None:
    # Roma (IX) holds 8 floors; the last Roma card is played by a seat without floors.
    state = table(
        3,
        hands={0: ["ROM-7"], 1: [], 2: []},
        clear_face_up=True,
        draw=[],
        towers={"Roma": ((1, 1, 1, 1), (2, 2, 2, 2))},
        supply={0: 0},
    )
    events, after = act(state, 0, PlayCard("ROM-7"))
    assert not of_type(events, CityScored)
    (ended,) = of_type(events, GameEnded)
    assert all(score.tokens == 0 for score in ended.scores)
    roma = next(city for city in view(after, None).cities if city.name == "Roma")
    assert not roma.scored and roma.floors == 8


# --- R44 decisions -------------------------------------------------------------------


def test_r44_a_site_forced_by_r12_is_still_a_decision() -> None:
    state = table(3, hands={0: ["VER-4"]}, towers={"Verona": ((1, 1, 2, 2), ())})
    events, after = act(state, 0, PlayCard("VER-4"))
    assert events[-1] == StepStarted(0, "place_floor")
    assert not of_type(events, FloorPlaced)
    assert legal_commands(after, 0) == [PlaceFloor(1)]


def test_r44_the_only_card_there_is_to_take_is_still_a_decision() -> None:
    state = table(3, hands={0: ["MIL-5"]}, clear_face_up=True, face_up={"Roma": "ROM-1"})
    events, after = act(state, 0, PlayCard("MIL-5"), PlaceFloor(0))
    assert events[-1] == TAKE_STEP
    assert legal_commands(after, 0) == [TakeCard("Roma")]


def test_r44_taking_a_card_cannot_be_skipped() -> None:
    state = table(3, hands={0: ["MIL-5"]}, face_up={"Milano": "SIE-1"})
    _, after = act(state, 0, PlayCard("MIL-5"), PlaceFloor(0))
    error = refused(after, 0, Skip())
    assert (error.code, error.rule) == ("step_not_optional", "R44")


@pytest.mark.parametrize("placing", [False, True])
def test_r44_playing_and_placing_cannot_be_skipped(placing: bool) -> None:
    state = table(3, hands={0: ["MIL-5", "ROM-7"]})
    if placing:
        _, state = act(state, 0, PlayCard("MIL-5"))
    error = refused(state, 0, Skip())
    assert (error.code, error.rule) == ("step_not_optional", "R44")


def test_r44_only_the_seat_whose_decision_it_is_may_send_a_command() -> None:
    state = table(3, hands={0: ["MIL-5"], 1: ["ROM-7"]})
    error = refused(state, 1, PlayCard("ROM-7"))
    assert (error.code, error.rule) == ("not_your_decision", "R44")
    assert legal_commands(state, 1) == []


def test_r44_a_command_for_another_step_is_refused() -> None:
    state = table(3, hands={0: ["MIL-5"]}, face_up={"Milano": "SIE-1"})
    error = refused(state, 0, TakeCard("Milano"))
    assert (error.code, error.rule) == ("wrong_step", "R44")


def test_r44_a_step_with_no_option_passes_without_a_command() -> None:
    # No floor left (R41), no face-up card (R14), no move symbol (R15), no module (R30):
    # playing the card is the seat's only decision this turn.
    state = table(3, hands={0: ["SIE-3", "ROM-7"]}, clear_face_up=True, supply={0: 0})
    events, after = act(state, 0, PlayCard("SIE-3"))
    assert steps(events) == [(1, "play_card")]
    assert after.pending == StepStarted(1, "play_card")


# --- R45 the city built in ----------------------------------------------------------------


def test_r45_a_seat_whose_empty_supply_left_no_floor_placed_built_in_no_city() -> None:
    # Rules version 3 (docs/rules-versions.md; version 2 is in test_rules_versions.py): R14
    # offers every face-up card, and R15 bars no city, Milano included.
    state = table(
        3,
        hands={0: ["MIL-3", "ROM-7"]},
        clear_face_up=True,
        face_up={"Milano": "SIE-1", "Roma": "ROM-1"},
        towers={"Milano": ((0,), (1,)), "Roma": ((0,), ())},
        supply={0: 0},
    )
    _, after = act(state, 0, PlayCard("MIL-3"))
    assert legal_commands(after, 0) == [TakeCard("Milano"), TakeCard("Roma")]
    _, after = act(after, 0, TakeCard("Roma"))
    assert legal_commands(after, 0) == [
        MoveFloor("Milano", 0),
        MoveFloor("Milano", 1),
        MoveFloor("Roma", 0),
        Skip(),
    ]


def test_r45_a_seat_that_placed_its_last_floor_built_in_the_played_cards_city() -> None:
    # One floor for a two-crest card (R41): it built in Milano all the same, in every version.
    state = table(
        3,
        hands={0: ["MIL-1", "ROM-7"]},
        face_up={"Milano": "SIE-1", "Roma": "ROM-1"},
        supply={0: 1},
    )
    _, after = act(state, 0, PlayCard("MIL-1"), PlaceFloor(0))
    assert after.supply[0] == 0
    assert legal_commands(after, 0) == [TakeCard("Milano")]
    assert refused(after, 0, TakeCard("Roma")).code == "must_take_built_city"


def test_r45_r12_holds_in_classic() -> None:
    state = table(3, "classic", hands={0: ["VER-4"]}, towers={"Verona": ((1, 1, 2, 2), ())})
    _, after = act(state, 0, PlayCard("VER-4"))
    assert legal_commands(after, 0) == [PlaceFloor(1)]
    assert refused(after, 0, PlaceFloor(0)).code == "last_floor_must_fill_empty_site"


def test_r45_r13_scoring_holds_in_classic() -> None:
    state = table(3, "classic", hands={0: ["VER-4"]}, towers={"Verona": ((1, 1, 2, 2), ())})
    events, _ = act(state, 0, PlayCard("VER-4"), PlaceFloor(1))
    assert of_type(events, CityScored) == [CityScored("Verona", 2, 5, 0, 2)]


def test_r45_r41_holds_in_classic() -> None:
    state = table(3, "classic", hands={0: ["MIL-1"]}, face_up={"Milano": "SIE-1"}, supply={0: 0})
    events, after = act(state, 0, PlayCard("MIL-1"))
    assert not of_type(events, FloorPlaced)
    assert after.pending == TAKE_STEP


# --- R46 moves -------------------------------------------------------------------------------


def _moving(roma: tuple[tuple[int, ...], tuple[int, ...]]) -> State:
    state = table(
        3,
        hands={0: ["MIL-3", "ROM-7"]},
        face_up={"Milano": "SIE-1"},
        towers={"Roma": roma},
    )
    _, after = act(state, 0, PlayCard("MIL-3"), PlaceFloor(0), TakeCard("Milano"))
    return after


def test_r46_a_seat_may_move_another_seats_floor() -> None:
    events, after = act(_moving(((0, 1), (2,))), 0, MoveFloor("Roma", 0))
    assert of_type(events, FloorMoved) == [FloorMoved(0, "Roma", 0)]
    assert sites(after, "Roma") == ((0,), (2, 1))


def test_r46_a_move_may_leave_a_site_empty() -> None:
    _, after = act(_moving(((1,), (0, 2))), 0, MoveFloor("Roma", 0))
    assert sites(after, "Roma") == ((), (0, 2, 1))


def test_r46_the_site_moved_from_must_not_be_empty() -> None:
    state = _moving(((0, 1), ()))
    assert legal_commands(state, 0) == [MoveFloor("Roma", 0), Skip()]
    error = refused(state, 0, MoveFloor("Roma", 1))
    assert (error.code, error.rule) == ("site_empty", "R46")


def test_r46_ownership_may_be_any_floor_of_the_city_not_the_moved_one() -> None:
    # Seat 0's only Roma floor is at the bottom; it may still move seat 2's top floor.
    _, after = act(_moving(((0, 2, 2), (1,))), 0, MoveFloor("Roma", 0))
    assert sites(after, "Roma") == ((0, 2), (1, 2))
