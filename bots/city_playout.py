"""One city's remaining cards played out to its end, many times: the tokens each builder can
expect from it.

The greedy bot's outlook (`bots.outlook`) reads every unscored city this way. A city is
complete exactly when all its cards are played (their crests make its floor count, R12), so
the cards of it still to come, who holds them and when they come decide its towers; a
play-out of those cards alone is exact about that, where a static guess of a tower's lead is
not. The play-outs use a fixed table of integration points (`_draws`), not luck: the same
position always reads the same, and two positions differ by what differs in them.
"""

from __future__ import annotations

import functools
import random
from typing import NamedTuple

SAMPLES = 32
"""How many times a city is played out."""
MEMO_SIZE = 20_000
"""How many cities' play-outs are remembered (about 0.5 kB each): one decision's candidate
positions share most of their cities, and so do one seat's turns."""
CARDS = 64
"""The cards of a board, at least, for the draws of their times."""
CRESTS = 2
"""The most crests a card has, for the draws of its floors' sites (more share them)."""


class _Draws(NamedTuple):
    """The fixed integration points of the play-outs, per sample: one per card (when it
    comes), one per card (whether the Architetto builds it), one per crest of a card (the
    site of that floor, where a builder other than the evaluating seat picks it). Being the
    same for every position, they make two positions differ by what differs in them: the
    cards both still have to come, come at the same time in both, and their floors go
    alike."""

    when: list[list[float]]
    architetto: list[list[float]]
    site: list[list[float]]


@functools.cache
def _draws(samples: int, cards: int) -> _Draws:
    """The points for `samples` play-outs of cards numbered below `cards`, stratified: each
    column (a card's time, a floor's site) takes each of `samples` equal slices of 0..1 once,
    in an order of its own (a Latin hypercube), so that a few samples cover every case
    evenly. The orders come from a generator with a fixed seed: a constant table, computed
    once, that no caller's randomness touches (the bots' own come from the generator passed
    to `choose`)."""
    table_rng = random.Random(20_120_501)

    def columns(count: int) -> list[list[float]]:
        table = [[0.0] * count for _ in range(samples)]
        for column in range(count):
            order = list(range(samples))
            table_rng.shuffle(order)
            for sample, stratum in enumerate(order):
                table[sample][column] = (stratum + table_rng.random()) / samples
        return table

    return _Draws(columns(cards), columns(cards), columns(CRESTS * cards))


class _Site:
    """One tower during a play-out: each builder's floors, its height, what the evaluating
    seat has there (floors, its highest floor), and the most floors of any other builder,
    the highest floor among those who have that most, and who that is (R13: that builder
    holds the tower unless the evaluating seat does)."""

    __slots__ = ("count", "mine", "mine_top", "most", "most_top", "size", "who")

    def __init__(self, tower: tuple[int, ...], builders: int, seat: int) -> None:
        self.count = [0] * builders
        top = [-1] * builders
        for height, builder in enumerate(tower):
            self.count[builder] += 1
            top[builder] = height
        self.size = len(tower)
        self.mine, self.mine_top = self.count[seat], top[seat]
        self.most, self.most_top, self.who = 0, -1, -1
        for builder in range(builders):
            floors = self.count[builder]
            if builder != seat and floors and (floors, top[builder]) > (self.most, self.most_top):
                self.most, self.most_top, self.who = floors, top[builder], builder

    def copy(self) -> _Site:
        other = _Site.__new__(_Site)
        other.count = self.count[:]
        other.size, other.mine, other.mine_top = self.size, self.mine, self.mine_top
        other.most, other.most_top, other.who = self.most, self.most_top, self.who
        return other

    def held(self) -> bool:
        """Whether the evaluating seat holds this tower (R13: most floors, then the top)."""
        return self.mine > self.most or bool(
            self.mine and self.mine == self.most and self.mine_top > self.most_top
        )

    def build(self, builder: int, seat: int) -> None:
        """A floor of `builder` on top."""
        self.count[builder] += 1
        if builder == seat:
            self.mine, self.mine_top = self.mine + 1, self.size
        elif self.count[builder] >= self.most:
            self.most, self.most_top, self.who = self.count[builder], self.size, builder
        self.size += 1


