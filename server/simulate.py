"""Random legal games, for a quick look at the rules at scale (`patrician simulate`)."""

from __future__ import annotations

import random
import time
from collections import Counter
from collections.abc import Iterator, Sequence

import msgspec

from domain.events import Event, GameEnded, StepStarted
from domain.evolve import fold
from domain.gamedata import GameData
from domain.playout import play_out, random_chooser
from domain.setup import new_game
from domain.state import State


class GameSummary(msgspec.Struct, frozen=True):
    result: GameEnded
    events: int
    turns: int


class Summary(msgspec.Struct):
    games: int = 0
    events: int = 0
    turns: int = 0
    wins: Counter[int] = msgspec.field(default_factory=Counter)
    shared: int = 0
    totals: Counter[int] = msgspec.field(default_factory=Counter)
    seconds: float = 0.0


def random_game(
    rng: random.Random, data: GameData, seats: int, edition: str, modules: Sequence[str]
) -> tuple[State, list[Event]]:
    """One random legal game: its final state and its whole log."""
    opening = new_game(
        edition=edition,
        seats=seats,
        modules=modules,
        game_data=data,
        server_seed=rng.randbytes(32),
        entropies=[f"{rng.getrandbits(64):016x}" for _ in range(seats)],
    )
    state, rest = play_out(fold(opening), random_chooser(rng))
    return state, opening + rest


def simulate(
    data: GameData, *, games: int, seats: int, edition: str, modules: Sequence[str], seed: int
) -> Iterator[GameSummary]:
    rng = random.Random(seed)
    for _ in range(games):
        state, log = random_game(rng, data, seats, edition, modules)
        assert state.result is not None
        turns = sum(1 for e in log if isinstance(e, StepStarted) and e.step == "play_card")
        yield GameSummary(state.result, len(log), turns)


def summarize(results: Iterator[GameSummary]) -> Summary:
    summary = Summary()
    start = time.perf_counter()
    for game in results:
        summary.games += 1
        summary.events += game.events
        summary.turns += game.turns
        if len(game.result.winners) > 1:
            summary.shared += 1
        for seat in game.result.winners:
            summary.wins[seat] += 1
        for score in game.result.scores:
            summary.totals[score.seat] += score.total
    summary.seconds = time.perf_counter() - start
    return summary
