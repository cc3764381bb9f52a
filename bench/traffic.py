"""The traffic of the HTTP benchmarks: clients that play games through the API alone, and the
load generator that runs many of them, or bare requests, for a fixed time in two processes.

bench/server.py measures the game server with it beside bare Litestar endpoints, and
bench/http.py, bench/inprocess.py and bench/workers.py drive their servers with the same
clients, so that every figure of theirs counts the same requests. A module of its own: what
a client sends is apart from the servers it is sent to and from the figures printed.
"""

from __future__ import annotations

import asyncio
import functools
import multiprocessing
import random
import statistics
import time
import uuid
from collections.abc import Awaitable, Callable
from typing import Any

import aiohttp
import msgspec

from domain.commands import Command
from domain.events import Event, GameStarted
from domain.evolve import evolve
from domain.legal import legal_commands
from domain.state import NEW_GAME, State
from server.schema.answers import CommandsAccepted, EventList

_accepted = msgspec.json.Decoder(CommandsAccepted)
_event_list = msgspec.json.Decoder(EventList)
_encoder = msgspec.json.Encoder()


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


async def players(session: aiohttp.ClientSession, base: str, count: int) -> list[str]:
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


async def drive(
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


async def commands_job(
    session: aiohttp.ClientSession, base: str, _i: int, _x: Any, *, route: str = ""
) -> Any:
    table = Table(session, base, await players(session, base, 4), route=route)
    await table.new_game()
    return table.command


async def xadd_job(session: aiohttp.ClientSession, base: str, _i: int, _x: Any) -> Any:
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
    "commands": commands_job,
    "commands-route": functools.partial(commands_job, route="/"),
    "xadd": xadd_job,
    "bare": _getter("/bare"),
    "board": _board,
    "replay": _replay,
}


def _worker(task: tuple[str, str, int, float, Any], start_at: float | None, queue: Any) -> None:
    import uvloop

    uvloop.install()
    queue.put(asyncio.run(drive(*task, start_at=start_at)))


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
            table = Table(session, base, await players(session, base, 4))
            await table.new_game()
            for _ in range(60):
                await table.command()
            in_play.append((table.game_id, table.tokens[0]))
        table = Table(session, base, await players(session, base, 4))
        await table.new_game()
        while table.state.phase != "over":
            await table.command()
        return in_play, table.game_id
