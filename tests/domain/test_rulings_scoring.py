"""Per-ruling tests of city scoring and the final score (R13 city scoring, R36 final score,
R37 tie-break).

Each test names the ruling of `docs/rulings.md` it checks. Tokens of the 9-city
board: Bologna, Firenze, Roma 9/6; Milano, Lucca, Siena 7/4; Ferrara, Parma, Verona 5/2.
"""

from __future__ import annotations

import msgspec

from domain.commands import MoveFloor, PlaceFloor, PlayCard, TakeCard
from domain.events import CityScored, FloorPlaced, GameEnded, StepStarted
from domain.legal import legal_commands
from domain.scoring import city_scoring, final_scores
from domain.state import State
from domain.view import view
from tests.domain.table import act, of_type, sites, table


def scored_verona(site0: tuple[int, ...], site1: tuple[int, ...], site: int) -> CityScored:
    """Seat 0 plays VER-4 onto `site` of Verona (V), completing it; return the scoring."""
    state = table(3, hands={0: ["VER-4"]}, towers={"Verona": (site0, site1)})
    events, _ = act(state, 0, PlayCard("VER-4"), PlaceFloor(0 if site == 0 else 1))
    (scored,) = of_type(events, CityScored)
    return scored


# --- R13 city scoring -------------------------------------------------------------------


def test_r13_the_taller_tower_gives_the_high_token_and_the_shorter_the_low_one() -> None:
    # After the placement: site 0 holds 1,1 (shorter), site 1 holds 2,2,0 (taller).
    scored = scored_verona((1, 1), (2, 2), 1)
    assert scored == CityScored("Verona", high_seat=2, high_token=5, low_seat=1, low_token=2)


def test_r13_a_tower_goes_to_the_seat_with_the_most_floors_in_it() -> None:
    # Site 0 ends 1,1,0: seat 1 has two floors there although seat 0 is on top.
    scored = scored_verona((1, 1), (2, 2), 0)
    assert (scored.high_seat, scored.low_seat) == (1, 2)


def test_r13_a_tie_goes_to_the_tied_seat_whose_floor_is_highest() -> None:
    # Siena (VII): site 0 ends 1,2,2,1,0 - seats 1 and 2 tie on two floors; seat 1's floor
    # is the highest of the tied seats (seat 0's top floor is not in the tie).
    state = table(3, hands={0: ["SIE-5"]}, towers={"Siena": ((1, 2, 2, 1), (2, 2))})
    events, _ = act(state, 0, PlayCard("SIE-5"), PlaceFloor(0))
    (scored,) = of_type(events, CityScored)
    assert (scored.high_seat, scored.high_token) == (1, 7)
    assert (scored.low_seat, scored.low_token) == (2, 4)


def test_r13_one_seat_may_win_both_towers() -> None:
    scored = scored_verona((0, 0), (0, 1), 1)
    assert (scored.high_seat, scored.low_seat) == (0, 0)
    state = table(3, winners={"Verona": (0, 0)})
    assert view(state, None).players[0].tokens == (5, 2)


def test_r13_nobody_else_gains_from_the_city() -> None:
    state = table(3, hands={0: ["VER-4"]}, towers={"Verona": ((1, 1), (2, 0))})
    _, after = act(state, 0, PlayCard("VER-4"), PlaceFloor(1))
    # Site 1 ends 2,0,0: seat 0 holds it (taller); seat 1 holds site 0. Seat 2 gets nothing.
    seen = view(after, None).players
    assert (seen[0].tokens, seen[1].tokens, seen[2].tokens) == ((5,), (2,), ())


def test_r13_a_city_is_scored_the_moment_it_holds_its_floor_count() -> None:
    state = table(
        3, hands={0: ["VER-1"]}, face_up={"Verona": "SIE-1"}, towers={"Verona": ((1, 1), (2,))}
    )
    events, after = act(state, 0, PlayCard("VER-1"), PlaceFloor(0))
    assert not of_type(events, CityScored)  # 4 of 5 floors
    events, after = act(after, 0, PlaceFloor(1))
    assert events == [
        FloorPlaced(0, "Verona", 1),
        CityScored("Verona", high_seat=1, high_token=5, low_seat=0, low_token=2),
        StepStarted(0, "take_card"),
    ]
    assert after.winners[after.board.city_index["Verona"]] == (1, 0)


