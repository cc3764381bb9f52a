"""Compression shared by every answer: the level of the answers compressed per request, and
whether a client takes gzip (for the handlers that send bytes compressed once, which the
app's compression middleware leaves alone: they are marked `uncompressed`)."""

from __future__ import annotations

import gzip

from litestar.datastructures import MutableScopeHeaders
from litestar.middleware.compression import CompressionMiddleware
from litestar.types import HTTPResponseStartEvent, Message, Receive, Scope, Send

from server.transport.request_ids import raw_header

GZIP_LEVEL = 1
"""Of the app's compression, per answer (a board, a command's answer): level 1 makes a board
about a fifth of its size for a fraction of the time of level 6 (bench/server.py). A replay
in play is larger and compressed by its handler at its own level (`server.transport.packed`)."""

COMPRESS_FROM = 1024
"""Bodies shorter than this are sent as they are."""


def takes_gzip(accept_encoding: str) -> bool:
    """Whether an `Accept-Encoding` header admits gzip (`gzip;q=0` refuses it)."""
    for part in accept_encoding.lower().split(","):
        coding, *params = part.split(";")
        if coding.strip() in ("gzip", "*"):
            for param in params:
                name, _, value = param.strip().partition("=")
                if name == "q":
                    try:
                        return float(value) > 0
                    except ValueError:
                        return False
            return True
    return False


def gzip_answer(body: bytes, minimum: int = COMPRESS_FROM, level: int = GZIP_LEVEL) -> bytes | None:
    """`body` gzipped for one answer (no time stamp), or None when it is shorter than
    `minimum`: what the app's compression does to every JSON answer a client takes gzip for."""
    return gzip.compress(body, level, mtime=0) if len(body) >= minimum else None


def compressed_once(body: bytes) -> bytes | None:
    """`body` gzipped for good (level 9, no time stamp: the same bytes every time), or None
    when it is too short to be worth it."""
    return gzip.compress(body, 9, mtime=0) if len(body) >= COMPRESS_FROM else None


class OneShotGzip(CompressionMiddleware):
    """Litestar's compression middleware (`CompressionConfig.middleware_class`), lean for the
    small whole answers that are nearly all of ours: the one header it needs read straight
    from the scope, and nothing made for an answer under `minimum_size` (Litestar's own makes
    a gzip stream for every answer before it knows its size, which cost the busiest calls a
    tenth of their time, bench/server.py). A whole body is gzipped in one call; a streamed
    one is passed on as it is (the live stream is marked `uncompressed` besides)."""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        accepted = raw_header(scope, b"accept-encoding")
        if accepted is None or not takes_gzip(accepted):
            await self.app(scope, receive, send)
            return
        config = self.config
        held: list[HTTPResponseStartEvent] = []

        async def send_gzipped(message: Message) -> None:
            if message["type"] == "http.response.start":
                held.append(message)
                return
            if not held:
                await send(message)
                return
            start = held.pop()
            headers = MutableScopeHeaders(start)
            if (
                message["type"] == "http.response.body"
                and not message.get("more_body")
                and "content-encoding" not in headers
                and (
                    packed := gzip_answer(
                        message["body"], config.minimum_size, config.gzip_compress_level
                    )
                )
                is not None
            ):
                headers["Content-Encoding"] = "gzip"
                headers["Content-Length"] = str(len(packed))
                headers.extend_header_value("vary", "Accept-Encoding")
                message["body"] = packed
            await send(start)
            await send(message)

        await self.app(scope, receive, send_gzipped)
