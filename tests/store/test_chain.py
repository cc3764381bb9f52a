"""The hash chain, as the offline audit will use it: pure functions, no Redis."""

from __future__ import annotations

import hashlib

import pytest

from store.chain import ZERO_HASH, ChainBroken, extend, link, verify
from store.stored import StoredEvent


def _events(datas: list[bytes]) -> list[StoredEvent]:
    hashes = extend(ZERO_HASH, 1, datas)
    return [StoredEvent(v, d, h) for v, (d, h) in enumerate(zip(datas, hashes, strict=True), 1)]


def test_a_link_hashes_the_raw_previous_hash_the_big_endian_version_and_the_bytes() -> None:
    expected = hashlib.sha256(bytes(32) + (1).to_bytes(8, "big") + b'{"a":1}').hexdigest()
    assert link(ZERO_HASH, 1, b'{"a":1}') == expected


def test_extend_is_link_applied_in_turn() -> None:
    datas = [b"one", b"two", b"three"]
    hashes = extend(ZERO_HASH, 1, datas)
    previous = ZERO_HASH
    for version, (data, hash_hex) in enumerate(zip(datas, hashes, strict=True), 1):
        assert hash_hex == link(previous, version, data)
        previous = hash_hex


def test_a_whole_chain_verifies_and_returns_its_last_hash() -> None:
    events = _events([b"a", b"b", b"c"])
    assert verify(events) == events[-1].hash
    assert verify(events[1:], previous=events[0].hash, after=1) == events[-1].hash
    assert verify([]) == ZERO_HASH


def test_changed_bytes_break_the_chain_at_that_version() -> None:
    events = _events([b"a", b"b", b"c"])
    events[1] = StoredEvent(2, b"B", events[1].hash)
    with pytest.raises(ChainBroken) as broken:
        verify(events)
    assert broken.value.version == 2


def test_a_missing_version_breaks_the_chain() -> None:
    events = _events([b"a", b"b", b"c"])
    with pytest.raises(ChainBroken) as broken:
        verify([events[0], events[2]])
    assert broken.value.version == 2


def test_reordered_events_break_the_chain() -> None:
    a, b = _events([b"a", b"b"])
    swapped = [StoredEvent(1, b.data, b.hash), StoredEvent(2, a.data, a.hash)]
    with pytest.raises(ChainBroken):
        verify(swapped)
