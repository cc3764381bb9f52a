"""The caches a follower's threads share (`store.shared_lru`): many threads reading and
writing at once, as the games of a batch are followed, never break the cache, and a game's
state cache never trades a newer state for an older one."""

from __future__ import annotations

import random
import sys
import threading

from store.command_path import StateCache
from store.shared_lru import SharedLRU


def test_many_threads_reading_and_writing_at_once_leave_a_cache_that_still_works() -> None:
    cache: SharedLRU[int, int] = SharedLRU(8)
    errors: list[BaseException] = []

    def use(seed: int) -> None:
        rng = random.Random(seed)
        try:
            for _ in range(20_000):
                key = rng.randrange(32)
                if rng.random() < 0.5:
                    cache.put(key, key)
                else:
                    assert cache.get(key) in (None, key)
        except BaseException as error:  # the test must hear of it
            errors.append(error)

    threads = [threading.Thread(target=use, args=(n,)) for n in range(8)]
    switching = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # threads switch as often as they can: a bare LRUCache breaks
    try:
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    finally:
        sys.setswitchinterval(switching)
    assert errors == []
    for key in range(100, 120):  # it still evicts and keeps
        cache.put(key, key)
    assert cache.get(119) == 119 and cache.get(100) is None


class _State:
    def __init__(self, version: int) -> None:
        self.version = version


def test_a_games_cached_state_is_never_replaced_by_an_older_one() -> None:
    cache = StateCache(4)
    cache.put("g", _State(7))  # type: ignore[arg-type]
    cache.put("g", _State(5))  # type: ignore[arg-type]
    assert cache.get("g").version == 7  # type: ignore[union-attr]
    cache.put("g", _State(9))  # type: ignore[arg-type]
    assert cache.get("g").version == 9  # type: ignore[union-attr]
