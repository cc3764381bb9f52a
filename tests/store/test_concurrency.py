"""Concurrent writers on a real Redis: 16 processes race on one game for 200 rounds. Exactly
one append wins each version, the others get `VersionConflict` with the winner's version, the
versions are contiguous, nothing is lost or doubled, and the chain verifies end to end."""

from __future__ import annotations

import multiprocessing
from collections import Counter
from typing import Any

import pytest
import redis

from store.chain import verify
from store.client import EventStore
from tests.store.conftest import unique_prefix
from tests.store.racers import Outcome, race

WRITERS = 16
ROUNDS = 200


@pytest.mark.redis
@pytest.mark.slow
@pytest.mark.timeout(300)
def test_sixteen_racing_writers_get_exactly_one_append_per_version(redis_url: str) -> None:
    prefix = unique_prefix()
    context = multiprocessing.get_context("spawn")  # no fork of a process holding sockets
    client = redis.Redis.from_url(redis_url)
    store = EventStore(client, prefix=prefix)
    try:
        barrier = context.Barrier(WRITERS)
        results: Any = context.Queue()
        writers = [
            context.Process(
                target=race, args=(redis_url, prefix, writer, ROUNDS, (barrier, results))
            )
            for writer in range(WRITERS)
        ]
        for process in writers:
            process.start()
        try:
            outcomes: list[list[Outcome]] = [[] for _ in range(WRITERS)]
            for _ in range(WRITERS):
                writer, outcome = results.get(timeout=240)
                outcomes[writer] = outcome
        finally:
            for process in writers:
                process.join(timeout=30)
                if process.is_alive():
                    process.kill()
        wins: Counter[int] = Counter()
        winners: dict[int, int] = {}
        for writer, mine in enumerate(outcomes):
            assert [r[0] for r in mine] == list(range(ROUNDS))
            for round_, status, version in mine:
                if status == "ok":
                    assert version == round_ + 1
                    wins[version] += 1
                    winners[version] = writer
                else:
                    assert version == round_ + 1, "a conflict reports the winner's version"
        assert wins == Counter(dict.fromkeys(range(1, ROUNDS + 1), 1))
        events = store.read("race")
        assert [e.version for e in events] == list(range(1, ROUNDS + 1))
        for event in events:
            assert event.data == b'{"writer":%d,"round":%d}' % (
                winners[event.version],
                event.version - 1,
            )
        assert verify(events) == store.head("race").hash
        assert len(store.batches("race")) == ROUNDS
        assert len(store.read_outbox(store.keys.shard("race"), count=ROUNDS * 2)) == ROUNDS
    finally:
        for key in list(client.scan_iter(match=f"{prefix}:*")):
            client.delete(key)
        client.close()
