"""RQ, as the workers run it: an RQ worker whose bookkeeping is paced by the clock and whose
jobs are leased (`JobWorker`), one that runs in a thread of the server (`ThreadWorker`), and
RQ's scheduler run in a thread (`SchedulerLoop`); with `Loop`, a loop of the workers in a
thread of its own. Why each differs from RQ's own is in its docstring: measured, RQ 3.0 out of
the box gave a job whose worker was killed back to the queue after 406 s, and its forked
scheduler outlived a killed worker."""

from __future__ import annotations

import contextlib
import threading
import time
from typing import Any

import structlog
from redis.exceptions import LockError, RedisError
from rq import Queue, SimpleWorker
from rq.executions import Execution
from rq.job import Job
from rq.scheduler import RQScheduler
from rq.serializers import JSONSerializer
from rq.timeouts import TimerDeathPenalty

from workers.tracing import ran, traced

log = structlog.get_logger("patrician.workers")

MAINTENANCE_SECONDS = 10
"""How often an RQ worker looks for the jobs of dead workers (RQ's maintenance: a job whose
lease lapsed is given back to the queue, as one of its retries)."""
WORKER_TTL_SECONDS = MAINTENANCE_SECONDS + 15
"""The time to live of an RQ worker's own key (`rq info`, renewed while it lives, 60 s more
than this): an idle worker waits for a job 15 s less than it, then runs its maintenance if
due, so an idle worker too looks for abandoned jobs every `MAINTENANCE_SECONDS` or so (with
RQ's default of 420 s it would wait 405 s)."""
JOB_LEASE_SECONDS = 15
"""How long a running job stays in RQ's registry of started jobs unless its worker renews it:
a job whose worker died is abandoned once this has passed, and the next maintenance of
another worker gives it back to the queue (RQ's SimpleWorker would keep it there for its
time-out plus a minute, 240 s by default)."""
JOB_BEAT_SECONDS = 3.0
"""How often a worker renews the lease of the job it is running (a job shorter than this
costs nothing)."""
SCHEDULING_LOCK_SECONDS = 10
"""How long the scheduling lock outlives its last renewal (once a `SCHEDULE_SECONDS`): the
scheduling of a worker that died passes to another one that late."""
BOOKKEEPING_SECONDS = 1.0
"""How often an RQ worker renews its own heartbeat and looks whether `rq suspend` was said."""
SCHEDULE_SECONDS = 1.0
"""How often the jobs whose time has come are moved to the queue."""


class Loop:
    """A loop of the workers in a thread of its own, until `stop` is set."""

    def __init__(self, name: str) -> None:
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.stopped.set()
        self.thread.join(timeout=10)

    def _run(self) -> None:
        raise NotImplementedError


class SchedulerLoop(Loop):
    """The scheduling of a worker process: about once a second the jobs whose time has come
    (a retry due, a delivery put off) are moved to the queue, by RQ's scheduler run in this
    thread rather than in a process RQ would fork for it, by the one worker process that holds
    the scheduling lock (RQ's key, so that an RQ scheduler and this one never schedule at
    once). The lock lapses `SCHEDULING_LOCK_SECONDS` after its last renewal (RQ's own lapses a
    minute after): when its worker dies, another takes the scheduling over that late. A forked
    scheduler would also outlive a worker killed by SIGKILL (on its own, holding the lock for
    ever) and keep the worker's sockets open in Redis (a blocking read of the dead worker's
    would then take the next job off the queue for nobody)."""

    def __init__(self, client: Any, queue: Queue, later: Queue | None = None) -> None:
        super().__init__("scheduler")
        queues = [queue] if later is None else [queue, later]
        self.scheduler = RQScheduler(
            queues, connection=client, serializer=JSONSerializer, logging_level="WARNING"
        )
        self.scheduler.prepare_registries([each.name for each in queues])
        key = RQScheduler.get_locking_key(queue.name)
        self.lock = client.lock(key, timeout=SCHEDULING_LOCK_SECONDS, thread_local=False)
        self.held = False

    def _run(self) -> None:
        while True:  # from the start: a worker that starts alone schedules at once
            try:
                if self._hold():
                    self.scheduler.enqueue_scheduled_jobs()  # type: ignore[no-untyped-call]
            except Exception:
                log.exception("the scheduling failed a step; it goes on")
            if self.stopped.wait(SCHEDULE_SECONDS):
                break
        if self.held:
            with contextlib.suppress(RedisError):  # (it lapses anyway)
                self.lock.release()  # for another worker to take at once

    def _hold(self) -> bool:
        """Renew the scheduling lock, or take it if nobody holds it; whether this worker
        holds it."""
        if self.held:
            try:
                self.lock.reacquire()
                return True
            except LockError:  # it lapsed (a pause longer than the lock): to be taken again
                self.held = False
        self.held = bool(self.lock.acquire(blocking=False))
        return self.held


