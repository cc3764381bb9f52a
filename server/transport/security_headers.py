"""The headers every answer carries against the browser's own attacks: a strict
Content-Security-Policy (scripts only from this server's files, never inline, never from
elsewhere), no content sniffing, no framing, no referrer sent on.

The API documentation pages under `/schema` are Litestar's own (their scripts are inline and
come from a CDN): they get every header but the script policy, which would blank them.
"""

from __future__ import annotations

from collections.abc import Mapping

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; "
    "form-action 'self'; frame-ancestors 'none'"
)

ALWAYS: Mapping[str, str] = {
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
}

STRICT: Mapping[str, str] = {**ALWAYS, "Content-Security-Policy": CONTENT_SECURITY_POLICY}
SCHEMA_PAGES: Mapping[str, str] = {**ALWAYS, "Content-Security-Policy": "frame-ancestors 'none'"}


def security_headers(path: str) -> Mapping[str, str]:
    """The headers of an answer to `path`."""
    return SCHEMA_PAGES if path.startswith("/schema") else STRICT
