"""A least-recently-used cache that several threads may share: cachetools' caches are not
safe to share (a read that moves a key may meet an eviction on another thread and leave the
cache unable to evict again), and a follower process follows several games at once on
threads of its own (`workers.follower`), all on one store. One lock around each use: the
uses are dictionary lookups, far shorter than the round trips the cache saves.
"""

from __future__ import annotations

from collections.abc import Callable
from threading import Lock
from typing import Generic, TypeVar

from cachetools import LRUCache

K = TypeVar("K")
V = TypeVar("V")


class SharedLRU(Generic[K, V]):
    """At most `size` values by key, the least recently used going first."""

    def __init__(self, size: int) -> None:
        self._values: LRUCache[K, V] = LRUCache(size)
        self._lock = Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            return self._values.get(key)

    def put(self, key: K, value: V, *, unless: Callable[[V], bool] | None = None) -> None:
        """Keep `value` under `key`, unless the value kept already makes `unless` true (one
        step: no other thread comes in between)."""
        with self._lock:
            known = self._values.get(key)
            if known is None or unless is None or not unless(known):
                self._values[key] = value
