"""The rulebook's worked examples, played on the engine."""

from __future__ import annotations

import msgspec
import pytest

from domain.commands import MoveFloor, PlaceFloor, PlayCard, TakeCard
from domain.errors import IllegalCommand
from domain.events import CityScored, FloorMoved, FloorPlaced, GameEnded
from domain.gamedata import GameData
from domain.legal import legal_commands
from domain.scoring import final_scores
from tests.domain.table import act, of_type, table


def test_marys_final_score_is_33_for_tokens_plus_18_for_portraits() -> None:
    # Mary's stack makes sets worth 6, 12 and 0 points: three A portraits, six B (one card
    # shows two) and two C; her tokens are Roma 9 + Firenze 9 + Milano 7 + Lucca 4 + Verona 2 + 2.
    stack = ["BOL-4", "FIR-5", "SIE-5", "FIR-6", "PAR-3", "LUC-5", "SIE-3", "ROM-7"]
    state = table(
        3,
        played={0: [*stack, "ROM-4", "VER-3"]},
        winners={
            "Roma": (0, 1),
            "Firenze": (0, 2),
            "Milano": (0, 1),
            "Lucca": (1, 0),
            "Verona": (1, 0),
            "Parma": (1, 0),
        },
    )
    mary = final_scores(state).scores[0]
    assert (mary.tokens, mary.portraits, mary.total) == (33, 18, 51)


def test_michael_places_his_two_ferrara_floors_one_on_each_site() -> None:
    state = table(3, hands={0: ["FER-1", "MIL-1", "ROM-1"]})
    events, after = act(state, 0, PlayCard("FER-1"), PlaceFloor(0), PlaceFloor(1))
    placed = of_type(events, FloorPlaced)
    assert [(floor.city, floor.site) for floor in placed] == [("Ferrara", 0), ("Ferrara", 1)]
    assert after.towers[2 * after.board.city_index["Ferrara"]] == (0,)
    assert after.towers[2 * after.board.city_index["Ferrara"] + 1] == (0,)


def _lucca_with_move(game_data: GameData) -> GameData:
    """The rulebook's Mary plays a Lucca card with the move symbol; the reconstructed card
    list has none, so this example plays on a card file where LUC-3 shows the move."""
    cards = tuple(
        msgspec.structs.replace(card, action="move_top_floor") if card.id == "LUC-3" else card
        for card in game_data.cards
    )
    return msgspec.structs.replace(game_data, cards=cards)


def test_marys_move_in_milano_and_the_cities_where_she_may_not_move(game_data: GameData) -> None:
    mary, black = 0, 1
    state = table(
        3,
        data=_lucca_with_move(game_data),
        hands={mary: ["LUC-3", "ROM-1", "SIE-1"]},
        towers={
            "Parma": ((black,), (black,)),
            "Lucca": ((mary,), ()),
            "Milano": ((mary, black), ()),
        },
    )
    events, after = act(state, mary, PlayCard("LUC-3"), PlaceFloor(1), TakeCard("Lucca"))
    moves = legal_commands(after, mary)
    assert MoveFloor("Milano", 0) in moves
    assert not any(isinstance(m, MoveFloor) and m.city in ("Parma", "Lucca") for m in moves)
    for city in ("Parma", "Lucca"):
        with pytest.raises(IllegalCommand):
            act(after, mary, MoveFloor(city, 0))
    events, after = act(after, mary, MoveFloor("Milano", 0))
    assert of_type(events, FloorMoved) == [FloorMoved(mary, "Milano", 0)]
    milano = 2 * after.board.city_index["Milano"]
    assert after.towers[milano : milano + 2] == ((mary,), (black,))


def test_a_tower_tie_is_won_by_the_highest_floor() -> None:
    # Siena (7): site 0 holds 0,1,1,0 (a 2-2 tie, seat 0 on top); site 1 holds 2,2.
    # Seat 2 plays a Siena card and completes the city on site 1.
    state = table(
        3,
        hands={2: ["SIE-3", "ROM-1", "BOL-1"]},
        towers={"Siena": ((0, 1, 1, 0), (2, 2))},
        active=2,
    )
    events, _ = act(state, 2, PlayCard("SIE-3"), PlaceFloor(1))
    (scored,) = of_type(events, CityScored)
    assert (scored.high_seat, scored.high_token) == (0, 7)
    assert (scored.low_seat, scored.low_token) == (2, 4)
    assert not of_type(events, GameEnded)
