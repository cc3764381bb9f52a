"""Thousands of random legal games, every edition, seat count and module, fully checked.

Each game is played to its end by random choices among `legal_commands`, with every
invariant of `tests.domain.invariants` checked after every decision. The games alternate
between the rules versions still played (docs/rules-versions.md), so that `legal_commands`
and `decide` are held to agree under each.
"""

from __future__ import annotations

import random

import pytest

from domain.board import SUPPORTED_RULES_VERSIONS
from domain.gamedata import GameData
from tests.domain.invariants import play_checked

BASE = [(edition, seats, ()) for edition in ("towers", "classic") for seats in (2, 3, 4, 5)]
MODULES = [
    ("towers", seats, modules)
    for seats in (2, 3, 4, 5)
    for modules in (("trade_routes",), ("delegates",), ("trade_routes", "delegates"))
]
# Both editions x 2-5 seats: 2,000 games. Towers x 2-5 seats x {none, trade routes,
# delegates, both}: the 1,000 plain towers games above plus 1,020 with modules = 2,020.
GAMES_PER_BASE = 250
GAMES_PER_MODULES = 85


def _play_many(
    game_data: GameData, edition: str, seats: int, modules: tuple[str, ...], games: int
) -> None:
    rng = random.Random(f"{edition}-{seats}-{'+'.join(modules)}")
    for game in range(games):
        state, _ = play_checked(
            game_data,
            rng,
            seats=seats,
            edition=edition,
            modules=modules,
            every_viewer=game % 8 in (0, 5),  # a quarter of the games, of both versions
            rules_version=SUPPORTED_RULES_VERSIONS[game % len(SUPPORTED_RULES_VERSIONS)],
        )
        assert state.result is not None


@pytest.mark.slow
@pytest.mark.parametrize(("edition", "seats", "modules"), BASE)
def test_random_legal_games_keep_every_invariant(
    game_data: GameData, edition: str, seats: int, modules: tuple[str, ...]
) -> None:
    _play_many(game_data, edition, seats, modules, GAMES_PER_BASE)


@pytest.mark.slow
@pytest.mark.parametrize(("edition", "seats", "modules"), MODULES)
def test_random_legal_games_with_modules_keep_every_invariant(
    game_data: GameData, edition: str, seats: int, modules: tuple[str, ...]
) -> None:
    _play_many(game_data, edition, seats, modules, GAMES_PER_MODULES)
