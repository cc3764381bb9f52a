"""Every notification passes the one redaction gate (R42): over 200 generated games of every
kind, each document that an append calls for, its e-mail and its push message, tells its
recipient no card it could not see then (another hand, the draw pile, the Architetto's
hidden cards), no salt of a hidden event and not the seed, while the game is on; and a turn
is announced once, to its seat only. A push message (a phone's lock screen shows it) names
no card at all, and fits what every push service takes."""

from __future__ import annotations

import random
import re

import msgspec
import pytest

from domain.events import Event, encoder
from domain.evolve import evolve
from domain.narrate import seat_names
from domain.state import State
from domain.view import view, visible
from outbound.web_push import MAX_PLAINTEXT
from projections.mail import render
from projections.notices import Notice, encode, notice, notices_for
from projections.push_messages import message_of
from server.cli.simulation import random_game
from server.config.card_data import load_game_data

KINDS = [
    ("towers", 2, ()), ("towers", 3, ()), ("towers", 4, ("trade_routes",)),
    ("towers", 5, ("delegates",)), ("classic", 2, ()), ("classic", 4, ()),
    ("towers", 2, ("trade_routes", "delegates")), ("classic", 5, ()),
]  # fmt: skip
CARD = re.compile(rb'"([A-Z]{3}-[0-9]+)"')
HEX = re.compile(rb"[0-9a-f]{32,}")
CARD_IN_WORDS = re.compile(rb"\b([A-Z]{3}-[0-9]+)\b")


def _secrets_of(log: list[Event], version: int, seat: int | None) -> tuple[set[bytes], set[bytes]]:
    """The card ids and long hex strings (salts, the seed) of the events `seat` could not see
    at `version`, less those of the events it could."""
    hidden_cards: set[bytes] = set()
    hidden_hex: set[bytes] = set()
    seen_cards: set[bytes] = set()
    seen_hex: set[bytes] = set()
    for event in log[:version]:
        text = encoder.encode(event)
        cards, hexes = set(CARD.findall(text)), set(HEX.findall(text))
        if visible(event, seat, False):
            seen_cards |= cards
            seen_hex |= hexes
        else:
            hidden_cards |= cards
            hidden_hex |= hexes
    return hidden_cards - seen_cards, hidden_hex - seen_hex


@pytest.mark.parametrize("batch", range(8))
def test_no_notification_tells_its_recipient_a_secret_over_200_games(batch: int) -> None:
    data = load_game_data()
    rng = random.Random(9000 + batch)
    for number in range(25):
        edition, seats, modules = KINDS[(batch + number) % len(KINDS)]
        _, log = random_game(rng, data, seats, edition, modules)
        _check_game(log, rng)


def _check_game(log: list[Event], rng: random.Random) -> None:
    """Each event taken as an append of its own, made by the seat that was deciding."""
    state = State()
    last_decided: dict[int, int] = {}
    for version, event in enumerate(log, 1):
        before = state.pending.seat if state.pending is not None else None
        state = evolve(state, event)
        mover = "" if before is None else state.players[state.seat_players[before]]
        if before is not None:
            last_decided[before] = version
        pending = state.pending.seat if state.pending is not None else None
        notices = notices_for(state, [event], mover, set(state.players))
        turns = [n for n in notices if n.kind == "turn.started"]
        if pending is None or pending == before:
            assert not turns, "no announcement after one's own move"
        else:
            assert [n.seat for n in turns] == [pending], "the seat whose decision it is, once"
        for item in notices:
            if state.finished or rng.random() > 0.3:
                continue  # after the end everything is public (R42): nothing to check
            _check_document(state, log, version, item, last_decided.get(item.seat or 0, 0))


def _check_document(state: State, log: list[Event], version: int, item: Notice, since: int) -> None:
    document = notice(
        state, log[since:version], item, game_id="g", head_hash="0" * 64, since_version=since,
        play_url="https://x/games/g",
    )  # fmt: skip
    text = encode(document)
    hidden_cards, hidden_hex = _secrets_of(log, version, item.seat)
    shown_cards = set(CARD.findall(text)) - set(
        CARD.findall(msgspec.json.encode(view(state, item.seat)))
    )
    leaked = shown_cards & hidden_cards
    assert not leaked, f"{item.kind} at {version} told seat {item.seat} {sorted(leaked)}"
    assert not set(HEX.findall(text)) & hidden_hex, "no salt and no seed"
    mail = render(document, "https://x/api/email/unsubscribe?token=t")
    words = "\n".join(mail).encode()  # the e-mail's subject, text and HTML
    in_mail = set(CARD_IN_WORDS.findall(words)) - set(
        CARD.findall(msgspec.json.encode(view(state, item.seat)))
    )
    assert not in_mail & hidden_cards, f"the e-mail of {item.kind} at {version}"
    assert not set(HEX.findall(words)) & hidden_hex, "no salt and no seed by e-mail"
    pushed = msgspec.json.encode(message_of(document, seat_names(state)))
    assert not CARD_IN_WORDS.findall(pushed), f"the push of {item.kind} at {version}: {pushed!r}"
    assert not HEX.findall(pushed) and len(pushed) <= MAX_PLAINTEXT
