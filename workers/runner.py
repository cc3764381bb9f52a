"""The loops that run the workers: `patrician worker` (the follower, the timers and the
scheduling in threads, an RQ worker running the jobs in the process), and the embedded
server's own (all in one thread of the server's process, on its in-process store). What they
run with is built by `workers.settings`.

Any number of `patrician worker` processes against one Redis behave as one: the consumer group
hands each notice to one follower, RQ each job to one worker, and follow-ups and jobs are
idempotent.
"""

from __future__ import annotations

import os
import socket
import time
from typing import Any

import structlog
from rq import Queue
from rq.serializers import JSONSerializer

from workers.archiving import ArchiveLoop, archive_after_seconds
from workers.context import WorkerContext, configure
from workers.deadlines import fire_due
from workers.follow_up import follow
from workers.follower import Follower
from workers.game_chains import out_of_reach
from workers.rq_workers import (
    MAINTENANCE_SECONDS,
    WORKER_TTL_SECONDS,
    JobWorker,
    Loop,
    SchedulerLoop,
    ThreadWorker,
)

log = structlog.get_logger("patrician.workers")

IDLE_SECONDS = 0.1
"""How long the embedded workers wait when nothing happened (a bot's turn comes that late)."""
RETRY_SECONDS = 1.0
"""How often the embedded workers look for jobs whose retry is due, when nothing happened."""
TIMER_SECONDS = 1.0
"""How often the timers due are fired (a deadline is met that late, at most)."""
SWEEP_SECONDS = 5.0
"""How often a follower takes over the notices of dead followers and trims the feeds."""
FOLLOW_THREADS = 8
"""How many games a follower process follows at once (`patrician worker --follow-threads` or
`PATRICIAN_FOLLOW_THREADS`): a follow-up mostly waits on Redis and on receivers."""
CLAIM_IDLE_SECONDS = 30.0
"""How long a notice read by a follower stays pending before another takes it over (that
one died): `patrician worker --claim-idle-seconds` or `PATRICIAN_CLAIM_IDLE_SECONDS`."""


def consumer_name() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


def follower_of(
    context: WorkerContext, consumer: str, claim_idle_ms: int = 30_000, threads: int = 1
) -> Follower:
    """A follower on the context's store that runs each notice's follow-up with that context
    (the games of a batch at once on `threads` threads)."""
    return Follower(
        context.store.client, context.store.keys, lambda notice: follow(context, notice),
        consumer=consumer, claim_idle_ms=claim_idle_ms, threads=threads,
    )  # fmt: skip


class FollowerLoop(Loop):
    """The follower of a worker process: it blocks on the feeds while nothing happens."""

    def __init__(self, follower: Follower, block_ms: int | None = 1000) -> None:
        super().__init__("follower")
        self.follower = follower
        self.block_ms = block_ms

    def start(self) -> None:
        self.follower.ensure_groups()
        super().start()

    def stop(self) -> None:
        super().stop()
        self.follower.close()

    def _run(self) -> None:
        swept = 0.0
        while not self.stopped.is_set():
            try:
                self.follower.step(self.block_ms)
                if time.monotonic() - swept > SWEEP_SECONDS:
                    self.follower.reclaim()
                    self.follower.trim()
                    swept = time.monotonic()
            except Exception as error:
                if self.stopped.is_set():  # stopping with its Redis (a whole stack stops)
                    return
                if out_of_reach(error):
                    self._wait_for_redis()
                    continue
                log.exception("the follower failed a step; it goes on")
                self.stopped.wait(1.0)

    def _wait_for_redis(self) -> None:
        """Redis is out of reach: ask it every `REDIS_POLL_SECONDS` until it answers (and has
        loaded its data), so that the notices kept meanwhile are followed the moment it is
        back, not seconds later."""
        began = time.monotonic()
        log.warning("Redis is out of reach; the follower waits for it")
        while not self.stopped.wait(REDIS_POLL_SECONDS):
            try:
                self.follower.client.ping()
            except Exception as error:
                if out_of_reach(error):
                    continue
            log.info("Redis answers again", seconds=round(time.monotonic() - began, 2))
            return


class LaterLoop(Loop):
    """The work nobody waits on (a finished game's analysis) in a worker that runs everything
    (`--role all`): one job at a time in a thread of its own whenever its queue holds one.
    In a stack it is a process of its own (`--role later`, at a lower CPU priority)."""

    def __init__(self, later: Queue) -> None:
        super().__init__("later")
        self.later = later

    def _run(self) -> None:
        worker = ThreadWorker(
            [self.later], connection=self.later.connection, serializer=JSONSerializer
        )
        while not self.stopped.is_set():
            try:
                if not (self.later.count and worker.work(
                    burst=True, max_jobs=1, logging_level="WARNING"
                )):  # fmt: skip
                    self.stopped.wait(IDLE_SECONDS)
            except Exception as error:
                if not out_of_reach(error):
                    log.exception("the work nobody waits on failed a step; it goes on")
                self.stopped.wait(1.0)


