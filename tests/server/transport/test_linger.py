"""`server.transport.linger`: a 413 sent before the body was read waits until the client has sent
the rest of it (so the client, which reads only after sending, gets the 413), within bounds."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from server.transport import linger
from server.transport.linger import lingering


def _scope(length: int | None) -> dict[str, Any]:
    headers = [] if length is None else [(b"content-length", str(length).encode())]
    return {"type": "http", "method": "POST", "path": "/x", "headers": headers}


async def _refuse_at_once(scope: Any, receive: Any, send: Any) -> None:
    await send({"type": "http.response.start", "status": 413, "headers": []})
    await send({"type": "http.response.body", "body": b"{}"})


def _run(scope: dict[str, Any], chunks: list[bytes]) -> tuple[list[str], int]:
    """What happened, in order (`read` per chunk read, `answered` at the 413), and how many
    chunks were left unread."""
    happened: list[str] = []
    left = list(chunks)

    async def receive() -> dict[str, Any]:
        await asyncio.sleep(0)
        body = left.pop(0)
        happened.append("read")
        return {"type": "http.request", "body": body, "more_body": bool(left)}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            happened.append("answered")

    handler: Any = lingering(cast(Any, _refuse_at_once), 10)
    asyncio.run(handler(scope, receive, send))
    return happened, len(left)


def test_a_refusal_of_a_body_announced_too_large_waits_until_the_body_is_read() -> None:
    happened, left = _run(_scope(30), [b"x" * 10] * 3)
    assert (happened, left) == (["read", "read", "read", "answered"], 0)


def test_a_body_within_the_limit_is_never_watched() -> None:
    happened, left = _run(_scope(5), [b"x" * 5])
    assert (happened, left) == (["answered"], 1)


def test_no_more_than_the_linger_bound_is_read_for_a_client_that_sends_too_much(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(linger, "LINGER_BYTES", 25)
    happened, left = _run(_scope(1000), [b"x" * 10] * 100)
    assert happened == ["read", "read", "read", "answered"] and left == 97
