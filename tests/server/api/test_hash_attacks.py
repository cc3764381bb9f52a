"""R42 through the side door: no secret can be found by trying candidates against anything a
caller is served (hashes, digests, the chain), for every kind of hidden event.

The chain hashes are public (players keep the head as a receipt, and the chain must stay
verifiable after the game): a caller's record carries the hash of every event it may see. When
hidden events sit between two visible ones, an attacker can try every text the hidden events
might have, chain them from the visible hash before, and compare with the visible hash after.
Each secret event therefore carries 256 bits of salt from the server seed (docs/shuffle.md);
these tests are the attack itself, made the way an attacker would make it:

- the candidates come only from what the caller was served: the card file (public), its own
  hand, the cards seen face up, played, revealed; the draw pile's known top (its face-up deal
  and every reveal, in order) with every order of what remains;
- each candidate is tried in both encodings an attacker could guess: the event with an empty
  salt, and the event without the field at all (the encoding before salts);
- every moment is attacked from the record (the chain) and from every other path (events,
  stream, replay, views at a version, boards, command answers), whose 64-hex strings are taken
  as digests to match; gaps with more candidates than a budget are attacked in the oracle test;
- the oracle: once the game is over, each hidden event's true cards are known; even with the
  true cards, no guessable salt reproduces the hash, while the true salt (from the revealed
  seed) does, which proves the attack itself is sound.

There is no private draw in this game (taking and refilling are public, R14, R16): the first
test pins the kinds of hidden events, so that a new one must be added here.
"""

from __future__ import annotations

import hashlib
import itertools
import math
import random
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

import msgspec
import pytest
from litestar import Litestar
from litestar.testing import TestClient

from domain.events import (
    ArchitettoCardsSetAside,
    DrawPileStacked,
    Event,
    HandDealt,
    SeedSealed,
    encoder,
    event_decoder,
)
from domain.view import visible
from store.chain import link
from tests.server.client import Api, Json, Player, Table
from tests.server.sse import asgi_stream

HIDDEN_KINDS = {"hand_dealt", "draw_pile_stacked", "architetto_cards_set_aside", "seed_sealed"}
BUDGET = 400_000
"""The most candidate texts one gap is tried with here (an attacker could try far more: the
oracle test below covers what the budget leaves out)."""

_HEX64 = re.compile(rb"(?<![0-9a-f])[0-9a-f]{64}(?![0-9a-f])")

GAMES = [
    (2, "towers", ()),  # the Architetto's hidden cards
    (3, "towers", ("trade_routes",)),
    (2, "classic", ()),
    (4, "towers", ("delegates",)),
]


def encodings(event: Event) -> list[bytes]:
    """The texts an attacker would try for a candidate event: with an empty salt, and in the
    shape without salts."""
    text = encoder.encode(event)
    return [text, text.replace(b',"salt":""', b"")]


@dataclass
class Knowledge:
    """What one caller knows at one moment, from what it was served."""

    seat: int | None
    seats: int
    stars: list[str]
    cards: list[str]
    own_hand: tuple[str, ...] = ()
    pile_top: list[str] = field(default_factory=list)
    seen: set[str] = field(default_factory=set)
    draw_count: int = 0
    architetto: bool = False
    face_up_count: int = 0

    def unknown(self) -> list[str]:
        return [card for card in self.cards if card not in self.seen]

    def hands(self, seat: int) -> Iterator[Event]:
        """R6: three star cards, never one seen face up (those were in the pile)."""
        stars = [card for card in self.stars if card not in self.seen]
        for cards in itertools.permutations(stars, 3):
            yield HandDealt(seat, cards)

    def hidden(self) -> Iterator[Event]:
        for cards in itertools.permutations(self.unknown(), 3):
            yield ArchitettoCardsSetAside(cards)

    def piles(self) -> Iterator[Event]:
        """The pile: its known top (face-up deal, then every reveal in order, the hidden
        cards in their place), then every order of the unknown cards it must still hold."""
        cities = self.face_up_count
        for tail in itertools.permutations(self.unknown(), self.draw_count + 3 * self.architetto):
            top = list(self.pile_top)
            if self.architetto:  # the hidden three come right after the face-up deal
                top[cities:cities] = tail[:3]
                yield DrawPileStacked((*top, *tail[3 * self.architetto :]))

    def count(self, kind: str) -> int:
        """How many candidates `kind` has (the gaps too large to try are left out)."""
        unknown = len(self.unknown())
        stars = len([card for card in self.stars if card not in self.seen])
        sizes = {
            "hand_dealt": math.perm(stars, 3),
            "architetto_cards_set_aside": math.perm(unknown, 3),
            "draw_pile_stacked": math.perm(unknown, self.draw_count + 3 * self.architetto),
            "seed_sealed": len(WEAK_SEEDS),
        }
        return sizes[kind]


