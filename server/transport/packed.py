"""Boards, replays and records gzipped by their own handlers, which are marked `uncompressed`
(`OPT`) so that the app's compression middleware leaves them alone: a finished game's replay
is about 1.2 MB of JSON, 19 KB gzipped, and never changes, so its gzip bytes are made once (level 9)
and kept; middleware would make them again on every request. In play, where every move
changes them, they are gzipped per request at `IN_PLAY_LEVEL`. A client that does not take
gzip gets the plain JSON. A board's gzip is kept beside its JSON by the game service (a
board at a version never changes, and every watcher of the game reads it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, NamedTuple

from cachetools import LRUCache
from litestar import Request, Response

from server.transport.compression import KEPT_LEVEL, gzip_body, takes_gzip
from server.transport.request_ids import raw_header

OPT = {"uncompressed": True}
"""The handlers' mark: the app's compression middleware passes their answers by."""

IN_PLAY_LEVEL = 5
"""The level of a replay or record in play. Measured on a four-seat game's replay half-way
(0.53 MB): level 1 gives 23.5 KB in 1.5 ms, level 5 12.5 KB in 3.1 ms, level 9 10.3 KB in
4.3 ms; at its end (1.2 MB), 52 KB in 3.4 ms, 22.6 KB in 6.2 ms, 18.6 KB in 7.7 ms. Replays
repeat themselves so much that the lazy matching of levels 4 and up halves them, for about
3 ms more: a fraction of the time it takes to build the replay."""


class Encoded(NamedTuple):
    """A document's bytes as they are sent: its JSON, or that JSON gzipped."""

    body: bytes
    gzipped: bool


class Packer:
    """The gzip bytes of finished games' documents, kept (a bounded number of them)."""

    def __init__(self, size: int) -> None:
        self._kept: LRUCache[tuple[object, ...], bytes] = LRUCache(size)

    async def encode(
        self,
        key: tuple[object, ...],
        plain: Callable[[], Awaitable[bytes]],
        *,
        gzipped: bool,
        final: bool,
    ) -> Encoded:
        """The document `plain()` makes, gzipped when the client takes gzip (`gzipped`) and
        it holds 1 KiB or more. `final`: it never changes (a finished game's), so its gzip
        bytes are kept under `key`, a pure function of the document, and the next request
        is answered from them without making the document again."""
        if gzipped and final:
            kept = self._kept.get(key)
            if kept is not None:
                return Encoded(kept, True)
        body = await plain()
        packed = gzip_body(body, KEPT_LEVEL if final else IN_PLAY_LEVEL) if gzipped else None
        if packed is None:
            return Encoded(body, False)
        if final:
            self._kept[key] = packed
        return Encoded(packed, True)


BOARD_LEVEL = 6
"""A board is gzipped once per version and seat and then kept (every watcher of a game reads
each version): a middle level; a four-seat board in play, about 6 KB, comes to about 1.2 KB."""


def accepts_gzip(request: Request[Any, Any, Any]) -> bool:
    """Whether the request's `Accept-Encoding` admits gzip."""
    return takes_gzip(raw_header(request.scope, b"accept-encoding") or "")


def response(encoded: Encoded) -> Response[bytes]:
    """The answer of a document: gzipped or not, it varies with the `Accept-Encoding` sent."""
    headers = {"Vary": "Accept-Encoding"}
    if encoded.gzipped:
        headers["Content-Encoding"] = "gzip"
    return Response(content=encoded.body, media_type="application/json", headers=headers)
