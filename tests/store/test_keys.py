"""Key layout: one hash tag per shard, shared by every key of a game and its outbox."""

from __future__ import annotations

import pytest
from redis.crc import key_slot

from store.keys import KeySpace, entry_id


def test_every_key_of_a_game_and_its_outbox_share_one_cluster_slot() -> None:
    space = KeySpace("patrician", 16)
    for game_id in ("g1", "game-2", "01HXYZABCDEF", "a.b_c"):
        keys = space.game(game_id)
        slots = {key_slot(key.encode()) for key in keys}
        assert len(slots) == 1, keys


def test_the_layout_is_the_documented_one() -> None:
    space = KeySpace("patrician", 16)
    shard = space.shard("g1")
    tag = f"{{s{shard:02d}}}"
    assert space.game("g1").events == f"patrician:{tag}:game:g1:events"
    assert space.game("g1").commands == f"patrician:{tag}:game:g1:commands"
    assert space.game("g1").snapshot == f"patrician:{tag}:game:g1:snapshot"
    assert space.game("g1").outbox == f"patrician:{tag}:outbox"


def test_the_shard_is_a_stable_hash_of_the_game_id() -> None:
    # sha256("g1")[:8] as an integer, modulo 16: the same in every process and release.
    assert KeySpace().shard("g1") == KeySpace("other", 16).shard("g1")
    assert [KeySpace().shard(f"g{n}") for n in range(5)] == [
        KeySpace().shard(f"g{n}") for n in range(5)
    ]
    assert len({KeySpace().shard(f"game-{n}") for n in range(400)}) == 16


def test_the_outbox_keys_are_one_per_shard() -> None:
    space = KeySpace("p", 4)
    assert space.outbox_keys() == [f"p:{{s0{n}}}:outbox" for n in range(4)]


@pytest.mark.parametrize("prefix", ["", "a{b}", "a b", "x" * 65])
def test_a_prefix_that_would_break_the_hash_tags_is_refused(prefix: str) -> None:
    with pytest.raises(ValueError, match="prefix"):
        KeySpace(prefix)


@pytest.mark.parametrize("game_id", ["", "a b", "{s01}", "-lead", "x" * 129, "é"])
def test_a_game_id_outside_the_safe_alphabet_is_refused(game_id: str) -> None:
    with pytest.raises(ValueError, match="game id"):
        KeySpace().game(game_id)


def test_the_entry_id_of_a_version_is_the_version_then_one() -> None:
    assert entry_id(1) == "1-1"
    assert entry_id(300) == "300-1"
