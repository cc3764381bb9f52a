"""What every routed request passes on its way in and out: its time taken for the metrics
(`server.transport.metrics`), and its client's budget of requests in flight in this process.

A client (an address, `server.transport.rate_limits.ClientAddress`) may have at most
`PATRICIAN_MAX_IN_FLIGHT` requests being served at once by one server process, a live stream
included for as long as it stays open; one more is refused with 429 `rate_limited` and
`Retry-After: 1`. Per process, in memory: it bounds what one client can hold of a process
(its connections' work, its streams), not of the whole deployment, which the rate limits in
Redis are for.

A plain ASGI callable rather than a Litestar middleware class, and it wraps neither `receive`
nor `send`: what it costs each request is two clock readings, two dict updates and one
histogram observation (docs/api.md, "Metrics": a few microseconds).
"""

from __future__ import annotations

import time
from typing import Any

import structlog
from litestar.exceptions import HTTPException

from server.schema.errors import ErrorBody
from server.transport import metrics
from server.transport.rate_limits import ClientAddress

log = structlog.get_logger("patrician")

BUSY = ErrorBody(
    429,
    "rate_limited",
    "at most 256 requests at once from one address",
    "5f1c09aa00000082",
)
"""The refusal of a request beyond its client's budget, as the OpenAPI document shows it."""


class InFlight:
    """The requests in flight of each client in this process."""

    def __init__(self, clients: ClientAddress, most: int) -> None:
        """`most`: requests in flight per client; 0 is no limit."""
        self.clients, self.most = clients, most
        self.counts: dict[str, int] = {}


def edge(budget: InFlight, *, access_log: bool = False) -> Any:
    """The middleware factory Litestar calls with each route's app (`app=`); `access_log`:
    a log line per request (`PATRICIAN_ACCESS_LOG`), off by default, since a line costs
    tens of microseconds (measured: 25-40 us, ten times what the rest of the door costs)."""

    def wrap(app: Any) -> Any:
        async def door(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] != "http":
                await app(scope, receive, send)
                return
            started = time.perf_counter()
            metrics.answered(500)  # until the answer says otherwise
            try:
                if budget.most <= 0:
                    await app(scope, receive, send)
                    return
                client = budget.clients.of(scope)
                counts = budget.counts
                held = counts.get(client, 0)
                if held >= budget.most:
                    metrics.answered(429)  # refused here, before the handler's error handler
                    raise HTTPException(
                        status_code=429,
                        detail=f"at most {budget.most} requests at once from one address",
                        headers={"Retry-After": "1"},
                    )
                counts[client] = held + 1
                try:
                    await app(scope, receive, send)
                finally:
                    left = counts[client] - 1
                    if left:
                        counts[client] = left
                    else:
                        del counts[client]
            finally:
                seconds = time.perf_counter() - started
                metrics.observe(scope, seconds)
                if access_log:  # under the request's id, bound by the request hook
                    log.info(
                        "request", method=scope["method"], route=scope.get("path_template"),
                        status=metrics.answered_status(), ms=round(seconds * 1000, 3),
                    )  # fmt: skip

        return door

    return wrap
