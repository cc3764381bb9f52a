"""`GET /metrics`: what the server and its workers did, in Prometheus's text format.

Kept in the process (`prometheus_client`'s own registry) for the embedded server, whose
workers run in it; when `PROMETHEUS_MULTIPROC_DIR` names a folder (several API and worker
processes on one machine, `make up`), every process writes its counts into files there, and
a scrape of any API process adds up all of them (`MultiProcessCollector`). The folder must be
set before the processes start, be the same for all of them, and be emptied when the stack
starts (files of processes gone would be counted again with those of their successors).

The gauges read from Redis (outbox lag, queue depth, deadlines, dead letters, workers) are
read when scraped (`server.ops.gauges`), never kept in a process. A scrape is answered from a
copy at most `FRESH_SECONDS` old, so that scraping in a loop costs Redis one round trip a
second at most, whatever the rate; nothing in it names a game, a player or an address.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

import structlog
from litestar import MediaType, Response, get
from litestar.di import NamedDependency
from prometheus_client import REGISTRY, CollectorRegistry, generate_latest, multiprocess
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from server.ops.gauges import RedisGauges
from server.transport import metrics

log = structlog.get_logger("patrician.metrics")

MULTIPROCESS = bool(os.environ.get("PROMETHEUS_MULTIPROC_DIR"))
"""Whether the counts are kept in files shared by the processes of the machine."""
FRESH_SECONDS = 1.0
CONTENT_TYPE = "text/plain; version=0.0.4"
"""Prometheus's text format (Litestar adds the `charset=utf-8`)."""


def _gauges_read(value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(
        "patrician_gauges_read",
        "Whether this scrape could read the gauges kept in Redis (1) or not (0)",
        value=value,
    )


class _Read(Collector):
    """Metric families read once, for one exposition."""

    def __init__(self, families: list[Any]) -> None:
        self.families = families

    def collect(self) -> Any:
        return iter(self.families)


class Scrape:
    """The exposition: the counts of this process (or of every process of the machine), and
    the gauges read from Redis now; one copy kept `FRESH_SECONDS`."""

    def __init__(self, gauges: RedisGauges) -> None:
        self.gauges = gauges
        self._text = b""
        self._made = float("-inf")
        self._lock = asyncio.Lock()

    async def text(self) -> bytes:
        async with self._lock:  # concurrent scrapes wait for one reading
            if time.monotonic() - self._made >= FRESH_SECONDS:
                self._text = await self._make()
                self._made = time.monotonic()
            return self._text

    async def _make(self) -> bytes:
        try:
            families = [*await self.gauges.read(), _gauges_read(1.0)]
        except Exception as error:  # Redis out of reach: the counts still, and that it is
            log.warning("the gauges could not be read from Redis", reason=repr(error))
            families = [_gauges_read(0.0)]
        read = CollectorRegistry(auto_describe=False)
        read.register(_Read(families))
        metrics.flush()  # this process's latest requests
        if MULTIPROCESS:
            counts = CollectorRegistry(auto_describe=False)
            multiprocess.MultiProcessCollector(counts)  # type: ignore[no-untyped-call]
        else:
            counts = REGISTRY
        return generate_latest(counts) + generate_latest(read)


MetricsScrape = NamedDependency[Scrape]


@get("/metrics", tags=["health"], operation_id="metrics", media_type=MediaType.TEXT)
async def scrape(metrics_scrape: MetricsScrape) -> Response[bytes]:
    """The server's and its workers' counters, histograms and gauges in Prometheus's text
    format (docs/api.md, "Metrics"). Nothing in it names a game, a player or an address."""
    return Response(await metrics_scrape.text(), media_type=CONTENT_TYPE)
