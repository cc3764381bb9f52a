"""The bots' reading of a position (the greedy bot's, and the search's at its leaves): every
builder's expected points, as one seat sees them.

The points secured; the portrait sets with those each builder may still take (the face-up
cards and the draw pile shared among the seats); and each unscored city played out to its end
(`bots.city_playout`), since who holds a city's remaining cards, and when they come, decide
its towers. One decision's candidate positions share most of their cities, so the play-outs
are remembered.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

from bots.city_playout import MEMO_SIZE, play_out
from bots.evaluate import Unseen
from domain.scoring import final_scores, portrait_counts, trade_bonus
from domain.state import State


def outlook(state: State, seat: int, hands: Sequence[Sequence[str]], unseen: Unseen) -> list[float]:
    """Every builder's expected points as `seat` reads the position (seats in turn order,
    then the Architetto): what is secured, the portrait sets (`_sets`), and for each city
    not yet scored the tokens each builder can expect from playing out the rest of the city
    (`bots.city_playout.play_out`): the cards of the city not yet played are all still to
    come, and a city is complete exactly when they are, so who holds them, and when they
    come, decides it.
    `hands` are the cards `seat` knows each seat holds."""
    board = state.board
    points = [float(score.total - score.portraits) for score in final_scores(state).scores]
    holder: dict[str, int] = {}
    for other, hand in enumerate(hands):
        for card in hand:
            holder[card] = other
    played = {card for pile in state.played for card in pile}
    for builder, value in enumerate(_sets(state, hands, unseen, played, holder)):
        points[builder] += value
    remaining: list[list[tuple[int, int, int]]] = [[] for _ in board.cities]
    for index, card in enumerate(board.card_order):
        if card not in played:
            info = board.cards[card]
            remaining[info.city].append((index, info.crests, holder.get(card, -1)))
    arch = board.seats if board.architetto else -2
    sizes = tuple(len(hand) for hand in state.hands)
    turns = len(board.card_order) - len(played)
    for city, won in enumerate(state.winners):
        if won is not None or not remaining[city]:
            continue
        high, low = board.tokens[city]
        bonus = trade_bonus(state, city) if state.markers else 0
        expected = play_out(
            seat,
            board.builders,
            arch,
            board.capacity[city],
            high + bonus,
            low + bonus,
            state.towers[2 * city],
            state.towers[2 * city + 1],
            tuple(remaining[city]),
            sizes,
            turns,
        )
        for builder, value in enumerate(expected):
            points[builder] += value
    return points


def _sets(
    state: State,
    hands: Sequence[Sequence[str]],
    unseen: Unseen,
    played: set[str],
    holder: dict[str, int],
) -> list[float]:
    """Each builder's expected portrait points: the sets of the cards it played and holds,
    and of those it may yet take: as many of the face-up and draw pile cards as any seat
    (their portraits, on average over the cards nobody is known to hold), with what the
    evaluating seat expects of the cards it has not seen in each hand."""
    board = state.board
    pool = 0
    nobles = dict.fromkeys(board.nobles, 0)
    for card in board.card_order:
        if card not in played and card not in holder:
            pool += 1
            for noble in board.cards[card].portraits:
                nobles[noble] += 1
    takes = (sum(1 for up in state.face_up if up is not None) + len(state.draw)) / board.seats
    rate = takes / pool if pool else 0.0
    size, value = board.set_size, board.points_per_set
    points = []
    for builder in range(board.builders):
        counts = portrait_counts(state, builder)
        extra: dict[str, float] = {}
        if builder < len(hands):
            for card in hands[builder]:
                for noble in board.cards[card].portraits:
                    counts[noble] += 1
            extra = unseen.portraits[builder]
        mine = rate if builder < board.seats else 0.0
        points.append(
            value
            * sum(
                _expected_sets(count, mine * nobles[noble] + extra.get(noble, 0.0), size)
                for noble, count in counts.items()
            )
        )
    return points


def _expected_sets(count: int, mean: float, size: int) -> float:
    """The expected whole sets of `count` portraits and as many more as a Poisson law of
    `mean` (to the hundredth) gives."""
    mean = round(mean, 2)
    if mean <= 0.0:
        return float(count // size)
    return _poisson_sets(count, mean, size)


@functools.lru_cache(maxsize=MEMO_SIZE)
def _poisson_sets(count: int, mean: float, size: int) -> float:
    """`_expected_sets` for a positive `mean`, remembered (few distinct means occur)."""
    chance = math.exp(-mean)
    total = cumulative = 0.0
    for more in range(16):
        total += chance * ((count + more) // size)
        cumulative += chance
        chance *= mean / (more + 1)
    total += (1.0 - cumulative) * ((count + 16) // size)
    return total
