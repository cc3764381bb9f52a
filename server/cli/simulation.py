"""Games played to the end at scale, for a quick look at the rules and at the bots
(`patrician simulate`): random legal games, or games between levels of bots."""

from __future__ import annotations

import math
import random
import time
from collections import Counter
from collections.abc import Iterator, Sequence

import msgspec

from bots.levels import make
from bots.match import play_match
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


class LevelSummary(msgspec.Struct):
    """How one level did over a series of games between bots."""

    seats: int = 0
    """Seats it played, over all games."""
    wins: float = 0.0
    """Games it won (a shared win counts its share)."""
    points: int = 0


def bot_games(
    levels: Sequence[str],
    data: GameData,
    *,
    games: int,
    edition: str,
    modules: Sequence[str],
    seed: int,
    bot_options: dict[str, dict[str, object]] | None = None,
) -> Iterator[tuple[list[str], State]]:
    """Games between bots, one level per seat, the levels taking the seats in turn from one
    game to the next (so that no level keeps the first seat): each game's seating and its
    final state."""
    options = bot_options or {}
    for game in range(games):
        seating = [levels[(seat + game) % len(levels)] for seat in range(len(levels))]
        bots = [make(level, **options.get(level, {})) for level in seating]
        state, _log = play_match(bots, data, seed=seed + game, edition=edition, modules=modules)
        yield seating, state


def summarize_levels(results: Iterator[tuple[list[str], State]]) -> dict[str, LevelSummary]:
    summary: dict[str, LevelSummary] = {}
    for seating, state in results:
        assert state.result is not None
        winners = state.result.winners
        for score in state.result.scores:
            level = seating[score.seat] if score.seat < len(seating) else "Architetto"
            mine = summary.setdefault(level, LevelSummary())
            mine.seats += 1
            mine.points += score.total
            if score.seat in winners:
                mine.wins += 1 / len(winners)
    return summary


def wilson(successes: float, trials: int, z: float = 1.96) -> tuple[float, float]:
    """The 95 % (Wilson score) interval of a proportion of `successes` in `trials`."""
    if trials == 0:
        return 0.0, 1.0
    p = successes / trials
    centre = p + z * z / (2 * trials)
    spread = z * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials))
    scale = 1 + z * z / trials
    return (centre - spread) / scale, (centre + spread) / scale