def test_r13_city_scoring_reads_only_the_towers() -> None:
    # Marked as won by others already: scoring reads the towers, nothing else.
    state = table(3, towers={"Roma": ((0, 1, 1, 2, 0), (2, 2, 1, 0))}, winners={"Roma": (1, 1)})
    roma = state.board.city_index["Roma"]
    # Taller site 0: 0 and 1 tie on two floors, seat 0's is highest; shorter site 1: seat 2.
    assert city_scoring(state, roma) == CityScored("Roma", 0, 9, 2, 6)


def test_r13_the_towers_stay_and_a_scored_city_takes_no_moves() -> None:
    state = table(
        3,
        hands={0: ["VER-4"], 1: ["MIL-3", "ROM-7"]},
        face_up={"Milano": "SIE-1"},
        towers={"Verona": ((1, 1), (2, 2))},
    )
    _, after = act(state, 0, PlayCard("VER-4"), PlaceFloor(1))
    assert sites(after, "Verona") == ((1, 1), (2, 2, 0))
    verona = next(city for city in view(after, None).cities if city.name == "Verona")
    assert verona.scored and verona.sites == ((1, 1), (2, 2, 0)) and verona.tokens_left == ()
    assert (verona.high_seat, verona.low_seat) == (2, 1)
    # Seat 1 owns a floor in Verona, yet its move may not touch the scored city.
    _, after = act(after, 0, legal_commands(after, 0)[0])
    assert after.pending == StepStarted(1, "play_card")
    _, after = act(after, 1, PlayCard("MIL-3"), PlaceFloor(0), TakeCard("Milano"))
    assert not any(
        isinstance(c, MoveFloor) and c.city == "Verona" for c in legal_commands(after, 1)
    )


# --- R36 final score --------------------------------------------------------------------


def test_r36_final_score_adds_tokens_portraits_trade_bonus_and_delegates() -> None:
    state = table(
        3,
        "towers",
        ["trade_routes", "delegates"],
        played={0: ["BOL-6", "BOL-4", "FIR-6"]},  # A A A, B B: one set
        winners={"Roma": (0, 1), "Verona": (1, 0)},  # seat 0: 9 + 2, seat 1: 6 + 5
    )
    state = msgspec.structs.replace(state, bonus=(-1, 2, 0))
    scores = final_scores(state).scores
    # Delegates: seat 0 alone holds a 2-point token (card A: one portrait of its choice, a B
    # completes a second set); seat 1 holds the only 6 (card C) and the best Verona-Parma-
    # Ferrara sum (card D: one of each noble, A B C for nothing).
    zero, one = scores[0], scores[1]
    assert (zero.tokens, zero.portraits, zero.trade_bonus, zero.delegates) == (11, 6, -1, 6)
    assert zero.delegate_cards == ("A",)
    assert zero.total == 11 + 6 - 1 + 6
    assert (one.tokens, one.portraits, one.trade_bonus, one.delegates) == (11, 0, 2, 0)
    assert set(one.delegate_cards) == {"C", "D"}
    assert one.total == 13


def test_r36_each_set_of_three_same_portraits_scores_six() -> None:
    # Six A portraits (one double card, four singles) are two sets; 2 B + 2 C make none.
    state = table(
        3,
        hands={0: [], 1: [], 2: []},
        played={
            0: ["BOL-6", "BOL-4", "FIR-5", "FER-2", "LUC-4"],
            1: ["MIL-4", "FER-3", "MIL-5", "FIR-7"],
        },
    )
    scores = final_scores(state).scores
    assert scores[0].portraits == 12
    assert scores[1].portraits == 0


