"""Fixtures shared by every test: the shipped card data. And one setting for every server
and worker a test starts (they inherit the environment): a finished game's analysis on a
budget of 20 iterations a decision rather than 1500, since many tests finish games and the
analysis would otherwise fill every idle moment of their workers (tests/workers/
test_analysis.py sets its own; bench/analysis.py measures the default)."""

from __future__ import annotations

import os

import pytest

from domain.gamedata import GameData
from server.config.card_data import load_game_data

os.environ.setdefault("PATRICIAN_ANALYSIS_ITERATIONS", "20")


@pytest.fixture(scope="session")
def game_data() -> GameData:
    return load_game_data()
