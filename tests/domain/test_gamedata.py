"""The card file: the shipped one is valid, a broken one is refused naming what is broken,
and a user's own file (the printed list, once transcribed) plays."""

from __future__ import annotations

import json
import random
from collections.abc import Callable
from typing import Any

import pytest

from domain.gamedata import GameData, GameDataError, decode_game_data
from server.config.card_data import default_card_file
from tests.domain.invariants import play_checked

Edit = Callable[[dict[str, Any]], None]


def _raw() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(default_card_file())
    return data


def _card(data: dict[str, Any], card_id: str) -> dict[str, Any]:
    card: dict[str, Any] = next(card for card in data["cards"] if card["id"] == card_id)
    return card


def _refused(edit: Edit) -> str:
    data = _raw()
    edit(data)
    with pytest.raises(GameDataError) as refusal:
        decode_game_data(json.dumps(data))
    return str(refusal.value)


def test_the_shipped_card_file_is_valid(game_data: GameData) -> None:
    assert len(game_data.cards) == 55
    assert {city.name for city in game_data.cities if city.five_player_only} == {"Pistoia"}


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        (lambda d: d["cards"].append(dict(_card(d, "BOL-1"))), ["BOL-1", "unique"]),
        (lambda d: _card(d, "MIL-3").update(city="Napoli"), ["MIL-3", "Napoli"]),
        (lambda d: _card(d, "MIL-3").update(crests=2), ["Milano", "8 crests", "7 floors"]),
        (lambda d: _card(d, "FIR-4").update(crests=2), ["FIR-4", "star"]),
        (lambda d: _card(d, "FIR-4").update(portraits=["A", "B"]), ["FIR-4", "star"]),
        (lambda d: _card(d, "FIR-4").update(portraits=["Z"]), ["FIR-4", "noble"]),
        (lambda d: _card(d, "BOL-3").update(portraits=["A"]), ["BOL-3", "portraits", "action"]),
        (lambda d: _card(d, "BOL-3").update(crests=3), ["BOL-3", "3 crests"]),
        (lambda d: d["cities"][0].update(prestige_tokens=[9, 5]), ["Bologna", "R8"]),
        (lambda d: d["trade_routes"]["nine_city_board"].append(["Roma", "Pistoia"]), ["Pistoia"]),
        (lambda d: d["trade_routes"]["ten_city_board"].append(["Verona", "Milano"]), ["twice"]),
        (lambda d: d["delegates"]["A"].update(tie_order=["Verona", "Parma"]), ["delegates.A"]),
        (lambda d: d.update(format="patrician-game-data/9"), ["format"]),
        (lambda d: _card(d, "BOL-1").update(crests="two"), ["$.cards[0].crests"]),
        (lambda d: _card(d, "BOL-1").update(colour="red"), ["colour"]),
        (lambda d: d["tower_pieces"]["classic_2007"].pop("4"), ["classic_2007", "4 seats"]),
    ],
)
def test_a_broken_card_file_is_refused_naming_the_item_and_the_constraint(
    edit: Edit, words: list[str]
) -> None:
    message = _refused(edit)
    for word in words:
        assert word in message


def test_a_file_that_is_not_json_is_refused() -> None:
    with pytest.raises(GameDataError, match="not valid JSON"):
        decode_game_data(b"{cards: [")


def test_a_users_own_card_file_plays_whole_games() -> None:
    # Someone's transcription moves portraits around and makes ROM-3 a "take any" card.
    data = _raw()
    _card(data, "ROM-3")["action"] = "take_any_faceup_card"
    _card(data, "BOL-7")["portraits"] = ["B"]
    _card(data, "PIS-7")["portraits"] = ["A"]
    own = decode_game_data(json.dumps(data))
    rng = random.Random(7)
    for seats in (2, 5):
        state, _ = play_checked(own, rng, seats=seats, edition="towers", modules=())
        assert state.board.cards["ROM-3"].take_any
