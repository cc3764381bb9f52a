"""The game server's app with no HTTP at all: commands played by calling its ASGI handler in
this process, beside the bare baseline app's one-XADD POST called the same way, in one run
(issue: run it for real).

    .venv/bin/python bench/inprocess.py [--seconds 10] [--rounds 3] [--clients 32]

Why: bench/http.py and the side-by-side harness measure a command served over HTTP, where the
server's CPU is the app's own work (the command lane, the rules, the append, the receipt, the
log line) and its transport's (the ASGI server, its sockets, the ASGI messages). Served here
without a transport, a command costs only the first: the least it could cost the server if
its transport were free, and what a faster transport could at most save.

Needs `redis-server`: starts a private one with AOF `appendfsync always` in a temporary folder.
The clients are bench/traffic.py's (`Table`: one 4-seat game each, one command per request,
folding the events it is answered), given an `AsgiSession` in place of aiohttp's: a request
is one call of the app. Their own CPU (choosing, encoding, folding) is counted apart: it runs
between one request's answer and that client's next request, when no other task runs (a
client does not wait in between), and is taken away from the process's. The app's log lines
go to a pipe drained by another process, as under a process manager.

Prints, per kind of request, requests/s (median of the rounds) and the CPU each request cost
the app, Redis and the clients, and the ratio of the two apps' CPU. Exit status 0 when every
request was answered 2xx.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path, and bench/http.py would shadow
# the standard library's `http`.
_here = Path(__file__).parent.resolve()
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _here]
sys.path.insert(0, str(_here.parent))

import argparse  # noqa: E402
import asyncio  # noqa: E402
import os  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from collections.abc import Awaitable, Callable  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402
from json import dumps, loads  # noqa: E402
from types import TracebackType  # noqa: E402
from typing import Any  # noqa: E402
from urllib.parse import urlsplit  # noqa: E402

import uvloop  # noqa: E402
from litestar import Litestar  # noqa: E402

from bench.baseline_app import create as create_baseline  # noqa: E402
from bench.cpu import cpu_seconds  # noqa: E402
from bench.processes import private_redis  # noqa: E402
from bench.traffic import SKIP, commands_job, xadd_job  # noqa: E402
from server.app import create_app  # noqa: E402
from server.config.settings import Settings  # noqa: E402


class Answer:
    """What bench/traffic.py's clients read of an aiohttp response."""

    def __init__(self, status: int, body: bytes) -> None:
        self.status = status
        self._body = body

    async def read(self) -> bytes:
        return self._body

    async def json(self) -> Any:
        return loads(self._body)


