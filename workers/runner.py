"""The loops that run the workers: `patrician worker` (the dispatcher, the timers and the
scheduling in threads, an RQ worker running the jobs in the process), and the embedded
server's own (all in one thread of the server's process, on its in-process store).

Any number of `patrician worker` processes against one Redis behave as one: the consumer group
hands each notice to one dispatcher, RQ each job to one worker, and the jobs are idempotent.
"""

from __future__ import annotations

import os
import socket
import time
from collections.abc import Callable
from typing import Any

import msgspec
import structlog
from rq import Queue
from rq.serializers import JSONSerializer

from domain.gamedata import GameData
from projections.signatures import Signer
from store.accounts import Accounts
from store.client import EventStore
from store.clock import Clock, iso, system_clock
from store.games import CommandPath
from workers.context import WorkerContext, configure
from workers.deadlines import fire_due
from workers.dispatcher import Dispatcher, job_id
from workers.retries import DELIVERY_RETRY, MOVED_RETRY
from workers.rq_workers import (
    MAINTENANCE_SECONDS,
    WORKER_TTL_SECONDS,
    JobWorker,
    Loop,
    SchedulerLoop,
    ThreadWorker,
)
from workers.signing import announce_op, signer_for
from workers.smtp import settings_repr
from workers.webhook_target import Allowlist

log = structlog.get_logger("patrician.workers")

QUEUE = "patrician"
HANDED_OVER = "workers.jobs.handed_over"
CONFIRM_ADDRESS = "workers.mail.confirm_address"
PLAYER_AWAY = "workers.deadlines.player_away"
IDLE_SECONDS = 0.1
"""How long the embedded workers wait when nothing happened (a bot's turn comes that late)."""
RETRY_SECONDS = 1.0
"""How often the embedded workers look for jobs whose retry is due, when nothing happened."""
TIMER_SECONDS = 1.0
"""How often the timers due are fired (a deadline is met that late, at most)."""
SWEEP_SECONDS = 5.0
"""How often a dispatcher takes over the notices of dead dispatchers and trims the feeds."""
CLAIM_IDLE_SECONDS = 30.0
"""How long a notice read by a dispatcher stays pending before another takes it over (that
one died): `patrician worker --claim-idle-seconds` or `PATRICIAN_CLAIM_IDLE_SECONDS`."""


def queue_of(client: Any, prefix: str) -> Queue:
    """The jobs' queue: JSON, never pickle (a job is a function name and primitive values)."""
    return Queue(f"{prefix}:{QUEUE}", connection=client, serializer=JSONSerializer)


class WorkerSettings(msgspec.Struct, frozen=True):
    """What a worker process is set up with (from the server's settings)."""

    prefix: str = "patrician"
    shards: int = 16
    webhook_allow: str = ""
    public_url: str = "http://127.0.0.1:8000"
    smtp_url: str = "smtp://127.0.0.1:25"
    mail_from: str = "Patrician <patrician@localhost>"
    mail_grace_seconds: float = 120.0
    signing_key_file: str | None = None

    def __repr__(self) -> str:
        return settings_repr(self)


def context_for(
    client: Any,
    game_data: GameData,
    settings: WorkerSettings,
    clock: Clock = system_clock,
    *,
    signer: Signer | None = None,
) -> WorkerContext:
    """The context of the jobs; `signer`, the server's when they run in its process (else the
    key file's, listed now, or a key of their own)."""
    store = EventStore(client, prefix=settings.prefix, shards=settings.shards)
    if signer is None:
        signer = signer_for(settings.signing_key_file)
        store.run(announce_op(settings.prefix, signer, iso(clock())))  # before it signs
    return WorkerContext(
        store,
        CommandPath(store.context, game_data),
        Accounts(settings.prefix),
        queue_of(client, settings.prefix),
        webhook_allow=Allowlist.parse(settings.webhook_allow),
        public_url=settings.public_url.rstrip("/"),
        clock=clock,
        smtp_url=settings.smtp_url,
        mail_from=settings.mail_from,
        mail_grace_seconds=settings.mail_grace_seconds,
        signer=signer,
    )


def handover_enqueuer(client: Any, prefix: str) -> Callable[[str, str, int], None]:
    """What the server calls when a player hands their seat to a bot: the job that follows
    (one per game and seat, so a resignation sent again adds nothing)."""
    queue = queue_of(client, prefix)

    def enqueue(game_id: str, player_id: str, seat: int) -> None:
        queue.enqueue(
            HANDED_OVER, game_id, player_id, job_id=job_id(game_id, seat, "handed"),
            retry=MOVED_RETRY,
        )  # fmt: skip

    return enqueue


