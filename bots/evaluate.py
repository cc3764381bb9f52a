"""A static evaluation of a position for every builder: what each has secured, and what the
towers and the cards it holds promise, in points.

Secured: the score as it would stand if the game ended now (prestige tokens, trade bonus,
delegates: `domain.scoring.final_scores`), without portraits. Portraits: the sets of the cards
played and of those in hand (they will be played), a set one card short counting for part of
one. Towers: for each city not yet scored, each tower's token (the high one for the taller,
weighed by how likely it stays the taller) shared among its builders by their floors, the
sharper the fuller the city, since at the end the most floors take it all (R13). The greedy
bot and the search's cut-off rollouts read positions by this and nothing else.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence
from typing import NamedTuple

from domain.scoring import final_scores, portrait_counts, trade_bonus
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


SETS = True
FUTURE = 1.0
SAMPLES = 32
"""How many times `outlook` plays out the rest of each city."""
MEMO_SIZE = 50_000
"""How many cities' play-outs `outlook` remembers (then it forgets them all)."""
_MEMO: dict[tuple[object, ...], tuple[float, ...]] = {}
"""The play-outs already made: a pure function's answers, by its whole input (so that no
caller can tell it is there but by speed; one decision's candidate positions share most of
their cities, and so do one seat's turns)."""


