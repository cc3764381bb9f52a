"""What a seat believes the game is: a whole `State` rebuilt from what it has seen, with the
cards it has not seen dealt out again at random (a determinization), as often as asked.

Everything is public but three zones (R42): the cards still in other seats' hands that they
were dealt (never face up), the order of the draw pile, and the Architetto's hidden cards.
The log a seat sees has a gap where each secret event was; the layout of the deal is public
(docs/shuffle.md), so the gaps are filled with events that agree with everything seen: each
other seat was dealt the star cards it has played without having taken them, and star cards
nobody has seen for the rest; the pile starts with the face-up deal, the hidden cards, and the
cards revealed since, in order. Folding that log once gives a state whose secret zones hold one
guess; `determinize` deals the unseen cards again into the same zones, of the same sizes,
with a seeded generator: hands get unseen star cards, the hidden cards and the draw pile the
rest. No card the seat has seen is ever dealt, and every card is in exactly one place.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from msgspec.structs import replace

from bots.evaluate import Unseen
from bots.seen import Seen
from domain.board import HAND_SIZE, Board, build_board
from domain.events import (
    ArchitettoCardsSetAside,
    ArchitettoRevealed,
    CardPlayed,
    CardRevealed,
    CardTaken,
    DrawPileStacked,
    Event,
    FaceUpDealt,
    GameCreated,
    GameStarted,
    HandDealt,
    SeedSealed,
)
from domain.evolve import fold
from domain.setup import ARCHITETTO_HIDDEN
from domain.state import State


class Inconsistent(ValueError):
    """The seen events and the view do not describe one game (a bug upstream, never play)."""


class Belief:
    """A seat's knowledge of one moment of a game, ready to be determinized."""

    def __init__(self, seen: Seen) -> None:
        self.seat = seen.seat
        events = dict(seen.events)
        created = events.get(1)
        if not isinstance(created, GameCreated):
            raise Inconsistent("the seen events do not begin with the game's creation")
        board = build_board(created)
        started = next((v for v, e in seen.events if isinstance(e, GameStarted)), None)
        if started is None:
            raise Inconsistent("a bot plays a game that has started")
        trace = _Trace(seen, board)
        unknown = [card for card in board.card_order if card not in trace.cards]
        dealt, self._slots = _deal_others(board, self.seat, trace, unknown)
        pile, hidden = _piles(board, seen, trace, unknown, dealt)
        log: list[Event] = []
        for version in range(1, seen.view.version + 1):
            known = events.get(version)
            log.append(
                _gap(version, started, board.seats, self.seat, dealt, pile, hidden)
                if known is None
                else known
            )
        self.state = fold(log)
        self.board = board
        self._unknown_stars = [card for card in unknown if board.cards[card].star]
        self._unknown_others = [card for card in unknown if not board.cards[card].star]
        self._known_in_hand = {
            other: tuple(c for c in self.state.hands[other] if c in trace.cards)
            for other in self._slots
        }
        self._check(seen)

    def _check(self, seen: Seen) -> None:
        for other, player in enumerate(seen.view.players):
            if len(self.state.hands[other]) != player.hand_size:
                raise Inconsistent(f"seat {other} holds {player.hand_size} cards, not so here")
        architetto = seen.view.architetto
        if architetto is not None and len(self.state.hidden) != architetto.hidden_count:
            raise Inconsistent("the Architetto's hidden cards are not as many as seen")

    def unseen(self) -> Unseen:
        """The averages of the cards each other seat holds unseen: its unseen cards are
        unseen star cards (R6), each as likely."""
        board = self.board
        pool = self._unknown_stars
        crests: list[dict[int, float]] = [{} for _ in self.state.hands]
        portraits: list[dict[str, float]] = [{} for _ in self.state.hands]
        for other, slots in self._slots.items():
            if not pool or not slots:
                continue
            share = slots / len(pool)
            for card in pool:
                info = board.cards[card]
                crests[other][info.city] = crests[other].get(info.city, 0.0) + share * info.crests
                for noble in info.portraits:
                    portraits[other][noble] = portraits[other].get(noble, 0.0) + share
        return Unseen(crests, portraits)

    def known_hands(self) -> list[tuple[str, ...]]:
        """Each seat's hand as far as this seat knows it: its own whole, of the others the
        cards it has seen go in (taken face up and not played since)."""
        hands = list(self.state.hands)
        for other, known in self._known_in_hand.items():
            hands[other] = known
        return hands

    def determinize(self, rng: random.Random) -> State:
        """The state with every unseen card dealt again: the same public game, one guess of
        what the seat cannot see."""
        stars = list(self._unknown_stars)
        rng.shuffle(stars)
        hands = list(self.state.hands)
        start = 0
        for other, slots in self._slots.items():
            hands[other] = (*self._known_in_hand[other], *stars[start : start + slots])
            start += slots
        rest = stars[start:] + self._unknown_others
        rng.shuffle(rest)
        hidden = len(self.state.hidden)
        return replace(
            self.state,
            hands=tuple(hands),
            hidden=tuple(rest[:hidden]),
            draw=tuple(rest[hidden:]),
        )


