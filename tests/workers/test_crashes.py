"""Crash drills: `patrician worker` processes killed by SIGKILL at the worst moments, on a Redis
of their own (a private `redis-server` on loopback), beside a live `patrician serve`, with a
real webhook receiver on loopback (`tests.workers.sink`).

A worker's follower runs each append's follow-up in the worker process, and its jobs run there
too (RQ's `SimpleWorker`: there is no work horse forked per job), so killing a worker process
abandons the follow-up or the job it was running. What survives a crash is what is in Redis:
the outbox notices its follower had read and not acknowledged, the jobs it had started (in
RQ's registry of started jobs, under a lease that its worker renews while the job runs), the
scheduling lock it held, the sending claims of its notifications (docs/workers.md,
"Crashes").
"""

from __future__ import annotations

import os
import random
import signal
import socket
import subprocess
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import redis
from rq import Retry, Worker
from rq.job import Job
from rq.scheduler import RQScheduler

from store.client import EventStore
from tests.processes import Started, stop_process
from tests.server.client import Api, Json, Player
from tests.server.live import LiveServer, _patrician, unique_prefix
from tests.store.servers import RedisServer
from tests.workers.sink import Sink
from workers.follower import GROUP, Follower
from workers.rq_workers import JOB_LEASE_SECONDS
from workers.settings import queue_of

PUBLIC = "https://play.example"
ALLOW = {"PATRICIAN_WEBHOOK_ALLOW": "127.0.0.1", "PATRICIAN_PUBLIC_URL": PUBLIC}
WITHIN_A_MINUTE = 60.0
"""docs/workers.md: a job whose worker was killed is taken up again within a minute."""


def _wait(ready: Callable[[], object], timeout: float, what: str | Callable[[], str]) -> None:
    deadline = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < deadline, what if isinstance(what, str) else what()
        time.sleep(0.02)


def _alive(pid: int) -> bool:
    """Whether `pid` is a process that has not ended (a zombie has)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


class WorkerProcess(Started):
    """One `patrician worker` against the drill's Redis, logging to a file of the test."""

    def __init__(self, url: str, env: dict[str, str], log_path: Path) -> None:
        self.url, self.env, self.log_path = url, env, log_path
        self.process: subprocess.Popen[bytes] | None = None
        self.forked: list[int] = []
        """The processes it started, if it did (`children`), for the stop to end any left."""

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    def start(self) -> None:
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                [*_patrician(), "worker", "--redis-url", self.url],
                env=self.env, stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip

    def children(self) -> list[int]:
        """The processes whose parent it is (none: RQ's scheduler would be one, forked)."""
        found = []
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                fields = stat.read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == self.pid:
                found.append(int(stat.parent.name))
        self.forked += [pid for pid in found if pid not in self.forked]
        return found

    def kill(self) -> None:
        """SIGKILL: no shutdown, no `finally`, as in a crash or the OOM killer."""
        assert self.process is not None
        self.children()  # to end at the stop any that would be left
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def signal(self, number: signal.Signals) -> None:
        assert self.process is not None
        self.process.send_signal(number)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGCONT)  # a stopped one cannot end on SIGTERM
        stop_process(self.process)
        for pid in self.forked:  # none should be left; if one is, it is ours to end
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")[-4000:]


