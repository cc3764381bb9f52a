"""The hash chain over a game's events, in pure Python with hashlib only.

`h_v = sha256(h_{v-1} || u64be(v) || data_v)` over raw bytes, `h_0` being 32 zero bytes;
hashes are stored and compared as lower-case hex. The store computes the links of an append
(Redis's Lua has no SHA-256) and the offline audit re-verifies a whole record with `verify`, so
this module must stay free of Redis and of the rest of the project.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Protocol

ZERO_HASH = "00" * 32
"""`h_0`, the hash before the first event of every game."""
ZERO_RAW = bytes(32)
"""`h_0` as raw bytes."""


class ChainBroken(ValueError):
    """A sequence of events does not form an unbroken chain."""

    def __init__(self, version: int, reason: str) -> None:
        super().__init__(version, reason)
        self.version = version
        self.reason = reason

    def __str__(self) -> str:
        return f"the chain breaks at version {self.version}: {self.reason}"


class Linked(Protocol):
    """Anything with a version, event bytes and a stored hash (`store.StoredEvent` is one)."""

    @property
    def version(self) -> int: ...
    @property
    def data(self) -> bytes: ...
    @property
    def hash(self) -> str: ...


def link(previous: str, version: int, data: bytes) -> str:
    """The hash of event `version` with bytes `data`, after the event whose hash is `previous`."""
    digest = hashlib.sha256(bytes.fromhex(previous))
    digest.update(version.to_bytes(8, "big"))
    digest.update(data)
    return digest.hexdigest()


def extend(previous: str, first_version: int, datas: Iterable[bytes]) -> list[str]:
    """The hashes of consecutive events from `first_version` on, after the hash `previous`."""
    return [raw.hex() for raw in extend_raw(bytes.fromhex(previous), first_version, datas)]


def extend_raw(previous: bytes, first_version: int, datas: Iterable[bytes]) -> list[bytes]:
    """`extend` over raw 32-byte hashes, as the store keeps them in its entries."""
    hashes: list[bytes] = []
    raw = previous
    for version, data in enumerate(datas, first_version):
        raw = hashlib.sha256(b"".join((raw, version.to_bytes(8, "big"), data))).digest()
        hashes.append(raw)
    return hashes


def verify(events: Iterable[Linked], previous: str = ZERO_HASH, after: int = 0) -> str:
    """Check that `events` are versions `after + 1, after + 2, ...` and that each stored hash
    is the link of its event; return the last hash (`previous` when there are none).

    Raises `ChainBroken` at the first gap or mismatch.
    """
    expected_version = after
    for event in events:
        expected_version += 1
        if event.version != expected_version:
            raise ChainBroken(expected_version, f"found version {event.version} instead")
        computed = link(previous, event.version, event.data)
        if computed != event.hash:
            raise ChainBroken(event.version, f"stored hash {event.hash}, computed {computed}")
        previous = computed
    return previous
