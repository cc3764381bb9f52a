"""The game server under uvicorn and under granian, side by side in one run, with the CPU each
request costs the server and Redis, beside bare Litestar baselines served the same way
(issue: run it for real).

    .venv/bin/python bench/http.py [--seconds 5] [--rounds 3] [--clients 32]

Needs `wrk` (Debian's package: `apt-get install wrk`) and `redis-server`. Starts a private
`redis-server` with AOF `appendfsync always` in a temporary folder, and under each ASGI server
`patrician serve --workers 2` and the baselines of bench/baseline_app.py (two workers, served
by the same function, `server.transport.serving.serve`). Then, in rounds (the order of the servers
alternating, this machine's speed drifting within seconds):

- board view (wrk): a seat's GET of a game in play, gzip taken, beside a bare Struct GET;
- commands (the Python client of bench/traffic.py: only a client that folds the game knows
  the legal commands), one 4-seat game per client, through the command lane and through
  Litestar's own route behind it (`.../commands/`), beside a POST doing one XADD, driven by
  the same client and by wrk.

For each: requests/s (median of the rounds), p50/p99, and the CPU per request of the server's
process tree and of Redis, read from /proc (utime + stime) over the window of the load, and
for commands the moves per CPU-second counting Redis (the games made in the window when one
ends count in its CPU, as a side-by-side harness with a peer server counts them). The load
average is printed with the figures: on a shared machine only the ratios of one run compare,
so this prints ratios and sets no bar of its own; the target against the peer is measured
side by side with it (docs/operations.md, "Capacity"). Exit status 0 when every window ran
without failed requests.
"""

from __future__ import annotations

import sys
from pathlib import Path

# Run as a script, this file's folder comes first on sys.path, and this file would shadow
# the standard library's `http` (and bench/ the project).
_here = Path(__file__).parent.resolve()
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != _here]
sys.path.insert(0, str(_here.parent))

import argparse  # noqa: E402
import asyncio  # noqa: E402
import json  # noqa: E402
import os  # noqa: E402
import shutil  # noqa: E402
import statistics  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import threading  # noqa: E402
import time  # noqa: E402
import uuid  # noqa: E402
from dataclasses import dataclass, field  # noqa: E402

from bench.cpu import cpu_seconds, load_average, process_tree  # noqa: E402
from bench.processes import BIN, ROOT, free_port, private_redis, start, stop  # noqa: E402
from bench.traffic import load, prepare_games  # noqa: E402
from server.transport.serving import SERVERS  # noqa: E402

WRK_SCRIPT = Path(__file__).with_name("wrk.lua")
XADD_BODY = json.dumps(
    {"expected_version": 123, "command_id": uuid.uuid4().hex, "commands": [{"type": "skip"}]}
)
# --- CPU from /proc ---------------------------------------------------------------------


class CpuWindow:
    """The CPU a server tree and Redis used between `begin` and `end`."""

    def __init__(self, server_pid: int, redis_pid: int) -> None:
        self.pids, self.redis_pid = process_tree(server_pid), redis_pid
        self.server = self.redis = 0.0

    def begin(self) -> None:
        self.server, self.redis = -cpu_seconds(self.pids), -cpu_seconds([self.redis_pid])

    def end(self) -> None:
        self.server += cpu_seconds(self.pids)
        self.redis += cpu_seconds([self.redis_pid])


# --- the loads --------------------------------------------------------------------------


@dataclass
class Figures:
    """One kind of request on one server, over the rounds."""

    rates: list[float] = field(default_factory=list)
    p50s: list[float] = field(default_factory=list)
    p99s: list[float] = field(default_factory=list)
    requests: int = 0
    server_cpu: float = 0.0
    redis_cpu: float = 0.0
    failures: int = 0

    def add(self, rate: float, p50: float, p99: float, requests: int, cpu: CpuWindow) -> None:
        self.rates.append(rate)
        self.p50s.append(p50)
        self.p99s.append(p99)
        self.requests += requests
        self.server_cpu += cpu.server
        self.redis_cpu += cpu.redis

    @property
    def rate(self) -> float:
        return statistics.median(self.rates)

    def per_request_us(self, cpu: float) -> float:
        return 1e6 * cpu / self.requests if self.requests else float("nan")


