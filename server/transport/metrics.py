"""What the server counts of its requests, for `/metrics` (`server.ops.scrape`): every request
by method, route template and status with its time, every refusal by its error code, every
append a request made by its kind.

The route is the template (`/api/games/{game_id}`), never the path, so that no game id ever
becomes a label; a method the app does not know is `other`; every label is from a small set
of the app's own.

Counted on the path of every request, so counted cheaply: into plain numbers of this process
(`_Tally`, a list of bucket counts per label set), which `flush` adds to `prometheus_client`'s
own metrics once a second and before each scrape. `prometheus_client` itself costs about 2 us
an observation in a process, and 10 us when its counts are kept in files for several
processes (`PROMETHEUS_MULTIPROC_DIR`); a tally costs a fraction of one (docs/api.md,
"Metrics", has the figures).
"""

from __future__ import annotations

import asyncio
from bisect import bisect_left
from contextvars import ContextVar
from typing import Any

from prometheus_client import Counter, Histogram, disable_created_metrics

from workers.metrics import APPENDS

# no `_created` series beside each count: twice the text, and nothing a rate() needs
disable_created_metrics()  # type: ignore[no-untyped-call]

BUCKETS = (0.00025, 0.0005, 0.001, 0.002, 0.004, 0.008, 0.016, 0.032, 0.064, 0.125, 0.25,
           0.5, 1.0, 2.5, 10.0)  # fmt: skip
"""Seconds, from a quarter of a millisecond (the fastest reads) to 10 s: fine where a ~1 ms
service's answers fall, coarse beyond (a cold replay, an audit)."""

REQUESTS = Histogram(
    "patrician_http_request_duration_seconds",
    "HTTP requests by method, route template and status, with their time from the first byte "
    "read to the last sent (a live stream's: as long as it stays open)",
    ["method", "route", "status"],
    buckets=BUCKETS,
)
REFUSALS = Counter(
    "patrician_refusals",
    "Requests refused, by the stable error code of the answer (a rules code, "
    "version_conflict, rate_limited, unauthorized...; internal for a 500)",
    ["code"],
)
FLUSH_SECONDS = 1.0
"""How often the tallies of this process are added to the metrics (a scrape adds them too)."""

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH"})
UNMATCHED = "unmatched"
"""The route of a request no route took (a 404 or 405 of the router): counted, not timed."""


class _Tally:
    """The requests of one label set since the last flush: a count per bucket (the last
    one above every bound, +Inf) and the sum of their times."""

    __slots__ = ("counts", "total")

    def __init__(self) -> None:
        self.counts = [0] * (len(BUCKETS) + 1)
        self.total = 0.0


_tallies: dict[tuple[str, str, int], _Tally] = {}
"""Per (method, route, status) seen: bounded, as the labels are."""
_counted: dict[tuple[Counter, tuple[str, ...]], int] = {}
"""The refusals and appends since the last flush, per counter and labels."""

_status: ContextVar[int] = ContextVar("answered_status", default=500)
"""The status the request being served was answered with (set by `answered`; unset, 500)."""


def answered(code: int) -> None:
    """Say the status of the answer (the after-request hook, the error handler)."""
    _status.set(code)


def answered_status() -> int:
    return _status.get()


def observe(scope: Any, seconds: float) -> None:
    """Count one request answered (its status said by `answered`) and its time."""
    method = scope.get("method", "GET")
    key = (
        method if method in METHODS else "other",
        scope.get("path_template") or UNMATCHED,
        _status.get(),
    )
    tally = _tallies.get(key)
    if tally is None:
        tally = _tallies[key] = _Tally()
    tally.counts[bisect_left(BUCKETS, seconds)] += 1  # the first bound at or above it
    tally.total += seconds


def refused(code: str) -> None:
    """Count a refusal by its error code (a bounded set: the app's own codes)."""
    key = (REFUSALS, (code,))
    _counted[key] = _counted.get(key, 0) + 1


def count_append(kind: str) -> None:
    """Count an append a request made (by the player)."""
    key = (APPENDS, (kind, "player"))
    _counted[key] = _counted.get(key, 0) + 1


def flush() -> None:
    """Add the tallies to the metrics, and start them again. (The histogram's own bucket
    values, `_buckets` and `_sum` of prometheus-client 0.26, which has no call that adds
    many observations at once: each bucket counts its own range, cumulated when read.)"""
    for (method, route, status), tally in _tallies.items():
        if not any(tally.counts):
            continue
        child: Any = REQUESTS.labels(method, route, str(status))
        for bucket, count in zip(child._buckets, tally.counts, strict=True):
            if count:
                bucket.inc(count)
        child._sum.inc(tally.total)
        tally.counts = [0] * len(tally.counts)
        tally.total = 0.0
    counted = list(_counted.items())
    _counted.clear()
    for (counter, labels), count in counted:
        counter.labels(*labels).inc(count)


async def keep_flushing() -> None:
    """`flush` every `FLUSH_SECONDS`, until cancelled (and once more then)."""
    try:
        while True:
            await asyncio.sleep(FLUSH_SECONDS)
            flush()
    finally:
        flush()
