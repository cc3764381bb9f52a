"""R40: the documented shuffle, checked against the published test vectors."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from domain import shuffle
from domain.events import DrawPileStacked, FaceUpDealt, GameStarted, HandDealt
from domain.gamedata import GameData
from domain.setup import new_game

VECTORS: dict[str, Any] = json.loads(
    (Path(__file__).parents[2] / "docs" / "shuffle-vectors.json").read_text()
)
SEED = bytes.fromhex(VECTORS["server_seed_hex"])


def test_r40_the_commitment_is_the_sha256_of_the_server_seed() -> None:
    assert shuffle.commitment(SEED) == VECTORS["commitment"]
    assert VECTORS["commitment"] == hashlib.sha256(SEED).hexdigest()


def test_r40_the_shuffle_seed_mixes_the_server_seed_with_every_entropy() -> None:
    seed = shuffle.shuffle_seed(SEED, VECTORS["entropies"])
    assert seed.hex() == VECTORS["shuffle_seed_hex"]
    assert shuffle.shuffle_seed(SEED, ["ab", "c"]) != shuffle.shuffle_seed(SEED, ["a", "bc"])


def test_r40_streams_below_and_shuffle_match_the_vectors() -> None:
    seed = bytes.fromhex(VECTORS["shuffle_seed_hex"])
    words = shuffle.words(seed, VECTORS["words"]["label"])
    assert [str(next(words)) for _ in VECTORS["words"]["first"]] == VECTORS["words"]["first"]
    stream = shuffle.words(seed, VECTORS["below"]["label"])
    results = [shuffle.below(stream, n) for n in VECTORS["below"]["n"]]
    assert results == VECTORS["below"]["results"]
    example = VECTORS["shuffle"]
    assert shuffle.shuffled(example["items"], seed, example["label"]) == example["result"]


def test_r40_a_whole_deal_matches_the_vectors(game_data: GameData) -> None:
    expected = VECTORS["deal"]
    log = new_game(
        edition=expected["edition"],
        seats=expected["seats"],
        modules=expected["modules"],
        game_data=game_data,
        server_seed=SEED,
        entropies=expected["entropies"],
    )
    started = next(e for e in log if isinstance(e, GameStarted))
    assert list(started.seat_players) == expected["seat_players"]
    assert [list(e.cards) for e in log if isinstance(e, HandDealt)] == expected["hands"]
    pile = next(e for e in log if isinstance(e, DrawPileStacked))
    assert list(pile.cards) == expected["draw_pile_top_first"]
    face_up = next(e for e in log if isinstance(e, FaceUpDealt))
    assert list(face_up.cards) == expected["face_up"]
    salts = {f"hand/{e.seat}": e.salt for e in log if isinstance(e, HandDealt)}
    assert {**salts, "draw_pile": pile.salt} == expected["salts"]


def test_r42_a_salt_is_block_0_of_its_own_stream_and_differs_per_event() -> None:
    seed = bytes.fromhex(VECTORS["shuffle_seed_hex"])
    example = VECTORS["salt"]
    assert shuffle.salt(seed, example["label"]) == example["salt"]
    label = ("salt/" + example["label"]).encode()
    block = hashlib.sha256(seed + len(label).to_bytes(4, "big") + label + bytes(8))
    assert example["salt"] == block.hexdigest()
    assert len({shuffle.salt(seed, f"hand/{k}") for k in range(5)}) == 5


@given(st.lists(st.integers(), max_size=40), st.binary(min_size=32, max_size=32))
def test_r40_a_shuffle_is_a_permutation(items: list[int], seed: bytes) -> None:
    assert sorted(shuffle.shuffled(items, seed, "x")) == sorted(items)


@given(st.integers(min_value=1, max_value=2**64), st.binary(min_size=32, max_size=32))
def test_r40_below_stays_below(n: int, seed: bytes) -> None:
    assert 0 <= shuffle.below(shuffle.words(seed, "x"), n) < n


def test_r40_every_position_is_reachable_evenly() -> None:
    # 6,000 shuffles of 3 items: each of the 6 orders about 1,000 times.
    counts: dict[tuple[int, ...], int] = {}
    for k in range(6000):
        order = tuple(shuffle.shuffled([0, 1, 2], k.to_bytes(32, "big"), "even"))
        counts[order] = counts.get(order, 0) + 1
    assert len(counts) == 6
    assert all(850 < count < 1150 for count in counts.values())
