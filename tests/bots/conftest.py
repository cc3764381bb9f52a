"""What the bot tests share: moments of random games of every kind, as the seat to decide
sees them."""

from __future__ import annotations

import random
from collections.abc import Iterator

from bots.seen import Seen, seen_by
from domain.decide import decide
from domain.events import Event
from domain.evolve import fold
from domain.gamedata import GameData
from domain.legal import legal_commands
from domain.playout import pick
from domain.setup import new_game
from domain.state import State

KINDS: list[tuple[int, str, tuple[str, ...]]] = [
    (seats, edition, modules)
    for edition, modules in [
        ("classic", ()),
        ("towers", ()),
        ("towers", ("trade_routes",)),
        ("towers", ("delegates",)),
        ("towers", ("trade_routes", "delegates")),
    ]
    for seats in range(2, 6)
]
"""The 20 kinds of game: 2-5 seats in every edition and module combination."""


def moments(
    data: GameData, kind: tuple[int, str, tuple[str, ...]], rng: random.Random, every: int
) -> Iterator[tuple[State, list[Event], Seen]]:
    """Moments of one random game: about one decision in `every`, and every decision with a
    choice of a kind rarely met (the Architetto's site, a trade route, a move)."""
    seats, edition, modules = kind
    log = new_game(
        edition=edition,
        seats=seats,
        modules=modules,
        game_data=data,
        server_seed=rng.randbytes(32),
        entropies=[f"{rng.getrandbits(32):x}" for _ in range(seats)],
    )
    state = fold(log)
    while (pending := state.pending) is not None:
        legal = legal_commands(state, pending.seat)
        rare = pending.step in ("architetto_site", "trade_route", "move_floor")
        if rare or rng.randrange(every) == 0:
            yield state, log, seen_by(state, log, pending.seat)
        events, state = decide(state, pending.seat, pick(legal, rng))
        log = log + events