@dataclass
class AsgiSession:
    """The part of aiohttp's `ClientSession` that bench/traffic.py's clients use, answered by
    calling `app` in this process. `client_cpu`: the CPU its clients used between an answer
    and their next request (module docstring)."""

    app: Any
    client_cpu: float = 0.0
    failed: int = 0
    _left: dict[object, float] = field(default_factory=dict)

    def post(
        self, url: str, *, data: bytes | None = None, json: Any = None, headers: Any = None
    ) -> _Call:
        body = data if data is not None else dumps(json).encode()
        return _Call(self, "POST", url, body, headers or {})

    def get(self, url: str, *, headers: Any = None) -> _Call:
        return _Call(self, "GET", url, b"", headers or {})

    def measure_from_now(self) -> None:
        self.client_cpu = 0.0
        self._left.clear()

    async def call(self, method: str, url: str, body: bytes, headers: dict[str, str]) -> Answer:
        now = time.thread_time()
        task = asyncio.current_task()
        left = self._left.pop(task, None)
        if left is not None:
            self.client_cpu += now - left
        path = urlsplit(url).path
        raw = [(name.lower().encode(), value.encode()) for name, value in headers.items()]
        if body:
            raw.append((b"content-length", b"%d" % len(body)))
            if not any(name == b"content-type" for name, _ in raw):
                raw.append((b"content-type", b"application/json"))
        scope = {
            "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": method,
            "scheme": "http", "path": path, "raw_path": path.encode(), "query_string": b"",
            "root_path": "", "headers": raw, "client": ("127.0.0.1", 50000),
            "server": ("127.0.0.1", 8000), "state": {},
        }  # fmt: skip
        messages = [{"type": "http.request", "body": body, "more_body": False}]
        status, chunks = 500, []

        async def receive() -> dict[str, Any]:
            if messages:
                return messages.pop()
            await asyncio.Event().wait()  # a client that never goes away
            raise AssertionError

        async def send(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                chunks.append(message.get("body", b""))

        await self.app(scope, receive, send)
        if status >= 300:
            self.failed += 1
        self._left[task] = time.thread_time()
        return Answer(status, b"".join(chunks))


class _Call:
    def __init__(
        self, session: AsgiSession, method: str, url: str, body: bytes, headers: dict[str, str]
    ) -> None:
        self._request = session.call(method, url, body, headers)

    async def __aenter__(self) -> Answer:
        return await self._request

    async def __aexit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        return None


Job = Callable[[Any, str, int, Any], Awaitable[Callable[[], Awaitable[float | None]]]]


@dataclass
class Figures:
    rates: list[float] = field(default_factory=list)
    app: list[float] = field(default_factory=list)
    redis: list[float] = field(default_factory=list)
    clients: list[float] = field(default_factory=list)
    failed: int = 0


async def window(
    app: Litestar, job: Job, *, clients: int, seconds: float, redis_pid: int, figures: Figures
) -> None:
    """`clients` loops of `job` against `app` for `seconds`; their figures into `figures`."""
    session = AsgiSession(app)
    async with app.lifespan():
        steps = [await job(session, "", index, None) for index in range(clients)]
        for step in steps:  # the first of each, as a server's connections are warmed up
            await step()
        deadline = time.perf_counter() + seconds
        requests = 0

        async def loop(step: Callable[[], Awaitable[float | None]]) -> None:
            nonlocal requests
            while time.perf_counter() < deadline:
                if await step() != SKIP:
                    requests += 1

        session.measure_from_now()
        redis0, process0, began = cpu_seconds([redis_pid]), time.process_time(), time.perf_counter()
        await asyncio.gather(*(loop(step) for step in steps))
        elapsed = time.perf_counter() - began
        process = time.process_time() - process0
        redis = cpu_seconds([redis_pid]) - redis0
    figures.rates.append(requests / elapsed)
    figures.app.append((process - session.client_cpu) / requests)
    figures.redis.append(redis / requests)
    figures.clients.append(session.client_cpu / requests)
    figures.failed += session.failed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="per window")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", type=int, default=32)
    args = parser.parse_args(argv)
    uvloop.install()
    sys.stdout.flush()
    saved = os.dup(1)
    # The app's log lines go to a pipe another process drains, as under a process manager.
    drain = subprocess.Popen(["cat"], stdin=subprocess.PIPE, stdout=subprocess.DEVNULL)
    assert drain.stdin is not None
    os.dup2(drain.stdin.fileno(), 1)
    with tempfile.TemporaryDirectory() as folder:
        redis, url = private_redis(Path(folder))
        prefix = f"bench-{uuid.uuid4().hex[:8]}"
        os.environ |= {"BENCH_REDIS_URL": url, "BENCH_PREFIX": prefix}
        kinds: dict[str, tuple[Callable[[], Litestar], Job]] = {
            "commands (command lane)": (
                lambda: create_app(Settings(redis_url=url, prefix=prefix)),
                commands_job,
            ),
            "bare XADD POST (baseline app)": (create_baseline, xadd_job),
        }
        figures = {name: Figures() for name in kinds}
        try:
            for _ in range(args.rounds):
                for name, (make, job) in kinds.items():
                    run = window(make(), job, clients=args.clients, seconds=args.seconds,
                                 redis_pid=redis.pid, figures=figures[name])  # fmt: skip
                    asyncio.run(run)
        finally:
            redis.terminate()
            redis.wait(timeout=10)
            os.dup2(saved, 1)
            os.close(saved)
            drain.stdin.close()
            drain.wait(timeout=10)
    return _report(figures, clients=args.clients, rounds=args.rounds, seconds=args.seconds)


def _report(figures: dict[str, Figures], *, clients: int, rounds: int, seconds: float) -> int:
    """Print the medians of the rounds and the ratio of the two apps' CPU; the exit status."""
    print(
        f"in one process, no HTTP: {clients} clients, {rounds} rounds of "
        f"{seconds:g} s; Redis AOF appendfsync always (private); CPU per request",
    )
    print(f"{'request':<32}{'req/s':>9}{'app us':>9}{'redis us':>10}{'client us':>11}")
    median = {name: {k: statistics.median(getattr(f, k)) for k in ("rates", "app", "redis",
              "clients")} for name, f in figures.items()}  # fmt: skip
    for name, row in median.items():
        print(
            f"{name:<32}{row['rates']:>9,.0f}{row['app'] * 1e6:>9.0f}{row['redis'] * 1e6:>10.0f}"
            f"{row['clients'] * 1e6:>11.0f}",
        )
    ours, bare = median.values()
    floor = ours["app"] + ours["redis"]
    print(
        f"commands / bare XADD = {bare['app'] / ours['app']:.2f} (app CPU per request, bare / "
        f"command)\na command with a free transport: {floor * 1e6:.0f} us of app and Redis CPU "
        f"({1 / floor:,.0f} moves per CPU-second)",
    )
    failed = sum(f.failed for f in figures.values())
    if failed:
        print(f"FAILED requests: {failed}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