class Drill:
    """A Redis of its own, `patrician serve` on it, the workers started by the test, and a
    webhook receiver; every process ended by the drill that started it."""

    def __init__(self, directory: Path, sink: Sink) -> None:
        self.directory, self.sink = directory, sink
        (directory / "redis").mkdir()
        self.redis = RedisServer(directory / "redis")
        self.url = f"redis://127.0.0.1:{self.redis.port}/0"
        self.prefix = unique_prefix("crash")
        self.client = redis.Redis(port=self.redis.port, socket_timeout=10)
        self.queue = queue_of(self.client, self.prefix)
        self.keys = EventStore(self.client, prefix=self.prefix).keys
        self.feeds = self.keys.outbox_keys()
        self.scheduling_lock = RQScheduler.get_locking_key(self.queue.name)
        self.server = LiveServer(self.prefix, directory, redis_url=self.url, env=ALLOW)
        self.http = httpx.Client(timeout=30)
        self.api = Api(self.http)
        self.workers: list[WorkerProcess] = []

    def start(self) -> None:
        self.redis.start()
        self.server.start()
        self.http.base_url = httpx.URL(self.server.url)

    def stop(self) -> None:
        for worker in self.workers:
            worker.stop()
        self.http.close()
        self.server.stop()
        self.client.close()
        self.redis.stop()

    def worker(self, **env: str) -> WorkerProcess:
        """A `patrician worker` started, once its RQ worker and its follower are up."""
        n = len(self.workers)
        settings = {**os.environ, **ALLOW, **env, "PATRICIAN_PREFIX": self.prefix}
        settings["PYTHONUNBUFFERED"] = "1"
        worker = WorkerProcess(self.url, settings, self.directory / f"worker{n}.log")
        self.workers.append(worker)
        worker.start()
        _wait(
            lambda: worker.process is not None and worker.process.poll() is None
            and self.rq_name(worker) is not None and self.reads(),
            20, f"worker {n} did not come up:\n{worker.log()}",
        )  # fmt: skip
        return worker

    def rq_name(self, worker: WorkerProcess) -> str | None:
        """The name of the worker's RQ worker, once it is registered."""
        for found in Worker.all(connection=self.client, queue=self.queue):
            if found.pid == worker.pid:
                return found.name
        return None

    def consumer(self, worker: WorkerProcess) -> str:
        """The name of the worker's follower in the consumer group (`runner.consumer_name`)."""
        return f"{socket.gethostname()}-{worker.pid}"

    def reads(self) -> bool:
        """Whether the follower of every worker running waits on the feeds (XREADGROUP)."""
        running = sum(1 for w in self.workers if w.process is not None and w.process.poll() is None)
        return self.blocked("xreadgroup") >= running

    def pending_for(self, worker: WorkerProcess) -> list[object]:
        """The notices the worker's follower has read and not acknowledged."""
        name = self.consumer(worker)
        return [
            item["message_id"]
            for feed in self.feeds
            for item in self.client.xpending_range(feed, GROUP, "-", "+", 100, consumername=name)
        ]

    def blocked(self, command: str) -> int:
        """How many clients of this Redis wait in a blocking `command` (one per worker: the
        follower in XREADGROUP, the RQ worker in BLMOVE)."""
        return sum(
            1 for c in self.client.client_list() if c["cmd"] == command and "b" in c["flags"]
        )

    def idle(self) -> bool:
        """No job queued, none running, and the follower and the RQ worker of the only worker
        waiting for more."""
        started = self.queue.started_job_registry
        return (
            self.queue.count == 0 and started.count == 0
            and self.blocked("xreadgroup") == 1 and self.blocked("blmove") == 1
        )  # fmt: skip

    def state(self, game_id: str) -> str:
        """What a failed wait shows: the game, the notices pending, the jobs queued."""
        board = self.api.board(game_id)
        return (
            f"game at {board['version']}, pending {board['pending']}; notices pending "
            f"{[self.client.xpending(f, GROUP)['pending'] for f in self.feeds]}; jobs queued "
            f"{self.queue.job_ids}"
        )

    def health(self) -> tuple[int, int]:
        """The notices pending and dead, across the feeds."""
        found = Follower(self.client, self.keys, print, consumer="drill").health()
        return found.pending, found.dead

    def job(self, job_id: str) -> Job:
        return Job.fetch(job_id, connection=self.client, serializer=self.queue.serializer)

    def subscribe(self, player: Player) -> None:
        path = f"/{player.name}"
        body = {"webhook": {"url": self.sink.url(path)}}
        answer = self.api.ok(
            self.api.request("PUT", "/api/me/notifications", player=player, json=body)
        )
        self.sink.secrets[path] = answer["webhook"]["secret"]


@pytest.fixture
def drill(tmp_path: Path) -> Iterator[Drill]:
    with Sink() as sink:
        running = Drill(tmp_path, sink)
        try:
            running.start()
            yield running
        finally:
            running.stop()


