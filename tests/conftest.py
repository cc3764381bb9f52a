"""Fixtures shared by every test: the shipped card data."""

from __future__ import annotations

import pytest

from domain.gamedata import GameData
from server.config.card_data import load_game_data


@pytest.fixture(scope="session")
def game_data() -> GameData:
    return load_game_data()
