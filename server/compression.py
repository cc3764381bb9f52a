"""Compression shared by every answer: the level of the answers compressed per request, and
whether a client takes gzip (for the handlers that send bytes compressed once, which the
app's compression middleware leaves alone: they are marked `uncompressed`)."""

from __future__ import annotations

import gzip

GZIP_LEVEL = 1
"""Of the app's compression, per answer (a board, a command's answer): level 1 makes a board
about a fifth of its size for a fraction of the time of level 6 (bench/server.py). A replay
in play is larger and compressed by its handler at its own level (`server.packed`)."""

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


def compressed_once(body: bytes) -> bytes | None:
    """`body` gzipped for good (level 9, no time stamp: the same bytes every time), or None
    when it is too short to be worth it."""
    return gzip.compress(body, 9, mtime=0) if len(body) >= COMPRESS_FROM else None
