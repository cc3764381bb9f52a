"""What a worker process is set up with, and what is built from it: its settings (from the
server's: `WorkerSettings`), the jobs' queue (`queue_of`) and the context the jobs run with
(`context_for`: the store, the command path, the queue, the signing key, the webhooks'
sender...). Shared by `patrician worker`, the embedded workers of `patrician serve`, and the
server itself, which enqueues on the same queue."""

from __future__ import annotations

from typing import Any

import msgspec
from rq import Queue
from rq.serializers import JSONSerializer

from domain.gamedata import GameData
from evidence.signatures import Signer
from evidence.signing_keys import announce_op, signer_for
from outbound.targets import Allowlist
from outbound.web_push import PushKey, push_key_for
from store.accounts import Accounts
from store.client import EventStore
from store.clock import Clock, iso, system_clock
from store.cluster import on_cluster
from store.command_path import CommandPath
from workers.context import WorkerContext
from workers.smtp import settings_repr
from workers.tracing import TracedQueue
from workers.webhook_sending import WebhookSender

QUEUE = "patrician"
LATER = "later"


def queue_of(client: Any, prefix: str) -> Queue:
    """The jobs' queue: JSON, never pickle (a job is a function name and primitive values);
    each job carries the request id it follows from (`workers.tracing`)."""
    return TracedQueue(f"{prefix}:{QUEUE}", connection=client, serializer=JSONSerializer)


def later_queue_of(client: Any, prefix: str) -> Queue:
    """The queue of the work nobody waits on (a finished game's analysis): a job worker takes
    a job of it only when the jobs' queue is empty, so that it never holds up a bot's move
    or a delivery by more than one of its jobs (a second or two)."""
    return TracedQueue(f"{prefix}:{QUEUE}:{LATER}", connection=client, serializer=JSONSerializer)


class WorkerSettings(msgspec.Struct, frozen=True):
    """What a worker process is set up with (from the server's settings)."""

    prefix: str = "patrician"
    shards: int = 16
    archive_dir: str | None = None
    webhook_allow: str = ""
    public_url: str = "http://127.0.0.1:8000"
    smtp_url: str = "smtp://127.0.0.1:25"
    mail_from: str = "Patrician <patrician@localhost>"
    mail_grace_seconds: float = 120.0
    signing_key_file: str | None = None
    push_key_file: str | None = None
    push_contact: str = "mailto:patrician@localhost"
    analysis_iterations: int = 1500

    def __repr__(self) -> str:
        return settings_repr(self)


def context_for(
    client: Any,
    game_data: GameData,
    settings: WorkerSettings,
    clock: Clock = system_clock,
    *,
    signer: Signer | None = None,
    push_key: PushKey | None = None,
    queue_client: Any = None,
) -> WorkerContext:
    """The context of the jobs; `signer`, the server's when they run in its process (else the
    key file's, listed now, or a key of their own); `push_key`, the server's when they run in
    its process (else the key file's, or none: push off); `queue_client`, the plain Redis of the
    jobs' queue when it is not the store's `client` (a Redis Cluster: RQ is not cluster-safe)."""
    store = EventStore(
        client, prefix=settings.prefix, shards=settings.shards, archive_dir=settings.archive_dir
    )
    if signer is None:
        signer = signer_for(settings.signing_key_file)
        store.run(announce_op(settings.prefix, signer, iso(clock())))  # before it signs
    jobs_client = client if queue_client is None else queue_client
    return WorkerContext(
        store,
        CommandPath(store.context, game_data),
        Accounts(settings.prefix, cluster=on_cluster(client)),
        queue_of(jobs_client, settings.prefix),
        webhooks=WebhookSender(Allowlist.parse(settings.webhook_allow)),
        public_url=settings.public_url.rstrip("/"),
        clock=clock,
        smtp_url=settings.smtp_url,
        mail_from=settings.mail_from,
        mail_grace_seconds=settings.mail_grace_seconds,
        signer=signer,
        push_key=push_key or push_key_for(settings.push_key_file, embedded=False),
        push_contact=settings.push_contact,
        analysis_iterations=settings.analysis_iterations,
        later_queue=later_queue_of(jobs_client, settings.prefix),
    )
