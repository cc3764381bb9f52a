"""The levels of play, one interface: `choose(seen, rng) -> Command`, one of the seat's legal
commands, from what the seat may see (`Seen`) and a seeded generator (`rng`).

- `random`: each legal command as likely.
- `greedy`: tries each legal command and finishes its own turn the same way, one decision at a
  time, on one guess of the unseen cards; keeps the command whose end of turn leaves it
  furthest ahead of the others (the best of them above all) by the greedy evaluation
  (`bots.outlook.outlook`), less what the face-up cards promise the next seat.
- `ismcts`: `bots.ismcts.IsmctsBot`.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Protocol

from bots.belief import Belief
from bots.evaluate import Unseen, soft_margin
from bots.outlook import outlook
from bots.seen import Seen
from domain.commands import Command
from domain.decide import decide
from domain.legal import legal_commands
from domain.playout import pick
from domain.scoring import portrait_counts
from domain.state import State

LEVELS = ("random", "greedy", "ismcts")
LEAVE = 0.3
"""How much what the face-up cards promise the next seat counts against a position."""
SOFTNESS = 3.0
"""How closely the greedy bot watches every other builder, not only the best (in points:
`bots.evaluate.soft_margin`)."""


class Bot(Protocol):
    level: str

    def choose(self, seen: Seen, rng: random.Random) -> Command: ...


class RandomBot:
    level = "random"

    def choose(self, seen: Seen, rng: random.Random) -> Command:
        return pick(seen.view.legal_commands, rng)


class GreedyBot:
    level = "greedy"

    def __init__(self, turn_steps: int = 8) -> None:
        self.turn_steps = turn_steps
        """How many of its own decisions it looks ahead, at most, to finish its turn."""

    def choose(self, seen: Seen, rng: random.Random) -> Command:
        legal = seen.view.legal_commands
        if len(legal) == 1:
            return legal[0]
        belief = Belief(seen)
        judge = Judge(seen.seat, belief.known_hands(), belief.unseen())
        return judge.best(belief.determinize(rng), legal, self.turn_steps)


class Judge:
    """The greedy reading of positions for one seat: its soft margin over the others by
    `outlook`, counting of the others' hands only the cards it knows they hold (the others'
    hands do not change during its turn, and a guess of them would only add noise)."""

    def __init__(self, seat: int, known: list[tuple[str, ...]], unseen: Unseen) -> None:
        self.seat = seat
        self.known = known
        self.unseen = unseen

    def value(self, state: State) -> float:
        hands = list(self.known)
        hands[self.seat] = state.hands[self.seat]
        points = outlook(state, self.seat, hands, self.unseen)
        return soft_margin(points, self.seat, SOFTNESS) - LEAVE * self._left(state, hands)

    def _left(self, state: State, hands: list[tuple[str, ...]]) -> float:
        """What the face-up cards promise the next seat to play, which takes the card of
        the city it builds in: each card's portraits, as likely as that seat is to build
        there by the crests it holds (seen, or on average)."""
        pending = state.pending
        if pending is None or pending.seat == self.seat or pending.step != "play_card":
            return 0.0
        board, other = state.board, pending.seat
        held: dict[int, float] = dict(self.unseen.crests[other])
        for card in hands[other]:
            info = board.cards[card]
            held[info.city] = held.get(info.city, 0.0) + info.crests
        total = sum(held.values())
        if not total:
            return 0.0
        counts = portrait_counts(state, other)
        promise = 0.0
        for city, up in enumerate(state.face_up):
            if up is None or not held.get(city):
                continue
            portraits = board.cards[up].portraits
            completes = sum(
                1 for noble in portraits if counts[noble] % board.set_size == board.set_size - 1
            )
            promise += held[city] / total * (completes * board.points_per_set + len(portraits))
        return promise

    def best(self, state: State, legal: tuple[Command, ...], steps: int) -> Command:
        """The greedy choice among `legal` (the first of equals)."""
        best, best_value = legal[0], float("-inf")
        for command in legal:
            value = self._after_turn(state, command, steps)
            if value > best_value:
                best, best_value = command, value
        return best

    def _after_turn(self, state: State, command: Command, steps: int) -> float:
        """The margin once `command` and the rest of the turn are played greedily."""
        seat = self.seat
        _, state = decide(state, seat, command)
        while steps > 0 and (pending := state.pending) is not None and pending.seat == seat:
            options = legal_commands(state, seat)
            if len(options) == 1:
                _, state = decide(state, seat, options[0])
            else:
                state = max((decide(state, seat, o)[1] for o in options), key=self.value)
            steps -= 1
        return self.value(state)


def make(level: str, **options: object) -> Bot:
    """The bot of a level (`LEVELS`); `options` are the level's own (see each class)."""
    makers: dict[str, Callable[..., Bot]] = {
        "random": RandomBot,
        "greedy": GreedyBot,
        "ismcts": _ismcts,
    }
    if level not in makers:
        raise ValueError(f"{level!r} is not a level; known: {', '.join(LEVELS)}")
    return makers[level](**options)


def _ismcts(**options: object) -> Bot:
    from bots.ismcts import IsmctsBot

    return IsmctsBot(**options)  # type: ignore[arg-type]
