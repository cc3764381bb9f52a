"""Static evaluations of a position for every builder: what each has secured, and what the
towers and the cards it holds promise, in points.

`standing` (the search's cut-off rollouts): secured, the score as it would stand if the game
ended now (prestige tokens, trade bonus, delegates: `domain.scoring.final_scores`), without
portraits. Portraits: the sets of the cards played and of those in hand (they will be played),
a set one card short counting for part of one. Towers: for each city not yet scored, each
tower's token (the high one for the taller, weighed by how likely it stays the taller) shared
among its builders by their floors, the sharper the fuller the city, since at the end the most
floors take it all (R13). Cheap, for the many positions a search reads.

The greedy bot reads positions by the dearer `bots.outlook`, with the same `Unseen`.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import NamedTuple

from domain.scoring import final_scores, portrait_counts
from domain.state import State

PARTIAL_SET = 0.2
"""What a portrait set one card short is worth, as a share of a whole set."""
HAND_FLOORS = 2.0
"""The floors a crest in hand is worth, in a tower where the holder has floors."""
NEW_FLOORS = 1.5
"""The same, in a tower where the holder has no floor yet."""
SWING = 1.0
"""How much the floors still to come may change a tower's lead, per square root of them."""
SPREAD = 0.6
"""How far a tower's lead may still swing besides the floors to come (in floors)."""


class Unseen(NamedTuple):
    """What the evaluating seat expects of the cards it has not seen in each other seat's
    hand: per seat, the crests it may hold per city and the portraits per noble (averages
    over the cards it could be: fractions)."""

    crests: Sequence[dict[int, float]]
    portraits: Sequence[dict[str, float]]


def standing(
    state: State, hands: Sequence[Sequence[str]] | None = None, unseen: Unseen | None = None
) -> list[float]:
    """Every builder's expected points (seats in turn order, then the Architetto). `hands`
    are the cards of each seat's hand to count, `unseen` the averages of the rest (what the
    evaluating seat knows of them: a guess of each card would only add noise); all of
    `state.hands` by default."""
    board = state.board
    hands = state.hands if hands is None else hands
    points = [float(score.total - score.portraits) for score in final_scores(state).scores]
    for builder in range(board.builders):
        extra = unseen.portraits[builder] if unseen and builder < len(hands) else {}
        points[builder] += _portraits(state, builder, hands, extra)
    crests = _crests_in_hand(state, hands)
    if unseen is not None:
        for seat, expected in enumerate(unseen.crests):
            for city, amount in expected.items():
                crests[city][seat] = crests[city].get(seat, 0.0) + amount
    for city, won in enumerate(state.winners):
        if won is not None:
            continue
        first, second = state.towers[2 * city], state.towers[2 * city + 1]
        floors = len(first) + len(second)
        if not floors and not crests[city]:
            continue
        left = board.capacity[city] - floors
        high, low = board.tokens[city]
        # Which tower ends the taller is likelier the more it leads and the less is left.
        first_taller = _normal((len(first) - len(second)) / (math.sqrt(left) + 0.5))
        for site, taller in ((first, first_taller), (second, 1.0 - first_taller)):
            if site or crests[city]:
                value = taller * high + (1.0 - taller) * low
                for builder, share in _shares(site, crests[city], left, board.seats).items():
                    points[builder] += value * share
    return points


def _portraits(
    state: State, builder: int, hands: Sequence[Sequence[str]], extra: dict[str, float]
) -> float:
    board = state.board
    counts: dict[str, float] = {
        noble: float(n) for noble, n in portrait_counts(state, builder).items()
    }
    for noble, amount in extra.items():
        counts[noble] += amount
    if builder < len(hands):  # the portraits in hand will be played
        for card in hands[builder]:
            for noble in board.cards[card].portraits:
                counts[noble] += 1
    size = board.set_size
    whole = sum(count // size for count in counts.values())
    short = sum(1 for count in counts.values() if size > 1 and count % size == size - 1)
    return (whole + PARTIAL_SET * short) * board.points_per_set


def _crests_in_hand(state: State, hands: Sequence[Sequence[str]]) -> list[dict[int, float]]:
    """Per city, the crests each seat holds for it in hand (floors it may still build)."""
    board = state.board
    crests: list[dict[int, float]] = [{} for _ in board.cities]
    for seat, hand in enumerate(hands):
        for card in hand:
            info = board.cards[card]
            crests[info.city][seat] = crests[info.city].get(seat, 0) + info.crests
    return crests


def _shares(
    site: tuple[int, ...], held: dict[int, float], left: int, seats: int
) -> dict[int, float]:
    """Each builder's chance to win a tower, as a share: its lead in floors (the crests it
    holds for the city counting for part of a floor each) against how much the floors still
    to come may change, the top floor breaking a tie (R13)."""
    counts: dict[int, float] = {}
    for builder in site:
        counts[builder] = counts.get(builder, 0.0) + 1.0
    if site:
        counts[site[-1]] += 0.5
    for builder, crests in held.items():
        present = builder in counts
        weight = HAND_FLOORS if present else NEW_FLOORS
        counts[builder] = counts.get(builder, 0.0) + weight * crests
    spread = SWING * math.sqrt(left / max(seats, 1)) + SPREAD
    chances = {}
    for builder, count in counts.items():
        best_other = max((c for b, c in counts.items() if b != builder), default=0.0)
        chances[builder] = _normal((count - best_other) / spread)
    total = sum(chances.values())
    if total <= 1:
        return chances
    return {builder: chance / total for builder, chance in chances.items()}


def _normal(z: float) -> float:
    """The standard normal distribution function."""
    return 0.5 * (1.0 + math.erf(z / math.sqrt(2)))


def margin(points: list[float], builder: int) -> float:
    """How far `builder` leads the best of the others (negative: how far it trails)."""
    return points[builder] - max(p for b, p in enumerate(points) if b != builder)


def soft_margin(points: list[float], builder: int, softness: float) -> float:
    """How far `builder` leads a soft maximum of the others (`softness` in points; 0: the
    best of them, as `margin`): the best of expected scores is less than the expected best
    of the scores, and a builder close behind the best may well end ahead of it."""
    others = [p for b, p in enumerate(points) if b != builder]
    best = max(others)
    if softness <= 0:
        return points[builder] - best
    spread = sum(math.exp((p - best) / softness) for p in others)
    return points[builder] - best - softness * math.log(spread)
