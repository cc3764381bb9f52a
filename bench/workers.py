"""Benchmark of the workers on a real Redis (issue 12). Run:
`.venv/bin/python bench/workers.py [--redis-url URL] [--entries N]`.

- The followers' own cost: N outbox notices (real appends to N/2 games, two each, with the
  command path's metadata) followed by `Follower.step` with a follow-up that does nothing
  (on one thread, then on as many as a worker runs: `workers.runner.FOLLOW_THREADS`),
  beside a bare `XREADGROUP` + `XACK` loop over the same number of entries of the same feeds
  in batches of the same size, in the same run: the difference per notice is what the
  pipeline costs an append beyond its follow-up's own work (target: at most 0.1 ms).

- Notification latency: `patrician serve` and two `patrician worker` processes on the same
  Redis, 4-seat games played over HTTP by paced clients at 20 and then 200 moves per second
  (each game one move a second, the games out of step with each other),
  every player with a webhook to a local receiver (a real HTTP server on loopback, in a
  process of its own, that checks each signature): from a command's answer to the arrival of
  the `turn.started` it caused, p50 and p99 (target: p99 at most 500 ms at 200 moves per second).

Uses a unique key prefix on the given Redis (default the machine's, 127.0.0.1:6379) and
deletes its keys at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import random
import statistics
import sys
import time
import uuid
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any

# Run as a script, this file's folder comes first on sys.path and would shadow the project.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

import aiohttp  # noqa: E402
import redis  # noqa: E402

from bench.processes import free_port, start, stop  # noqa: E402
from bench.traffic import Table, players  # noqa: E402
from store.client import EventStore  # noqa: E402
from store.stored import AppendMeta  # noqa: E402
from tests.workers.sink import Sink  # noqa: E402
from workers.follower import BATCH, GROUP, Follower  # noqa: E402
from workers.runner import FOLLOW_THREADS  # noqa: E402

EVENT = b'{"type":"card_played","seat":1,"card":"c17"}'
OVERHEAD_TARGET_MS = 0.1
LATENCY_TARGET = 0.5
RATES = (20, 200)
SECONDS = 15.0


class _SinkProcess:
    """The webhook receiver in a process of its own, as a receiver is elsewhere: in the
    benchmark's process its answers would wait for the load generator's turn at the GIL, and
    the workers, which wait for each answer, with them. It checks every signature as the
    tests' `Sink` does, and keeps when each message arrived (the monotonic clock is the
    machine's, the same in both processes)."""

    def __init__(self) -> None:
        self.connection, child = multiprocessing.get_context("spawn").Pipe()
        self.process = multiprocessing.get_context("spawn").Process(
            target=_serve_sink, args=(child,), daemon=True
        )

    def __enter__(self) -> _SinkProcess:
        self.process.start()
        self.base: str = self.connection.recv()
        return self

    def __exit__(self, *_: object) -> None:
        self.connection.send(("stop", None))
        self.process.join(timeout=10)

    def url(self, path: str) -> str:
        return self.base + path

    def ask(self, what: str, argument: Any) -> Any:
        self.connection.send((what, argument))
        return self.connection.recv()


def _serve_sink(connection: Connection) -> None:
    with Sink() as sink:
        connection.send(sink.url(""))
        while True:
            what, argument = connection.recv()
            if what == "stop":
                return
            if what == "secrets":
                sink.secrets.update(argument)
                connection.send(None)
            elif what == "count":  # of the messages to the paths that begin so
                connection.send(
                    sum(len(m) for p, m in sink.received.items() if p.startswith(argument))
                )
            elif what == "arrivals":  # (path, message, arrived) of those paths
                connection.send(
                    (
                        [
                            (path, message, arrived)
                            for path, messages in sink.received.items()
                            if path.startswith(argument)
                            for message, arrived in zip(messages, sink.arrived[path], strict=True)
                        ],
                        sink.bad_signatures,
                    )
                )


