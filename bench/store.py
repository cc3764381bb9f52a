"""Benchmark of the event store against plain Redis commands, measured in the same run with
the same client (issue 4). Run: `.venv/bin/python bench/store.py [--redis-url URL]`.

Each figure is printed beside its baseline with the ratio and whether the target is met:
- append of one event vs one plain XADD per round trip (target: at least 0.70 of the rate);
- 16 writer processes on distinct games vs 16 processes of plain XADDs (at least 20,000
  appended events per second in total);
- loading a 300-event game (read + decode + fold) without a snapshot (at most 2x the raw
  XRANGE of the same entries) and with a snapshot every 50 events (at most 0.5x).

This machine's latency drifts by 2-3x within seconds, so each pair of figures is measured in
alternating short rounds and compared by their medians. Uses a unique key prefix on the
given Redis (default the machine's, 127.0.0.1:6379) and deletes its keys at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import multiprocessing
import random
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Run as a script, this file's folder comes first on sys.path and this file would shadow the
# `store` package it measures: take the folder off before importing the project.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

import redis  # noqa: E402
import redis.asyncio  # noqa: E402

from domain.decide import decide  # noqa: E402
from domain.events import encoder  # noqa: E402
from domain.evolve import fold  # noqa: E402
from domain.legal import legal_commands  # noqa: E402
from domain.playout import pick  # noqa: E402
from domain.setup import new_game  # noqa: E402
from domain.state import NEW_GAME  # noqa: E402
from server.cli.simulation import random_game  # noqa: E402
from server.config.card_data import load_game_data  # noqa: E402
from store.client import AsyncEventStore, EventStore  # noqa: E402
from store.loading import SnapshotPolicy, load_game, snapshot_if_due  # noqa: E402
from store.multiplexed import MultiplexedRedis  # noqa: E402

EVENT = b'{"type":"card_played","seat":1,"card":"c17"}'
WRITERS = 16
WRITER_SECONDS = 3.0


def _median_seconds(rounds: int, *runs: tuple[int, Callable[[], object]]) -> list[float]:
    """Alternate the runs `rounds` times, each run `count` calls; the median seconds per call."""
    times: list[list[float]] = [[] for _ in runs]
    for _ in range(rounds):
        for index, (count, run) in enumerate(runs):
            start = time.perf_counter()
            for _ in range(count):
                run()
            times[index].append((time.perf_counter() - start) / count)
    return [statistics.median(samples) for samples in times]


def _line(name: str, value: str, baseline: str, ratio: float, *, target: str, ok: bool) -> str:
    return (
        f"{name}: {value} vs {baseline} = {ratio:.2f} (target {target}) {'OK' if ok else 'MISSED'}"
    )


def bench_append(client: redis.Redis, prefix: str) -> tuple[str, bool]:
    store = EventStore(client, prefix=prefix)
    state = {"version": 0}

    def append() -> None:
        version = state["version"]
        store.append("single", version, [EVENT], f"cmd-{version}")
        state["version"] = version + 1

    def xadd() -> None:
        client.xadd(f"{prefix}:baseline", {"d": EVENT})

    for _ in range(300):  # warm the connection, the script cache and the head cache
        append()
        xadd()
    ours, base = _median_seconds(40, (250, append), (250, xadd))
    ratio = base / ours
    line = _line(
        "append 1 event",
        f"{1 / ours:,.0f}/s",
        f"XADD {1 / base:,.0f}/s",
        ratio,
        target=">= 0.70",
        ok=ratio >= 0.70,
    )
    return line, ratio >= 0.70


def recorded_batches(games: int) -> list[list[list[bytes]]]:
    """Real games as the server appends them: per game, one batch per request (creation,
    each join, each command), each batch the encoded events that request produced."""
    rng = random.Random(3)
    recorded = []
    for _ in range(games):
        opening = new_game(
            edition="towers",
            seats=4,
            modules=(),
            game_data=load_game_data(),
            server_seed=rng.randbytes(32),
        )
        # create (3 events), three joins (1 each; the last one deals)
        starts = [0, 3, 4, 5, len(opening)]
        batches = [opening[a:b] for a, b in itertools.pairwise(starts)]
        state = fold(opening)
        while state.pending is not None:
            legal = legal_commands(state, state.pending.seat)
            events, state = decide(state, state.pending.seat, pick(legal, rng))
            batches.append(events)
        recorded.append([[encoder.encode(event) for event in batch] for batch in batches])
    return recorded


def _writer(url: str, prefix: str, index: int, mode: str, queue: Any) -> None:
    client = redis.Redis.from_url(url)
    store = EventStore(client, prefix=prefix)
    games = recorded_batches(2) if mode == "games" else []
    appended = events = 0
    deadline = time.perf_counter() + WRITER_SECONDS
    start = time.perf_counter()
    while time.perf_counter() < deadline:
        if mode == "plain":
            for _ in range(50):
                client.xadd(f"{prefix}:plain{index}", {"d": EVENT})
            appended += 50
        elif mode == "single":
            for _ in range(50):
                store.append(f"w{index}", appended, [EVENT], f"cmd-{appended}")
                appended += 1
        else:  # replay a recorded game under a fresh id, one append per request
            game_id, version = f"w{index}-{uuid.uuid4().hex[:8]}", 0
            for batch in games[appended % len(games)]:
                store.append(game_id, version, batch, f"cmd-{version}")
                version += len(batch)
                appended += 1
                if time.perf_counter() > deadline:
                    break
            events += version
    seconds = time.perf_counter() - start
    queue.put((appended, events or appended, seconds, 0.0))
    client.close()


async def _async_writers(url: str, prefix: str, first: int, count: int, mode: str) -> Any:
    """`count` writers as asyncio tasks of one process, on the server's own client (one
    multiplexed connection, `store.multiplexed`), or (mode "async-redispy") on redis-py's
    client with the store's pipelining (as the server ran before it), or, for the baseline,
    one plain XADD per round trip each."""
    client: Any
    if mode == "async-redispy":
        client = redis.asyncio.Redis.from_url(url, max_connections=count + 2, socket_timeout=None)
        store = AsyncEventStore(client, prefix=prefix, pipelined=True)
    else:
        client = MultiplexedRedis.from_url(url)
        store = AsyncEventStore(client, prefix=prefix)
    games = recorded_batches(2)
    deadline = time.perf_counter() + WRITER_SECONDS

    async def writer(index: int) -> tuple[int, int]:
        appended = events = 0
        while time.perf_counter() < deadline:
            if mode == "async-plain":
                for _ in range(50):
                    await client.xadd(f"{prefix}:plain{index}", {"d": EVENT})
                appended += 50
                continue
            game_id, version = f"a{index}-{uuid.uuid4().hex[:8]}", 0
            for batch in games[appended % len(games)]:
                await store.append(game_id, version, batch, f"cmd-{version}")
                version += len(batch)
                appended += 1
                if time.perf_counter() > deadline:
                    break
            events += version
        return appended, events or appended

    start, cpu = time.perf_counter(), time.process_time()
    done = await asyncio.gather(*(writer(first + i) for i in range(count)))
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    await client.aclose()
    share = cpu / count  # the process's CPU, shared out among its writers
    return [(appended, events, seconds, share) for appended, events in done]


def _async_writer_process(url: str, prefix: str, first: int, mode: str, queue: Any) -> None:
    import uvloop

    uvloop.install()
    for result in asyncio.run(_async_writers(url, prefix, first, WRITERS // 2, mode)):
        queue.put(result)


def _run_writers(url: str, prefix: str, mode: str) -> tuple[float, float, float]:
    """Appends per second and events per second of 16 writers, in total, and the writers'
    CPU per append (us, asyncio modes only): 16 processes, or (modes "async-...") two
    processes of 8 asyncio tasks, one per core."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    if mode.startswith("async"):
        processes = [
            context.Process(target=_async_writer_process, args=(url, prefix, first, mode, queue))
            for first in (0, WRITERS // 2)
        ]
    else:
        processes = [
            context.Process(target=_writer, args=(url, prefix, index, mode, queue))
            for index in range(WRITERS)
        ]
    for process in processes:
        process.start()
    results: list[tuple[int, int, float, float]] = [
        queue.get(timeout=WRITER_SECONDS + 120) for _ in range(WRITERS)
    ]
    for process in processes:
        process.join(timeout=30)
    appended = sum(appends for appends, _, _, _ in results)
    return (
        sum(appends / seconds for appends, _, seconds, _ in results),
        sum(events / seconds for _, events, seconds, _ in results),
        1e6 * sum(cpu for *_, cpu in results) / appended if appended else float("nan"),
    )


def bench_writers(url: str, prefix: str) -> list[tuple[str, bool]]:
    """16 writers appending real games request by request (one append per request of the
    game: creation, joins, commands), as the asyncio server does (tasks of two processes on
    the server's multiplexed client), beside 16 writers of plain XADDs, one per round trip;
    the same appends on redis-py's own client, pipelined, with the writers' CPU per append;
    and, for the record, 16 writer processes on the sync store, and one event per append."""
    appends, events, cpu = _run_writers(url, prefix, "async-games")
    base, _, _ = _run_writers(url, prefix, "async-plain")
    redispy_appends, _, redispy_cpu = _run_writers(url, prefix, "async-redispy")
    sync_appends, sync_events, _ = _run_writers(url, prefix, "games")
    sync_base, _, _ = _run_writers(url, prefix, "plain")
    single, _, _ = _run_writers(url, prefix, "single")
    ok = events >= 20_000
    return [
        (
            f"{WRITERS} writers on distinct games (asyncio, real 4-seat games, one append per "
            f"request, {events / appends:.1f} events each): {events:,.0f} events/s in "
            f"{appends:,.0f} appends/s vs plain XADD {base:,.0f}/s "
            f"(target >= 20,000 events/s) {'OK' if ok else 'MISSED'}",
            ok,
        ),
        (
            f"  the writers' CPU per append: {cpu:,.0f} us on the multiplexed client vs "
            f"{redispy_cpu:,.0f} us on redis-py's own, pipelined ({redispy_appends:,.0f} "
            f"appends/s): {cpu / redispy_cpu:.2f} (no target)",
            True,
        ),
        (
            f"  for the record, 16 writer processes on the sync store: {sync_events:,.0f} "
            f"events/s in {sync_appends:,.0f} appends/s vs plain XADD {sync_base:,.0f}/s; "
            f"one event per append: {single:,.0f} events/s (no target)",
            True,
        ),
    ]


def bench_load(client: redis.Redis, prefix: str) -> list[tuple[str, bool]]:
    _state, log = random_game(random.Random(1), load_game_data(), 4, "towers", ())
    events = log[:300]
    encoded = [encoder.encode(event) for event in events]
    store = EventStore(client, prefix=prefix)
    policy = SnapshotPolicy(50)
    state = NEW_GAME
    for version, (event, data) in enumerate(zip(events, encoded, strict=True)):
        store.append("plain", version, [data], f"cmd-{version}")
        result = store.append("snapped", version, [data], f"cmd-{version}")
        state = fold([event], state)
        snapshot_if_due(store, "snapped", result, state, policy)
    # The worst case of the policy: 49 events after the latest snapshot (at 250).
    for version, data in enumerate(encoded[:299]):
        result = store.append("worst", version, [data], f"cmd-{version}")
        if version + 1 == 250:
            snapshot_if_due(store, "worst", result, fold(events[:250]), policy)
    assert load_game(store, "plain").state == fold(events)
    assert load_game(store, "snapped").snapshot_version == 300
    assert load_game(store, "worst").events_folded == 49
    key = store.keys.game("plain").events

    def raw() -> None:
        client.xrange(key, "-", "+")

    plain, snapped, worst, base = _median_seconds(
        40,
        (10, lambda: load_game(store, "plain")),
        (10, lambda: load_game(store, "snapped")),
        (10, lambda: load_game(store, "worst")),
        (10, raw),
    )
    lines = []
    for name, ours, limit in (
        ("load 300 events, no snapshot", plain, 2.0),
        ("load 300 events, snapshot every 50 (at 300)", snapped, 0.5),
    ):
        ratio = ours / base
        ok = ratio <= limit
        lines.append(
            (
                _line(
                    name,
                    f"{ours * 1e6:,.0f} us",
                    f"XRANGE {base * 1e6:,.0f} us",
                    ratio,
                    target=f"<= {limit}x",
                    ok=ok,
                ),
                ok,
            )
        )
    lines.append(
        (
            f"  for the record, the policy's worst case, 299 events with the snapshot at 250: "
            f"{worst * 1e6:,.0f} us = {worst / base:.2f} of XRANGE (no target)",
            True,
        )
    )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    url = parser.parse_args().redis_url
    prefix = f"bench-{uuid.uuid4().hex[:10]}"
    client = redis.Redis.from_url(url)
    try:
        results = [bench_append(client, prefix), *bench_writers(url, prefix)]
        results += bench_load(client, prefix)
    finally:
        for key in list(client.scan_iter(match=f"{prefix}:*", count=1000)):
            client.delete(key)
        client.close()
    for line, _ok in results:
        print(line)
    targets = [ok for line, ok in results if "no target" not in line]
    print(f"{sum(targets)} of {len(targets)} targets met")


if __name__ == "__main__":
    main()
