"""Benchmark of the workers on a real Redis (issue 12). Run:
`.venv/bin/python bench/workers.py [--redis-url URL] [--entries N]`.

- Dispatcher throughput: N outbox notices (real appends to N/2 games, two each) made into
  RQ jobs and acknowledged by `Dispatcher.step`, beside a bare `XREADGROUP` + `XACK` loop over
  the same number of entries of the same feeds, in the same run (target: at least 5,000
  notices per second into jobs).

Uses a unique key prefix on the given Redis (default the machine's, 127.0.0.1:6379) and
deletes its keys at the end. (The notification latency figures are not measured yet.)
"""

from __future__ import annotations

import argparse
import sys
import time
import uuid
from pathlib import Path
from typing import Any

# Run as a script, this file's folder comes first on sys.path and would shadow the project.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

import redis  # noqa: E402

from store.client import EventStore  # noqa: E402
from workers.dispatcher import GROUP, Dispatcher  # noqa: E402
from workers.runner import queue_of  # noqa: E402

EVENT = b'{"type":"card_played","seat":1,"card":"c17"}'
TARGET = 5_000.0


def _fill(client: redis.Redis, prefix: str, entries: int) -> EventStore:
    store = EventStore(client, prefix=prefix, shards=16)
    for game in range(entries // 2):
        store.append(f"g{game}", 0, [EVENT, EVENT], "c1")
        store.append(f"g{game}", 2, [EVENT], "c2")
    return store


def _dispatch(client: redis.Redis, prefix: str, entries: int) -> float:
    store = _fill(client, prefix, entries)
    dispatcher = Dispatcher(client, store.keys, queue_of(client, prefix), consumer="bench")
    dispatcher.ensure_groups()
    started, handled = time.perf_counter(), 0
    while handled < entries:
        handled += dispatcher.step()
    return entries / (time.perf_counter() - started)


def _bare(client: redis.Redis, prefix: str, entries: int) -> float:
    store = _fill(client, prefix, entries)
    feeds = store.keys.outbox_keys()
    for feed in feeds:
        client.xgroup_create(feed, GROUP, id="0", mkstream=True)
    started, handled = time.perf_counter(), 0
    while handled < entries:
        reply: Any = client.xreadgroup(GROUP, "bare", dict.fromkeys(feeds, ">"), count=500)
        for feed, found in reply:
            client.xack(feed, GROUP, *(entry_id for entry_id, _ in found))
            handled += len(found)
    return entries / (time.perf_counter() - started)


def _delete(client: redis.Redis, prefix: str) -> None:
    for key in client.scan_iter(f"{prefix}:*", count=1000):
        client.delete(key)
    for key in client.scan_iter(f"rq:*{prefix}*", count=1000):
        client.delete(key)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--entries", type=int, default=20_000)
    args = parser.parse_args()
    client = redis.Redis.from_url(args.redis_url)
    prefixes = [f"bench-workers-{uuid.uuid4().hex[:8]}" for _ in range(2)]
    try:
        into_jobs = _dispatch(client, prefixes[0], args.entries)
        bare = _bare(client, prefixes[1], args.entries)
    finally:
        for prefix in prefixes:
            _delete(client, prefix)
    verdict = "met" if into_jobs >= TARGET else "MISSED"
    print(f"dispatcher: {into_jobs:,.0f} notices/s into RQ jobs; bare XREADGROUP + XACK "
          f"{bare:,.0f}/s over as many entries (ratio {into_jobs / bare:.2f}); "
          f"target {TARGET:,.0f}/s: {verdict}")  # fmt: skip


if __name__ == "__main__":
    main()