def _fill(client: redis.Redis, prefix: str, entries: int) -> EventStore:
    """N/2 games of two appends each, with the metadata the command path keeps."""
    store = EventStore(client, prefix=prefix, shards=16)
    for game in range(entries // 2):
        for version, events in ((0, [EVENT, EVENT]), (2, [EVENT])):
            meta = AppendMeta("commands", f"p{game}", "2026-12-05T10:00:00.000Z", seat=1,
                              request_id=uuid.uuid4().hex)  # fmt: skip
            store.append(f"g{game}", version, events, f"c{version}", meta)
    return store


def _follow(client: redis.Redis, prefix: str, entries: int, threads: int) -> float:
    """Notices a second through a follower whose follow-up does nothing, on `threads`."""
    store = _fill(client, prefix, entries)
    follower = Follower(client, store.keys, lambda _notice: None, consumer="bench", threads=threads)
    follower.ensure_groups()
    started, handled = time.perf_counter(), 0
    try:
        while handled < entries:
            handled += follower.step()
    finally:
        follower.close()
    return entries / (time.perf_counter() - started)


def _bare(client: redis.Redis, prefix: str, entries: int) -> float:
    store = _fill(client, prefix, entries)
    feeds = store.keys.outbox_keys()
    for feed in feeds:
        client.xgroup_create(feed, GROUP, id="0", mkstream=True)
    started, handled = time.perf_counter(), 0
    while handled < entries:
        reply: Any = client.xreadgroup(GROUP, "bare", dict.fromkeys(feeds, ">"), count=BATCH)
        for feed, found in reply:
            client.xack(feed, GROUP, *(entry_id for entry_id, _ in found))
            handled += len(found)
    return entries / (time.perf_counter() - started)


def _delete(client: redis.Redis, prefix: str) -> None:
    for key in client.scan_iter(f"{prefix}:*", count=1000):
        client.delete(key)
    for key in client.scan_iter(f"rq:*{prefix}*", count=1000):
        client.delete(key)


async def _paced(base: str, sink: _SinkProcess, rate: int) -> list[float]:
    """Play 4-seat games at `rate` moves per second in all; the latency of each turn's
    notification, from the answer of the command that began the turn to its arrival."""
    # One move a second per game, as many games as moves per second: a game's next move comes
    # after its notification (a turn already over when the workers come to it is not sent).
    tables_count = rate
    acked: dict[tuple[str, int], float] = {}
    async with aiohttp.ClientSession() as session:
        tables = await _tables(session, base, sink, rate, tables_count)
        stop_at = time.monotonic() + SECONDS

        async def play(index: int, table: Table) -> None:
            interval = tables_count / rate
            next_at = time.monotonic() + index / rate  # staggered: a steady flow, no bursts
            while True:
                await asyncio.sleep(max(0.0, next_at - time.monotonic()))  # the first too
                if time.monotonic() >= stop_at:
                    return
                await table.command()
                acked[(table.game_id, table.version)] = time.monotonic()
                next_at += interval

        await asyncio.gather(*(play(n, table) for n, table in enumerate(tables)))
    moves = len(acked)
    await asyncio.sleep(3)  # the last notifications on their way
    latencies = []
    arrivals, bad = sink.ask("arrivals", f"/{rate}-")
    for _path, message, arrived in arrivals:
        sent = acked.get((message["game_id"], message["version"]))
        if message["type"] == "turn.started" and sent is not None:
            latencies.append(arrived - sent)
    print(f"  {moves / SECONDS:.0f} moves/s played, {len(arrivals)} notifications received, "
          f"bad signatures {bad}")  # fmt: skip
    return latencies


async def _tables(
    session: aiohttp.ClientSession, base: str, sink: _SinkProcess, rate: int, count: int
) -> list[Table]:
    """`count` 4-seat games begun, every player with a webhook to `sink`, and played out of
    step with each other, what they told so far drained."""
    tokens = await players(session, base, 4 * count)
    secrets = {}
    for number, token in enumerate(tokens):
        path = f"/{rate}-{number}"
        async with session.put(
            f"{base}/api/me/notifications", json={"webhook": {"url": sink.url(path)}},
            headers={"Authorization": f"Bearer {token}"},
        ) as answer:  # fmt: skip
            secrets[path] = (await answer.json())["webhook"]["secret"]
    sink.ask("secrets", secrets)
    tables = [Table(session, base, tokens[4 * n : 4 * n + 4]) for n in range(count)]
    for table in tables:
        await table.new_game()
    # The tables' game.started (and first turn.started) notifications drain first: the
    # figures are those of a steady flow of moves, not of a thousand games begun at once.
    deadline = time.monotonic() + 120
    while sink.ask("count", f"/{rate}-") < len(tokens) + len(tables):
        assert time.monotonic() < deadline, "the first notifications did not come"
        await asyncio.sleep(0.2)
    # Out of step: games begun together would reach the ends of their turns together,
    # every table's turn starting in the same second; each plays 0-5 moves first (as
    # games at a site are anywhere in their turns), and what those tell drains.
    phase = random.Random(rate)
    for table in tables:
        for _ in range(phase.randrange(6)):
            await table.command()
    await asyncio.sleep(3)
    return tables


def _latency(redis_url: str, prefix: str) -> None:
    port = free_port()
    env = {"PATRICIAN_PREFIX": prefix, "PATRICIAN_WEBHOOK_ALLOW": "127.0.0.1",
           # every player of the benchmark comes from one address: no budget per address
           "PATRICIAN_RATE_NOTIFICATIONS": "0"}  # fmt: skip
    patrician = str(Path(sys.executable).parent / "patrician")
    server = start([patrician, "serve", "--port", str(port), "--redis-url", redis_url],
                   env, port)  # fmt: skip
    workers = [start([patrician, "worker", "--redis-url", redis_url], env, port)
               for _ in range(2)]  # fmt: skip
    try:
        with _SinkProcess() as sink:
            for rate in RATES:
                found = sorted(asyncio.run(_paced(f"http://127.0.0.1:{port}", sink, rate)))
                p50 = statistics.median(found) if found else float("nan")
                p99 = found[int(0.99 * (len(found) - 1))] if found else float("nan")
                verdict = ""
                if rate == max(RATES):
                    verdict = "; target p99 <= 500 ms: " + (
                        "met" if p99 <= LATENCY_TARGET else "MISSED"
                    )
                print(f"notification latency at {rate} moves/s: p50 {p50 * 1000:.0f} ms, "
                      f"p99 {p99 * 1000:.0f} ms over {len(found)} turns{verdict}")  # fmt: skip
    finally:
        for process in [*workers, server]:
            stop(process)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--entries", type=int, default=20_000)
    args = parser.parse_args()
    client = redis.Redis.from_url(args.redis_url)
    prefixes = [f"bench-workers-{uuid.uuid4().hex[:8]}" for _ in range(3)]
    try:
        bare = _bare(client, prefixes[1], args.entries)
        for threads in (1, FOLLOW_THREADS):  # one after another, and as a worker runs them
            _delete(client, prefixes[0])
            followed = _follow(client, prefixes[0], args.entries, threads)
            overhead = (1 / followed - 1 / bare) * 1000
            verdict = "met" if overhead <= OVERHEAD_TARGET_MS else "MISSED"
            print(f"follower on {threads} thread(s), a follow-up that does nothing: "
                  f"{followed:,.0f} notices/s; bare XREADGROUP + XACK {bare:,.0f}/s over as "
                  f"many entries, {BATCH} at a time (ratio {followed / bare:.2f}); the "
                  f"pipeline's own cost {overhead:.3f} ms a notice, target <= "
                  f"{OVERHEAD_TARGET_MS} ms: {verdict}")  # fmt: skip
        _latency(args.redis_url, prefixes[2])
    finally:
        for prefix in prefixes:
            _delete(client, prefix)


if __name__ == "__main__":
    main()
