"""Benchmark of Web Push latency at light load (issue 30). Run:
`.venv/bin/python bench/push.py [--redis-url URL] [--games N] [--seconds S]`.

`patrician serve` and one `patrician worker` on a real Redis, with a push key file; 4-seat
games played over HTTP, each game one move a second (10 games: about 10 moves a second in
all), every player with a device subscribed to a push service on loopback (a real HTTP
server that checks the VAPID token and decrypts each message: `tests.workers.push_service`)
and a webhook to a receiver on loopback. From the answer of the command that began a turn to
the arrival of that turn's push at the device of the player whose turn it is: p50 and p99
(target: p99 within 1 s). The baseline, measured in the same run over the same turns: the
arrival of the same turn's webhook (sent by the append's follow-up itself, where a push is a
job of its own), and the ratio of the two.

Uses a unique key prefix on the given Redis (default the machine's, 127.0.0.1:6379) and
deletes its keys at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path and would shadow the project.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

import aiohttp  # noqa: E402
import redis  # noqa: E402

from bench.processes import free_port, start, stop  # noqa: E402
from bench.traffic import Table, players  # noqa: E402
from bench.workers import _delete  # noqa: E402
from outbound.web_push import read_push_key  # noqa: E402
from tests.workers.push_service import Device, PushService  # noqa: E402
from tests.workers.sink import Sink  # noqa: E402

TARGET = 1.0
"""Seconds from the append to the push, at the 99th percentile."""


async def _setup(
    session: aiohttp.ClientSession, base: str, service: PushService, sink: Sink, games: int
) -> tuple[list[Table], dict[str, str]]:
    """The games begun, each player with a device and a webhook; each token's device path."""
    tokens = await players(session, base, 4 * games)
    paths = {}
    for number, token in enumerate(tokens):
        auth = {"Authorization": f"Bearer {token}"}
        device = service.add(Device())
        body = {**device.subscription(service), "name": f"bench {number}"}
        async with session.post(f"{base}/api/me/push", json=body, headers=auth) as answer:
            assert answer.status == 201, await answer.text()
        hook = {"webhook": {"url": sink.url(device.path)}}
        async with session.put(f"{base}/api/me/notifications", json=hook, headers=auth) as answer:
            sink.secrets[device.path] = (await answer.json())["webhook"]["secret"]
        paths[token] = device.path
    tables = [Table(session, base, tokens[4 * n : 4 * n + 4]) for n in range(games)]
    for table in tables:
        await table.new_game()
    await asyncio.sleep(3)  # what the starts told drains
    return tables, paths


async def _played(base: str, service: PushService, sink: Sink, games: int, seconds: float) -> None:
    """Play, then print the latencies of push and of the webhooks of the same turns."""
    began: dict[tuple[str, int], float] = {}  # (device path, version) -> the answer's time
    async with aiohttp.ClientSession() as session:
        tables, paths = await _setup(session, base, service, sink, games)
        skip = {path: len(service.received.get(path, [])) for path in paths.values()}
        stop_at = time.monotonic() + seconds

        async def play(index: int, table: Table) -> None:
            await asyncio.sleep(index / games)  # out of step: a steady flow, no bursts
            while time.monotonic() < stop_at:
                before = table.state.pending
                await table.command()
                after = table.state.pending
                if after is not None and before is not None and after.seat != before.seat:
                    path = paths[table.seat_tokens[after.seat]]
                    began[(path, table.version)] = time.monotonic()
                await asyncio.sleep(1.0)

        await asyncio.gather(*(play(n, t) for n, t in enumerate(tables)))
    await asyncio.sleep(3)  # the last ones on their way
    pushed, hooked = [], []
    for path, start_version in skip.items():
        turns = sorted((v, t) for (p, v), t in began.items() if p == path)
        arrivals = [r.at for r in service.received.get(path, [])[start_version:]
                    if r.message["body"].startswith("Your turn")]  # fmt: skip
        for (_version, sent), arrived in zip(turns, arrivals, strict=False):
            pushed.append(arrived - sent)
        hooks = zip(sink.received[path], sink.arrived[path], strict=True)
        by_version = {m["version"]: at for m, at in hooks if m["type"] == "turn.started"}
        hooked += [by_version[v] - sent for v, sent in turns if v in by_version]
    _report("push", sorted(pushed), len(began))
    _report("webhook (baseline)", sorted(hooked), len(began))
    ratio = statistics.median(pushed) / statistics.median(hooked)
    p99 = sorted(pushed)[int(0.99 * (len(pushed) - 1))]
    verdict = "met" if p99 <= TARGET else "MISSED"
    print(f"push p50 / webhook p50: {ratio:.2f}; target push p99 <= {TARGET:.0f} s: {verdict}")
    assert service.failure is None and sink.failure is None, (service.failure, sink.failure)


def _report(what: str, found: list[float], turns: int) -> None:
    p50 = statistics.median(found)
    p99 = found[int(0.99 * (len(found) - 1))]
    print(f"{what}: p50 {p50 * 1000:.0f} ms, p99 {p99 * 1000:.0f} ms, max "
          f"{found[-1] * 1000:.0f} ms over {len(found)} of {turns} turns")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--games", type=int, default=10)
    parser.add_argument("--seconds", type=float, default=30.0)
    args = parser.parse_args()
    prefix = f"bench-push-{uuid.uuid4().hex[:8]}"
    patrician = str(Path(sys.executable).parent / "patrician")
    with tempfile.TemporaryDirectory() as folder:
        key = Path(folder) / "push-key.pem"
        subprocess.run([patrician, "push-keygen", str(key)], check=True, capture_output=True)
        port = free_port()
        env = {
            "PATRICIAN_PREFIX": prefix, "PATRICIAN_WEBHOOK_ALLOW": "127.0.0.1",
            "PATRICIAN_PUSH_KEY_FILE": str(key), "PATRICIAN_RATE_NOTIFICATIONS": "0",
        }  # fmt: skip
        server = start([patrician, "serve", "--port", str(port), "--redis-url", args.redis_url],
                       env, port)  # fmt: skip
        worker = start([patrician, "worker", "--redis-url", args.redis_url], env, port)
        try:
            base = f"http://127.0.0.1:{port}"
            public = read_push_key(key).public_key
            with Sink() as sink, PushService(public) as service:
                asyncio.run(_played(base, service, sink, args.games, args.seconds))
        finally:
            for process in (worker, server):
                stop(process)
            _delete(redis.Redis.from_url(args.redis_url), prefix)


if __name__ == "__main__":
    main()
