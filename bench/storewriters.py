"""The concurrent writers of the store benchmark (bench/store.py): 16 of them appending real
games request by request, as the asyncio server does (tasks of two processes on the
server's multiplexed client, or on redis-py's own, pipelined), or as 16 processes on the sync
store, beside 16 writers of plain XADDs; what each appended in `WRITER_SECONDS`.

A module of its own because these run in the processes the benchmark spawns, and the games
they append are recorded here; bench/store.py prints their figures beside the others.
"""

from __future__ import annotations

import asyncio
import itertools
import multiprocessing
import random
import time
import uuid
from typing import Any

import redis
import redis.asyncio

from domain.decide import decide
from domain.events import encoder
from domain.evolve import fold
from domain.legal import legal_commands
from domain.playout import pick
from domain.setup import new_game
from server.config.card_data import load_game_data
from store.client import AsyncEventStore, EventStore
from store.multiplexed import MultiplexedRedis

EVENT = b'{"type":"card_played","seat":1,"card":"c17"}'
WRITERS = 16
WRITER_SECONDS = 3.0


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
