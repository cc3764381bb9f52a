"""Writer processes for the concurrency test (a module of its own: spawned processes import
their target by name)."""

from __future__ import annotations

from typing import Any

import redis

from store.client import EventStore
from store.errors import VersionConflict

Outcome = tuple[int, str, int]
"""(round, "ok" or "conflict", first version taken or the current version reported)"""


def race(url: str, prefix: str, writer: int, rounds: int, sync: tuple[Any, Any]) -> None:
    """Each round: wait for every writer, then all append one event at the version the game
    had when the round began; exactly one must win the round. `sync` is (barrier, queue);
    puts (writer, outcomes) on the queue at the end."""
    barrier, results = sync
    client = redis.Redis.from_url(url)
    store = EventStore(client, prefix=prefix)
    outcomes: list[Outcome] = []
    try:
        for round_ in range(rounds):
            barrier.wait(60)
            data = b'{"writer":%d,"round":%d}' % (writer, round_)
            try:
                result = store.append("race", round_, [data], f"w{writer}-r{round_}")
                outcomes.append((round_, "ok", result.first_version))
            except VersionConflict as conflict:
                outcomes.append((round_, "conflict", conflict.current))
    finally:
        client.close()
        results.put((writer, outcomes))
