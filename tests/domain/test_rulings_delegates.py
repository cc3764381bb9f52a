"""Per-ruling tests of the Delegates module: minor cards A, B, C (R33), major card D (R34),
their portraits (R35) and the Architetto and token counting (R48).

Each test names the ruling of `docs/rulings.md` it checks. Tokens: Verona,
Parma, Ferrara 5/2; Milano, Lucca, Siena 7/4; Bologna, Firenze, Roma (and Pistoia) 9/6. The
tie orders are those of `game-data.json` (placeholders, see its `provenance`): A Verona,
Parma, Ferrara; B Siena, Lucca, Milano; C Roma, Firenze, Bologna (5 seats: Roma, Firenze,
Pistoia, Bologna); D Verona, Parma, Ferrara. `winners` maps a city to (high, low) seats.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import msgspec

from domain.commands import PlaceFloor, PlayCard
from domain.events import GameEnded
from domain.gamedata import GameData, MajorDelegate
from domain.scoring import final_scores
from tests.domain.table import act, of_type, table

DELEGATES = ["delegates"]
ARCHITETTO = 2


def owners(
    winners: Mapping[str, tuple[int, int]],
    seats: int = 3,
    played: Mapping[int, Sequence[str]] | None = None,
    data: GameData | None = None,
    bonus: tuple[int, ...] | None = None,
) -> dict[str, int]:
    """Which builder ends with which Delegates card."""
    state = table(seats, "towers", DELEGATES, winners=winners, played=played, data=data)
    if bonus is not None:
        state = msgspec.structs.replace(state, bonus=bonus)
    return cards_of(final_scores(state))


def cards_of(ended: GameEnded) -> dict[str, int]:
    return {card: score.seat for score in ended.scores for card in score.delegate_cards}


def with_major(game_data: GameData, cities: Sequence[str], tie_order: Sequence[str]) -> GameData:
    major = MajorDelegate(cities=tuple(cities), tie_order=tuple(tie_order))
    delegates = msgspec.structs.replace(game_data.delegates, d=major)
    return msgspec.structs.replace(game_data, delegates=delegates)


# --- R33 minor cards -------------------------------------------------------------------


def test_r33_card_a_goes_to_the_seat_with_the_most_2_point_tokens() -> None:
    # Seat 1 holds Verona's 2 (first in the tie order), but seat 0 holds two 2s.
    cards = owners({"Verona": (2, 1), "Parma": (2, 0), "Ferrara": (2, 0)})
    assert cards["A"] == 0


def test_r33_card_b_goes_to_the_seat_with_the_most_4_point_tokens() -> None:
    cards = owners({"Siena": (2, 1), "Lucca": (2, 0), "Milano": (2, 0)})
    assert cards["B"] == 0


def test_r33_card_c_goes_to_the_seat_with_the_most_6_point_tokens() -> None:
    cards = owners({"Roma": (2, 1), "Firenze": (2, 0), "Bologna": (2, 0)})
    assert cards["C"] == 0


def test_r33_a_tie_for_a_goes_to_verona_first() -> None:
    cards = owners({"Parma": (2, 0), "Verona": (2, 1)})
    assert cards["A"] == 1


def test_r33_a_tie_for_a_passes_over_a_city_no_tied_seat_holds() -> None:
    # Verona is not scored: Parma, next in A's tie order, decides.
    cards = owners({"Ferrara": (2, 0), "Parma": (2, 1)})
    assert cards["A"] == 1


def test_r33_a_tie_for_b_goes_by_siena_lucca_milano() -> None:
    assert owners({"Milano": (2, 0), "Lucca": (2, 1)})["B"] == 1
    assert owners({"Milano": (2, 0), "Siena": (2, 1)})["B"] == 1
    assert owners({"Siena": (2, 0), "Lucca": (2, 1)})["B"] == 0


def test_r33_a_tie_for_c_goes_by_roma_firenze_bologna() -> None:
    assert owners({"Bologna": (2, 0), "Firenze": (2, 1)})["C"] == 1
    assert owners({"Firenze": (2, 0), "Roma": (2, 1)})["C"] == 1
    assert owners({"Roma": (2, 0), "Bologna": (2, 1)})["C"] == 0


def test_r33_a_three_way_tie_goes_by_the_tie_order_too() -> None:
    cards = owners({"Ferrara": (1, 0), "Parma": (0, 2), "Verona": (0, 1)}, seats=3)
    # Seats 0, 1, 2 each hold one 2: Verona's belongs to seat 1.
    assert cards["A"] == 1


def test_r33_nobody_gets_a_card_whose_value_nobody_owns() -> None:
    # No city of VII is scored: nobody holds a 4, so nobody gets B.
    cards = owners({"Verona": (0, 1), "Roma": (0, 0)})
    assert cards == {"A": 1, "C": 0, "D": 0}
    assert owners({}) == {}


# --- R34 major card D -----------------------------------------------------------------------


def test_r34_d_goes_to_the_highest_sum_from_verona_parma_ferrara() -> None:
    # Seat 0: three 2s = 6; seat 1: Verona 5; seat 2: Parma 5 + Ferrara 5 = 10.
    cards = owners({"Verona": (1, 0), "Parma": (2, 0), "Ferrara": (2, 0)})
    assert cards["D"] == 2


def test_r34_d_counts_low_tokens_as_well_as_high_ones() -> None:
    # Seat 0's three low tokens (6) beat each seat's single high token (5).
    cards = owners({"Verona": (1, 0), "Parma": (2, 0), "Ferrara": (3, 0)}, seats=4)
    assert cards["D"] == 0


def test_r34_other_cities_do_not_count_for_d() -> None:
    # Seat 1 holds Roma's 9 and 6 but nothing of the three cities.
    cards = owners({"Roma": (1, 1), "Verona": (2, 0)})
    assert cards["D"] == 2


def test_r34_a_tie_on_d_goes_to_the_most_points_in_verona() -> None:
    # Seat 0: Verona 5 + Ferrara 2 = 7; seat 1: Ferrara 5 + Verona 2 = 7.
    cards = owners({"Verona": (0, 1), "Ferrara": (1, 0)})
    assert cards["D"] == 0


def test_r34_then_to_the_most_points_in_parma() -> None:
    # Verona unscored. Seat 0: Parma 5 + Ferrara 2 = 7; seat 1: Ferrara 5 + Parma 2 = 7.
    cards = owners({"Parma": (0, 1), "Ferrara": (1, 0)})
    assert cards["D"] == 0


def test_r34_then_to_the_most_points_in_ferrara(game_data: GameData) -> None:
    # With the shipped data a tie that Verona and Parma leave open is always a tie at 0 (a
    # seat's points in one city are 0, 2, 5 or 7, so two tied seats with equal Verona and
    # Parma points hold nothing there and then differ in Ferrara). So this card file adds
    # Milano to D's cities, keeping the tie order: seat 0 Ferrara 5 + Milano 4 = 9, seat 1
    # Ferrara 2 + Milano 7 = 9; Verona 0-0, Parma 0-0, Ferrara 5-2.
    data = with_major(
        game_data, ["Verona", "Parma", "Ferrara", "Milano"], ["Verona", "Parma", "Ferrara"]
    )
    cards = owners({"Ferrara": (0, 1), "Milano": (1, 0)}, data=data)
    assert cards["D"] == 0


def test_r34_still_tied_after_the_tie_order_nobody_gets_d(game_data: GameData) -> None:
    # Unreachable with a positive sum on the shipped data (see above), so a card file whose
    # D tie order lists Verona only: seats 0 and 1 both sum 7 and hold nothing in Verona.
    data = with_major(game_data, ["Verona", "Parma", "Ferrara"], ["Verona"])
    cards = owners({"Parma": (0, 1), "Ferrara": (1, 0)}, data=data)
    assert "D" not in cards


def test_r34_nobody_gets_d_when_the_best_sum_is_0() -> None:
    cards = owners({"Roma": (0, 1), "Milano": (2, 2), "Siena": (1, 0)})
    assert "D" not in cards


def test_r34_trade_bonus_points_are_not_counted_for_d() -> None:
    # Seat 1's trade bonus is large, but only tokens of the three cities count.
    cards = owners({"Verona": (1, 0)}, bonus=(0, -3, 9))
    assert cards["D"] == 1
    cards = owners({"Verona": (2, 0)}, bonus=(0, 20, 0))
    assert cards["D"] == 2


# --- R35 effect ------------------------------------------------------------------------------


def _seat0_score(winners: Mapping[str, tuple[int, int]], played: Sequence[str]) -> tuple[int, int]:
    state = table(3, "towers", DELEGATES, winners=winners, played={0: played})
    score = final_scores(state).scores[0]
    return score.portraits, score.delegates


def test_r35_extra_portraits_chosen_to_the_owners_best_score() -> None:
    # A A B and card A (seat 0 holds Verona's 2; seat 1's Verona 5 takes D): the extra
    # portrait is an A, making a set of three A.
    portraits, extra = _seat0_score({"Verona": (1, 0)}, ["BOL-6", "FER-3"])
    assert (portraits, extra) == (0, 6)


def test_r35_two_minor_cards_are_chosen_together_to_the_best() -> None:
    # A A B B and cards A and B: one more A and one more B make two sets.
    portraits, extra = _seat0_score({"Verona": (1, 0), "Siena": (1, 0)}, ["BOL-6", "FIR-6"])
    assert (portraits, extra) == (0, 12)


def test_r35_d_is_one_extra_portrait_of_each_noble() -> None:
    # A A B B and card D only (seat 0: Verona 5; seat 1 holds the 2 and takes A).
    state = table(
        3, "towers", DELEGATES, winners={"Verona": (0, 1)}, played={0: ["BOL-6", "FIR-6"]}
    )
    score = final_scores(state).scores[0]
    assert score.delegate_cards == ("D",)
    assert (score.portraits, score.delegates) == (0, 12)


def test_r35_d_and_a_minor_card_together() -> None:
    # A A B, C none; D gives one of each (A3 B2 C1), the minor card's portrait completes B.
    state = table(
        3, "towers", DELEGATES, winners={"Verona": (0, 0)}, played={0: ["BOL-6", "FER-3"]}
    )
    score = final_scores(state).scores[0]
    assert set(score.delegate_cards) == {"A", "D"}
    assert (score.portraits, score.delegates) == (0, 12)


def test_r35_a_card_that_completes_no_set_adds_nothing() -> None:
    portraits, extra = _seat0_score({"Verona": (1, 0)}, ["BOL-7"])
    assert (portraits, extra) == (0, 0)


def test_r35_the_delegates_score_is_part_of_the_game_end() -> None:
    state = table(
        3,
        "towers",
        DELEGATES,
        hands={0: ["ROM-7"], 1: [], 2: []},
        clear_face_up=True,
        draw=[],
        winners={"Verona": (1, 0)},
        played={0: ["BOL-6", "FER-3"]},
    )
    events, _ = act(state, 0, PlayCard("ROM-7"), PlaceFloor(0))
    (ended,) = of_type(events, GameEnded)
    assert cards_of(ended) == {"A": 0, "D": 1}
    zero = ended.scores[0]
    assert (zero.tokens, zero.portraits, zero.delegates, zero.total) == (2, 0, 6, 8)


def test_r35_without_the_module_nobody_gets_a_card() -> None:
    state = table(3, winners={"Verona": (1, 0)}, played={0: ["BOL-6", "FER-3"]})
    assert all(
        score.delegate_cards == () and score.delegates == 0 for score in final_scores(state).scores
    )


# --- R48 delegates and the Architetto --------------------------------------------------


def test_r48_with_five_seats_card_c_uses_tie_order_five_players() -> None:
    # Seat 0 holds Bologna's 6, seat 1 Pistoia's 6: Pistoia comes before Bologna in the
    # 5-seat order (the 4-seat order has no Pistoia and would give C to seat 0).
    cards = owners({"Bologna": (4, 0), "Pistoia": (4, 1)}, seats=5)
    assert cards["C"] == 1


def test_r48_with_five_seats_roma_and_firenze_still_come_first() -> None:
    cards = owners({"Pistoia": (4, 0), "Firenze": (4, 1)}, seats=5)
    assert cards["C"] == 1


def test_r48_the_architettos_tokens_neither_win_nor_block_a_card() -> None:
    # The Architetto holds two 2s and seat 0 one: A goes to seat 0, not to the Architetto
    # and not to nobody.
    cards = owners(
        {"Verona": (1, ARCHITETTO), "Parma": (1, ARCHITETTO), "Ferrara": (1, 0)}, seats=2
    )
    assert cards["A"] == 0
    assert ARCHITETTO not in cards.values()


def test_r48_a_tie_order_city_whose_token_the_architetto_holds_is_passed_over() -> None:
    # Seats 0 and 1 hold one 2 each; Verona's 2 (first in the order) is the Architetto's.
    cards = owners(
        {"Verona": (0, ARCHITETTO), "Parma": (ARCHITETTO, 1), "Ferrara": (1, 0)}, seats=2
    )
    assert cards["A"] == 1


def test_r48_the_architetto_does_not_block_card_d() -> None:
    # The Architetto sums 12 in the three cities; seat 1's Ferrara 5 is the best of the seats.
    cards = owners(
        {"Verona": (ARCHITETTO, ARCHITETTO), "Parma": (ARCHITETTO, 0), "Ferrara": (1, 0)}, seats=2
    )
    assert cards["D"] == 1


def test_r48_minor_cards_count_tokens_of_the_cards_value_not_points() -> None:
    # Seat 1 holds Milano's high token (7 points in a B city) but no 4; seat 0 holds one 4.
    cards = owners({"Milano": (1, ARCHITETTO), "Siena": (ARCHITETTO, 0)}, seats=2)
    assert cards["B"] == 0


def test_r48_trade_bonus_is_not_counted_for_minor_cards() -> None:
    cards = owners({"Verona": (2, 0)}, bonus=(0, 10, 0))
    assert cards["A"] == 0
