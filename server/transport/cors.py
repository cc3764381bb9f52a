"""CORS, for third-party clients in a browser: which web origins may call the API
(`PATRICIAN_CORS_ORIGINS`), off without any."""

from __future__ import annotations

from litestar.config.cors import CORSConfig


def cors_config(origins: str) -> CORSConfig | None:
    """CORS for the web origins named (a comma list), None without any: a third-party page
    may then call the API with a bearer token (never cookies: the API has none) and read the
    request id and `Retry-After` of the answers."""
    allowed = [origin.strip().rstrip("/") for origin in origins.split(",") if origin.strip()]
    if not allowed:
        return None
    return CORSConfig(
        allow_origins=allowed,
        allow_methods=["GET", "POST", "PUT", "DELETE"],
        allow_headers=["Authorization", "Content-Type", "Last-Event-ID", "X-Request-ID"],
        expose_headers=["X-Request-ID", "Retry-After"],
        allow_credentials=False,
        max_age=600,
    )