def _notifications(sink: Sink) -> dict[tuple[str, str, int], list[str]]:
    """The `webhook-id` of every copy that arrived, per notification (its receiver, its type
    and its version)."""
    copies: dict[tuple[str, str, int], list[str]] = defaultdict(list)
    with sink.changed:
        for path, messages in sink.received.items():
            for message, webhook_id in zip(messages, sink.ids[path], strict=True):
                copies[path, message["type"], message["version"]].append(webhook_id)
    return copies


@pytest.mark.redis
def test_a_worker_killed_mid_delivery_leaves_its_job_to_the_other_and_every_notification_arrives(
    drill: Drill,
) -> None:
    """The receiver holds the first notification of a game's start, and the worker that sends
    it is killed while it waits for the answer: that is, in the middle of the follow-up of the
    append, which its follower runs (a webhook's first attempt is made there, workers/webhooks.py
    `send_first`). The notice stays pending, unacknowledged; the other worker's follower takes
    it over once it has been idle (1 s here, 30 s by default) and follows it again: every
    notification arrives at least once, within a minute, and every copy of one notification
    carries its one `webhook-id`. The one held is claimed by the copy that was being sent
    (`store.notifications.SENDING_SECONDS`, 30 s): its next copy is the delivery job under
    that same id, which sends it once the claim has lapsed (docs/workers.md, "Crashes": 35 to
    50 s after the crash), and the receiver has it twice under one id."""
    first = drill.worker()  # alone, so that it follows the notice (and schedules)
    ada, bea = drill.api.create_player("Ada"), drill.api.create_player("Bea")
    for player in (ada, bea):
        drill.subscribe(player)
    drill.sink.hold()
    created = drill.api.create_game(ada, 2)
    game_id = created["game_id"]
    drill.api.join(bea, game_id, created["invite_code"])
    held_id = drill.sink.wait_held()[0]
    held = next(
        (path, message)
        for path, ids in drill.sink.ids.items()
        for message, webhook_id in zip(drill.sink.received[path], ids, strict=True)
        if webhook_id == held_id
    )
    assert drill.pending_for(first), "the notice is the killed follower's, unacknowledged"
    second = drill.worker(PATRICIAN_CLAIM_IDLE_SECONDS="1")
    assert first.children() == [], "one process: its scheduling is a thread, not a fork"
    scheduling = drill.client.get(drill.scheduling_lock)
    assert scheduling is not None, "the first worker schedules (it came first)"
    first.kill()

    board = drill.api.board(game_id)
    movers = {drill.api.board(game_id, p)["viewer"]: p for p in (ada, bea)}
    mover = movers[board["pending"]["seat"]]
    version = held[1]["version"]
    expected = {
        ("/Ada", "game.started"),
        ("/Bea", "game.started"),
        (f"/{mover.name}", "turn.started"),
    }

    def arrived() -> bool:
        return expected <= {(path, kind) for path, kind, _v in _notifications(drill.sink)}

    _wait(arrived, WITHIN_A_MINUTE, lambda: f"not all arrived: {dict(_notifications(drill.sink))}"
          f"\n{drill.state(game_id)}\n{second.log()}")  # fmt: skip

    copies = _notifications(drill.sink)
    assert {(path, kind) for path, kind, _v in copies} == expected, "each one, nothing else"
    assert {v for _p, _k, v in copies} == {version}, "all of the append that started the game"
    ids = {notification: set(found) for notification, found in copies.items()}
    assert all(len(found) == 1 for found in ids.values()), f"one id per notification: {ids}"
    assert len({i for found in ids.values() for i in found}) == len(ids), (
        "and one notification each"
    )
    assert drill.sink.bad_signatures == 0

    _wait(lambda: drill.client.get(drill.scheduling_lock) not in (None, scheduling), 20,
          "the scheduling was not taken over")  # fmt: skip
    assert drill.pending_for(first) == [], "its notice taken over"
    assert drill.health() == (0, 0), "followed again, acknowledged, none given up"
    path, message = held
    again = (path, message["type"], version)
    if len(_notifications(drill.sink)[again]) == 1:  # its claim had not lapsed yet
        owed = drill.job(held_id)
        assert owed.func_name == "workers.webhooks.deliver"
        player_id = ada.player_id if path == "/Ada" else bea.player_id
        assert owed.args[:5] == [player_id, game_id, version, message["type"], message["seat"]]
        status = owed.get_status()  # unless it ran since, and then its copy came
        assert (
            status in ("scheduled", "queued", "started")
            or len(_notifications(drill.sink)[again]) == 2
        ), status
    _wait(lambda: len(_notifications(drill.sink)[again]) == 2, 90, "no second copy came")
    assert _notifications(drill.sink)[again] == [held_id, held_id], "under its one id"


