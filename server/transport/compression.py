"""Compression shared by every answer: the one way anything is gzipped (`gzip_body`), the level
of the answers compressed per request, and whether a client takes gzip (for the handlers that
send bytes compressed once, which the app's compression middleware leaves alone: they are
marked `uncompressed`)."""

from __future__ import annotations

import gzip

from litestar.config.compression import CompressionConfig
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


KEPT_LEVEL = 9
"""Of what is gzipped once and kept (the client's files, finished games' documents)."""


def gzip_body(body: bytes, level: int = GZIP_LEVEL, minimum: int = COMPRESS_FROM) -> bytes | None:
    """`body` gzipped at `level` with no time stamp (so the same body always gives the same
    bytes), or None when it is shorter than `minimum`: too short to be worth it. The level
    says what it is for: `GZIP_LEVEL` for an answer made per request (what the app's
    compression does to every JSON answer a client takes gzip for), `KEPT_LEVEL` for bytes
    made once and kept, a middle one for what is kept a while (`server.transport.packed`)."""
    return gzip.compress(body, level, mtime=0) if len(body) >= minimum else None


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
                    packed := gzip_body(
                        message["body"], config.gzip_compress_level, config.minimum_size
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


COMPRESSION = CompressionConfig(
    backend="gzip",
    minimum_size=COMPRESS_FROM,
    gzip_compress_level=GZIP_LEVEL,
    exclude_opt_key="uncompressed",
    middleware_class=OneShotGzip,
)
"""The app's compression: JSON over 1 KiB goes out gzipped to a client that takes it; the
answers that never change (the client's files, finished games' replays and records) are
compressed once, by their handlers, and marked `uncompressed` here. The level is low on
purpose: a board is made anew for each request, and level 1 makes it a fifth of its size for
a fraction of the cost of level 6 (bench/server.py)."""
