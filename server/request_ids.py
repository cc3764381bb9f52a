"""Request ids: every answer carries one (`X-Request-ID`), and so does every log line about
it, so that a 500's id leads to its stack trace in the log."""

from __future__ import annotations

import itertools
import secrets
from typing import Any

import structlog
from litestar.enums import ScopeType
from litestar.middleware.base import ASGIMiddleware
from litestar.types import ASGIApp, Receive, Scope, Send

_process = secrets.token_hex(4)
_counter = itertools.count()


def next_request_id() -> str:
    """Unique, not secret: a process prefix and a counter (no system call per request)."""
    return f"{_process}{next(_counter):08x}"


class RequestIds(ASGIMiddleware):
    """Give every request an id (the client's `X-Request-ID` if sane), bind it to the log
    context, and send it back, so that a 500's id leads to its stack trace in the log."""

    scopes = (ScopeType.HTTP,)

    async def handle(self, scope: Scope, receive: Receive, send: Send, next_app: ASGIApp) -> None:
        given = next((value for name, value in scope["headers"] if name == b"x-request-id"), b"")
        request_id = given.decode("latin-1") if given.isalnum() and len(given) <= 64 else ""
        request_id = request_id or next_request_id()
        scope.setdefault("state", {})["request_id"] = request_id
        structlog.contextvars.bind_contextvars(request_id=request_id)

        async def send_with_id(message: Any) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                if not any(name.lower() == b"x-request-id" for name, _ in headers):
                    headers.append((b"x-request-id", request_id.encode()))  # errors carry it
                message["headers"] = headers
            await send(message)

        try:
            await next_app(scope, receive, send_with_id)
        finally:
            structlog.contextvars.unbind_contextvars("request_id")