def wrk(url: str, clients: int, seconds: float, cpu: CpuWindow, **env: str) -> dict[str, float]:
    """One wrk run (two threads, `clients` connections); its report (bench/wrk.lua)."""
    command = ["wrk", "-t2", f"-c{clients}", f"-d{seconds:g}s", "-s", str(WRK_SCRIPT), url]
    environment = {**os.environ, **{f"WRK_{name.upper()}": value for name, value in env.items()}}
    cpu.begin()
    done = subprocess.run(command, env=environment, capture_output=True, text=True, check=True)
    cpu.end()
    line = next(line for line in done.stdout.splitlines() if line.startswith("WRK "))
    report: dict[str, float] = json.loads(line[4:])
    return report


def run_wrk(
    figures: Figures, url: str, clients: int, seconds: float, cpu: CpuWindow, **env: str
) -> None:
    report = wrk(url, clients, seconds, cpu, **env)
    figures.failures += int(report["non_2xx"] + report["socket_errors"])
    figures.add(
        report["requests"] / report["seconds"],
        report["p50_us"] / 1000,
        report["p99_us"] / 1000,
        int(report["requests"]),
        cpu,
    )


def run_client(
    figures: Figures, job: str, url: str, cpu: CpuWindow, *, clients: int, seconds: float
) -> None:
    """bench/traffic.py's load generator, its window starting at a set time once every
    client is ready (its game made), so that the CPU is read over the same window."""
    start_at = time.time() + 8.0
    result: list[tuple[float, list[float]]] = []
    thread = threading.Thread(
        target=lambda: result.append(load(job, url, clients, seconds, start_at=start_at))
    )
    thread.start()
    time.sleep(max(0.0, start_at - time.time()))
    cpu.begin()
    time.sleep(seconds)
    cpu.end()
    thread.join(timeout=seconds + 300)
    rate, latencies = result[0]
    cut = statistics.quantiles(latencies, n=100)
    figures.add(rate, cut[49] * 1000, cut[98] * 1000, len(latencies), cpu)


# --- the processes ----------------------------------------------------------------------


def serve_command(server: str, factory: str, port: int) -> list[str]:
    """Python serving `factory` under `server` as `patrician serve` does (two workers)."""
    code = (
        "from server.transport.serving import serve; "
        f"serve({server!r}, host='127.0.0.1', port={port}, workers=2, factory={factory!r})"
    )
    return [str(BIN / "python"), "-c", code]


@dataclass
class Stack:
    """The game server and its baselines under one ASGI server."""

    server: str
    game: subprocess.Popen[bytes]
    game_url: str
    baseline: subprocess.Popen[bytes]
    baseline_url: str


def start_stack(server: str, redis_url: str, prefix: str) -> Stack:
    game_port, base_port = free_port(), free_port()
    game = start(
        [str(BIN / "patrician"), "serve", "--server", server, "--port", str(game_port),
         "--workers", "2", "--redis-url", redis_url],
        {"PATRICIAN_PREFIX": prefix},
        game_port,
    )  # fmt: skip
    baseline = start(
        serve_command(server, "bench.baseline_app:create", base_port),
        {"BENCH_REDIS_URL": redis_url, "BENCH_PREFIX": prefix, "PYTHONPATH": str(ROOT)},
        base_port,
    )
    return Stack(
        server, game, f"http://127.0.0.1:{game_port}", baseline, f"http://127.0.0.1:{base_port}"
    )


# --- the run ----------------------------------------------------------------------------

KINDS = ("board", "bare", "commands", "commands-route", "xadd", "xadd-wrk")
LABELS = {
    "board": "board view (wrk)",
    "bare": "bare Struct GET (wrk)",
    "commands": "commands (Python client)",
    "commands-route": "same, Litestar's route (Python)",
    "xadd": "bare XADD POST (Python client)",
    "xadd-wrk": "bare XADD POST (wrk)",
}


def one_round(
    stack: Stack,
    redis_pid: int,
    board: tuple[str, str],
    figures: dict[str, Figures],
    *,
    clients: int,
    seconds: float,
) -> None:
    """Each kind of request once on `stack`: the game server's, then its baseline's."""
    game_id, token = board
    game_cpu = CpuWindow(stack.game.pid, redis_pid)
    base_cpu = CpuWindow(stack.baseline.pid, redis_pid)
    run_wrk(
        figures["board"], f"{stack.game_url}/api/games/{game_id}", clients, seconds, game_cpu,
        token=token, gzip="1",
    )  # fmt: skip
    run_wrk(figures["bare"], f"{stack.baseline_url}/bare", clients, seconds, base_cpu)
    for kind, url, cpu in (
        ("commands", stack.game_url, game_cpu),
        ("commands-route", stack.game_url, game_cpu),
        ("xadd", stack.baseline_url, base_cpu),
    ):
        run_client(figures[kind], kind, url, cpu, clients=clients, seconds=seconds)
    run_wrk(
        figures["xadd-wrk"], f"{stack.baseline_url}/xadd", clients, seconds, base_cpu,
        method="POST", body=XADD_BODY,
    )  # fmt: skip