WEAK_SEEDS = [
    bytes(32),
    b"\xff" * 32,
    *(random.Random(i).randbytes(32) for i in range(300)),
    *(hashlib.sha256(str(i).encode()).digest() for i in range(300)),
]
"""Seeds an attacker would try first: constants, seeded generators, hashes of counters."""


def knowledge(record: Json, board: Json, seat: int | None) -> Knowledge:
    """What the caller learns from its record and board: the public log and its own hand."""
    data = record["game_data"]
    in_play = {
        city["name"]
        for city in data["cities"]
        if record["seats"] == 5 or not city["five_player_only"]
    }
    cards = [card["id"] for card in data["cards"] if card["city"] in in_play]
    stars = [card["id"] for card in data["cards"] if card["city"] in in_play and card["star"]]
    known = Knowledge(seat, record["seats"], stars, cards, draw_count=board["draw_count"])
    known.architetto = board["architetto"] is not None
    for entry in record["events"]:
        event = msgspec.json.decode(entry["data"])
        match event["type"]:
            case "hand_dealt":
                known.own_hand = tuple(event["cards"])
                known.seen.update(event["cards"])
            case "face_up_dealt":
                known.pile_top += event["cards"]
                known.face_up_count = len(event["cards"])
                known.seen.update(event["cards"])
            case "card_revealed":
                known.pile_top.append(event["card"])
                known.seen.add(event["card"])
            case "architetto_revealed" if event["source"] == "draw":
                known.pile_top.append(event["card"])
                known.seen.add(event["card"])
            case "card_played" | "card_taken" | "architetto_revealed":
                known.seen.add(event["card"])
    return known


def candidates(known: Knowledge, version: int, started: int) -> tuple[str, Iterable[Event]]:
    """The kind of the hidden event at `version` (the log's layout is public: docs) and the
    candidates for it."""
    if version == 2:
        return "seed_sealed", (SeedSealed(seed.hex()) for seed in WEAK_SEEDS)
    offset = version - started
    if 1 <= offset <= known.seats:
        return "hand_dealt", known.hands(offset - 1)
    if offset == known.seats + 1:
        return "draw_pile_stacked", known.piles()
    assert known.architetto and offset == known.seats + 3, f"no hidden event at {version}"
    return "architetto_cards_set_aside", known.hidden()


@dataclass
class Attack:
    """The attack on everything one caller was served at one moment."""

    record: Json
    documents: list[bytes]
    known: Knowledge
    tried: int = 0
    attacked: set[str] = field(default_factory=set)

    def digests(self) -> set[bytes]:
        found: set[bytes] = set()
        for document in self.documents:
            found.update(_HEX64.findall(document))
        return found

    def run(self) -> list[str]:
        """Every hidden event whose text a candidate reproduced (none, if R42 holds)."""
        entries = self.record["events"]
        started = next(e["version"] for e in entries if '"game_started"' in e["data"])
        digests = self.digests()
        found = []
        for before, after in itertools.pairwise(entries):
            gap = range(before["version"] + 1, after["version"])
            if not gap:
                continue
            kinds = [candidates(self.known, version, started) for version in gap]
            if math.prod(2 * max(1, self.known.count(kind)) for kind, _ in kinds) > BUDGET:
                continue
            self.attacked.update(kind for kind, _ in kinds)
            pools = [[text for event in pool for text in encodings(event)] for _, pool in kinds]
            for version, pool in zip(gap, pools, strict=True):  # a digest served anywhere
                self.tried += len(pool)
                hits = [t for t in pool if hashlib.sha256(t).hexdigest().encode() in digests]
                found += [f"the digest of version {version}: {hit!r}" for hit in hits]
            target, data = after["hash"], after["data"].encode()
            for texts in itertools.product(*pools):  # the chain from `before` to `after`
                self.tried += 1
                head = before["hash"]
                for version, text in zip(gap, texts, strict=True):
                    head = link(head, version, text)
                if link(head, after["version"], data) == target:
                    found.append(f"versions {gap.start}-{gap.stop - 1}: {texts!r}")
        return found


