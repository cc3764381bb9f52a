"""Same seed, same commands: the same log, byte for byte (no hidden randomness anywhere)."""

from __future__ import annotations

import random

from domain.commands import Command
from domain.decide import decide
from domain.events import Event, encoder
from domain.evolve import fold
from domain.gamedata import GameData
from domain.legal import legal_commands
from domain.playout import pick
from domain.setup import new_game
from server.cli.simulation import random_game


def _replay(data: GameData, seed: bytes, seats: int, commands: list[tuple[int, Command]]) -> bytes:
    log: list[Event] = new_game(
        edition="towers",
        seats=seats,
        modules=("trade_routes", "delegates"),
        game_data=data,
        server_seed=seed,
        entropies=["a", "b", "c"][:seats],
    )
    state = fold(log)
    for seat, command in commands:
        events, state = decide(state, seat, command)
        log += events
    return encoder.encode(log)


def test_the_same_seed_and_commands_give_a_byte_identical_log(game_data: GameData) -> None:
    rng = random.Random(11)
    seed = rng.randbytes(32)
    log = new_game(
        edition="towers",
        seats=3,
        modules=("trade_routes", "delegates"),
        game_data=game_data,
        server_seed=seed,
        entropies=["a", "b", "c"],
    )
    state = fold(log)
    commands: list[tuple[int, Command]] = []
    while state.pending is not None:
        seat = state.pending.seat
        legal = legal_commands(state, seat)
        command = pick(legal, rng)
        commands.append((seat, command))
        _, state = decide(state, seat, command)
    first = _replay(game_data, seed, 3, commands)
    second = _replay(game_data, seed, 3, commands)
    assert first == second


def test_random_games_from_the_same_seed_are_identical(game_data: GameData) -> None:
    one = random_game(random.Random(5), game_data, 4, "classic", ())[1]
    two = random_game(random.Random(5), game_data, 4, "classic", ())[1]
    assert encoder.encode(one) == encoder.encode(two)