def confirmation_enqueuer(client: Any, prefix: str) -> Callable[[str, str], None]:
    """What the server calls when a player sets a new e-mail address: the job that asks
    them to confirm it (`workers.mail.confirm_address`)."""
    queue = queue_of(client, prefix)

    def enqueue(player_id: str, address: str) -> None:
        queue.enqueue(CONFIRM_ADDRESS, player_id, address, retry=DELIVERY_RETRY)

    return enqueue


def vacation_enqueuer(client: Any, prefix: str) -> Callable[[str], None]:
    """What the server calls when a player's vacation starts or ends: the job that moves the
    deadlines of their games (`workers.deadlines.player_away`)."""
    queue = queue_of(client, prefix)

    def enqueue(player_id: str) -> None:
        queue.enqueue(PLAYER_AWAY, player_id, retry=MOVED_RETRY)

    return enqueue


def consumer_name() -> str:
    return f"{socket.gethostname()}-{os.getpid()}"


class DispatcherLoop(Loop):
    """The dispatcher of a worker process: it blocks on the feeds while nothing happens."""

    def __init__(self, dispatcher: Dispatcher, block_ms: int | None = 1000) -> None:
        super().__init__("dispatcher")
        self.dispatcher = dispatcher
        self.block_ms = block_ms

    def start(self) -> None:
        self.dispatcher.ensure_groups()
        super().start()

    def _run(self) -> None:
        swept = 0.0
        while not self.stopped.is_set():
            try:
                self.dispatcher.step(self.block_ms)
                if time.monotonic() - swept > SWEEP_SECONDS:
                    self.dispatcher.reclaim()
                    self.dispatcher.trim()
                    swept = time.monotonic()
            except Exception:
                log.exception("the dispatcher failed a step; it goes on")
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


def run_worker(context: WorkerContext, *, claim_idle_seconds: float = CLAIM_IDLE_SECONDS) -> None:
    """`patrician worker`: a dispatcher, the timers, the scheduling and an RQ worker against one
    Redis, until stopped. `claim_idle_seconds`: how long a notice read by a dispatcher that
    died stays pending before this one takes it over."""
    configure(context)
    client, queue = context.store.client, context.queue
    dispatcher = Dispatcher(
        client, context.store.keys, queue, consumer=consumer_name(),
        claim_idle_ms=round(claim_idle_seconds * 1000),
    )  # fmt: skip
    loop = DispatcherLoop(dispatcher)
    timers = TimerLoop(context)
    scheduling = SchedulerLoop(client, queue)
    loop.start()
    timers.start()
    scheduling.start()
    try:
        # Jobs run in this process (RQ's SimpleWorker), not in a work horse forked per job:
        # a fork costs more than a bot's move or a delivery, and at 200 moves a second the
        # forks alone would not keep up. So killing this process kills the job it runs; the
        # job's lease lapses and another worker's maintenance gives it back to the queue.
        JobWorker(
            [queue],
            connection=client,
            serializer=JSONSerializer,
            maintenance_interval=MAINTENANCE_SECONDS,
            worker_ttl=WORKER_TTL_SECONDS,
        ).work(logging_level="WARNING")  # not a line per job; the scheduling is ours
    finally:
        scheduling.stop()
        timers.stop()
        loop.stop()


class EmbeddedWorkers(Loop):
    """The workers of a server on its embedded store: the dispatcher and the jobs, one after
    the other in one thread of the server's process (the embedded store lives there only)."""

    def __init__(self, context: WorkerContext) -> None:
        configure(context)
        super().__init__("workers")
        self.context = context
        self.client, self.queue = context.store.client, context.queue
        self.dispatcher = Dispatcher(
            self.client, context.store.keys, self.queue, consumer="embedded"
        )

    def start(self) -> None:
        self.dispatcher.ensure_groups()
        super().start()

    def _run(self) -> None:
        worker = ThreadWorker([self.queue], connection=self.client, serializer=JSONSerializer)
        trimmed = worked = timed = time.monotonic()
        while not self.stopped.is_set():
            try:
                handled = self.dispatcher.step(None)  # the embedded store does not block
                if time.monotonic() - timed > TIMER_SECONDS:
                    handled += fire_due(self.context)
                    timed = time.monotonic()
                if handled or time.monotonic() - worked > RETRY_SECONDS:
                    # with the scheduler: the jobs whose retry is due are queued again first
                    worker.work(burst=True, with_scheduler=True, logging_level="WARNING")
                    worked = time.monotonic()
                else:
                    self.stopped.wait(IDLE_SECONDS)
                if time.monotonic() - trimmed > SWEEP_SECONDS:
                    self.dispatcher.trim()
                    trimmed = time.monotonic()
            except Exception:
                log.exception("the embedded workers failed a step; they go on")
                self.stopped.wait(1.0)