class TimerLoop(Loop):
    """The timers of timed games (`workers.deadlines`): those due fired about once a second.
    Every worker process runs one; a timer two of them fire at once runs a job that acts
    once."""

    def __init__(self, context: WorkerContext) -> None:
        super().__init__("timers")
        self.context = context

    def _run(self) -> None:
        while not self.stopped.wait(TIMER_SECONDS):
            try:
                fire_due(self.context)
            except Exception:
                log.exception("the timers failed a step; they go on")


ROLES = ("all", "jobs", "follower", "later")
"""What a `patrician worker` process runs (`--role`): `all` of it, or the `jobs` (the RQ
worker, the scheduling of the jobs put off and the timers), the `follower` or the work
nobody waits on (`later`: a finished game's analysis) alone, so that a stack runs its
followers beside one job worker and one for later (deploy/Procfile) and a drill can kill
any on its own."""
LATER_NICENESS = 10
"""How much lower the CPU priority of a `--role later` process is than the stack's others:
its work (seconds of search a finished game) takes only what they leave."""
REDIS_POLL_SECONDS = 0.1
"""How often a follower whose Redis is out of reach asks whether it is back."""
REDIS_WAIT_SECONDS = 30.0
"""How long a worker started before its Redis (a whole stack starting at once, a machine
booting) waits for it to answer before it gives up."""


REDIS_LOST_SECONDS = 300.0
"""How long a worker whose Redis went away waits for it to answer again before it ends."""


def wait_for_redis(client: Any, timeout: float = REDIS_WAIT_SECONDS) -> None:
    """Return once Redis answers PING (and has loaded its data); raise the last error if it
    does not within `timeout` seconds."""
    import redis

    deadline = time.monotonic() + timeout
    while True:
        try:
            client.ping()
            return
        except (redis.exceptions.ConnectionError, redis.exceptions.BusyLoadingError):
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _until_stopped() -> None:
    """Block the main thread until SIGTERM or SIGINT (the threads do the work meanwhile)."""
    import signal
    import threading

    stop = threading.Event()
    for each in (signal.SIGTERM, signal.SIGINT):
        signal.signal(each, lambda _number, _frame: stop.set())
    while not stop.wait(1.0):
        pass


def run_worker(
    context: WorkerContext,
    *,
    claim_idle_seconds: float = CLAIM_IDLE_SECONDS,
    follow_threads: int = FOLLOW_THREADS,
    role: str = "all",
) -> None:
    """`patrician worker`: a follower, the timers, the scheduling, an RQ worker and the work
    nobody waits on against one Redis, until stopped (`role` "jobs": the timers, the
    scheduling and the RQ worker; "follower": it alone; "later": the work nobody waits on
    alone, at a lower CPU priority).
    `claim_idle_seconds`: how long a notice read by a follower that died stays pending
    before this one takes it over; `follow_threads`: how many games its follower follows at
    once."""
    if role not in ROLES:
        raise ValueError(f"a worker's role is one of {', '.join(ROLES)}, not {role!r}")
    configure(context)
    queue = context.queue
    later = context.later_queue or queue
    loops: list[Loop] = []
    if role in ("all", "follower"):
        claim_idle_ms = round(claim_idle_seconds * 1000)
        follower = follower_of(context, consumer_name(), claim_idle_ms, follow_threads)
        loops.append(FollowerLoop(follower))
    worker: JobWorker | None = None
    if role == "later":  # its own process: the stack's go first for the CPU
        os.nice(LATER_NICENESS)
        queue, worker = later, _job_worker(later)
    if role == "all":
        loops.append(LaterLoop(later))
    if role in ("all", "jobs"):
        # Jobs run in this process (RQ's SimpleWorker), not in a work horse forked per job:
        # a fork costs more than a bot's move or a delivery, and at 200 moves a second the
        # forks alone would not keep up. So killing this process kills the job it runs; the
        # job's lease lapses and another worker's maintenance gives it back to the queue.
        worker = _job_worker(queue)
        # the scheduling moves the retries due of both queues (the later one's too)
        loops += [TimerLoop(context), SchedulerLoop(queue.connection, queue, later)]
        archive_after = archive_after_seconds()  # 0: never (docs/workers.md, "Archiving")
        if archive_after > 0:
            loops.append(ArchiveLoop(context.store, archive_after))
    for loop in loops:
        loop.start()
    try:
        if worker is None:
            _until_stopped()
            return
        _work(worker, queue)
    finally:
        for loop in reversed(loops):
            loop.stop()
        context.webhooks.close()  # the connections it kept


