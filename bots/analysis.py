"""How good each decision of a finished game was, judged from the mover's own view.

A chess engine judges a move seeing the whole board; in Patrician the mover never sees the
others' hands, the draw pile or the Architetto's hidden cards, and a decision is fairly judged
only by what the mover could know. The search bot (`bots.ismcts`) already decides from one
seat's view alone, so it judges: at each decision of the game, given `seen_by` the mover at
that version (the same gate as every outbound path), it searches the options, reads the
mover's chance to win with the option it prefers and with the one played, and the drop between
the two marks the decision (`MARKS`, as lichess marks moves by the drop in winning chance, not
in raw score). A decision with one option is not judged.

The chance is the search's: a deal's position read by the greedy outlook (`bots.outlook`) as
the expected points of each builder, turned into each builder's chance to win by a softmax
(`SCALE` points: with two builders, 6 points ahead is a 73 % chance); the end of the game is a
win (shared on a shared win). It is the search bot's opinion, not the truth (docs/bots.md).

Deterministic: each decision's randomness is seeded from the game's id and the version, and the
budget is a number of iterations, so a game's analysis is the same wherever and however often
it is made, and any decision can be judged alone (the jobs judge a game in slices).
"""

from __future__ import annotations

import math
import random
from collections.abc import Iterator, Sequence
from typing import NamedTuple

import msgspec

from bots.belief import Belief
from bots.ismcts import IsmctsBot, Node
from bots.seen import Seen, seen_by
from domain.commands import Command
from domain.decide import decide
from domain.events import Event
from domain.evolve import evolve
from domain.legal import legal_commands
from domain.state import NEW_GAME, State

ITERATIONS = 1500
"""The search's iterations for a decision by default: a five-seat game judged in about half
a minute of one core (bench/analysis.py)."""
PLAYED_VISITS = 200
"""The visits the command played gets at least (the search is made to try it that often), so
that its chance is read as closely as the preferred one's."""
SCALE = 6.0
"""How many points of expected lead make a builder e (2.72) times as likely to win as another."""
MARKS: tuple[tuple[str, float], ...] = (
    ("blunder", 0.15),
    ("mistake", 0.10),
    ("inaccuracy", 0.05),
)
"""A decision's mark by the drop in the mover's chance (docs/bots.md says why these)."""


class Judgement(msgspec.Struct, frozen=True, gc=False):
    """One decision, judged from the mover's view: the chance with the best option the search
    found (`before`: what the position offered) and with the command played (`after`)."""

    version: int
    """The version the game stood at when the decision was made."""
    seat: int
    played: Command
    best: Command
    """The option the search preferred (the one it tried most), `played` when it agrees."""
    before: float
    after: float
    options: int
    """How many commands were legal."""

    @property
    def loss(self) -> float:
        return max(0.0, self.before - self.after)

    @property
    def mark(self) -> str | None:
        return mark_of(self.loss)


class Decision(NamedTuple):
    """A decision of a game's log: where it was made and what was decided."""

    version: int
    seat: int
    state: State
    played: Command
    options: int


def mark_of(loss: float) -> str | None:
    """The mark of a decision that lost `loss` of the mover's chance (None: a good one)."""
    return next((mark for mark, threshold in MARKS if loss >= threshold), None)


def accuracy(losses: Sequence[float]) -> float | None:
    """A seat's accuracy over its judged decisions, 0..100: the mean of each decision's, which
    is lichess's curve of the chance lost (in percentage points: none lost is 100, 5 lost
    about 80, 20 lost 40). None: nothing judged."""
    if not losses:
        return None
    each = [103.1668 * math.exp(-0.04354 * 100 * loss) - 3.1669 for loss in losses]
    return sum(min(100.0, max(0.0, a)) for a in each) / len(each)


def decisions(log: Sequence[Event]) -> Iterator[Decision]:
    """Every decision of the game whose log is `log`, in order, found by deciding each legal
    command where a decision was pending and keeping the one whose events the log holds
    (so the log alone is enough: a record read offline too)."""
    state, at = NEW_GAME, 0
    while at < len(log):
        pending = state.pending
        found = None
        if pending is not None:
            legal = legal_commands(state, pending.seat)
            for command in legal:
                events, after = decide(state, pending.seat, command)
                if list(log[at : at + len(events)]) == events:
                    found = Decision(state.version, pending.seat, state, command, len(legal))
                    break
        if found is None:  # not a decision's events (the setup, a cancellation)
            state, at = evolve(state, log[at]), at + 1
            continue
        yield found
        state = after
        at += len(events)


class _ChanceSearch(IsmctsBot):
    """The search bot reading a deal as each builder's chance to win (a softmax of expected
    points), rather than the bot's own soft margin: a chance sums to one over the builders,
    so a drop in it means the same at every table size."""

    def read(self, points: list[float]) -> list[float]:
        top = max(points)
        weights = [math.exp((p - top) / self.scale) for p in points]
        total = sum(weights)
        return [w / total for w in weights]


class Analyst:
    """Judges decisions with a budget of `iterations` a decision."""

    def __init__(self, *, iterations: int = ITERATIONS, played_visits: int = PLAYED_VISITS) -> None:
        self.iterations = iterations
        self.played_visits = played_visits
        self._search = _ChanceSearch(iterations=iterations, scale=SCALE)

    def judge(self, seen: Seen, played: Command, rng: random.Random) -> Judgement | None:
        """`played`, decided from `seen`, judged by a search with `rng` (None: it was the
        only option)."""
        legal = seen.view.legal_commands
        if len(legal) < 2:
            return None
        belief = Belief(seen)
        root = Node(-1)
        self._search.grow(root, seen, belief, rng)
        best = max(root.children.items(), key=lambda item: item[1].visits)[0]  # its choice
        tried = root.children.get(played)
        short = self.played_visits - (0 if tried is None else tried.visits)
        if short > 0:  # (after the choice: these visits are the reading's, not the search's)
            self._search.grow(root, seen, belief, rng, iterations=short, first=played)
        after = _chance(root.children[played])
        before = max(_chance(root.children[best]), after)
        return Judgement(
            seen.view.version, seen.seat, played, best if before > after else played,
            round(before, 4), round(after, 4), len(legal),
        )  # fmt: skip

    def judge_decision(
        self, log: Sequence[Event], decision: Decision, seed: str
    ) -> Judgement | None:
        """A decision of the game whose log is `log` judged from what its seat could see at
        its version, with randomness seeded from `seed` (the game's) and the version."""
        if decision.options < 2:
            return None
        seen = seen_by(decision.state, log[: decision.version], decision.seat)
        return self.judge(seen, decision.played, random.Random(f"{seed}:{decision.version}"))


def _chance(node: Node) -> float:
    return node.reward / node.visits