def test_r36_a_double_portrait_counts_two() -> None:
    state = table(3, played={0: ["BOL-6", "LUC-4"], 1: ["ROM-6", "ROM-4"]})
    scores = final_scores(state).scores
    assert (scores[0].portraits, scores[1].portraits) == (6, 6)


def test_r36_only_played_cards_count_portraits_not_the_hand() -> None:
    state = table(3, hands={0: ["BOL-6", "BOL-4"]}, played={0: ["LUC-4"]})
    assert final_scores(state).scores[0].portraits == 0


def test_r36_action_cards_show_no_portraits() -> None:
    state = table(3, played={0: ["BOL-3", "MIL-3", "FIR-3"]})
    assert final_scores(state).scores[0].portraits == 0


def test_r36_the_game_ended_event_carries_each_seats_score_and_parts() -> None:
    state = table(
        3,
        hands={0: ["ROM-7"], 1: [], 2: []},
        played={0: ["BOL-6", "BOL-4"], 1: ["SIE-3"]},
        clear_face_up=True,
        draw=[],
        winners={"Verona": (1, 0)},
    )
    events, after = act(state, 0, PlayCard("ROM-7"), PlaceFloor(0))
    (ended,) = of_type(events, GameEnded)
    assert ended == after.result
    assert [(s.seat, s.tokens, s.portraits, s.total) for s in ended.scores] == [
        (0, 2, 6, 8),
        (1, 5, 0, 5),
        (2, 0, 0, 0),
    ]
    assert ended.winners == (0,)


# --- R37 tie-break ---------------------------------------------------------------------


def _tied(supply0: int, supply1: int, edition: str = "towers") -> State:
    # Seats 0 and 1 both score 9 (Bologna high, Firenze high); seat 2 scores 12.
    return table(
        3,
        edition,
        winners={"Bologna": (0, 2), "Firenze": (1, 2)},
        supply={0: supply0, 1: supply1, 2: 29},
    )


def test_r37_the_highest_score_wins_whatever_its_floors() -> None:
    ended = final_scores(_tied(0, 0))
    assert [score.total for score in ended.scores] == [9, 9, 12]
    assert ended.winners == (2,)


def test_r37_a_tie_on_score_goes_to_the_fewest_floors_on_the_board() -> None:
    state = table(
        3,
        winners={"Bologna": (0, 1), "Firenze": (1, 0)},  # 15 each
        supply={0: 20, 1: 22, 2: 29},  # 9 and 7 floors on the board
    )
    ended = final_scores(state)
    assert [score.total for score in ended.scores[:2]] == [15, 15]
    assert [score.floors_on_board for score in ended.scores] == [9, 7, 0]
    assert ended.winners == (1,)


def test_r37_still_tied_on_floors_is_a_shared_win() -> None:
    state = table(
        3,
        winners={"Bologna": (0, 1), "Firenze": (1, 0)},
        supply={0: 21, 1: 21, 2: 29},
    )
    ended = final_scores(state)
    assert ended.winners == (0, 1)
    assert not ended.architetto_won


def test_r37_classic_most_floors_left_in_supply_is_the_same_tie_break() -> None:
    # Classic 3 seats start with 29 floors each: 20 left is 9 on the board, 22 left is 7.
    state = table(
        3,
        "classic",
        winners={"Bologna": (0, 1), "Firenze": (1, 0)},
        supply={0: 20, 1: 22, 2: 29},
    )
    ended = final_scores(state)
    assert ended.winners == (1,)


def test_r37_floors_on_board_count_the_floors_placed_during_the_game() -> None:
    # Played to the end: seat 0 places a floor on its last turn, which breaks the tie.
    state = table(
        3,
        hands={0: ["ROM-7"], 1: [], 2: []},
        clear_face_up=True,
        draw=[],
        winners={"Bologna": (0, 1), "Firenze": (1, 0)},
        supply={0: 21, 1: 21, 2: 29},
    )
    events, _ = act(state, 0, PlayCard("ROM-7"), PlaceFloor(0))
    (ended,) = of_type(events, GameEnded)
    assert [score.floors_on_board for score in ended.scores] == [9, 8, 0]
    assert ended.winners == (1,)
