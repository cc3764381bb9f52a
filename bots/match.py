"""A whole game between bots, one per seat: each decision is its seat's bot's choice from what
that seat may see (`seen_by`), through the domain's `decide`. For `patrician simulate`, the
benchmarks and the tests; every bot gets a generator of its own, seeded from the match's seed.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

import msgspec

from bots.levels import Bot
from bots.seen import seen_by
from domain.commands import Command
from domain.decide import decide
from domain.events import Event
from domain.evolve import fold
from domain.gamedata import GameData
from domain.setup import new_game
from domain.state import State


class Choice(msgspec.Struct, frozen=True):
    """One decision of a match: the version it was made at, the seat, its bot, the command."""

    version: int
    seat: int
    level: str
    command: Command


Watch = Callable[[Choice], None]


def play_match(
    bots: Sequence[Bot],
    game_data: GameData,
    *,
    seed: int,
    edition: str = "towers",
    modules: Sequence[str] = (),
    watch: Watch | None = None,
) -> tuple[State, list[Event]]:
    """Play a game whose seat k is played by `bots[k]`; its final state and its whole log."""
    rng = random.Random(seed)
    seats = len(bots)
    log = new_game(
        edition=edition,
        seats=seats,
        modules=modules,
        game_data=game_data,
        server_seed=rng.randbytes(32),
        entropies=[f"{rng.getrandbits(64):016x}" for _ in range(seats)],
    )
    state = fold(log)
    generators = [random.Random(rng.getrandbits(64)) for _ in range(seats)]
    while (pending := state.pending) is not None:
        seat = pending.seat
        command = bots[seat].choose(seen_by(state, log, seat), generators[seat])
        if watch is not None:
            watch(Choice(state.version, seat, bots[seat].level, command))
        events, state = decide(state, seat, command)
        log += events
    return state, log