def _job_worker(queue: Queue) -> JobWorker:
    """An RQ worker of `queue` alone (RQ then takes each job with BLMOVE, leasing it: a job of
    a worker that dies is given back; of several queues it would BLPOP, and lose it), on the
    queue's Redis (the store may be a cluster)."""
    worker = JobWorker(
        [queue],
        connection=queue.connection,
        serializer=JSONSerializer,
        maintenance_interval=MAINTENANCE_SECONDS,
        worker_ttl=WORKER_TTL_SECONDS,
    )
    # RQ gave the client's new connections a socket timeout longer than its blocking
    # wait for a job; those made before (redis-py's default: 5 s) would time out under
    # that 10 s wait, and RQ would back off for up to a minute. None is in use yet.
    pool = getattr(queue.connection, "connection_pool", None)
    if pool is not None:
        pool.reset()
    return worker


def _work(worker: JobWorker, queue: Queue) -> None:
    """Run the jobs until the worker is stopped (SIGTERM: RQ's warm shutdown). A Redis that
    goes away under a job (killed, restarted on its AOF) makes RQ's worker quit (or raise from
    its teardown); this process waits for Redis to answer again and goes on with a new
    worker, rather than ending (which would end the whole stack under a process manager). The
    job it ran is leased: another worker's maintenance gives it back to the queue, and jobs
    are idempotent."""
    import signal

    import redis

    while True:
        try:
            worker.work(logging_level="WARNING")  # not a line per job; the scheduling is ours
            reason = "the worker quit"  # RQ quits on an error it does not handle, Redis's too
        except redis.exceptions.RedisError as error:  # its teardown met Redis gone
            reason = str(error)
        if worker.stopping:
            return
        log.warning("the jobs stopped; starting again once redis answers", reason=reason)
        # Told to stop while it waits (RQ's handlers are the quit worker's): it just ends.
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        time.sleep(1.0)  # never a busy loop, whatever made it quit
        wait_for_redis(queue.connection, timeout=REDIS_LOST_SECONDS)
        worker = _job_worker(queue)


class EmbeddedWorkers(Loop):
    """The workers of a server on its embedded store: the follower and the jobs, one after
    the other in one thread of the server's process (the embedded store lives there only)."""

    def __init__(self, context: WorkerContext) -> None:
        configure(context)
        super().__init__("workers")
        self.context = context
        self.queue = context.queue
        self.follower = follower_of(context, "embedded")

    def start(self) -> None:
        self.follower.ensure_groups()
        super().start()

    def stop(self) -> None:
        super().stop()
        self.context.webhooks.close()  # the connections it kept

    def _later_due(self, last: float) -> bool:
        """Whether to look at the queue of the work nobody waits on now: when a job waits
        there (one LLEN), or a second after the last look (the look queues its retries due:
        RQ's scheduler in the burst)."""
        later = self.context.later_queue
        return later is not None and (later.count > 0 or time.monotonic() - last > RETRY_SECONDS)

    def _run(self) -> None:
        worker = ThreadWorker(
            [self.queue], connection=self.queue.connection, serializer=JSONSerializer
        )
        later = self.context.later_queue
        after = None if later is None else ThreadWorker(
            [later], connection=later.connection, serializer=JSONSerializer
        )  # fmt: skip
        trimmed = worked = timed = later_worked = time.monotonic()
        while not self.stopped.is_set():
            try:
                handled = self.follower.step(None)  # the embedded store does not block
                if time.monotonic() - timed > TIMER_SECONDS:
                    handled += fire_due(self.context)
                    timed = time.monotonic()
                if handled or time.monotonic() - worked > RETRY_SECONDS:
                    # with the scheduler: the jobs whose retry is due are queued again first
                    worker.work(burst=True, with_scheduler=True, logging_level="WARNING")
                    worked = time.monotonic()
                elif after is not None and self._later_due(later_worked):
                    # one job nobody waits on, between the notices (a second or two)
                    later_worked = time.monotonic()
                    if not after.work(
                        burst=True, max_jobs=1, with_scheduler=True, logging_level="WARNING"
                    ):
                        self.stopped.wait(IDLE_SECONDS)
                else:
                    self.stopped.wait(IDLE_SECONDS)
                if time.monotonic() - trimmed > SWEEP_SECONDS:
                    self.follower.trim()
                    trimmed = time.monotonic()
            except Exception:
                log.exception("the embedded workers failed a step; they go on")
                self.stopped.wait(1.0)