def served(api: Api, client: TestClient[Litestar], app: Litestar, table: Table,
           player: Player | None) -> list[bytes]:  # fmt: skip
    """Every document one caller can fetch now, as bytes."""
    path = table.path
    documents = [
        client.get(f"{path}{suffix}", headers=player.auth if player else {}).content
        for suffix in ("", "/record", "/events", "/replay", f"/at/{table.version}")
    ]
    streamed = client.blocking_portal.call(
        asgi_stream, app, f"{path}/stream", table.version, player.auth if player else {}
    )
    documents.append(streamed.body)
    documents += [msgspec.json.encode(answer) for _, answer in table.answers]
    return documents


@pytest.mark.parametrize(("seats", "edition", "modules"), GAMES)
def test_no_candidate_matches_any_hash_or_digest_served_during_play(
    client: TestClient[Litestar],
    app: Litestar,
    seats: int,
    edition: str,
    modules: tuple[str, ...],
) -> None:
    api = Api(client)
    rng = random.Random(seats * 31 + len(edition))
    table = api.new_table(seats, edition, modules, rng)
    attacked: set[str] = set()
    tried = 0
    # At the deal, half way, and late (a short draw pile leaves few orders to try).
    done: set[str] = set()
    while table.pending is not None:
        draw_count = api.board(table.game_id)["draw_count"]
        moment = "late" if draw_count <= 2 else "middle" if table.version > 80 else "start"
        if moment not in done:
            done.add(moment)
            for viewer in (table.seats[1], table.seats[-1], None):
                seat = None if viewer is None else table.seats.index(viewer)
                record = api.record(table.game_id, viewer)
                known = knowledge(record, api.board(table.game_id, viewer), seat)
                attack = Attack(record, served(api, client, app, table, viewer), known)
                assert attack.run() == [], f"a secret found by seat {seat}"
                attacked |= attack.attacked
                tried += attack.tried
        table.step(rng, whole_turn=rng.random() < 0.5)
    print(f"tried {tried:,} candidates against {sorted(attacked)}")
    assert tried > 1000, "the attack tried candidates"
    assert "hand_dealt" in attacked and "seed_sealed" in attacked
    if edition == "towers" and seats == 2:
        assert "architetto_cards_set_aside" in attacked


def test_even_the_true_cards_do_not_reproduce_a_hidden_hash_without_the_salt(
    client: TestClient[Litestar],
) -> None:
    """The oracle: after the end each hidden event's cards are known. Encoded as an attacker
    would guess them (empty salt, or none), they miss the hash; with the salt, they match."""
    api = Api(client)
    seen_kinds: set[str] = set()
    for seats, edition, modules in GAMES:
        rng = random.Random(seats)
        table = api.new_table(seats, edition, modules, rng)
        during = api.record(table.game_id)
        table.play_to_end(rng, whole_turns=1.0)
        whole = api.record(table.game_id)
        entries = whole["events"]
        shown = {entry["version"] for entry in during["events"]}
        for before, entry in itertools.pairwise(entries):
            event = event_decoder.decode(entry["data"])
            if visible(event, None, over=False):
                continue
            kind = type(event).__struct_config__.tag
            seen_kinds.add(str(kind))
            assert entry["version"] not in shown
            true_text = entry["data"].encode()
            assert link(before["hash"], entry["version"], true_text) == entry["hash"]
            if isinstance(event, SeedSealed):
                assert len(bytes.fromhex(event.server_seed)) == 32, "256 bits of seed"
                continue
            assert isinstance(event, (HandDealt, DrawPileStacked, ArchitettoCardsSetAside))
            assert len(bytes.fromhex(event.salt)) == 32, "256 bits of salt"
            for guess in encodings(msgspec.structs.replace(event, salt="")):
                assert link(before["hash"], entry["version"], guess) != entry["hash"], kind
    assert seen_kinds == HIDDEN_KINDS, "every kind of hidden event was attacked"