class _Trace:
    """What the seen events say of the cards: the cards each builder played and each seat
    took, the face-up deal, the cards revealed from the draw pile and from the Architetto's
    hidden ones (in order), and every card whose place the seat knows."""

    __slots__ = ("cards", "face_up", "from_draw", "from_hidden", "played", "taken")

    def __init__(self, seen: Seen, board: Board) -> None:
        self.cards = set(seen.view.hand)
        self.played: list[set[str]] = [set() for _ in range(board.builders)]
        self.taken: list[set[str]] = [set() for _ in range(board.seats)]
        self.face_up: tuple[str, ...] = ()
        self.from_draw: list[str] = []
        self.from_hidden: list[str] = []
        for _version, event in seen.events:
            if isinstance(event, CardPlayed):
                self.played[event.seat].add(event.card)
            elif isinstance(event, CardTaken):
                self.taken[event.seat].add(event.card)
            elif isinstance(event, FaceUpDealt):
                self.face_up = event.cards
            elif isinstance(event, CardRevealed):
                self.from_draw.append(event.card)
            elif isinstance(event, ArchitettoRevealed):
                (self.from_draw if event.source == "draw" else self.from_hidden).append(event.card)
            elif isinstance(event, HandDealt):
                self.cards.update(event.cards)
            self.cards.update(_cards_of(event))


def _deal_others(
    board: Board, seat: int, trace: _Trace, unknown: list[str]
) -> tuple[dict[int, tuple[str, ...]], dict[int, int]]:
    """Each other seat's dealt hand: the cards it played without taking them, and guesses
    (unseen star cards, in order) for the rest; and how many of those guesses each holds."""
    stars = sorted(card for card in unknown if board.cards[card].star)
    dealt: dict[int, tuple[str, ...]] = {}
    slots: dict[int, int] = {}
    for other in range(board.seats):
        if other == seat:
            continue
        kept = sorted(trace.played[other] - trace.taken[other])
        free = HAND_SIZE - len(kept)
        if free < 0 or free > len(stars):
            raise Inconsistent(f"seat {other} played more cards than it was dealt")
        dealt[other], stars = (*kept, *stars[:free]), stars[free:]
        slots[other] = free
    return dealt, slots


def _piles(
    board: Board,
    seen: Seen,
    trace: _Trace,
    unknown: list[str],
    dealt: dict[int, tuple[str, ...]],
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The draw pile as stacked (the face-up deal, the hidden cards, the cards revealed
    since, then the unseen rest) and the Architetto's hidden cards, the guesses of the
    hands left out."""
    guessed_hands = {card for cards in dealt.values() for card in cards} - trace.cards
    rest = [card for card in unknown if card not in guessed_hands]
    hidden_left = ARCHITETTO_HIDDEN - len(trace.from_hidden) if board.architetto else 0
    hidden = (*trace.from_hidden, *rest[:hidden_left]) if board.architetto else ()
    tail = rest[hidden_left:]
    if len(tail) != seen.view.draw_count:
        raise Inconsistent(f"{len(tail)} unseen cards for a draw pile of {seen.view.draw_count}")
    return (*trace.face_up, *hidden, *trace.from_draw, *tail), hidden


def _cards_of(event: Event) -> tuple[str, ...]:
    """The cards a public event names (their places are known from then on)."""
    if isinstance(event, (CardPlayed, CardTaken, CardRevealed, ArchitettoRevealed)):
        return (event.card,)
    if isinstance(event, FaceUpDealt):
        return event.cards
    return ()


def _gap(  # noqa: PLR0917 (the parts of the deal a gap may be)
    version: int,
    started: int,
    seats: int,
    seat: int,
    dealt: dict[int, tuple[str, ...]],
    pile: Sequence[str],
    hidden: Sequence[str],
) -> Event:
    """The secret event at `version`, as the public layout of a log says it is there
    (docs/shuffle.md, "The deal"), filled with the guess."""
    if version == 2:
        return SeedSealed("00" * 32)
    offset = version - started
    if 1 <= offset <= seats and offset - 1 != seat:
        return HandDealt(offset - 1, dealt[offset - 1])
    if offset == seats + 1:
        return DrawPileStacked(tuple(pile))
    if offset == seats + 3:
        return ArchitettoCardsSetAside(tuple(hidden))
    raise Inconsistent(f"no secret event belongs at version {version}")