class JobWorker(SimpleWorker):
    """RQ's SimpleWorker, its bookkeeping paced by the clock rather than by the job, and the
    jobs it runs leased rather than trusted for their whole time-out.

    Out of the box it renews its own heartbeat (a key whose time to live is minutes, read by
    `rq info`) three times a job and asks whether `rq suspend` was said once a job, a dozen
    round trips to Redis that cost more than a delivery's own. Here each happens at most once
    a `BOOKKEEPING_SECONDS`.

    A running job is in RQ's registry of started jobs until its lease lapses
    (`JOB_LEASE_SECONDS`); a thread renews it every `JOB_BEAT_SECONDS` while the job runs
    (as RQ's forking worker does for its work horse), so a long job is never taken for
    abandoned, and a job whose worker was killed is given back to the queue by the next
    maintenance of another worker once its lease has lapsed (its retry then due, queued by
    `SchedulerLoop`)."""

    _beaten = _checked = float("-inf")
    leases_jobs = True
    """Whether the jobs are leased and their leases renewed (not by the embedded workers,
    whose process is the only one)."""
    _running: tuple[Job, Execution] | None = None
    _beats: threading.Thread | None = None
    stopping = False
    """Whether it was told to stop (SIGTERM or SIGINT), rather than quitting on an error."""

    def handle_warm_shutdown_request(self) -> None:
        self.stopping = True
        super().handle_warm_shutdown_request()  # type: ignore[no-untyped-call]

    def heartbeat(self, timeout: int | None = None, pipeline: Any = None) -> None:
        if pipeline is None and timeout is None:
            if time.monotonic() - self._beaten < BOOKKEEPING_SECONDS:
                return
            self._beaten = time.monotonic()
        super().heartbeat(timeout, pipeline)

    def check_for_suspension(self, burst: bool) -> None:
        if time.monotonic() - self._checked < BOOKKEEPING_SECONDS:
            return
        self._checked = time.monotonic()
        super().check_for_suspension(burst)

    def get_heartbeat_ttl(self, job: Job, working_time: float = 0.0) -> int:
        if not self.leases_jobs:
            return super().get_heartbeat_ttl(job, working_time)
        return JOB_LEASE_SECONDS

    def prepare_execution(self, job: Job) -> Execution:
        execution = super().prepare_execution(job)
        if self.leases_jobs:
            self._running = (job, execution)
            if self._beats is None:
                self._beats = threading.Thread(target=self._renew, name="leases", daemon=True)
                self._beats.start()
        return execution

    def execute_job(self, job: Job, queue: Queue) -> None:
        try:
            super().execute_job(job, queue)
        finally:
            self._running = None

    def perform_job(self, job: Job, queue: Queue, execution: Execution) -> bool:
        """The job under the request id it was enqueued for, logged and counted once done
        (`workers.tracing`)."""
        with traced(job):
            started = time.perf_counter()
            ok = bool(super().perform_job(job, queue, execution))
            ran(job, ok, time.perf_counter() - started)
        return ok

    def _renew(self) -> None:
        """Renew the lease of the job running, every `JOB_BEAT_SECONDS` (RQ's own renewal:
        the worker's, the execution's and the job's heartbeats; a lease renewed just as its
        job ended is not brought back)."""
        while True:
            time.sleep(JOB_BEAT_SECONDS)
            running = self._running
            if running is None:
                continue
            try:
                self.maintain_heartbeats(*running)
            except Exception:
                log.exception("a job's lease could not be renewed; it goes on")


class ThreadWorker(JobWorker):
    """An RQ worker that runs its jobs in the thread it is in (not the main one: no signal
    handlers there, which it does not need, the server stops it itself; and job time-outs by
    a timer rather than SIGALRM). It listens to no command channel either (`rq suspend` and
    the like are for worker processes): leaving one costs a second per burst."""

    death_penalty_class = TimerDeathPenalty
    leases_jobs = False

    def _install_signal_handlers(self) -> None:
        return None

    def subscribe(self) -> None:
        return None

    def unsubscribe(self) -> None:
        return None
