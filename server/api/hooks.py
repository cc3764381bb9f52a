"""What runs before and after the handler of every request Litestar routes: the request id,
the security headers chosen by the path, the rate limits of the open doors, and the body read
strictly (`server.api.reading`); after it, the answer counted and given its id and headers.
(The command lane, `server.api.command_lane`, does the same for the requests it serves.)"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from contextvars import ContextVar
from typing import Any

from litestar import Request, Response

from server.api.reading import strict_json_body
from server.transport import metrics
from server.transport.rate_limits import RateLimits
from server.transport.request_ids import assign_request_id, send_request_id
from server.transport.security_headers import STRICT, security_headers

_headers: ContextVar[Mapping[str, str]] = ContextVar("security_headers")
"""The security headers of the request being answered (chosen by its path before it)."""


def before_request(limits: RateLimits) -> Callable[[Request[Any, Any, Any]], Awaitable[None]]:
    """The hook before every routed handler, with the rate limits of this app."""

    async def before(request: Request[Any, Any, Any]) -> None:
        assign_request_id(request.scope)
        _headers.set(security_headers(request.scope["path"]))
        await limits.check(request)
        await strict_json_body(request)

    return before


async def after_request(response: Response[Any]) -> Response[Any]:
    metrics.answered(response.status_code or 200)
    response = await send_request_id(response)
    response.headers.update(_headers.get(STRICT))
    return response
