"""The followers: each append's notice, read from the outbox feeds by one of any number of
followers, whose follow-up (`workers.follow_up`) that follower runs itself, then acknowledges.

Every shard's outbox feed is read with the consumer group `dispatch` (the name the feeds of
every deployment already carry) in small batches (`XREADGROUP`): a notice goes to one
follower and stays pending until that follower acknowledges it, which it does only once the
notice's follow-up succeeded. A follow-up that fails leaves its notice pending: the follower
tries it again after 1, 2, 5, 15 s (`XCLAIM`, which counts the delivery), and holds back the
later notices of that game in the batch with it, so that a game's follow-ups run in order. A
follow-up that finds Redis out of reach (down, or loading its data after a restart) is not
the notice's failure: the follower stops the batch there, keeps that notice and the rest of
the batch to try again the moment Redis answers (`RedisOutOfReach`: the follower's loop
waits for it, `workers.runner`), without counting a failure. A
follower that dies leaves its notices pending: any other takes them over once they have been
idle `claim_idle_ms` (`XAUTOCLAIM`). A notice delivered more than `max_deliveries` times goes
to the dead-letter feed, counted by `health`. Acknowledged notices are trimmed from the feeds
(never from a game's event stream).

A follower follows the games of a batch at once, on threads of its own (`threads`,
`PATRICIAN_FOLLOW_THREADS`), each game's notices in turn on one thread: a follow-up mostly
waits (on round trips to Redis, on a receiver's answer), so one process keeps several going
for little more CPU, and a notice waits for the slowest game of its batch rather than for
every notice before it. The follower's own bookkeeping (what to try again, the
acknowledgements) stays on its own thread.

The follow-up is idempotent (a notice followed twice, after a crash between the follow-up and
its acknowledgement, does what it did once), and what must wait or be retried later (a failed
delivery, an e-mail after its grace, a slow bot's search) it leaves to RQ jobs, so that one
game's slow work never holds up the notices of the others. Each notice carries its append's
metadata (docs/store.md, "Outbox"): its follow-up runs under the append's request id, and the
follower logs one line per batch.

Why not a job per notice, as before: RQ's own handling of a job cost more than the whole
follow-up (about 42 Redis commands in 11 round trips, three of them transactions).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, NamedTuple

import msgspec
import structlog
from redis.exceptions import ResponseError

from store.cluster import on_cluster
from store.keys import KeySpace
from workers.game_chains import (
    Entry,
    Follow,
    RedisOutOfReach,
    chains_of,
    follow_chain,
    order,
    out_of_reach,
    text,
)
from workers.metrics import FOLLOWED

log = structlog.get_logger("patrician.workers")

GROUP = "dispatch"
"""The consumer group of the outbox feeds (its name from the days of the dispatcher, kept:
the feeds of every deployment carry it, with the notices pending in it)."""
BATCH = 10
"""Notices read at a time: enough to share one read among several, few enough that the last
of a batch does not wait long behind the others."""
RETRY_SECONDS = (1.0, 2.0, 5.0, 15.0)
"""When a follower tries again a notice whose follow-up failed (after its first, second...
failure; then every 15 s), until it is delivered more than `max_deliveries` times."""
CLUSTER_POLL_SECONDS = 0.05
"""How long a follower on a Redis Cluster waits when no feed had a notice (it cannot block
on feeds of several slots at once): a notice waits that much longer at most."""


class _Later(NamedTuple):
    due: float
    failures: int
    game: str


class Health(msgspec.Struct, frozen=True):
    pending: int
    """Notices read by a follower and not yet acknowledged."""
    dead: int
    """Notices given up on after too many deliveries (the dead-letter feed)."""


def dead_letters_key(prefix: str) -> str:
    """The feed of the notices given up on (`Follower.reclaim`)."""
    return f"{prefix}:outbox:dead"


class Follower:
    def __init__(
        self,
        client: Any,
        keys: KeySpace,
        follow: Follow,
        *,
        consumer: str,
        max_deliveries: int = 5,
        claim_idle_ms: int = 30_000,
        count: int = BATCH,
        threads: int = 1,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.client, self.keys, self.follow = client, keys, follow
        self.consumer = consumer
        self.max_deliveries = max_deliveries
        self.claim_idle_ms = claim_idle_ms
        self.count = count
        self.clock = clock
        self.feeds = keys.outbox_keys()
        self.dead_letters = dead_letters_key(keys.prefix)
        self.cluster = on_cluster(client)
        self._pool = (
            ThreadPoolExecutor(threads, thread_name_prefix="follow") if threads > 1 else None
        )
        """The threads that follow the games of a batch at once (None: one after another)."""
        self.later: dict[tuple[str, bytes], _Later] = {}
        """The notices this follower failed (or held back behind a failed one of their game):
        when to try each again, how many times its follow-up failed, its game."""

    def ensure_groups(self) -> None:
        """Create the consumer group on every feed (from its start), if not there yet."""
        for feed in self.feeds:
            try:
                self.client.xgroup_create(feed, GROUP, id="0", mkstream=True)
            except ResponseError as error:
                if "BUSYGROUP" not in str(error):
                    raise

    def step(self, block_ms: int | None = None) -> int:
        """Follow the notices due again, then those new to the group; how many were
        followed (or tried). Blocks at most `block_ms` for new ones, less when one is due."""
        handled = self._again()
        if self.later:
            wait = max(0.0, min(later.due for later in self.later.values()) - self.clock())
            block_ms = None if block_ms is None else min(block_ms, max(1, round(wait * 1000)))
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
        return handled + self._handle([batch for reply in replies for batch in _streams(reply)])

    def _read_each(self) -> list[Any]:
        """The read on a cluster, where each feed lies in a slot of its own and a read of
        several slots is refused: every feed read on its own, without blocking (in one
        pipeline, which sends each node its reads at once)."""
        with self.client.pipeline(transaction=False) as pipeline:
            for feed in self.feeds:
                pipeline.xreadgroup(GROUP, self.consumer, {feed: ">"}, count=self.count)
            return list(pipeline.execute())

    def _again(self) -> int:
        """The notices due to be tried again, claimed back by this follower (`XCLAIM`, which
        counts a delivery) and followed in the order they came."""
        now = self.clock()
        due: dict[str, list[bytes]] = {}
        for (feed, entry_id), later in sorted(self.later.items(), key=_in_order):
            if later.due <= now:
                due.setdefault(feed, []).append(entry_id)
        handled = 0
        for feed, ids in due.items():
            claimed = self.client.xclaim(feed, GROUP, self.consumer, 0, ids)
            for entry_id in ids:  # those taken over by another follower are its now
                if not any(found == entry_id for found, _fields in claimed):
                    self.later.pop((feed, entry_id), None)
            handled += self._handle([(feed, self._alive(feed, claimed))])
        return handled

    def reclaim(self) -> int:
        """Take over the notices another follower left pending too long (it died): follow
        them, or give up on those delivered too often. How many were taken over."""
        taken = 0
        for feed in self.feeds:
            reply = self.client.xautoclaim(
                feed, GROUP, self.consumer, self.claim_idle_ms, "0-0", count=self.count
            )
            entries = [entry for entry in reply[1] if (feed, entry[0]) not in self.later]
            taken += self._handle([(feed, self._alive(feed, entries))])
        return taken

    def _alive(self, feed: str, entries: Sequence[Entry]) -> list[Entry]:
        """The entries not delivered too often; the others moved to the dead letters."""
        if not entries:
            return []
        ids = [entry_id for entry_id, _fields in entries]
        low, high = min(ids, key=order), max(ids, key=order)  # as ids, not as bytes
        found = self.client.xpending_range(feed, GROUP, min=low, max=high, count=1000)
        counts = {_bytes(item["message_id"]): int(item["times_delivered"]) for item in found}
        alive: list[Entry] = []
        for entry_id, fields in entries:
            if counts.get(entry_id, 0) <= self.max_deliveries:
                alive.append((entry_id, fields))
                continue
            self.client.xadd(self.dead_letters, {**fields, b"from": entry_id})
            self.client.xack(feed, GROUP, entry_id)
            self.later.pop((feed, entry_id), None)
            FOLLOWED.labels("dead").inc()
            log.error("notice given up", feed=feed, entry_id=text(entry_id))
        return alive

    def _handle(self, batch: Iterable[tuple[str, Sequence[Entry]]]) -> int:
        """Follow the notices of a batch (feeds and their entries): each game's in turn, the
        games at once on the follower's threads; acknowledge those followed (one round trip),
        keep the others for later; one log line for the batch."""
        began = time.perf_counter()
        feeds = [(feed, list(entries)) for feed, entries in batch]
        waiting = [(feed, entry_id, later.game) for (feed, entry_id), later in self.later.items()]
        chains = chains_of(feeds, waiting)
        away = threading.Event()  # set by the first chain that finds Redis out of reach
        if self._pool is not None and len(chains) > 1:
            results = list(
                self._pool.map(lambda chain: follow_chain(chain, self.follow, away), chains)
            )
        else:
            results = [follow_chain(chain, self.follow, away) for chain in chains]
        followed = list(zip(chains, results, strict=True))
        failed = held = 0
        for chain, result in followed:
            for entry_id in result.failed:
                self._put_off(chain.feed, entry_id, chain.game, failed=True)
            for entry_id in result.held:
                self._put_off(chain.feed, entry_id, chain.game, failed=False)
            failed += len(result.failed)
            held += len(result.held)
        done = [(chain.feed, entry_id) for chain, result in followed for entry_id in result.done]
        error = next((result.away for result in results if result.away is not None), None)
        refused: Exception | None = None
        if done:
            try:
                self._acknowledge(done)
            except Exception as lost:  # followed again, unharmed (idempotent)
                done = []
                if out_of_reach(lost):
                    error = error or lost
                else:
                    refused = lost
            else:
                FOLLOWED.labels("ok").inc(len(done))
        if error is not None or refused is not None:  # the others kept, no failure counted
            settled = {(c.feed, i) for c, r in followed for i in r.failed + r.held}
            settled.update(done)
            for feed, entries in feeds:
                for entry_id, fields in entries:
                    if (feed, entry_id) not in settled:
                        self._keep(feed, entry_id, fields)
            if refused is not None:
                raise refused
            raise RedisOutOfReach(str(error)) from error
        handled = len(done)
        if failed:
            FOLLOWED.labels("failed").inc(failed)
        if handled or failed or held:
            requests = [request for result in results for request in result.requests]
            log.info("followed", notices=handled, failed=failed, held_back=held,
                     ms=round((time.perf_counter() - began) * 1000, 2),
                     request_ids=requests)  # fmt: skip
        return handled + failed + held

    def _acknowledge(self, done: Sequence[tuple[str, bytes]]) -> None:
        """Acknowledge the notices followed, every feed's in one round trip."""
        by_feed: dict[str, list[bytes]] = {}
        for feed, entry_id in done:
            by_feed.setdefault(feed, []).append(entry_id)
        with self.client.pipeline(transaction=False) as pipeline:
            for feed, ids in by_feed.items():
                pipeline.xack(feed, GROUP, *ids)
            pipeline.execute()
        for key in done:
            self.later.pop(key, None)

    def close(self) -> None:
        """Let the follower's threads go (a follower closed follows nothing more)."""
        if self._pool is not None:
            self._pool.shutdown(wait=True)

    def _keep(self, feed: str, entry_id: bytes, fields: dict[bytes, bytes]) -> None:
        """Keep a notice to try again as soon as Redis answers, its failures as they were."""
        game = fields.get(b"g", b"").decode(errors="replace")
        before = self.later.get((feed, entry_id))
        self.later[feed, entry_id] = _Later(self.clock(), before.failures if before else 0, game)

    def _put_off(self, feed: str, entry_id: bytes, game: str, *, failed: bool) -> None:
        """Keep a notice to try again later: after its last failure's wait, or (held back
        behind a failed one of its game) with that one."""
        before = self.later.get((feed, entry_id))
        failures = (before.failures if before else 0) + failed
        wait = RETRY_SECONDS[min(max(failures, 1), len(RETRY_SECONDS)) - 1]
        self.later[feed, entry_id] = _Later(self.clock() + wait, failures, game)

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


def _in_order(item: tuple[tuple[str, bytes], _Later]) -> tuple[str, tuple[int, int]]:
    """A pending notice's place: its feed, then its id."""
    (feed, entry_id), _later = item
    return feed, order(entry_id)


def _streams(reply: Any) -> list[tuple[str, list[Entry]]]:
    """The entries per feed of an XREADGROUP reply, in either shape redis-py gives it."""
    if not reply:
        return []
    if isinstance(reply, dict):
        return [
            (text(feed), list(entries[0] if entries and isinstance(entries[0], list) else entries))
            for feed, entries in reply.items()
        ]
    return [(text(feed), list(entries)) for feed, entries in reply]


def _bytes(value: Any) -> bytes:
    return value if isinstance(value, bytes) else str(value).encode()