def outlook(state: State, seat: int, hands: Sequence[Sequence[str]], unseen: Unseen) -> list[float]:
    """Every builder's expected points as `seat` reads the position (seats in turn order,
    then the Architetto): what is secured, the portrait sets (`_sets`), and for each city
    not yet scored the tokens each builder can expect from playing out the rest of the city
    (`_play_out`): the cards of the city not yet played are all still to come, and a city is
    complete exactly when they are, so who holds them, and when they come, decides it.
    `hands` are the cards `seat` knows each seat holds."""
    board = state.board
    points = [float(score.total - score.portraits) for score in final_scores(state).scores]
    holder: dict[str, int] = {}
    for other, hand in enumerate(hands):
        for card in hand:
            holder[card] = other
    played = {card for pile in state.played for card in pile}
    if SETS:
        for builder, value in enumerate(_sets(state, hands, unseen, played, holder)):
            points[builder] += value
    else:
        for builder in range(board.builders):
            extra = unseen.portraits[builder] if builder < len(hands) else {}
            points[builder] += _portraits(state, builder, hands, extra)
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
        key = (
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
        expected = _MEMO.get(key)
        if expected is None:
            if len(_MEMO) >= MEMO_SIZE:
                _MEMO.clear()
            expected = _MEMO[key] = _play_out(*key)
        for builder, value in enumerate(expected):
            points[builder] += value
    return points


class _Draws(NamedTuple):
    """The fixed random numbers of the play-outs, per sample: one per card (when it comes),
    one per card (whether the Architetto builds it), one per floor of a city (the site a
    builder who is not `seat` picks). Being the same for every position, they make two
    positions differ by what differs in them: the cards both still have to come, come at
    the same time in both, and the floors are placed alike."""

    when: list[list[float]]
    architetto: list[list[float]]
    site: list[list[float]]


_DRAWS: dict[tuple[int, int], _Draws] = {}


def _draws(samples: int, cards: int) -> _Draws:
    key = (samples, cards)
    draws = _DRAWS.get(key)
    if draws is None:
        rng = random.Random(20_120_501)  # a fixed seed: a fixed integration rule, not luck
        draws = _DRAWS[key] = _Draws(
            [[rng.random() for _ in range(cards)] for _ in range(samples)],
            [[rng.random() for _ in range(cards)] for _ in range(samples)],
            [[rng.random() for _ in range(FLOORS)] for _ in range(samples)],
        )
    return draws


FLOORS = 64
"""The most floors a city may hold, for the draws of its sites."""


def _play_out(  # noqa: PLR0917 (a hot loop, kept flat)
    seat: int,
    builders: int,
    arch: int,
    capacity: int,
    high: int,
    low: int,
    first: tuple[int, ...],
    second: tuple[int, ...],
    cards: tuple[tuple[int, int, int], ...],
    sizes: tuple[int, ...],
    turns: int,
) -> tuple[float, ...]:
    """Each builder's expected tokens of one city, averaged over `SAMPLES` play-outs of its
    remaining `cards` (index, crests, holder: -1 where `seat` does not know who holds it)
    onto its towers `first` and `second`. A card in a seat's hand comes at one of that
    seat's next turns (as many as it holds cards, each as likely); any other card at any of
    the `turns` left, played by the seat whose turn that is (or by the Architetto, as
    likely as any builder). `seat` puts each floor where it holds the most after it (each
    tower it would hold counting its token by which would be the taller), the Architetto by
    R21, anyone else on either site as likely; the last floor fills an empty site (R12);
    then the towers are scored (R13)."""
    seats = len(sizes)
    draws = _draws(SAMPLES, 1 + max(index for index, _, _ in cards))
    start_count = ([0] * builders, [0] * builders)
    start_top = ([-1] * builders, [-1] * builders)
    for site, tower in enumerate((first, second)):
        for height, builder in enumerate(tower):
            start_count[site][builder] += 1
            start_top[site][builder] = height
    # What `seat` needs to know of a site: its floors there, the most any other has, and
    # the highest floor among the others who have that most (R13's tie).
    start_mine = [start_count[site][seat] for site in (0, 1)]
    start_mine_top = [start_top[site][seat] for site in (0, 1)]
    start_most = [0, 0]
    start_most_top = [-1, -1]
    for site in (0, 1):
        for builder in range(builders):
            if builder != seat:
                floors_of = start_count[site][builder]
                if floors_of > start_most[site] or (
                    floors_of == start_most[site]
                    and start_top[site][builder] > start_most_top[site]
                ):
                    start_most[site] = floors_of
                    start_most_top[site] = start_top[site][builder]
    mover = max(turns, 1)
    offsets = [(holder - seat - 1) % seats for holder in range(seats)]
    totals = [0.0] * builders
    for sample in range(SAMPLES):
        when = draws.when[sample]
        architetto = draws.architetto[sample]
        sites = draws.site[sample]
        timed: list[tuple[float, int, int]] = []
        taken: list[tuple[int, int]] = []
        for index, crests, holder in cards:
            if holder >= 0:
                hand = sizes[holder] or 1
                slot = int(when[index] * hand)
                while (holder, slot) in taken:
                    slot = (slot + 1) % hand
                taken.append((holder, slot))
                timed.append((offsets[holder] + seats * slot + 0.5, crests, holder))
            else:
                moment = when[index] * mover
                if arch >= 0 and architetto[index] * builders < 1:
                    timed.append((moment, crests, arch))
                else:
                    timed.append((moment, crests, (seat + 1 + int(moment)) % seats))
        timed.sort()
        count = (start_count[0][:], start_count[1][:])
        top = (start_top[0][:], start_top[1][:])
        mine = start_mine[:]
        mine_top = start_mine_top[:]
        most = start_most[:]
        most_top = start_most_top[:]
        size = [len(first), len(second)]
        floors = size[0] + size[1]
        for _moment, crests, builder in timed:
            for _floor in range(crests):
                if floors >= capacity:
                    break
                if floors + 1 == capacity and not (size[0] and size[1]):
                    site = 0 if not size[0] else 1  # R12
                elif builder == seat:
                    held = [
                        mine[s] > most[s]
                        or (mine[s] and mine[s] == most[s] and mine_top[s] > most_top[s])
                        for s in (0, 1)
                    ]
                    value = [0, 0]
                    for s in (0, 1):
                        here, there = size[s] + 1, size[1 - s]
                        if mine[s] + 1 >= most[s]:
                            value[s] += high if here > there else low
                        if held[1 - s]:
                            value[s] += high if there > here else low
                    site = 0 if value[0] >= value[1] else 1
                elif builder == arch:
                    site = _architetto_site(count, size, arch, sites[floors])
                else:
                    site = 0 if sites[floors] < 0.5 else 1
                height = size[site]
                if builder == seat:
                    mine[site] += 1
                    mine_top[site] = height
                else:
                    floors_of = count[site][builder] + 1
                    if floors_of >= most[site]:
                        most[site] = floors_of
                        most_top[site] = height
                count[site][builder] += 1
                top[site][builder] = height
                size[site] = height + 1
                floors += 1
        if floors < capacity:  # R41: never scored
            continue
        taller = 0 if size[0] > size[1] else 1
        totals[_holder(count[taller], top[taller])] += high
        totals[_holder(count[1 - taller], top[1 - taller])] += low
    return tuple(total / SAMPLES for total in totals)


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
    rate = FUTURE * takes / pool if pool else 0.0
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
    `mean` gives."""
    if mean <= 0.0:
        return float(count // size)
    key = (count, round(mean, 2), size)
    known = _SETS_MEMO.get(key)
    if known is not None:
        return known
    chance = math.exp(-mean)
    total = cumulative = 0.0
    for more in range(16):
        total += chance * ((count + more) // size)
        cumulative += chance
        chance *= mean / (more + 1)
    total += (1.0 - cumulative) * ((count + 16) // size)
    _SETS_MEMO[key] = total
    return total


_SETS_MEMO: dict[tuple[int, float, int], float] = {}


def _holder(count: list[int], top: list[int]) -> int:
    """R13: who holds a tower: the most floors, then the highest floor."""
    best = 0
    for builder in range(1, len(count)):
        if (count[builder], top[builder]) > (count[best], top[best]):
            best = builder
    return best


def _would_hold(count: list[int], builder: int) -> bool:
    """Whether `builder` holds a tower once its floor is put on top (R21c)."""
    mine = count[builder] + 1
    return all(c <= mine for other, c in enumerate(count) if other != builder)


def _architetto_site(
    count: tuple[list[int], list[int]], size: list[int], arch: int, draw: float
) -> int:
    """R21: where the Architetto builds (R21b, the seat's choice, as either site)."""
    if size[0] == size[1]:
        return 0 if draw < 0.5 else 1
    holds = (_would_hold(count[0], arch), _would_hold(count[1], arch))
    if holds[0] and holds[1]:
        return 0 if size[0] > size[1] else 1
    if holds[0] != holds[1]:
        return 0 if holds[0] else 1
    return 0 if size[0] < size[1] else 1
