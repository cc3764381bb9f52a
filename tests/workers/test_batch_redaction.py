"""The notice of a game's start, built as the server builds it: from the whole append that
took the last place (the seat joined, the seats drawn, every hand dealt, the draw pile
stacked, the face-up cards, the first step), for every seat at once. Each recipient's copy,
and its e-mail, holds that recipient's hand and nothing of another seat's: no card another
seat holds, no salt of another hand, not the draw pile, the Architetto's hidden cards or the
seed; and nothing derived from them either: dealt another way that the recipient could not
tell apart (the others' hands and the hidden pile shuffled among themselves, other salts,
another seed), the game gives every recipient the very same document.

(tests/workers/test_notice_redaction.py takes each event as an append of its own, so no
notice there ever spans the deal: this takes the appends as they are.)"""

from __future__ import annotations

import random
import re
from typing import Any

import msgspec
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from domain.events import (
    ArchitettoCardsSetAside,
    DrawPileStacked,
    Event,
    FaceUpDealt,
    HandDealt,
    SeedSealed,
    encoder,
)
from domain.evolve import fold
from domain.gamedata import GameData
from domain.setup import create_game, join_game
from domain.state import State
from domain.view import visible
from projections.mail import render
from projections.notices import Notice, NoticeDocument, encode, notice, notices_for
from server.config.card_data import load_game_data

KINDS = [
    ("towers", 2, ()), ("towers", 3, ()), ("towers", 4, ("trade_routes",)),
    ("towers", 5, ("delegates",)), ("classic", 2, ()), ("classic", 4, ()),
    ("towers", 2, ("trade_routes", "delegates")), ("classic", 5, ()),
]  # fmt: skip
CARD = re.compile(rb"\b([A-Z]{3}-[0-9]+)\b")
HEX = re.compile(rb"[0-9a-f]{32,}")
NAMES = ("Ada", "Bea", "Cy", "Dee", "Eli")
DATA = load_game_data()


def _appends(
    data: GameData, edition: str, seats: int, modules: tuple[str, ...], seed: bytes
) -> list[list[Event]]:
    """The appends of a game up to its start, as the server makes them: the creator's, then
    one join per seat, the last of which starts the game."""
    create = create_game(
        edition=edition, seats=seats, modules=modules, game_data=data, server_seed=seed,
        player="p0", entropy="e0", name=NAMES[0],
    )  # fmt: skip
    appends, state = [create], fold(create)
    for n in range(1, seats):
        joined = join_game(state, f"p{n}", f"e{n}", NAMES[n])
        appends.append(joined)
        state = fold(joined, state)
    return appends


def _documents(appends: list[list[Event]]) -> dict[int, tuple[NoticeDocument, bytes, bytes]]:
    """The `game.started` document of every seat, as the follow-up of the last append makes
    it (at the version that append brought the game to; everything since the recipient last
    decided: the whole game so far), its JSON and its e-mail's words."""
    log = [event for append in appends for event in append]
    state = fold(log)
    players = {f"p{n}" for n in range(state.board.seats)}
    told = notices_for(state, appends[-1], f"p{len(appends) - 1}", players)
    started = [n for n in told if n.kind == "game.started"]
    assert sorted(n.seat for n in started if n.seat is not None) == list(range(len(appends)))
    return {n.seat: _document(state, log, n) for n in started if n.seat is not None}


def _document(state: State, log: list[Event], item: Notice) -> tuple[NoticeDocument, bytes, bytes]:
    document = notice(
        state, log[: state.version], item, game_id="g1", head_hash="0" * 64, since_version=0,
        play_url="https://x/games/g1",
    )  # fmt: skip
    mail = render(document, "https://x/api/email/unsubscribe?token=t")
    return document, _without_catalogue(encode(document)), "\n".join(mail).encode()


