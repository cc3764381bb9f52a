"""Rate limits on the open doors: creating players and games, joining them, auditing a
record, changing one's notification settings (each new e-mail address is sent a mail). Each
is a budget of requests per client address in a fixed window
(`PATRICIAN_RATE_*`, docs/api.md, "Rate limits"), counted in Redis so that every API process
serving one address shares it: one round trip (INCR, EXPIRE NX, TTL in a pipeline). Beyond
it: 429 `rate_limited` with `Retry-After`, the seconds left of the window. A Redis that does
not answer lets the request through (its handler meets the same Redis and says 503).

The client is the peer's address; behind a reverse proxy, only when the peer is one of the
trusted proxies (`PATRICIAN_TRUSTED_PROXIES`), the last address of `X-Forwarded-For` that is
not one of them (the proxies append the address they saw; anything to its left is the
client's to forge). Without trusted proxies `X-Forwarded-For` is never read.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from litestar import Request
from litestar.exceptions import HTTPException
from redis.exceptions import RedisError

from server.schema.errors import ErrorBody
from server.transport.request_ids import raw_header

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

RATE_LIMITED = ErrorBody(
    429,
    "rate_limited",
    "at most 10000 new players per 60 s from one address",
    "5f1c09aa00000083",
)
"""A refusal beyond a rate limit, as the OpenAPI document shows it."""

RULES = {
    ("POST", "/api/players"): ("players", "new players"),
    ("POST", "/api/games"): ("games", "new games"),
    ("POST", "/api/games/{game_id}/join"): ("joins", "joins"),
    # An audit of a record of 8 MiB costs the server about 2 s of CPU: the tightest budget.
    ("POST", "/api/audit"): ("audits", "audits"),
    # Each new e-mail address given is sent a confirmation: a budget, so that nobody mails
    # strangers through the server (a player's token is free to make).
    ("PUT", "/api/me/notifications"): ("notifications", "changes of notification settings"),
    ("POST", "/api/me/push"): ("notifications", "changes of notification settings"),
}
"""The limited routes: (method, route template) -> (the rule's name, what it counts)."""


class LimitSettingError(ValueError):
    """A setting of the limits that cannot be used: it stops the start, in one line that
    names it."""


def parse_networks(text: str) -> tuple[Network, ...]:
    """A comma list of addresses or networks (`10.0.0.1, 10.1.0.0/16, ::1`);
    `LimitSettingError` naming the one that is neither."""
    networks = []
    for item in (part.strip() for part in text.split(",")):
        if item:
            try:
                networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                raise LimitSettingError(
                    f"PATRICIAN_TRUSTED_PROXIES: not an address or a network: {item!r}"
                ) from None
    return tuple(networks)


def whole_number(env: Mapping[str, str], name: str, default: int, *, least: int = 0) -> int:
    """The setting `name` of the environment, a whole number of at least `least`."""
    text = env.get(name, "").strip() or str(default)
    if not text.isdecimal() or int(text) < least:
        raise LimitSettingError(f"{name} must be a whole number of {least} or more, not {text!r}")
    return int(text)


class ClientAddress:
    """Who a request comes from, as the limits count it."""

    def __init__(self, trusted_proxies: str = "") -> None:
        self.trusted = parse_networks(trusted_proxies)

    def of(self, scope: Any) -> str:
        peer = scope.get("client")
        address = str(peer[0]) if peer else "unknown"
        if not self.trusted or not self._trusted(address):
            return address
        forwarded = raw_header(scope, b"x-forwarded-for") or ""
        for hop in reversed(forwarded.split(",")):
            try:
                seen = ipaddress.ip_address(hop.strip())
            except ValueError:  # not an address: the hops left of it cannot be trusted either
                return address
            if not any(seen in network for network in self.trusted):
                return str(seen)
            address = str(seen)
        return address

    def _trusted(self, address: str) -> bool:
        try:
            seen = ipaddress.ip_address(address)
        except ValueError:  # a test client's "testclient", a Unix socket
            return False
        return any(seen in network for network in self.trusted)


class RateLimits:
    """The windows of the limited routes, in Redis under `<prefix>:rate:`."""

    def __init__(
        self,
        client: Any,
        prefix: str,
        clients: ClientAddress,
        limits: Mapping[str, int],
        window_seconds: int,
    ) -> None:
        """`limits`: requests per window of each rule by name (`RULES`); 0 is no limit."""
        self.client, self.prefix, self.clients = client, prefix, clients
        self.window = window_seconds
        self.rules = {
            route: (name, what, limits[name])
            for route, (name, what) in RULES.items()
            if limits.get(name, 0) > 0
        }

    async def check(self, request: Request[Any, Any, Any]) -> None:
        """Before a handler: count the request in its client's window if its route is
        limited; 429 beyond the limit."""
        scope = request.scope
        rule = self.rules.get((scope["method"], scope.get("path_template", "")))
        if rule is None:
            return
        name, what, limit = rule
        key = f"{self.prefix}:rate:{name}:{self.clients.of(scope)}"
        try:
            async with self.client.pipeline(transaction=False) as pipeline:
                pipeline.incr(key)
                pipeline.expire(key, self.window, nx=True)
                pipeline.ttl(key)
                count, _set, left = await pipeline.execute()
        except RedisError:
            return  # let it through: its handler will say what the store does
        if int(count) > limit:
            raise HTTPException(
                status_code=429,
                detail=f"at most {limit} {what} per {self.window} s from one address",
                headers={"Retry-After": str(max(int(left), 1))},
            )
