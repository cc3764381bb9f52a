"""Request ids: every answer carries one (`X-Request-ID`), and so does every log line about
it, so that a 500's id leads to its stack trace in the log; and so do the appends the request
made, their dispatch, the jobs that follow and the notifications sent (docs/workers.md,
"Request ids").

Two request hooks rather than an ASGI middleware: a middleware wraps every request in one more
coroutine and every message sent in one more call, which cost the board view (the busiest
read) about a tenth of its time. Error answers are made by `server.api.error_table`, which sets the
header itself: routing errors (404, 405) come before any hook.
"""

from __future__ import annotations

import itertools
import re
import secrets
from typing import Any

import structlog
from litestar import Response

from store import tracing

_process = secrets.token_hex(4)
_counter = itertools.count()


def next_request_id() -> str:
    """Unique, not secret: a process prefix and a counter (no system call per request)."""
    return f"{_process}{next(_counter):08x}"


_SANE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")
"""A client's request id is kept if it looks like an id: a UUID, a ULID, a hex or base-62
string, up to 64 ASCII letters, digits and `.`, `_`, `:`, `-`. Anything else (spaces, quotes,
control characters that would forge log lines) is replaced."""


def raw_header(scope: Any, name: bytes) -> str | None:
    """One header of a request straight from its ASGI scope (lower-case `name`; None if it
    is not there; the first if it is there twice): building Litestar's `Headers` for the
    headers every request reads costs more than the rest of a cached board. The headers are
    gathered by name on the first call, and kept in the scope for the next ones."""
    found: dict[bytes, bytes] | None = scope.get(_GATHERED)
    if found is None:
        found = {}
        for key, value in scope.get("headers", ()):
            found.setdefault(bytes(key), bytes(value))
        scope[_GATHERED] = found
    value = found.get(name)
    return None if value is None else value.decode("latin-1")


_GATHERED = "patrician.headers"
"""The scope's key of its headers gathered by name (`raw_header`)."""


def request_id_of(scope: Any) -> str:
    """The id of the request of this ASGI scope: the one given to it already, else the
    client's `X-Request-ID` if it is sane (`_SANE`), else a new one."""
    state = scope.setdefault("state", {})
    request_id: str | None = state.get("request_id")
    if request_id is None:
        given = raw_header(scope, b"x-request-id") or ""
        request_id = given if _SANE.fullmatch(given) else next_request_id()
        state["request_id"] = request_id
    return request_id


def assign_request_id(scope: Any) -> str:
    """Before the handler: give the request its id and bind it to the log context and to the
    store's (each request runs in a task of its own, so the binding ends with it): the
    appends it makes keep it in their metadata, and what follows them names it
    (`store.tracing`, `workers.tracing`). Returns the id."""
    request_id = request_id_of(scope)
    tracing.current.set(request_id)
    structlog.contextvars.bind_contextvars(request_id=request_id)
    return request_id


async def send_request_id(response: Response[Any]) -> Response[Any]:
    """After the handler: the answer carries the request's id."""
    response.headers["X-Request-ID"] = tracing.current.get()
    return response