def report(results: dict[str, dict[str, Figures]], loads: list[str]) -> list[str]:
    lines = [
        f"{'server':8} {'requests':32} {'req/s':>7} {'p50 ms':>7} {'p99 ms':>7} "
        f"{'server us':>9} {'redis us':>8} {'fails':>5}",
    ]
    for server, figures in results.items():
        for kind in KINDS:
            each = figures[kind]
            lines.append(
                f"{server:8} {LABELS[kind]:32} {each.rate:7,.0f} "
                f"{statistics.median(each.p50s):7.2f} {statistics.median(each.p99s):7.2f} "
                f"{each.per_request_us(each.server_cpu):9.0f} "
                f"{each.per_request_us(each.redis_cpu):8.0f} {each.failures:5d}"
            )
    lines.append("")
    for server, figures in results.items():
        board, bare = figures["board"], figures["bare"]
        commands, xadd = figures["commands"], figures["xadd"]
        route = figures["commands-route"]
        lane = commands.per_request_us(commands.server_cpu) / route.per_request_us(route.server_cpu)
        per_cpu = commands.requests / (commands.server_cpu + commands.redis_cpu)
        lines += [
            f"{server}: board view / bare GET = {board.rate / bare.rate:.2f} (req/s), "
            f"{bare.server_cpu / bare.requests / (board.server_cpu / board.requests):.2f} "
            "(server CPU per request, bare / board)",
            f"{server}: commands / bare XADD = {commands.rate / xadd.rate:.2f} (req/s), "
            f"{xadd.server_cpu / xadd.requests / (commands.server_cpu / commands.requests):.2f}"
            " (server CPU per request, bare / command)",
            f"{server}: command lane / Litestar's route = {lane:.2f} (server CPU per command)",
            f"{server}: {per_cpu:,.0f} moves per CPU-second counting Redis "
            f"({commands.per_request_us(commands.server_cpu + commands.redis_cpu):.0f} us per "
            "move)",
        ]
    if len(results) == 2:
        (one, first), (other, second) = results.items()
        ratios = ", ".join(f"{kind} {second[kind].rate / first[kind].rate:.2f}" for kind in KINDS)
        lines.append(f"{other} / {one}, req/s: {ratios}")
    lines.append(f"load average (1, 5 min) at the start of each round: {'; '.join(loads)}")
    return lines


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=5.0, help="per window")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--clients", type=int, default=32)
    parser.add_argument("--servers", default=",".join(SERVERS))
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        print("bench/http.py needs wrk: apt-get install wrk", file=sys.stderr)
        return 2
    servers = args.servers.split(",")
    prefix = f"bench-{uuid.uuid4().hex[:8]}"
    folder = Path(tempfile.mkdtemp(prefix="bench-http-"))
    redis_process, redis_url = private_redis(folder)
    stacks: list[Stack] = []
    results = {server: {kind: Figures() for kind in KINDS} for server in servers}
    loads: list[str] = []
    try:
        for server in servers:
            stacks.append(start_stack(server, redis_url, prefix))
        time.sleep(1.0)
        in_play, _finished = asyncio.run(prepare_games(stacks[0].game_url))
        for number in range(args.rounds):
            loads.append(load_average())
            for stack in stacks[number % 2 :] + stacks[: number % 2]:
                one_round(
                    stack, redis_process.pid, in_play[0], results[stack.server],
                    clients=args.clients, seconds=args.seconds,
                )  # fmt: skip
    finally:
        for stack in stacks:
            stop(stack.game)
            stop(stack.baseline)
        redis_process.terminate()
        redis_process.wait(timeout=15)
        shutil.rmtree(folder, ignore_errors=True)
    print(
        f"{args.clients} connections, {args.rounds} rounds of {args.seconds:g} s per figure; "
        "Redis AOF appendfsync always (private); CPU per request from /proc"
    )
    for line in report(results, loads):
        print(line)
    failed = sum(each.failures for figures in results.values() for each in figures.values())
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
