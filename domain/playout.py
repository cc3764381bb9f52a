"""Play a whole game by asking a chooser at every decision: simulations, benchmarks, tests.

The domain has no randomness, so the chooser is passed in (a seeded random choice, a bot, a
script of moves). Every decision goes through `legal_commands` and `play` like a person's.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Protocol

from domain.commands import Command
from domain.decide import decide
from domain.events import Event
from domain.legal import legal_commands
from domain.state import State

Chooser = Callable[[State, Sequence[Command]], Command]


class Randomness(Protocol):
    """A seeded generator the caller owns (`random.Random`): the domain has none of its own."""

    def randrange(self, stop: int, /) -> int: ...


def pick(legal: Sequence[Command], rng: Randomness) -> Command:
    """One of the legal commands, each as likely: the random player of simulations, the
    benchmarks and the tests."""
    return legal[rng.randrange(len(legal))]


def random_chooser(rng: Randomness) -> Chooser:
    """A chooser that `pick`s at every decision."""

    def choose(_state: State, legal: Sequence[Command]) -> Command:
        return pick(legal, rng)

    return choose


def play_out(state: State, choose: Chooser) -> tuple[State, list[Event]]:
    """Play from `state` to the end; return the final state and the events after `state`."""
    log: list[Event] = []
    while (pending := state.pending) is not None:
        command = choose(state, legal_commands(state, pending.seat))
        events, state = decide(state, pending.seat, command)
        log += events
    return state, log
