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
given Redis (default the machine's, 127.0.0.1:6379) and deletes its keys at the end. The
writers of the second figure, in processes of their own, are bench/storewriters.py's.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
import uuid
from collections.abc import Callable
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path and this file would shadow the
# `store` package it measures: take the folder off before importing the project.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

import redis  # noqa: E402

from bench.storewriters import EVENT, bench_writers  # noqa: E402
from domain.events import encoder  # noqa: E402
from domain.evolve import fold  # noqa: E402
from domain.state import NEW_GAME  # noqa: E402
from server.cli.simulation import random_game  # noqa: E402
from server.config.card_data import load_game_data  # noqa: E402
from store.client import EventStore  # noqa: E402
from store.loading import SnapshotPolicy, load_game, snapshot_if_due  # noqa: E402


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
