"""Fixtures shared by every test: the shipped card data. And one setting for every server
and worker a test starts (they inherit the environment): no finished game analysed, since
many tests finish games and the analysis would fill every idle moment of their workers (a
few seconds of CPU a game even on a small budget, while the tests' clocks run). The tests of
the analysis start servers of their own that analyse (tests/workers/test_analysis.py,
tests/web/test_replay_analysis.py); bench/analysis.py measures the default."""

from __future__ import annotations

import os

import pytest

from domain.gamedata import GameData
from server.config.card_data import load_game_data

os.environ.setdefault("PATRICIAN_ANALYSIS_ITERATIONS", "0")


@pytest.fixture(scope="session")
def game_data() -> GameData:
    return load_game_data()