@functools.lru_cache(maxsize=MEMO_SIZE)
def play_out(  # noqa: PLR0917 (the whole input is the memo's key)
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
    """Each builder's expected tokens of one city (`high` and `low` its tokens, trade bonus
    included; `arch` the Architetto's builder number, or negative without it), averaged over
    `SAMPLES` play-outs of its remaining `cards` (index, crests, holder: -1 where `seat` does
    not know who holds it) onto its towers `first` and `second`. A card in a seat's hand
    (`sizes`: the hands' sizes) comes at one of that seat's next turns, each as likely; any
    other card at any of the `turns` left, played by the seat whose turn that is (or by the
    Architetto, as likely as any builder). `seat` puts each floor where it holds the most
    after it (each tower it would hold counting its token by which would be the taller), the
    Architetto by R21, anyone else on either site as likely; the last floor fills an empty
    site (R12); then the towers are scored (R13)."""
    draws = _draws(SAMPLES, max(CARDS, 1 + max(index for index, _, _ in cards)))
    start = (_Site(first, builders, seat), _Site(second, builders, seat))
    schedule = _Schedule(seat, builders, arch, cards, sizes, turns)
    totals = [0.0] * builders
    for sample in range(SAMPLES):
        timed = schedule.timed(draws.when[sample], draws.architetto[sample])
        towers = (start[0].copy(), start[1].copy())
        floors = _build(
            towers, timed, draws.site[sample], seat=seat, arch=arch, capacity=capacity,
            high=high, low=low,
        )  # fmt: skip
        if floors < capacity:  # R41: never scored
            continue
        holders = [seat if tower.held() else tower.who for tower in towers]
        taller = 0 if towers[0].size > towers[1].size else 1
        totals[holders[taller]] += high
        totals[holders[1 - taller]] += low
    return tuple(total / SAMPLES for total in totals)


class _Schedule:
    """When each remaining card of a city comes in a play-out, and who plays it: a card in a
    known hand at one of its holder's next turns (two of one hand at two of them), any other
    at any of the turns left, by the seat whose turn that is or by the Architetto."""

    __slots__ = (
        "arch",
        "builders",
        "cards",
        "later",
        "offsets",
        "seat",
        "seats",
        "shared",
        "sizes",
    )

    def __init__(  # noqa: PLR0917 (play_out's own inputs)
        self,
        seat: int,
        builders: int,
        arch: int,
        cards: tuple[tuple[int, int, int], ...],
        sizes: tuple[int, ...],
        turns: int,
    ) -> None:
        self.seat, self.builders, self.arch = seat, builders, arch
        self.cards, self.sizes = cards, sizes
        self.seats = len(sizes)
        self.later = max(turns, 1)
        self.offsets = [(holder - seat - 1) % self.seats for holder in range(self.seats)]
        known = [holder for _, _, holder in cards if holder >= 0]
        self.shared = len(set(known)) < len(known)

    def timed(
        self, when: list[float], architetto: list[float]
    ) -> list[tuple[float, int, int, int]]:
        """(moment, index, crests, builder) of each card, in the order they come, by one
        sample's draws of the cards' times and of the Architetto's cards."""
        seat, seats, arch, builders = self.seat, self.seats, self.arch, self.builders
        sizes, offsets, shared, later = self.sizes, self.offsets, self.shared, self.later
        timed: list[tuple[float, int, int, int]] = []
        taken: set[tuple[int, int]] = set()
        for index, crests, holder in self.cards:
            if holder >= 0:
                hand = sizes[holder] or 1
                slot = int(when[index] * hand)
                if shared:  # two cards of one hand come at two of its turns
                    while (holder, slot) in taken:
                        slot = (slot + 1) % hand
                    taken.add((holder, slot))
                timed.append((offsets[holder] + seats * slot + 0.5, index, crests, holder))
            else:
                moment = when[index] * later
                if arch >= 0 and architetto[index] * builders < 1:
                    timed.append((moment, index, crests, arch))
                else:
                    timed.append((moment, index, crests, (seat + 1 + int(moment)) % seats))
        timed.sort()
        return timed


def _build(
    towers: tuple[_Site, _Site],
    timed: list[tuple[float, int, int, int]],
    sites: list[float],
    *,
    seat: int,
    arch: int,
    capacity: int,
    high: int,
    low: int,
) -> int:
    """The floors of the `timed` cards built on `towers` until the city is full: the
    evaluating seat's where it holds the most, the Architetto's by R21, anyone else's on
    either site by the sample's draw, the last one on an empty site (R12); the city's floors
    in the end."""
    floors = towers[0].size + towers[1].size
    for _moment, index, crests, builder in timed:
        for floor in range(crests):
            if floors >= capacity:
                break
            draw = sites[CRESTS * index + floor % CRESTS]
            if floors + 1 == capacity and not (towers[0].size and towers[1].size):
                site = 0 if not towers[0].size else 1  # R12
            elif builder == seat:
                site = _best_site(towers, high, low)
            elif builder == arch:
                site = _architetto_site(towers, arch, draw)
            else:
                site = 0 if draw < 0.5 else 1
            towers[site].build(builder, seat)
            floors += 1
    return floors


def _best_site(towers: tuple[_Site, _Site], high: int, low: int) -> int:
    """Where the evaluating seat builds: where it would hold the most after the floor, each
    tower it would hold counting its token by which would then be the taller."""
    values = []
    for site in (0, 1):
        built, other = towers[site], towers[1 - site]
        value = 0
        if built.mine + 1 >= built.most:
            value += high if built.size + 1 > other.size else low
        if other.held():
            value += high if other.size > built.size + 1 else low
        values.append(value)
    return 0 if values[0] >= values[1] else 1


def _would_hold(count: list[int], builder: int) -> bool:
    """Whether `builder` holds a tower once its floor is put on top (R21c)."""
    mine = count[builder] + 1
    return all(c <= mine for other, c in enumerate(count) if other != builder)


def _architetto_site(towers: tuple[_Site, _Site], arch: int, draw: float) -> int:
    """R21: where the Architetto builds (R21b, the seat's choice, as either site)."""
    first, second = towers
    if first.size == second.size:
        return 0 if draw < 0.5 else 1
    holds = (_would_hold(first.count, arch), _would_hold(second.count, arch))
    if holds[0] and holds[1]:
        return 0 if first.size > second.size else 1
    if holds[0] != holds[1]:
        return 0 if holds[0] else 1
    return 0 if first.size < second.size else 1
