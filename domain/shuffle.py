"""Fair, re-derivable randomness (R40): the seed commitment, the seed and the shuffles.

Everything random in a game comes from one 32-byte shuffle seed through SHA-256, never from
Python's `random`, so a verifier in any language re-derives the deal from the published seed.
The algorithm is specified in `docs/shuffle.md` with test vectors; its id is recorded in every
game and must change whenever a single output would change.

- commitment = SHA-256(server_seed)                       (published at creation)
- shuffle seed = SHA-256("patrician-shuffle/1" 0x00 server_seed
                         || for each entropy in join order: u32be(len) || utf-8 bytes)
- stream(label): block i = SHA-256(shuffle_seed || u32be(len(label)) || label || u64be(i));
  each block gives four 64-bit big-endian words, consumed in order.
- below(n): words w are drawn until w < 2^64 - (2^64 mod n); the result is w mod n.
- shuffle(items, label): Fisher-Yates from the last index down: for i = n-1 .. 1,
  j = below(i + 1) on that label's stream, swap items[i] and items[j].
- salt(label) = hex(block 0 of the stream "salt/" || label): 256 bits in every secret event,
  so that its chain hash (public) cannot be matched by trying the cards it might hold.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from typing import TypeVar

ALGORITHM = "patrician-shuffle/1"

T = TypeVar("T")

_WORDS_PER_BLOCK = 4
_RANGE = 1 << 64


def commitment(server_seed: bytes) -> str:
    """The hex SHA-256 published when the game is created, before anyone joins."""
    return hashlib.sha256(server_seed).hexdigest()


def shuffle_seed(server_seed: bytes, entropies: Sequence[str]) -> bytes:
    """Mix the server's secret seed with every seat's entropy, in join order."""
    digest = hashlib.sha256(ALGORITHM.encode() + b"\x00" + server_seed)
    for entropy in entropies:
        raw = entropy.encode()
        digest.update(len(raw).to_bytes(4, "big") + raw)
    return digest.digest()


def _blocks(seed: bytes, label: str) -> Iterator[bytes]:
    """The endless stream of 32-byte blocks for one purpose (`label`) of one game."""
    raw_label = label.encode()
    prefix = seed + len(raw_label).to_bytes(4, "big") + raw_label
    block = 0
    while True:
        yield hashlib.sha256(prefix + block.to_bytes(8, "big")).digest()
        block += 1


def words(seed: bytes, label: str) -> Iterator[int]:
    """The endless stream of 64-bit words for one purpose (`label`) of one game."""
    for digest in _blocks(seed, label):
        for k in range(_WORDS_PER_BLOCK):
            yield int.from_bytes(digest[8 * k : 8 * k + 8], "big")


def below(stream: Iterator[int], n: int) -> int:
    """A uniform integer in [0, n), by rejection so that no value is favoured."""
    limit = _RANGE - _RANGE % n
    for word in stream:
        if word < limit:
            return word % n
    raise AssertionError("the word stream is endless")  # pragma: no cover


def salt(seed: bytes, label: str) -> str:
    """The salt of one secret event (hex, 256 bits): unpredictable without the server seed,
    re-derivable by anyone once it is published (docs/shuffle.md, "Salts")."""
    return next(_blocks(seed, "salt/" + label)).hex()


def shuffled(items: Sequence[T], seed: bytes, label: str) -> list[T]:
    """A Fisher-Yates shuffle of `items` driven by the `label` stream of `seed`."""
    result = list(items)
    stream = words(seed, label)
    for i in range(len(result) - 1, 0, -1):
        j = below(stream, i + 1)
        result[i], result[j] = result[j], result[i]
    return result
