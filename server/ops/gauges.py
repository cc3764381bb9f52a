"""The gauges of `/metrics` that Redis knows and no process does: read when scraped, in one
round trip, so that every API process tells the same and none keeps a copy that ages.

- the outbox per shard: notices not yet read by the followers (`lag` of the consumer
  group, XINFO GROUPS) and read but not acknowledged (`pending`: in a follower's hands,
  or left by a dead one until another takes them over);
- the jobs' queue: jobs waiting for a worker, and those waiting for their time (a retry due
  later, an e-mail's grace period, quiet hours);
- the deadlines and reminders of timed games not fired yet;
- the dead letters: jobs out of retries (RQ's failed job registry) and notices given up on
  after too many deliveries (the followers' dead-letter feed);
- the workers registered with RQ (each renews its registration while it lives).

The keys are the workers' own (`workers.follower`, `store.timers`, RQ's registries), so
this module names none of them itself.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from prometheus_client.core import GaugeMetricFamily
from rq import Queue
from rq.worker_registration import WORKERS_BY_QUEUE_KEY

from store.keys import KeySpace
from store.timers import timers_key
from workers.follower import GROUP, dead_letters_key


def _number(value: Any) -> float | None:
    return None if value is None else float(value)


def _count(value: Any) -> float:
    """A count Redis answered (0 for a key it could not read)."""
    return 0.0 if isinstance(value, Exception) else float(value or 0)


def _group(groups: Any) -> dict[Any, Any] | None:
    """The followers' consumer group among a feed's (None before they made it)."""
    for group in groups or ():
        if group.get("name") in (GROUP, GROUP.encode()):
            return dict(group)
    return None


def _outbox(groups: list[Any]) -> tuple[GaugeMetricFamily, GaugeMetricFamily]:
    """The outbox's lag and pending notices per shard, from each feed's consumer groups."""
    lag = GaugeMetricFamily(
        "patrician_outbox_lag",
        "Outbox notices of a shard no follower has read yet",
        labels=["shard"],
    )
    pending = GaugeMetricFamily(
        "patrician_outbox_pending",
        "Outbox notices of a shard read by a follower and not acknowledged yet",
        labels=["shard"],
    )
    for shard, reply in enumerate(groups):
        group = None if isinstance(reply, Exception) else _group(reply)
        if group is None:  # no feed or no group yet: nothing was ever followed
            continue
        if (behind := _number(group.get("lag"))) is not None:  # unknown after a trim
            lag.add_metric([str(shard)], behind)
        pending.add_metric([str(shard)], float(group.get("pending") or 0))
    return lag, pending


class RedisGauges:
    """The reads of the gauges: `client`, the store's asyncio client; the jobs' `queue`, on
    its own (sync) connection."""

    def __init__(self, client: Any, keys: KeySpace, queue: Queue) -> None:
        self.client = client
        self.queue_client = queue.connection
        self.feeds = keys.outbox_keys()
        self.timers = timers_key(keys.prefix)
        self.dead_notices = dead_letters_key(keys.prefix)
        self.queued = queue.key
        self.scheduled = queue.scheduled_job_registry.key
        self.failed = queue.failed_job_registry.key
        self.workers = WORKERS_BY_QUEUE_KEY % queue.name

    def _queue_counts(self) -> list[Any]:
        with self.queue_client.pipeline(transaction=False) as pipeline:
            pipeline.llen(self.queued)
            pipeline.zcard(self.scheduled)
            # RQ's registry scores each failed job by when it is to be forgotten
            pipeline.zcount(self.failed, time.time(), "+inf")
            pipeline.scard(self.workers)
            return list(pipeline.execute(raise_on_error=False))

    async def read(self) -> list[GaugeMetricFamily]:
        """The gauges as Redis has them now."""
        async with self.client.pipeline(transaction=False) as pipeline:
            for feed in self.feeds:
                pipeline.xinfo_groups(feed)
            pipeline.zcard(self.timers)
            pipeline.xlen(self.dead_notices)
            replies = await pipeline.execute(raise_on_error=False)
        # the queue's Redis may be another than the store's (a cluster's), and its client is
        # the sync one of RQ: read in a thread, not in the server's loop
        queued, scheduled, failed, workers = (
            _count(value) for value in await asyncio.to_thread(self._queue_counts)
        )
        groups, (timers, dead) = replies[: len(self.feeds)], map(_count, replies[-2:])
        lag, pending = _outbox(groups)
        depth = GaugeMetricFamily(
            "patrician_job_queue_depth",
            "Jobs waiting for a worker (queued) or for their time (scheduled: a retry, a "
            "grace period, quiet hours)",
            labels=["state"],
        )
        depth.add_metric(["queued"], queued)
        depth.add_metric(["scheduled"], scheduled)
        dead_letters = GaugeMetricFamily(
            "patrician_dead_letters",
            "Work given up on: jobs out of retries (RQ's failed job registry) and outbox "
            "notices delivered too often",
            labels=["kind"],
        )
        dead_letters.add_metric(["jobs"], failed)
        dead_letters.add_metric(["notices"], dead)
        return [
            lag,
            pending,
            depth,
            GaugeMetricFamily(
                "patrician_pending_deadlines",
                "Deadlines and reminders of timed games not fired yet",
                value=timers,
            ),
            dead_letters,
            GaugeMetricFamily(
                "patrician_workers_registered",
                "RQ workers registered on the jobs' queue (the embedded server's register "
                "only while they run a burst)",
                value=workers,
            ),
        ]