def _stopped_holding_a_notice(
    drill: Drill, worker: WorkerProcess, send: Callable[[], Json]
) -> bool:
    """Stop `worker` while its follower waits on the feeds (SIGSTOP), then `send` an append:
    Redis hands its notice to that waiting read, pending for a follower that cannot handle
    it. Whether it did (the read may have timed out just before; then the notice is unread,
    and the worker, let go on, reads it itself)."""
    while True:
        _wait(drill.idle, 20, "the worker did not become idle")
        worker.signal(signal.SIGSTOP)
        if drill.blocked("xreadgroup") == 1:
            break
        worker.signal(signal.SIGCONT)  # its read ended just then: again
    send()
    _wait(lambda: drill.pending_for(worker) or drill.blocked("xreadgroup") == 0, 5,
          "the notice reached no read")  # fmt: skip
    return bool(drill.pending_for(worker))


@pytest.mark.redis
def test_the_notices_a_killed_workers_follower_had_read_are_taken_over_and_followed_once(
    drill: Drill,
) -> None:
    """A person plays against a bot. The worker is stopped while its follower waits on the
    feeds, and the person's decision that passes the turn to the bot is sent: Redis hands its
    notice to that read, and the worker is killed before it can follow it. The notice
    stays pending in the consumer group; a worker started after (claim idle 1 s here, 30 s by
    default) takes it over (XAUTOCLAIM): the bot plays its turn once, the person is told once
    that their turn came back, and no notice is lost or dead."""
    quick = {"PATRICIAN_CLAIM_IDLE_SECONDS": "1"}
    first = drill.worker(**quick)
    ada = drill.api.create_player("Ada")
    drill.subscribe(ada)
    options = {"seats": 2, "edition": "towers", "bots": [{"level": "random"}]}
    created = drill.api.ok(drill.api.request("POST", "/api/games", player=ada, json=options), 201)
    game_id = created["game_id"]
    rng = random.Random(7)

    def my_turns() -> list[int]:
        return [m["version"] for m in drill.sink.received["/Ada"] if m["type"] == "turn.started"]

    def my_turn() -> bool:
        board = drill.api.board(game_id, ada)
        return bool(board["phase"] == "playing" and board["pending"]["seat"] == board["viewer"])

    held_version = 0
    for _decision in range(40):  # until a decision that passes the turn is held
        _wait(lambda: my_turn() and drill.idle(), 30, "no turn of mine came")
        board = drill.api.board(game_id, ada)
        command = rng.choice(board["legal_commands"])

        def send(board: Json = board, command: Json = command) -> Json:
            return drill.api.ok(drill.api.send(game_id, ada, board["version"], [command]))

        holding = _stopped_holding_a_notice(drill, first, send)
        if holding and not my_turn():
            held_version = drill.api.board(game_id)["version"]
            break
        first.signal(signal.SIGCONT)  # it handles the notice itself
    assert held_version, "no notice of a decision that passed the turn was held"
    assert drill.pending_for(first), "read by the stopped follower, not acknowledged"
    turns_before = my_turns()
    first.kill()
    second = drill.worker(**quick)

    _wait(lambda: len(my_turns()) > len(turns_before), 30,
          lambda: f"the turn did not come back: {drill.state(game_id)}\n"
          f"{second.log()}")  # fmt: skip
    _wait(drill.idle, 20, "the second worker did not become idle")

    assert drill.pending_for(first) == [], "taken over by the other follower"
    assert drill.health() == (0, 0), "every notice followed and acknowledged, none given up"

    record = drill.api.record(game_id)
    appends = record["commands"]
    tiles = [(a["first_version"], a["last_version"]) for a in appends]
    assert [start for start, _end in tiles] == [1] + [end + 1 for _start, end in tiles[:-1]]
    assert tiles[-1][1] == record["head"]["version"], "the appends, one after the other"
    bot = [a for a in appends if a["by"] == "bot:random"]
    after = [a for a in bot if a["first_version"] > held_version]
    assert after and after[0]["first_version"] == held_version + 1, "the bot played on at once"
    previous = {a["last_version"] for a in appends}
    assert all(a["command_id"] == f"bot:{a['first_version'] - 1}" for a in bot)
    assert all(a["first_version"] - 1 in previous for a in bot), "each after one append, once"
    assert len({a["command_id"] for a in bot}) == len(bot)

    mine = _notifications(drill.sink)
    assert all(len(ids) == 1 for ids in mine.values()), f"no notification twice: {mine}"
    assert len(my_turns()) == len(set(my_turns())) == len(turns_before) + 1
    assert drill.sink.bad_signatures == 0


