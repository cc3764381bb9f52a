"""The outbox dispatcher: each append's notice, read by one of any number of dispatchers, made
into the job that plays what follows, then acknowledged and trimmed.

Every shard's outbox feed is read with the consumer group `dispatch` (`XREADGROUP`): a notice
goes to one consumer, and stays pending until that consumer acknowledges it, which it does
only once the notice's job is enqueued (RQ keeps jobs in Redis: durably, with the AOF of
`deploy/redis.conf`). A consumer that dies leaves its notices pending: any other takes them
over once they have been idle `claim_idle_ms` (`XAUTOCLAIM`); a notice delivered more than
`max_deliveries` times goes to the dead-letter feed, counted by `health`. Acknowledged notices
are trimmed from the feeds (never from a game's event stream).

A job's id names its game, version and channel (`moved-<version>-<game>`), and jobs are
idempotent, so a notice handled twice (delivered again after a crash) does no harm. Each job
carries the request id its append keeps in its metadata (read with the notices, in one more
round trip per step), and each notice's dispatch is logged under it (`workers.tracing`).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from typing import Any

import msgspec
import structlog
from redis.exceptions import ResponseError
from rq import Queue

from store import keys as store_keys
from store.cluster import on_cluster
from store.keys import KeySpace
from store.stored import entry_request_id
from workers.metrics import DISPATCHED
from workers.retries import MOVED_RETRY
from workers.tracing import job_meta

log = structlog.get_logger("patrician.workers")

GROUP = "dispatch"
JOB = "workers.jobs.game_moved"
CLUSTER_POLL_SECONDS = 0.05
"""How long a dispatcher on a Redis Cluster waits when no feed had a notice (it cannot block
on feeds of several slots at once): a notice waits that much longer at most."""


class Health(msgspec.Struct, frozen=True):
    pending: int
    """Notices delivered to a consumer and not yet acknowledged."""
    dead: int
    """Notices given up on after too many deliveries (the dead-letter feed)."""


def dead_letters_key(prefix: str) -> str:
    """The feed of the notices given up on (`Dispatcher.reclaim`)."""
    return f"{prefix}:outbox:dead"


def job_id(game_id: str, version: int, channel: str = "moved") -> str:
    """`<channel>-<version>-<game>`, in the letters RQ allows in an id (a game id's `.` and
    `_` written `_d` and `__`, so that no two games share one)."""
    game = game_id.replace("_", "__").replace(".", "_d")
    return f"{channel}-{version}-{game}"


class Dispatcher:
    def __init__(
        self,
        client: Any,
        keys: KeySpace,
        queue: Queue,
        *,
        consumer: str,
        max_deliveries: int = 5,
        claim_idle_ms: int = 30_000,
        count: int = 500,
    ) -> None:
        self.client = client
        self.keys = keys
        self.queue = queue
        self.consumer = consumer
        self.max_deliveries = max_deliveries
        self.claim_idle_ms = claim_idle_ms
        self.count = count
        self.feeds = keys.outbox_keys()
        self.dead_letters = dead_letters_key(keys.prefix)
        self.cluster = on_cluster(client)

    def ensure_groups(self) -> None:
        """Create the consumer group on every feed (from its start), if not there yet."""
        for feed in self.feeds:
            try:
                self.client.xgroup_create(feed, GROUP, id="0", mkstream=True)
            except ResponseError as error:
                if "BUSYGROUP" not in str(error):
                    raise

    def step(self, block_ms: int | None = None) -> int:
        """Read the notices new to this group, enqueue their jobs, acknowledge them; how many
        were handled."""
        if self.cluster:
            replies = self._read_each()
            if block_ms and not any(replies):
                time.sleep(min(block_ms / 1000, CLUSTER_POLL_SECONDS))
        else:
            feeds = dict.fromkeys(self.feeds, ">")
            read = self.client.xreadgroup(
                GROUP, self.consumer, feeds, count=self.count, block=block_ms
            )
            replies = [read]
        handled = 0
        for reply in replies:
            for feed, entries in _streams(reply):
                handled += self._handle(feed, entries)
        return handled

    def _read_each(self) -> list[Any]:
        """The read on a cluster, where each feed lies in a slot of its own and a read of
        several slots is refused: every feed read on its own, without blocking (in one
        pipeline, which sends each node its reads at once)."""
        with self.client.pipeline(transaction=False) as pipeline:
            for feed in self.feeds:
                pipeline.xreadgroup(GROUP, self.consumer, {feed: ">"}, count=self.count)
            return list(pipeline.execute())

    def _acknowledge(self, pipeline: Any, feed: str, ids: Sequence[bytes]) -> None:
        """Acknowledge the notices whose jobs `pipeline` (a transaction on the queue's Redis)
        enqueues: in that transaction when the queue is on the store's Redis, so that neither
        lands without the other; else (the store on a cluster) once the jobs are in. A
        dispatcher that dies in between leaves the notices pending, and the one that takes
        them over enqueues the same job ids again."""
        if self.queue.connection is self.client:
            pipeline.xack(feed, GROUP, *ids)
            pipeline.execute()
        else:
            pipeline.execute()
            self.client.xack(feed, GROUP, *ids)

    def reclaim(self) -> int:
        """Take over the notices another consumer left pending too long (it died): enqueue
        their jobs, or give up on those delivered too often. How many were taken over."""
        taken = 0
        for feed in self.feeds:
            reply = self.client.xautoclaim(
                feed, GROUP, self.consumer, self.claim_idle_ms, "0-0", count=self.count
            )
            entries = reply[1]
            if not entries:
                continue
            counts = self._deliveries(feed, [entry_id for entry_id, _ in entries])
            keep: list[tuple[bytes, dict[bytes, bytes]]] = []
            dead: list[tuple[bytes, dict[bytes, bytes]]] = []
            for entry in entries:
                (dead if counts.get(entry[0], 0) > self.max_deliveries else keep).append(entry)
            for entry_id, fields in dead:
                self.client.xadd(self.dead_letters, {**fields, b"from": entry_id})
                self.client.xack(feed, GROUP, entry_id)
            taken += self._handle(feed, keep)
        return taken

    def trim(self) -> int:
        """Trim every feed below its oldest notice still pending (all delivered ones are
        acknowledged below it); how many notices went."""
        trimmed = 0
        for feed in self.feeds:
            pending = self.client.xpending(feed, GROUP)
            groups = {g["name"]: g for g in self.client.xinfo_groups(feed)}
            group = groups.get(GROUP.encode()) or groups.get(GROUP)
            if group is None:
                continue
            oldest = pending["min"] if pending["pending"] else group["last-delivered-id"]
            if oldest in (None, b"0-0", "0-0"):
                continue
            trimmed += int(self.client.xtrim(feed, minid=oldest, approximate=False))
        return trimmed

    def health(self) -> Health:
        pending = sum(int(self.client.xpending(feed, GROUP)["pending"]) for feed in self.feeds)
        return Health(pending, int(self.client.xlen(self.dead_letters)))

    def _deliveries(self, feed: str, ids: Sequence[bytes]) -> dict[bytes, int]:
        found = self.client.xpending_range(feed, GROUP, min=ids[0], max=ids[-1], count=len(ids))
        return {_bytes(item["message_id"]): int(item["times_delivered"]) for item in found}

    def _handle(self, feed: str, entries: Iterable[tuple[bytes, dict[bytes, bytes]]]) -> int:
        """Enqueue the job of each notice and acknowledge them all."""
        ids, notices = [], []
        for entry_id, fields in entries:
            ids.append(entry_id)
            first, last = fields[b"c"].split(b" ", 2)[:2]
            notices.append((fields[b"g"].decode(), int(first), int(last)))
        if not ids:
            return 0
        request_ids = self._request_ids(notices)
        with self.queue.connection.pipeline() as pipeline:  # a transaction on the queue's Redis
            self.queue.enqueue_many(
                [
                    Queue.prepare_data(
                        JOB, args=(game, first, last), job_id=job_id(game, last),
                        retry=MOVED_RETRY, meta=job_meta(request_id),
                    )
                    for (game, first, last), request_id in zip(notices, request_ids, strict=True)
                ],
                pipeline=pipeline,
            )  # fmt: skip
            self._acknowledge(pipeline, feed, ids)
        DISPATCHED.inc(len(ids))
        for (game, since, until), request_id in zip(notices, request_ids, strict=True):
            traced = {"request_id": request_id} if request_id else {}
            log.info("dispatched", game_id=game, first_version=since, version=until, **traced)
        return len(ids)

    def _request_ids(self, notices: Sequence[tuple[str, int, int]]) -> list[str]:
        """The request id each notice's append keeps in its metadata (`store.tracing`), for
        its job and its log line: the appends' first entries, in one round trip."""
        with self.client.pipeline(transaction=False) as pipeline:
            for game, first, _last in notices:
                at = store_keys.entry_id(first)
                pipeline.xrange(self.keys.game(game).events, at, at)
            replies = pipeline.execute()
        return [entry_request_id(entries[0][1]) if entries else "" for entries in replies]


def _streams(reply: Any) -> list[tuple[str, list[tuple[bytes, dict[bytes, bytes]]]]]:
    """The entries per feed of an XREADGROUP reply, in either shape redis-py gives it."""
    if not reply:
        return []
    if isinstance(reply, dict):
        return [
            (_text(feed), list(entries[0] if entries and isinstance(entries[0], list) else entries))
            for feed, entries in reply.items()
        ]
    return [(_text(feed), list(entries)) for feed, entries in reply]


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _bytes(value: Any) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode()
