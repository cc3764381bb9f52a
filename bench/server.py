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

Uses a unique key prefix and deletes its keys at the end.

One file on purpose: the servers it starts, the clients it runs and the figures it prints
are one measurement, read top to bottom.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import multiprocessing
import os
import random
import signal
import socket
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

# Run as a script, this file's folder comes first on sys.path and would shadow the project.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

import aiohttp  # noqa: E402
import msgspec  # noqa: E402
import redis  # noqa: E402

from domain.commands import Command  # noqa: E402
from domain.events import Event, GameStarted  # noqa: E402
from domain.evolve import evolve  # noqa: E402
from domain.legal import legal_commands  # noqa: E402
from domain.state import NEW_GAME, State  # noqa: E402
from server.schema.answers import CommandsAccepted, EventList  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
_accepted = msgspec.json.Decoder(CommandsAccepted)
_event_list = msgspec.json.Decoder(EventList)
_encoder = msgspec.json.Encoder()


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def start(command: list[str], env: dict[str, str], port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen(
        command,
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return process
        except OSError:
            time.sleep(0.1)
    process.kill()
    raise RuntimeError(f"{command[0]} did not start on port {port}")


def stop(process: subprocess.Popen[bytes]) -> None:
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)


# --- a client that plays through the API alone ----------------------------------------------


class Table:
    """One 4-seat game played by one client holding all four players' tokens. It knows the
    legal commands by folding the events the API gives it: every seat's own events once at the
    start (their dealt hands), then the public events each command returns."""

    def __init__(
        self, session: aiohttp.ClientSession, base: str, tokens: list[str], route: str = ""
    ) -> None:
        """`route`: "/" sends the commands to Litestar's own route (`.../commands/`), which
        the command lane in front of it leaves alone (server.api.command_lane)."""
        self.session, self.base, self.tokens, self.route = session, base, tokens, route
        self.rng = random.Random()
        self.game_id = ""
        self.state: State = NEW_GAME
        self.version = 0
        self.seat_tokens: list[str] = []

    def _headers(self, token: str) -> dict[str, str]:
        return {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    async def _post(self, path: str, token: str, body: Any) -> bytes:
        async with self.session.post(
            self.base + path, data=_encoder.encode(body), headers=self._headers(token)
        ) as answer:
            content = await answer.read()
            if answer.status >= 300:
                raise RuntimeError(f"{path}: {answer.status} {content[:200]!r}")
            return content

    async def new_game(self) -> None:
        created = msgspec.json.decode(
            await self._post("/api/games", self.tokens[0], {"seats": 4, "edition": "towers"})
        )
        self.game_id = created["game_id"]
        for token in self.tokens[1:]:
            await self._post(
                f"/api/games/{self.game_id}/join", token, {"invite_code": created["invite_code"]}
            )
        seen: dict[int, Event] = {}
        for token in self.tokens:
            async with self.session.get(
                f"{self.base}/api/games/{self.game_id}/events", headers=self._headers(token)
            ) as answer:
                listed = _event_list.decode(await answer.read())
            seen.update((item.version, item.event) for item in listed.events)
            self.version = listed.version
        state = NEW_GAME
        for version in sorted(seen):
            state = evolve(state, seen[version])
            if isinstance(seen[version], GameStarted):
                started = seen[version]
                assert isinstance(started, GameStarted)
                self.seat_tokens = [self.tokens[joined] for joined in started.seat_players]
        self.state = state

    async def command(self) -> float | None:
        """Send one command; its latency, or SKIP when a new game had to be set up first
        (that step's time is not one request's)."""
        fresh = self.state.pending is None
        if fresh:
            await self.new_game()
        pending = self.state.pending
        assert pending is not None
        legal: list[Command] = legal_commands(self.state, pending.seat)
        body = {
            "expected_version": self.version,
            "command_id": uuid.uuid4().hex,
            "commands": [self.rng.choice(legal)],
        }
        start = time.perf_counter()
        accepted = _accepted.decode(
            await self._post(
                f"/api/games/{self.game_id}/commands{self.route}",
                self.seat_tokens[pending.seat],
                body,
            )
        )
        latency = time.perf_counter() - start
        for item in accepted.events:
            self.state = evolve(self.state, item.event)
        self.version = accepted.version
        return SKIP if fresh else latency


async def _players(session: aiohttp.ClientSession, base: str, count: int) -> list[str]:
    tokens = []
    for number in range(count):
        async with session.post(f"{base}/api/players", json={"name": f"bench{number}"}) as answer:
            tokens.append((await answer.json())["token"])
    return tokens


# --- the load generator ---------------------------------------------------------------------

Step = Callable[[], Awaitable[float | None]]
"""A request of a load loop: it returns its own latency, SKIP not to count it, or None for
the loop to time it."""
SKIP = -1.0


async def _drive(
    job_name: str,
    base: str,
    clients: int,
    seconds: float,
    extra: Any,
    *,
    start_at: float | None = None,
) -> list[float]:
    """Run `clients` concurrent loops of one kind of request for `seconds` (from the wall
    clock time `start_at` if given, so that another process can read the CPU used over the
    same window); the latencies."""
    connector = aiohttp.TCPConnector(limit=clients + 4)
    latencies: list[float] = []
    async with aiohttp.ClientSession(connector=connector) as session:
        steps = [await JOBS[job_name](session, base, index, extra) for index in range(clients)]
        for step in steps:  # warm up each connection
            await step()
        if start_at is not None:
            await asyncio.sleep(max(0.0, start_at - time.time()))
        deadline = time.perf_counter() + seconds

        async def loop(step: Step) -> None:
            while time.perf_counter() < deadline:
                start = time.perf_counter()
                latency = await step()
                if latency is None:
                    latencies.append(time.perf_counter() - start)
                elif latency != SKIP:
                    latencies.append(latency)

        await asyncio.gather(*(loop(step) for step in steps))
    return latencies


async def _commands(
    session: aiohttp.ClientSession, base: str, _i: int, _x: Any, *, route: str = ""
) -> Any:
    table = Table(session, base, await _players(session, base, 4), route=route)
    await table.new_game()
    return table.command


async def _xadd(session: aiohttp.ClientSession, base: str, _i: int, _x: Any) -> Any:
    body = _encoder.encode(
        {"expected_version": 123, "command_id": uuid.uuid4().hex, "commands": [{"type": "skip"}]}
    )

    async def step() -> None:
        async with session.post(base + "/xadd", data=body) as answer:
            await answer.read()
            assert answer.status == 200

    return step


def _getter(path: str, headers: dict[str, str] | None = None) -> Any:
    async def job(session: aiohttp.ClientSession, base: str, _i: int, _x: Any) -> Any:
        async def step() -> None:
            async with session.get(base + path, headers=headers) as answer:
                await answer.read()
                assert answer.status == 200, answer.status

        return step

    return job


async def _board(session: aiohttp.ClientSession, base: str, index: int, extra: Any) -> Any:
    game_id, token = extra[index % len(extra)]
    return await _getter(f"/api/games/{game_id}", {"Authorization": f"Bearer {token}"})(
        session, base, index, None
    )


async def _replay(session: aiohttp.ClientSession, base: str, index: int, extra: Any) -> Any:
    return await _getter(f"/api/games/{extra}/replay")(session, base, index, None)


JOBS: dict[str, Any] = {
    "commands": _commands,
    "commands-route": functools.partial(_commands, route="/"),
    "xadd": _xadd,
    "bare": _getter("/bare"),
    "board": _board,
    "replay": _replay,
}


def _worker(task: tuple[str, str, int, float, Any], start_at: float | None, queue: Any) -> None:
    import uvloop

    uvloop.install()
    queue.put(asyncio.run(_drive(*task, start_at=start_at)))


def load(
    job: str,
    base: str,
    clients: int,
    seconds: float,
    extra: Any = None,
    *,
    start_at: float | None = None,
) -> tuple[float, list[float]]:
    """Two load processes sharing `clients`; (requests per second, the latencies). With
    `start_at` (wall clock time), the window starts then, whenever the clients are ready."""
    context = multiprocessing.get_context("spawn")
    queue = context.Queue()
    shares = [clients // 2, clients - clients // 2]
    processes = [
        context.Process(target=_worker, args=((job, base, share, seconds, extra), start_at, queue))
        for share in shares
        if share
    ]
    for process in processes:
        process.start()
    latencies: list[float] = []
    for _ in processes:
        latencies += queue.get(timeout=seconds + 300)
    for process in processes:
        process.join(timeout=30)
    return len(latencies) / seconds, latencies


def p99(latencies: list[float]) -> float:
    return statistics.quantiles(latencies, n=100)[98] if len(latencies) > 100 else max(latencies)


def paired(
    ours: tuple[str, str, Any], baseline: tuple[str, str, Any], clients: int, seconds: float
) -> tuple[tuple[float, float], tuple[float, float]]:
    """Ours and its baseline in turns, five rounds each (this machine's speed drifts within
    seconds): the median rate of each and the p99 of all its latencies."""
    rates: tuple[list[float], list[float]] = ([], [])
    latencies: tuple[list[float], list[float]] = ([], [])
    for _ in range(5):
        for index, (job, url, extra) in enumerate((ours, baseline)):
            rate, seen = load(job, url, clients, seconds / 5, extra)
            rates[index].append(rate)
            latencies[index].extend(seen)
    return (
        (statistics.median(rates[0]), p99(latencies[0])),
        (statistics.median(rates[1]), p99(latencies[1])),
    )


async def prepare_games(base: str) -> tuple[list[tuple[str, str]], str]:
    """Games in play for the board views, and a finished 4-seat game for the replays."""
    async with aiohttp.ClientSession() as session:
        in_play = []
        for _ in range(8):
            table = Table(session, base, await _players(session, base, 4))
            await table.new_game()
            for _ in range(60):
                await table.command()
            in_play.append((table.game_id, table.tokens[0]))
        table = Table(session, base, await _players(session, base, 4))
        await table.new_game()
        while table.state.phase != "over":
            await table.command()
        return in_play, table.game_id


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/0")
    parser.add_argument("--seconds", type=float, default=15.0, help="per figure")
    parser.add_argument("--clients", type=int, default=32)
    args = parser.parse_args()
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    game_port, base_port = free_port(), free_port()
    game = start(
        [str(BIN / "patrician"), "serve", "--port", str(game_port), "--workers", "2",
         "--redis-url", args.redis_url],
        {"PATRICIAN_PREFIX": prefix},
        game_port,
    )  # fmt: skip
    baseline = start(
        [str(BIN / "uvicorn"), "bench.baseline_app:create", "--factory", "--workers", "2",
         "--port", str(base_port), "--host", "127.0.0.1", "--no-access-log", "--log-level",
         "warning"],
        {"BENCH_REDIS_URL": args.redis_url, "BENCH_PREFIX": prefix, "PYTHONPATH": str(ROOT)},
        base_port,
    )  # fmt: skip
    game_url, base_url = f"http://127.0.0.1:{game_port}", f"http://127.0.0.1:{base_port}"
    lines: list[tuple[str, bool]] = []
    try:
        time.sleep(1.0)
        in_play, finished = asyncio.run(prepare_games(game_url))
        seconds, clients = args.seconds, args.clients
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


if __name__ == "__main__":
    sys.exit(main())
