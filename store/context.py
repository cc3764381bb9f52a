"""What the operations of one store share: its key space, the heads it has seen, the nonce
that tells a resent call from another call reusing its command id, and what it knows of the
one-off moves of stored data.
"""

from __future__ import annotations

import contextlib
import itertools
import secrets

from store import chain
from store.keys import KeySpace
from store.shelf import Shelf


class HeadCache:
    """The last known version and hash of recently used games, so that an append needs no
    read first: the client must hash from the head hash (Redis's Lua has no SHA-256).

    An entry may be old but is never wrong: the hash of a version never changes once written.
    The script checks it anyway, and a conflict reply brings the true head, so even a game
    deleted and rewritten behind the cache's back costs one extra round trip, never a bad link.
    """

    def __init__(self, size: int) -> None:
        self._size = size
        # A plain dict: each get, set and pop is atomic under the GIL, and no lock is taken on
        # the path of every append. Insertion order makes the eviction least recently stored.
        self._heads: dict[str, tuple[int, str]] = {}

    def get(self, game_id: str, version: int) -> str | None:
        """The hash of `version` of the game if it is the version last seen, else None."""
        if version == 0:
            return chain.ZERO_HASH
        known = self._heads.get(game_id)
        return known[1] if known is not None and known[0] == version else None

    def put(self, game_id: str, version: int, hash_hex: str) -> None:
        if self._size <= 0 or version <= 0:
            return
        self._heads.pop(game_id, None)
        self._heads[game_id] = (version, hash_hex)
        if len(self._heads) > self._size:
            # another thread may change it between the two steps (a follower's threads)
            with contextlib.suppress(RuntimeError, StopIteration):
                self._heads.pop(next(iter(self._heads)), None)


class MovedFlag:
    """Whether a one-off move of stored data is known to be done: asked of Redis at the first
    use and every `every`-th use after, whatever the answer was, so that a mark taken away
    (a rollback, a store restored from before the move) is seen within `every` uses. Asked by
    count, not by time: the operations keep no clock."""

    def __init__(self, every: int = 256) -> None:
        self.done = False
        self._every, self._uses = every, 0

    def due(self) -> bool:
        """Whether this use asks Redis (the caller then sets `done` from its answer)."""
        self._uses += 1
        return self._uses % self._every == 1 or self._every == 1


class Context:
    """What the operations of one store share: the key space, the head cache, the folder
    of archive files if the deployment keeps its archives there (`store.shelf`), and whether
    the store is a Redis Cluster (`store.cluster`), where a script reaches one slot only."""

    def __init__(
        self,
        keys: KeySpace,
        head_cache_size: int = 10_000,
        shelf: Shelf | None = None,
        *,
        cluster: bool = False,
    ) -> None:
        self.keys = keys
        self.shelf = shelf
        self.cluster = cluster
        self.heads = HeadCache(head_cache_size)
        self.handovers_moved = MovedFlag()
        """Whether the hand-overs of before were moved into their games' slots
        (`store.handovers.earlier_moved_op`)."""
        # Every append call gets a nonce the script records with the command, so that a
        # re-send of that very call (the client's own retry after a lost reply) is told
        # apart from another call reusing the command id: the first gets its result back,
        # the second a DuplicateCommand.
        self._nonce_prefix = secrets.token_hex(8)
        self._counter = itertools.count()

    def nonce(self) -> str:
        return f"{self._nonce_prefix}{next(self._counter):x}"
