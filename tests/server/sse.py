"""Server-sent events for the tests: parsing a stream, reading a live server's, and reading an
in-process app's (the test clients wait for a whole body, which a stream never ends)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import httpx

from tests.server.client import ApiFailure, Json


@dataclass(frozen=True)
class Message:
    id: int | None
    """The event's version; None for a `revealed` message, which names no version."""
    event: str
    data: Json

    def reaches(self, version: int) -> bool:
        return self.id is not None and self.id >= version


def parse_sse(lines: Iterable[str]) -> Iterator[Message]:
    """Server-sent messages from the lines of a stream (comments and retries ignored)."""
    fields: dict[str, str] = {}
    for line in lines:
        if line == "":
            if "data" in fields:
                number = int(fields["id"]) if "id" in fields else None
                yield Message(number, fields.get("event", ""), json.loads(fields["data"]))
            fields = {}
            continue
        if line.startswith(":"):
            continue
        name, _, value = line.partition(":")
        value = value.removeprefix(" ")
        fields[name] = fields[name] + "\n" + value if name == "data" and name in fields else value


def read_stream(
    client: httpx.Client,
    path: str,
    *,
    until: int,
    headers: dict[str, str] | None = None,
    timeout: float = 10.0,
) -> list[Message]:
    """Read a live server's stream until the message with id `until` (then hang up)."""
    got: list[Message] = []
    with client.stream("GET", path, headers=headers, timeout=timeout) as response:
        if response.status_code != 200:
            response.read()
            raise ApiFailure("the stream was refused", response)
        assert response.headers["content-type"].startswith("text/event-stream")
        for message in parse_sse(response.iter_lines()):
            got.append(message)
            if message.reaches(until):
                break
    return got


@dataclass
class Streamed:
    status: int
    headers: dict[str, str]
    body: bytes
    messages: list[Message]

    def json(self) -> Json:
        return json.loads(self.body)


async def asgi_stream(
    app: Any, path: str, until: int, headers: dict[str, str] | None = None, timeout: float = 10
) -> Streamed:
    """Read an in-process app's stream until the message with id `until`, then disconnect
    (the test clients wait for a whole body, which a stream never ends). Runs on the loop
    that serves the app: `TestClient.blocking_portal.call(asgi_stream, app, path, until)`.
    A refusal (a whole JSON body) comes back as it is."""
    raw_path, _, query = path.partition("?")
    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "GET",
        "scheme": "http",
        "path": raw_path,
        "raw_path": raw_path.encode(),
        "root_path": "",
        "query_string": query.encode(),
        "headers": [(b"host", b"testserver")]
        + [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()],
        "client": ("127.0.0.1", 50000),
        "server": ("testserver", 80),
        "state": {},
    }
    done = asyncio.Event()
    got = Streamed(0, {}, b"", [])
    pending = b""
    sent_request = False

    async def receive() -> dict[str, Any]:
        nonlocal sent_request
        if not sent_request:
            sent_request = True
            return {"type": "http.request", "body": b"", "more_body": False}
        await done.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        nonlocal pending
        if message["type"] == "http.response.start":
            got.status = message["status"]
            got.headers = {k.decode().lower(): v.decode() for k, v in message.get("headers", [])}
        elif message["type"] == "http.response.body":
            chunk = message.get("body", b"")
            got.body += chunk
            if got.headers.get("content-type", "").startswith("text/event-stream"):
                pending += chunk.replace(b"\r\n", b"\n")
                *complete, pending = pending.split(b"\n\n")
                for block in complete:
                    got.messages.extend(parse_sse([*block.decode().split("\n"), ""]))
            if not message.get("more_body", False) or (
                got.messages and got.messages[-1].reaches(until)
            ):
                done.set()

    task = asyncio.ensure_future(app(scope, receive, send))
    try:
        await asyncio.wait_for(done.wait(), timeout)
    finally:
        done.set()
        try:
            await asyncio.wait_for(task, 5)
        except (TimeoutError, asyncio.CancelledError):
            task.cancel()
    return got
