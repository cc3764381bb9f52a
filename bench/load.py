"""Load benchmark: many concurrent games played to the end against the whole stack, with
crash drills (issue: run it for real).

    .venv/bin/python bench/load.py [--games 1000] [--seconds 1800] [--drills [api,worker,...]]
    .venv/bin/python bench/load.py --games 50            # the quick mode
    .venv/bin/python bench/load.py --think 5 --ramp 60   # paced: players think, games spread

Starts the stack of `make up` on loopback in a temporary folder (bench/loadstack.py: Redis on
deploy/redis.conf with its AOF, the API processes, the followers and the job worker), then two
client processes (bench/loadclients.py: asyncio + aiohttp) that play games of 2-5 seats, both
editions and the modules, some seats the server's bots, the others the clients' own random
players woken by their webhooks, whole turns and single commands mixed (each command's
answer carries the board after it: `?include=board`). By default the load is closed: a
player plays the moment it is told, and every game is set up at once, so the stack is the
only wait and the notifications queue behind one another (a measure of throughput); with
`--think` players wait a while before each turn and with `--ramp` the games are set up over
a while (a measure of latency at a pace). With `--drills`,
while the games are played: one API process, then the job worker, a follower, then Redis
are killed with SIGKILL and started again (Redis on its AOF); the clients keep sending each
request, with the same `command_id`, until the stack answers. Then every game's record is checked
(bench/loadchecks.py) and this prints: commands per second, the p50/p99 latency of command
requests, the errors (must be 0), the notifications delivered against those owed, the
receipts checked, the games finished and audited, and the Redis memory of a finished game;
and, one per line starting `figure `, for scripts: the CPU per command of each kind of
process and of the whole stack (clients excluded), the Redis commands per command, the
notifications' p50 and p99, the commands per second. Exit status 0 when every check holds.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import queue
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

# Run as a script, this file's folder comes first on sys.path and would shadow the project.
sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != Path(__file__).parent.resolve()]

import httpx  # noqa: E402

from bench.cpu import CpuByLine  # noqa: E402
from bench.loadapi import Figures  # noqa: E402
from bench.loadclients import Outcome, Share, run_share  # noqa: E402
from bench.loadstack import BIN, Stack  # noqa: E402
from domain.board import EDITIONS, MODULES  # noqa: E402
from evidence.audit import audit, exit_code  # noqa: E402
from store.archiving import archive_game  # noqa: E402
from store.client import EventStore  # noqa: E402
from store.keys import KeySpace  # noqa: E402
from store.memory import game_memory  # noqa: E402

DRILLS = ("api", "worker", "follower", "redis")
ARCHIVED = 100
"""How many finished games are archived at the end, to measure an archived game."""
FIRST_DRILL_AFTER = 20
"""The commands acknowledged before the first drill (at most 2 s after the games were set up):
a game of a few seats against fast followers may be over in a second."""
DOWN_SECONDS = 1.0
"""How long a killed process stays down before it is started again."""


def games_of(
    count: int, rng: random.Random, most_seats: int = 5
) -> list[tuple[int, str, list[str], list[str]]]:
    """Mixed games: 2-5 seats, both editions, any modules (towers only), 0-2 server bots."""
    games: list[tuple[int, str, list[str], list[str]]] = []
    for _ in range(count):
        seats, edition = rng.randint(2, most_seats), rng.choice(EDITIONS)
        modules: list[str] = [m for m in MODULES if edition == "towers" and rng.random() < 0.4]
        bots = rng.choices([0, 1, 2], weights=[6, 3, 1])[0]
        levels = [rng.choice(["random", "greedy"]) for _ in range(min(bots, seats - 1))]
        games.append((seats, edition, modules, levels))
    return games


def drill(stack: Stack, name: str) -> str:
    """SIGKILL one process of the stack and start it again with the same command line (an
    API process is started again by its line's supervisor); what was killed."""
    if name == "api":
        line = stack.names("patrician serve")[0]
        return f"API process {stack.kill_api_process(line)} of line {line}"
    word = {"worker": "--role jobs", "follower": "--role follower", "redis": "redis-server"}
    line = stack.names(word[name])[0]
    stack.kill(line)
    time.sleep(DOWN_SECONDS)
    stack.launch(line)
    return f"line {line}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", type=int, default=1000)
    parser.add_argument("--seconds", type=float, default=1800.0, help="cap on the whole load")
    parser.add_argument(
        "--drills", nargs="?", const=",".join(DRILLS), default="", help=",".join(DRILLS)
    )
    parser.add_argument("--drill-gap", type=float, default=20.0, help="seconds between drills")
    parser.add_argument("--clients", type=int, default=2, help="client processes")
    parser.add_argument("--max-seats", type=int, default=5, choices=range(2, 6))
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument(
        "--think", type=float, default=0.0,
        help="mean seconds a player waits before each turn it is told of (0: a closed load)",
    )  # fmt: skip
    parser.add_argument(
        "--keep", action="store_true", help="keep the logs and data of a run that passed"
    )
    parser.add_argument(
        "--ramp", type=float, default=0.0,
        help="seconds over which the games are set up, evenly (0: all at once)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    drills = [name for name in args.drills.split(",") if name]
    if any(name not in DRILLS for name in drills):
        parser.error(f"--drills takes {','.join(DRILLS)}")
    directory = Path(tempfile.mkdtemp(prefix="patrician-load-"))
    stack = Stack(directory, prefix=f"load-{uuid.uuid4().hex[:8]}")
    status = 1
    try:
        stack.start()
        status = _load(stack, args, drills)
        return status
    finally:
        stack.stop()
        if status == 0 and not args.keep:
            shutil.rmtree(directory, ignore_errors=True)
        else:
            print(f"the logs, data and samples of this run are kept in {directory}")


def _load(stack: Stack, args: Any, drills: list[str]) -> int:
    games = games_of(args.games, random.Random(args.seed), args.max_seats)
    context = multiprocessing.get_context("spawn")
    progress, ended, results = context.Value("q", 0), context.Value("q", 0), context.Queue()
    shares, events = [], []
    for number in range(args.clients):
        share = Share(
            [stack.base], games[number :: args.clients], args.seconds, args.seed * 100 + number,
            str(stack.directory / f"samples{number}"), think=args.think, ramp=args.ramp,
        )  # fmt: skip
        event = context.Event()
        process = context.Process(target=run_share, args=(share, progress, ended, event, results))
        process.start()
        shares.append(process)
        events.append(event)
    started = time.monotonic()
    for event in events:
        event.wait(args.seconds)
    said = [f"all {args.games} games set up in {time.monotonic() - started:.1f} s"]
    spent = CpuByLine(stack, [process.pid for process in shares if process.pid is not None])
    calls = RedisCalls(stack)
    watch = _Watch(stack, started)
    for number, name in enumerate(drills):
        if number == 0:  # once the games are under way: a few of them may be over in seconds
            watch.wait(2.0, until=lambda: progress.value >= FIRST_DRILL_AFTER)
        else:
            watch.wait(args.drill_gap)
        if name == "redis":
            calls.before_restart()
        said += _drill_in_play(stack, watch, name, progress.value, args.games - ended.value)
    outcomes: list[Outcome] = []
    deadline = time.monotonic() + args.seconds + 600
    while len(outcomes) < len(shares) and time.monotonic() < deadline:
        try:
            outcomes.append(results.get(timeout=0.5))
        except queue.Empty:
            watch.wait(0.5)
    said.append(spent.line(progress.value))
    cpu = spent.per_command(progress.value)
    said.append("figure cpu_ms_per_command " + " ".join(
        f"{kind}={ms:.2f}" for kind, ms in sorted(cpu.items()) if kind != "stack"
    ))  # fmt: skip
    said.append(f"figure cpu_ms_per_command_stack {cpu['stack']:.2f}")
    said.append(f"figure redis_commands_per_command {calls.since() / max(progress.value, 1):.1f}")
    for process in shares:
        process.join(timeout=30)
    return _report(stack, args, said, watch.failed, outcomes)


class RedisCalls:
    """The commands the stack's Redis ran since the games were set up (`INFO commandstats`,
    added up; a Redis killed by a drill starts counting again, so its count is kept first)."""

    def __init__(self, stack: Stack) -> None:
        self.stack = stack
        self.earlier = -self.now()

    def now(self) -> int:
        client = self.stack.client()
        try:
            stats = client.info("commandstats")
        finally:
            client.close()
        return sum(int(found["calls"]) for found in stats.values())

    def before_restart(self) -> None:
        self.earlier += self.now()

    def since(self) -> int:
        return self.earlier + self.now()


class _Watch:
    """The stack watched while the games are played: a line that ended unasked is started
    again (as a supervisor would: honcho would stop the whole stack), each a failure of the
    run, said in `failed` with what else failed."""

    def __init__(self, stack: Stack, started: float) -> None:
        self.stack, self.started = stack, started
        self.failed: list[str] = []

    def wait(self, seconds: float, until: Callable[[], bool] = lambda: False) -> None:
        """Sleep for `seconds` or `until` it holds, restarting meanwhile any line that ended
        unasked."""
        stack, failed, started = self.stack, self.failed, self.started
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not until():
            for name in stack.exited():
                failed.append(f"{stack.log(name)[-600:]}\nline {name} ended unasked at "
                              f"{time.monotonic() - started:.1f} s; started again")  # fmt: skip
                stack.launch(name)
            time.sleep(0.1)


def _drill_in_play(stack: Stack, watch: _Watch, name: str, before: int, in_play: int) -> list[str]:
    """One drill while `in_play` games are played (`before` commands acknowledged by then):
    what to say of it (its failure is said in `watch.failed`)."""
    moment = time.monotonic() - watch.started
    if not in_play:
        watch.failed.append(f"drill {name}: every game had ended before it (a smaller --drill-gap)")
        return []
    try:
        killed = drill(stack, name)
    except (RuntimeError, IndexError, OSError) as error:  # the load goes on: say so
        watch.failed.append(f"drill {name} failed: {error}")
        return []
    return [
        f"drill {name}: SIGKILL of {killed} at {moment:.1f} s, {in_play} games in play "
        f"({before} commands acknowledged by then), up again after "
        f"{time.monotonic() - watch.started - moment:.1f} s"
    ]


def _report(
    stack: Stack, args: Any, said: list[str], failed: list[str], outcomes: list[Outcome]
) -> int:
    figures = Figures()
    problems: list[str] = []
    expected: Counter[str] = Counter()
    told: Counter[str] = Counter()
    for outcome in outcomes:
        figures.add(outcome.figures)
        problems += outcome.problems
        expected += outcome.expected
        told += outcome.told
    if len(outcomes) < args.clients:
        failed.append(f"{args.clients - len(outcomes)} client processes told nothing")
    seconds = max((outcome.play_seconds for outcome in outcomes), default=float("nan"))
    finished = sum(outcome.finished for outcome in outcomes)
    game_ids = [game_id for outcome in outcomes for game_id in outcome.game_ids]
    receipts = sum(outcome.receipts for outcome in outcomes)
    cli = _cli_audits(stack.directory, args.clients)
    unfinished = {problem.split(":")[0] for problem in problems if "not finished" in problem}
    memory, archive_problems = _memory(stack, [g for g in game_ids if g not in unfinished])
    problems += archive_problems
    exited = stack.exited()
    load = os.getloadavg()
    print(*said, *failed, sep="\n")
    _print_traffic(figures, len(game_ids), finished, seconds)
    delivered = _print_notifications(figures, expected, told)
    clean = len(set(game_ids) - {problem.split(":")[0] for problem in problems})
    print(
        f"records: {clean} of {len(game_ids)} finished, audited with every receipt and every "
        f"acknowledged command found ({receipts} receipts checked); `patrician audit` CLI on "
        f"{cli[0]} samples: {cli[1]} pass"
    )
    print(f"problems: {len(problems)}", *problems[:10], sep="\n  ")
    print(*memory, sep="\n")
    print(f"processes that died unasked: {exited or 'none'}; load average "
          f"{load[0]:.2f} {load[1]:.2f} {load[2]:.2f} ({os.cpu_count()} cores)")  # fmt: skip
    ok = (
        not failed
        and not figures.errors
        and not problems
        and finished == len(game_ids) == args.games
        and all(delivered[kind] == expected[kind] for kind in expected)
        and figures.bad_signatures == 0
        and cli[0] == cli[1] > 0
        and not exited
    )
    print("all checks hold" if ok else "CHECKS FAILED")
    return 0 if ok else 1


def _print_traffic(figures: Figures, games: int, finished: int, seconds: float) -> None:
    """The games, the commands and requests per second, the latency of command requests and
    of the notifications, and the errors."""
    latencies = sorted(figures.latencies) or [float("nan")]
    p50, p99 = statistics.median(latencies), latencies[int(0.99 * (len(latencies) - 1))]
    print(
        f"{games} games, {finished} finished in {seconds:.1f} s; "
        f"{figures.commands / seconds:,.0f} commands/s ({figures.commands} commands, "
        f"{figures.requests / seconds:,.0f} requests/s, {figures.retries} retries)"
    )
    print(f"command requests: p50 {p50 * 1000:.1f} ms, p99 {p99 * 1000:.1f} ms, "
          f"max {latencies[-1] * 1000:.0f} ms over {len(figures.latencies)}")  # fmt: skip
    delays = sorted(figures.delays) or [float("nan")]
    print(
        f"notification delay, from the append's acceptance to the webhook's arrival: p50 "
        f"{statistics.median(delays):.2f} s, p90 {delays[int(0.9 * (len(delays) - 1))]:.2f} s, "
        f"p99 {delays[int(0.99 * (len(delays) - 1))]:.2f} s, max {delays[-1]:.1f} s"
    )
    print(f"figure notification_p50_s {statistics.median(delays):.3f}")
    print(f"figure notification_p99_s {delays[int(0.99 * (len(delays) - 1))]:.3f}")
    print(f"figure commands_per_second {figures.commands / seconds:.1f}")
    print(f"errors: {len(figures.errors)}", *figures.errors[:10], sep="\n  ")


def _print_notifications(
    figures: Figures, expected: Counter[str], told: Counter[str]
) -> dict[str, int]:
    """The notifications of the finished games delivered against those owed, of all games
    delivered, dropped and refused; those delivered of each type owed."""
    owed_all = sum(expected.values())
    delivered = {kind: told[kind] for kind in expected}
    print(
        f"notifications of the finished games: {sum(delivered.values())} delivered of "
        f"{owed_all} owed "
        + ", ".join(f"{kind} {delivered[kind]}/{expected[kind]}" for kind in sorted(expected))
        + "; of all games: "
        + ", ".join(f"{kind} {count}" for kind, count in sorted(figures.delivered.items()))
        + f"; {figures.duplicates} copies dropped, {figures.bad_signatures} bad signatures, "
        f"{figures.unprompted} turns played unprompted"
    )
    return delivered


def _cli_audits(directory: Path, clients: int) -> tuple[int, int]:
    """`patrician audit` on the sampled records, with their keys and receipts: (run, pass)."""
    run = passed = 0
    for number in range(clients):
        for folder in sorted((directory / f"samples{number}").glob("game*")):
            receipts = [
                part
                for path in sorted(folder.glob("receipt-*.json"))
                for part in ("--receipt", str(path))
            ]
            command = [str(BIN / "patrician"), "audit", str(folder / "record.json"), "--keys",
                       str(folder / "keys.json"), *receipts]  # fmt: skip
            done = subprocess.run(command, capture_output=True, timeout=120, check=False)
            run += 1
            passed += done.returncode == 0
    return run, passed


def _memory(stack: Stack, game_ids: list[str]) -> tuple[list[str], list[str]]:
    """Redis memory per finished game, then per archived game (`MEMORY USAGE` of its keys,
    store/memory.py), the first `ARCHIVED` finished games archived (store/archiving.py) and
    their records, read again through the API, audited; the lines to print and the problems."""
    client = stack.client()
    store = EventStore(client, prefix=stack.prefix)
    keys, problems = KeySpace(stack.prefix), []
    try:
        totals = [game_memory(client, keys, game_id)["total"] for game_id in game_ids]
        used = client.info("memory")["used_memory"]
        archived = []
        listed = httpx.get(stack.base + "/api/keys", timeout=30).content
        for game_id in game_ids[:ARCHIVED]:
            outcome = archive_game(store, game_id)
            if outcome != "archived":
                continue  # an unfinished game stays as it is (its problem is told already)
            archived.append(game_memory(client, keys, game_id)["total"])
            raw = httpx.get(f"{stack.base}/api/games/{game_id}/record", timeout=30).content
            if exit_code(audit(raw, keys=listed)) != 0:
                problems.append(f"{game_id}: its record no longer audits once archived")
    finally:
        client.close()
    if not totals:
        return ["Redis memory: no game"], problems
    return [
        f"Redis memory per finished game (MEMORY USAGE of its keys): {_sizes(totals)}; "
        f"used_memory {used / 2**20:,.1f} MiB in all",
        f"per archived game ({len(archived)} archived, their records read back and audited): "
        f"{_sizes(archived)}",
    ], problems


def _sizes(totals: list[int]) -> str:
    if not totals:
        return "none"
    return (
        f"mean {statistics.mean(totals) / 1024:,.1f} KiB, median "
        f"{statistics.median(totals) / 1024:,.1f} KiB, max {max(totals) / 1024:,.1f} KiB"
    )


if __name__ == "__main__":
    sys.exit(main())
