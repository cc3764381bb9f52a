"""Sending webhooks: a POST at a time, through connections kept open for a few seconds.

Why keep them: a notification's cost was mostly its connection. Each POST opened a TCP
connection of its own and, to an https target, built a TLS context (about 58 ms of CPU, the
certificate authorities read again) and made a handshake; a game tells the same receiver of
every turn, often a few seconds apart. A `WebhookSender` lives as long as its worker process,
builds its TLS context once, and keeps a used connection open for `keep_alive` seconds (less
than the 5 s after which uvicorn's and Node's servers close an idle one).

What stays as before (`outbound.targets`): every connection is made to an address
checked when it is made, the host resolved once and connected to by that address, so no
second lookup can slip in another answer (DNS rebinding); TLS verifies the certificate for the
host name. A kept connection serves only the scheme, host and port it was opened for; one whose
answer was cut at `max_body`, or which holds bytes beyond its answer (they would be read as the
next POST's answer), is closed, not kept. A POST sent on a kept connection that the receiver
closed without a byte of an answer goes again once, on a new connection, within the time the
first try had; any other failure is the POST's. Redirects are never followed (each would be a
new, unchecked target). Every wait of a POST ends by one deadline, its read time-out after the
connection, so a server dripping a byte at a time cannot hold a worker for longer.
"""

from __future__ import annotations

import functools
import ssl
import time
from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import httpcore
import msgspec

from outbound.targets import (
    LOOKUP_SECONDS,
    Allowlist,
    DeliveryFailed,
    Resolver,
    checked_addresses,
    parse_target,
    system_resolve,
)

KEEP_ALIVE_SECONDS = 4.0
"""How long an idle connection is kept: under the 5 s of uvicorn's and Node's servers, so a
receiver rarely closes one just as it is used again."""


class Delivered(msgspec.Struct, frozen=True):
    status: int  # of the answer (a 3xx counts as a failure: redirects are never followed)
    body: bytes  # the first `max_body` bytes of the answer at most (the rest is not read)

    @property
    def ok(self) -> bool:
        return 200 <= self.status <= 299


@dataclass
class _Budget:
    """The time a POST has left, `read_timeout` from its start or from the new connection
    made for it, and what its try met: a new connection, bytes of an answer."""

    read_timeout: float
    deadline: float = 0.0
    fresh: bool = False
    received: bool = False
    again: bool = False
    """Sent again on a new connection: within the time the first try had."""

    def restart(self) -> None:
        if not self.again:
            self.deadline = time.monotonic() + self.read_timeout


_budget: ContextVar[_Budget | None] = ContextVar("webhook_budget", default=None)
"""The budget of the POST this thread is sending: a kept connection serves one POST after
another, each with its own deadline."""


class _HandshakeTimeout(httpcore.TimeoutException):
    """A receiver that accepted the connection but did not finish the TLS handshake in time."""


class _DeadlineStream(httpcore.NetworkStream):
    """A stream whose every wait ends by the deadline of the POST it is used for."""

    def __init__(self, stream: httpcore.NetworkStream) -> None:
        self._stream = stream

    def _left(self, timeout: float | None) -> float | None:
        budget = _budget.get()
        if budget is None:  # not within a POST (the pool closing it)
            return timeout
        left = budget.deadline - time.monotonic()
        if left <= 0:
            raise httpcore.ReadTimeout("the read time-out passed")
        return left if timeout is None else min(timeout, left)

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        data = self._stream.read(max_bytes, self._left(timeout))
        budget = _budget.get()
        if data and budget is not None:
            budget.received = True
        return data

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._stream.write(buffer, self._left(timeout))

    def close(self) -> None:
        self._stream.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        try:
            inner = self._stream.start_tls(ssl_context, server_hostname, self._left(timeout))
        except httpcore.ConnectTimeout:  # httpcore's name for it: the connection was accepted
            raise _HandshakeTimeout("the TLS handshake did not finish in time") from None
        return _DeadlineStream(inner)

    def get_extra_info(self, info: str) -> Any:
        return self._stream.get_extra_info(info)


class _CheckedBackend(httpcore.SyncBackend):
    """Resolves once, checks every address, connects to a checked one (by its IP)."""

    def __init__(self, allow: Allowlist, resolve: Resolver) -> None:
        self._allow, self._resolve = allow, resolve
        self.connections = 0
        """Connections made: what the tests count to see one kept."""

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        # The connect time-out bounds the lookup and all the attempts together, not each.
        deadline = None if timeout is None else time.monotonic() + timeout
        seconds = LOOKUP_SECONDS if timeout is None else timeout
        addresses = checked_addresses(host, port, self._allow, self._resolve, seconds)
        failure: Exception = httpcore.ConnectError(f"{host} has no address")
        for address in addresses:
            left = None if deadline is None else max(deadline - time.monotonic(), 0.001)
            try:
                stream = super().connect_tcp(address, port, left, local_address, socket_options)
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                failure = exc
                continue
            budget = _budget.get()
            if budget is not None:
                budget.fresh = True
                budget.restart()  # the read time-out counts from the connection
            self.connections += 1
            return _DeadlineStream(stream)
        raise failure


@functools.cache
def default_tls() -> ssl.SSLContext:
    """The TLS context of every sender of the process: built once (it reads the certificate
    authorities), shared by every connection, as `ssl` allows."""
    return httpcore.default_ssl_context()


# A kept connection the receiver closed just as it was used: the POST goes again, once, on a
# new one, if not a byte of an answer came (then the receiver did not answer it).
_CLOSED_UNANSWERED = (httpcore.RemoteProtocolError, httpcore.ReadError, httpcore.WriteError)