def _without_catalogue(text: bytes) -> bytes:
    """JSON less the card data its `game_created` carries (every card of the game, public):
    the card ids left are those it says something of."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "game_data"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return msgspec.json.encode(strip(msgspec.json.decode(text)))


def _said(events: list[Event]) -> tuple[set[bytes], set[bytes]]:
    """The card ids and long hex strings (salts, the seed) these events hold."""
    cards: set[bytes] = set()
    hexes: set[bytes] = set()
    for event in events:
        text = _without_catalogue(encoder.encode(event))
        cards |= set(CARD.findall(text))
        hexes |= set(HEX.findall(text))
    return cards, hexes


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(KINDS), seed=st.binary(min_size=32, max_size=32))
def test_each_seat_told_of_the_start_holds_its_own_hand_and_no_other_hidden_card(
    kind: tuple[str, int, tuple[str, ...]], seed: bytes
) -> None:
    edition, seats, modules = kind
    appends = _appends(DATA, edition, seats, modules, seed)
    log = [event for append in appends for event in append]
    hands = {e.seat: e for e in log if isinstance(e, HandDealt)}
    assert sorted(hands) == list(range(seats)), "the last join deals every hand"
    for seat, (document, text, words) in _documents(appends).items():
        own = hands[seat]
        assert document.seat == seat and document.type == "game.started"
        dealt = [e.event for e in document.events if isinstance(e.event, HandDealt)]
        assert dealt == [own], f"seat {seat} is told its own hand, and only it"
        for card in own.cards:
            assert card.encode() in text and card.encode() in words, f"seat {seat}: {card}"
        for other, theirs in hands.items():
            if other == seat:
                continue
            for body, where in ((text, "webhook"), (words, "e-mail")):
                shown = {c.decode() for c in CARD.findall(body)} & set(theirs.cards)
                assert not shown, f"the {where} to seat {seat} names seat {other}'s {shown}"
                assert theirs.salt.encode() not in body, f"seat {other}'s salt, by {where}"
        # Every card and every hash it carries comes from what the seat may see (the chain's
        # hash aside, public): nothing of the draw pile, the hidden cards, the seed or a salt.
        seen_cards, seen_hexes = _said([e for e in log if visible(e, seat, False)])
        for body in (text, words):
            assert set(CARD.findall(body)) <= seen_cards, sorted(set(CARD.findall(body)))
            assert set(HEX.findall(body)) <= seen_hexes | {b"0" * 64}, "no hidden hash"


def _dealt_otherwise(log: list[Event], seat: int, rng: random.Random) -> list[Event]:
    """The same game as `seat` sees it, dealt otherwise: the star cards it cannot see (the
    other hands', those in the draw pile below the face-up cards) shuffled among their
    places, the other cards below the face-up ones among theirs, every other salt and the
    seed changed."""
    state = fold(log)
    board = state.board
    hands = [e for e in log if isinstance(e, HandDealt) and e.seat != seat]
    (pile,) = [e for e in log if isinstance(e, DrawPileStacked)]
    (face_up,) = [e for e in log if isinstance(e, FaceUpDealt)]
    below = list(pile.cards[len(face_up.cards) :])
    places = [(n, k) for n, hand in enumerate(hands) for k in range(len(hand.cards))]
    stars = [hands[n].cards[k] for n, k in places] + [c for c in below if board.cards[c].star]
    plain = [c for c in below if not board.cards[c].star]
    rng.shuffle(stars)
    rng.shuffle(plain)
    new_hands = [list(hand.cards) for hand in hands]
    for n, k in places:
        new_hands[n][k] = stars.pop()
    new_below = [stars.pop() if board.cards[c].star else plain.pop() for c in below]
    new_pile = (*face_up.cards, *new_below)

    def salt() -> str:
        return rng.randbytes(32).hex()

    changed = {id(hand): HandDealt(hand.seat, tuple(new_hands[n]), salt())
               for n, hand in enumerate(hands)}  # fmt: skip
    otherwise: list[Event] = []
    for event in log:
        if id(event) in changed:
            otherwise.append(changed[id(event)])
        elif isinstance(event, DrawPileStacked):
            otherwise.append(DrawPileStacked(new_pile, salt()))
        elif isinstance(event, ArchitettoCardsSetAside):
            hidden = new_pile[len(face_up.cards) : len(face_up.cards) + len(event.cards)]
            otherwise.append(ArchitettoCardsSetAside(hidden, salt()))
        elif isinstance(event, SeedSealed):
            otherwise.append(SeedSealed(rng.randbytes(32).hex()))
        else:
            otherwise.append(event)
    return otherwise


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(KINDS), seed=st.binary(min_size=32, max_size=32), other=st.randoms())
def test_a_start_dealt_otherwise_unseen_by_a_seat_tells_that_seat_the_very_same(
    kind: tuple[str, int, tuple[str, ...]], seed: bytes, other: random.Random
) -> None:
    edition, seats, modules = kind
    appends = _appends(DATA, edition, seats, modules, seed)
    log = [event for append in appends for event in append]
    told = _documents(appends)
    for seat in range(seats):
        otherwise = _dealt_otherwise(log, seat, other)
        assert otherwise != log
        lengths = [len(append) for append in appends]
        split = [otherwise[sum(lengths[:n]) : sum(lengths[: n + 1])] for n in range(seats)]
        _first, text, words = told[seat]
        _again, text_again, words_again = _documents(split)[seat]
        assert msgspec.json.decode(text_again) == msgspec.json.decode(text), (
            f"seat {seat}'s notice tells something of what it cannot see"
        )
        assert words_again == words, f"seat {seat}'s e-mail tells something it cannot see"
