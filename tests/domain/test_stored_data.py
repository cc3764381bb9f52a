"""Stored data can evolve: an event, or the card data kept in a game, written by a newer
version with a field added is read here (the field ignored), while what a person sends is
read strictly: a command with a field it does not have is refused."""

from __future__ import annotations

import json

import msgspec
import pytest

from domain.commands import command_decoder
from domain.events import decode_events, encoder, event_decoder
from domain.evolve import fold
from domain.gamedata import GameData, GameDataError, decode_game_data
from domain.setup import new_game
from server.config.card_data import default_card_file


def _with_a_new_field(data: bytes) -> bytes:
    event = json.loads(data)
    event["added_in_a_later_version"] = {"any": ["thing"]}
    return json.dumps(event).encode()


def test_a_log_whose_events_carry_fields_added_later_folds_as_before(game_data: GameData) -> None:
    log = new_game(
        edition="towers", seats=3, modules=(), game_data=game_data, server_seed=bytes(32)
    )
    newer = [_with_a_new_field(encoder.encode(event)) for event in log]
    assert fold(event_decoder.decode(data) for data in newer) == fold(log)
    assert fold(decode_events(newer)) == fold(log)


def test_the_card_data_kept_in_a_game_may_carry_fields_added_later(game_data: GameData) -> None:
    created = json.loads(encoder.encode(new_game(
        edition="towers", seats=2, modules=(), game_data=game_data, server_seed=bytes(32)
    )[0]))  # fmt: skip
    created["game_data"]["cards"][0]["artwork"] = "bol-1.png"
    created["game_data"]["printing"] = 2
    assert event_decoder.decode(json.dumps(created)) is not None


def test_a_card_file_a_user_hands_in_is_read_strictly() -> None:
    data = json.loads(default_card_file())
    data["cards"][3]["colour"] = "red"
    with pytest.raises(GameDataError, match=r"\$\.cards\[3\]\.colour"):
        decode_game_data(json.dumps(data))


def test_a_command_with_a_field_it_does_not_have_is_refused() -> None:
    with pytest.raises(msgspec.ValidationError, match="unknown field"):
        command_decoder.decode(b'{"type": "play_card", "card": "FIR-3", "urgent": true}')