class _Connection(httpcore.HTTPConnection):
    """httpcore's connection, also expired when it is idle with bytes left over after the
    answer before: httpcore would read them as the next POST's answer (which may be another
    player's, to the same host)."""

    def has_expired(self) -> bool:
        return super().has_expired() or (self.is_idle() and _bytes_left(self))


def _bytes_left(connection: httpcore.HTTPConnection) -> bool:
    # httpcore 1.0's own parts (constraints.txt pins it; tests/workers/test_webhook_sending.py
    # sends stray bytes and fails if these names move); `trailing_data` is h11's, public.
    state = getattr(getattr(connection, "_connection", None), "_h11_state", None)
    return state is not None and bool(state.trailing_data[0])


class _Pool(httpcore.ConnectionPool):
    """A pool of `_Connection`s, to targets checked by `backend`."""

    def __init__(self, tls: ssl.SSLContext, backend: _CheckedBackend, keep_alive: float, kept: int):
        super().__init__(
            ssl_context=tls,
            network_backend=backend,
            retries=0,
            max_connections=None,  # as many as threads send at once: one each
            max_keepalive_connections=kept if keep_alive > 0 else 0,
            keepalive_expiry=keep_alive,
        )
        self._made = (tls, backend, keep_alive)

    def create_connection(self, origin: httpcore.Origin) -> httpcore.ConnectionInterface:
        tls, backend, keep_alive = self._made
        return _Connection(
            origin=origin, ssl_context=tls, keepalive_expiry=keep_alive, network_backend=backend
        )


class WebhookSender:
    """POSTs webhooks to targets checked against `allow` (`outbound.targets`), keeping
    connections open `keep_alive` seconds (0: none kept). Safe to share between threads."""

    def __init__(
        self,
        allow: Allowlist,
        *,
        resolve: Resolver = system_resolve,
        tls: ssl.SSLContext | None = None,
        keep_alive: float = KEEP_ALIVE_SECONDS,
        kept: int = 64,
    ) -> None:
        self.allow = allow
        self._backend = _CheckedBackend(allow, resolve)
        self._pool = _Pool(tls or default_tls(), self._backend, keep_alive, kept)

    @property
    def connections_made(self) -> int:
        return self._backend.connections

    def post(
        self,
        url: str,
        body: bytes,
        headers: Mapping[str, str],
        *,
        connect_timeout: float = 5.0,
        read_timeout: float = 10.0,
        max_body: int = 65536,
    ) -> Delivered:
        """POST `body` once to `url` (see the module docstring).

        `connect_timeout` bounds a new connection; `read_timeout` everything after it (TLS,
        sending, the whole answer). Raises TargetRefused for a refused target and
        DeliveryFailed for a network failure or a time-out (LookupFailed, one, when the host's
        name could not be looked up within the connect time-out). The Host header is always the
        URL's host.
        """
        target = parse_target(url)
        request_headers = [("Host", target.host_header)]
        request_headers += [(k, v) for k, v in headers.items() if k.lower() != "host"]
        timeouts = {"connect": connect_timeout, "pool": connect_timeout}
        timeouts |= {"read": read_timeout, "write": read_timeout}
        # Built from our own parse, so what was checked is what is connected to.
        request_url = httpcore.URL(
            scheme=target.scheme, host=target.host, port=target.port, target=target.target
        )
        budget = _Budget(read_timeout)
        reset = _budget.set(budget)
        try:
            budget.restart()
            while True:
                budget.fresh = budget.received = False
                try:
                    with self._pool.stream(
                        "POST", request_url, headers=request_headers, content=body,
                        extensions={"timeout": timeouts},
                    ) as response:  # fmt: skip
                        return Delivered(response.status, _first_bytes(response, max_body))
                except _CLOSED_UNANSWERED:
                    if budget.fresh or budget.received or budget.again:
                        raise
                    budget.again = True
        except httpcore.TimeoutException as exc:
            what = (
                "finish the TLS handshake" if isinstance(exc, _HandshakeTimeout)
                else "accept a connection" if isinstance(exc, httpcore.ConnectTimeout)
                else "answer"
            )  # fmt: skip
            raise DeliveryFailed(
                f"The webhook host {target.host} did not {what} in time."
            ) from None
        except (httpcore.NetworkError, httpcore.ProtocolError, OSError) as exc:
            raise DeliveryFailed(
                f"Sending to the webhook host {target.host} failed: {exc}"
            ) from None
        finally:
            _budget.reset(reset)

    def close(self) -> None:
        self._pool.close()

    def __enter__(self) -> WebhookSender:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()


def _first_bytes(response: httpcore.Response, limit: int) -> bytes:
    """At most `limit` bytes of the answer; the rest is never read, so the connection is
    closed, not kept."""
    received = bytearray()
    for chunk in response.iter_stream():
        received += chunk
        if len(received) >= limit:
            break
    return bytes(received[:limit])


def post(
    url: str,
    body: bytes,
    headers: Mapping[str, str],
    allow: Allowlist,
    *,
    resolve: Resolver = system_resolve,
    connect_timeout: float = 5.0,
    read_timeout: float = 10.0,
    max_body: int = 65536,
) -> Delivered:
    """One POST on a connection of its own, closed after it (`WebhookSender.post`)."""
    with WebhookSender(allow, resolve=resolve, keep_alive=0) as sender:
        return sender.post(
            url, body, headers,
            connect_timeout=connect_timeout, read_timeout=read_timeout, max_body=max_body,
        )  # fmt: skip