@pytest.mark.redis
def test_a_job_that_runs_longer_than_its_lease_is_never_taken_for_abandoned(drill: Drill) -> None:
    """The lease of a running job is renewed while it runs: a job longer than
    `JOB_LEASE_SECONDS` is never past its lease, and a worker that starts after the lease would
    have lapsed (it looks for abandoned jobs as it starts) leaves it alone: it runs once."""
    first = drill.worker()
    drill.queue.enqueue("time.sleep", JOB_LEASE_SECONDS + 5, job_id="long", retry=Retry(max=2))
    _wait(lambda: drill.job("long").get_status() == "started", 20, "the job did not start")
    began = time.monotonic()
    second = None
    while drill.job("long").get_status() == "started":
        assert drill.queue.started_job_registry.get_expired_job_ids() == [], "past its lease"
        if second is None and time.monotonic() - began > JOB_LEASE_SECONDS + 1:
            second = drill.worker()
        time.sleep(0.2)
    assert second is not None
    job = drill.job("long")
    assert job.get_status() == "finished" and job.worker_name == drill.rq_name(first)
    assert job.retries_left == 2, "never given back to the queue"


@pytest.mark.redis
def test_a_worker_outlives_a_redis_killed_and_restarted_and_runs_the_jobs_after_it(
    drill: Drill,
) -> None:
    """Redis killed (SIGKILL) under a running `patrician worker` and started again: the worker
    does not end (under a process manager one line ending ends the whole stack), its RQ worker
    registers again once Redis answers, and the jobs of a game begun afterwards run: every
    notification of its start arrives (docs/workers.md, "Crashes")."""
    worker = drill.worker()
    drill.client.config_set("appendonly", "yes")  # restarted on its AOF, as deploy/redis.conf
    drill.redis.args = ("--appendonly", "yes", "--appendfsync", "always")

    def written() -> bool:
        found = drill.client.info("persistence")
        return bool(found["aof_enabled"]) and not found["aof_rewrite_in_progress"]

    _wait(written, 10, "the AOF was not written")
    drill.redis.kill()
    time.sleep(1.5)  # long enough for the worker to meet a Redis that is gone
    drill.redis.start()
    _wait(lambda: drill.rq_name(worker) is not None, 30, lambda: f"not back:\n{worker.log()}")
    assert worker.process is not None
    assert worker.process.poll() is None, f"the worker ended:\n{worker.log()}"

    ada, bea = drill.api.create_player("Ada"), drill.api.create_player("Bea")
    for player in (ada, bea):
        drill.subscribe(player)
    created = drill.api.create_game(ada, 2)
    drill.api.join(bea, created["game_id"], created["invite_code"])
    expected = {("/Ada", "game.started"), ("/Bea", "game.started")}
    _wait(
        lambda: expected <= {(p, kind) for p, kind, _v in _notifications(drill.sink)},
        WITHIN_A_MINUTE,
        lambda: f"not all arrived: {dict(_notifications(drill.sink))}\n{worker.log()}",
    )
    assert worker.process.poll() is None
