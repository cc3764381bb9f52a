"""A body refused unread is read and dropped before its refusal goes out, so that the client
gets the refusal.

A request whose body is over the limit is refused (413) as soon as its length says so, before
any of it is read. An HTTP/1.1 client sends its whole body before it reads the answer, and a
server that ends the connection with bytes of it still unread makes the kernel reset it: the
client then sees a broken connection instead of the 413 (granian does that about once in fifty
times on loopback; uvicorn reads on by itself). So the refusal waits while the rest of the
body is read and thrown away, as web servers' "lingering close" does, but never for more than
`LINGER_BYTES` or `LINGER_SECONDS`: a client sending more than that only gets the reset.
"""

from __future__ import annotations

import asyncio
from typing import Any, cast

from litestar.types import ASGIApp

from server.transport.request_ids import raw_header

LINGER_BYTES = 8 * 1024 * 1024
LINGER_SECONDS = 5.0


def lingering(app: ASGIApp, limit: int) -> ASGIApp:
    """`app`, its 413 answers held back until the request's body is read (module
    docstring); a request whose body may be larger than `limit` is the only one it
    watches."""

    async def handler(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or not _may_be_over(scope, limit):
            await app(scope, receive, send)
            return
        done = False

        async def watched_receive() -> Any:
            nonlocal done
            message = await receive()
            done = done or message["type"] != "http.request" or not message.get("more_body")
            return message

        async def held_send(message: Any) -> None:
            if message["type"] == "http.response.start" and message["status"] == 413 and not done:
                await _drop_rest(watched_receive, lambda: done)
            await send(message)

        await app(scope, watched_receive, held_send)

    return cast(ASGIApp, handler)


def _may_be_over(scope: Any, limit: int) -> bool:
    length = raw_header(scope, b"content-length")
    if length is None:
        return raw_header(scope, b"transfer-encoding") is not None
    return not length.isdigit() or int(length) > limit


async def _drop_rest(receive: Any, done: Any) -> None:
    dropped = 0
    try:
        async with asyncio.timeout(LINGER_SECONDS):
            while not done() and dropped <= LINGER_BYTES:
                dropped += len((await receive()).get("body", b""))
    except TimeoutError:
        pass
