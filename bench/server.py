"""Benchmark of the game server over real HTTP against real Redis, beside bare Litestar
baselines served the same way in the same run (issue: the game server).

    .venv/bin/python bench/server.py [--redis-url URL] [--seconds 15] [--clients 32]

Starts `patrician serve --workers 2` and the baseline app (`bench/baseline_app.py`, also two
uvicorn workers) on loopback ports, then drives each with the same load generator (two
processes of asyncio + aiohttp clients, bounded in time):

- commands: 32 clients, each playing its own 4-seat game through the API alone (it folds the
  events the API returns to know the legal commands), one command per request; requests/s
  and p99 latency, beside 32 clients POSTing a same-size body to an endpoint doing one XADD
  (target: >= 50 % of its rate, p99 < 50 ms);
- board views: 32 clients GETting the board of a game in play with a seat's token, beside a
  bare endpoint returning a small Struct (target: >= 50 %);
- replays: clients GETting the full replay of a finished 4-seat game (target: >= 200/s).

Uses a unique key prefix and deletes its keys at the end. The clients and the load generator
are bench/traffic.py's, the servers are started by bench/processes.py; this is the
measurement itself: which servers, which loads side by side, and the figures printed.
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
import uuid
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path and would shadow the project.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

import redis  # noqa: E402

from bench.processes import BIN, ROOT, free_port, start, stop  # noqa: E402
from bench.traffic import load, p99, paired, prepare_games  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--seconds", type=float, default=15.0, help="per figure")
    parser.add_argument("--clients", type=int, default=32)
    args = parser.parse_args()
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    game, game_url, baseline, base_url = _start_servers(args.redis_url, prefix)
    lines: list[tuple[str, bool]] = []
    try:
        time.sleep(1.0)
        lines = _figures(game_url, base_url, seconds=args.seconds, clients=args.clients)
    finally:
        stop(game)
        stop(baseline)
        client = redis.Redis.from_url(args.redis_url)
        for key in list(client.scan_iter(match=f"{prefix}:*", count=1000)):
            client.delete(key)
        client.close()
    for line, _ in lines:
        print(line)
    print(f"{sum(ok for _, ok in lines)} of {len(lines)} targets met")
    return 0 if all(ok for _, ok in lines) else 1


def _start_servers(
    redis_url: str, prefix: str
) -> tuple[subprocess.Popen[bytes], str, subprocess.Popen[bytes], str]:
    """`patrician serve --workers 2` and the baseline app (two uvicorn workers) on their own
    loopback ports, and their URLs."""
    game_port, base_port = free_port(), free_port()
    game = start(
        [str(BIN / "patrician"), "serve", "--port", str(game_port), "--workers", "2",
         "--redis-url", redis_url],
        {"PATRICIAN_PREFIX": prefix},
        game_port,
    )  # fmt: skip
    baseline = start(
        [str(BIN / "uvicorn"), "bench.baseline_app:create", "--factory", "--workers", "2",
         "--port", str(base_port), "--host", "127.0.0.1", "--no-access-log", "--log-level",
         "warning"],
        {"BENCH_REDIS_URL": redis_url, "BENCH_PREFIX": prefix, "PYTHONPATH": str(ROOT)},
        base_port,
    )  # fmt: skip
    return game, f"http://127.0.0.1:{game_port}", baseline, f"http://127.0.0.1:{base_port}"


def _figures(
    game_url: str, base_url: str, *, seconds: float, clients: int
) -> list[tuple[str, bool]]:
    """Commands, board views and replays, each beside its baseline: the lines to print and
    whether each target is met."""
    lines: list[tuple[str, bool]] = []
    in_play, finished = asyncio.run(prepare_games(game_url))
    (ours, ours_p99), (xadd, xadd_p99) = paired(
        ("commands", game_url, None), ("xadd", base_url, None), clients, seconds
    )
    ratio = ours / xadd
    ok = ratio >= 0.5 and ours_p99 < 0.050
    lines.append((
        f"commands ({clients} clients, distinct games): {ours:,.0f} req/s, p99 "
        f"{ours_p99 * 1000:.1f} ms vs bare XADD endpoint {xadd:,.0f} req/s (p99 "
        f"{xadd_p99 * 1000:.1f} ms) = {ratio:.2f} (target >= 0.50, p99 < 50 ms) "
        f"{'OK' if ok else 'MISSED'}",
        ok,
    ))  # fmt: skip
    (board, board_p99), (bare, bare_p99) = paired(
        ("board", game_url, in_play), ("bare", base_url, None), clients, seconds
    )
    ratio = board / bare
    lines.append((
        f"board view ({clients} clients): {board:,.0f} req/s (p99 {board_p99 * 1000:.1f} ms)"
        f" vs bare Struct endpoint {bare:,.0f} req/s (p99 {bare_p99 * 1000:.1f} ms) = "
        f"{ratio:.2f} (target >= 0.50) {'OK' if ratio >= 0.5 else 'MISSED'}",
        ratio >= 0.5,
    ))  # fmt: skip
    replays, replay_latencies = load("replay", game_url, 8, seconds, finished)
    replay_p99 = p99(replay_latencies)
    lines.append((
        f"full replay of a finished 4-seat game (8 clients): {replays:,.0f}/s (p99 "
        f"{replay_p99 * 1000:.1f} ms) (target >= 200/s) {'OK' if replays >= 200 else 'MISSED'}",
        replays >= 200,
    ))  # fmt: skip
    return lines


if __name__ == "__main__":
    sys.exit(main())
