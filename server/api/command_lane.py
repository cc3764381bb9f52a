"""The command lane: the busiest request of all, `POST /api/games/{game_id}/commands`, served
in front of Litestar's routing with the same parts the Litestar route uses.

Why: a command's own work (decide, append, sign the receipt) is a fraction of what it cost
when it went through Litestar's request path (dependency resolution, signature models, the
hooks, the response objects and the middleware that wraps each message sent): measured side
by side on two cores (bench/http.py, which sends commands both ways), a command costs the
server 580 us of CPU through this lane and 852 us through the Litestar route. Every other
request, and this one when it is a cross-origin request with CORS configured, goes on to
Litestar.

The answers are those of the Litestar route (`server.api.routes.GameRoutes.send_commands`, which
still documents the operation and serves the cross-origin case), byte for byte but for the
request id: the same checks in the same order (the client's budget of requests in flight,
the body's size, its media type and strict JSON, then the bearer token), the same error
table (`server.api.error_table.refusal`), headers, gzip, metrics, request id and log lines
(tests/server/api/test_command_lane.py sends every kind of request both ways and compares).
"""

from __future__ import annotations

import re
from typing import Any, cast
from urllib.parse import parse_qsl

import msgspec
from litestar.exceptions import ClientException, InternalServerException
from litestar.exceptions.http_exceptions import RequestEntityTooLarge
from litestar.types import ASGIApp

from server.api.command_answers import command_answer, wants_board
from server.api.error_table import refusal
from server.api.reading import bearer_token, strict_decoder, strict_json
from server.schema import requests
from server.schema.errors import Unauthorized
from server.services.bundle import Services
from server.transport import metrics
from server.transport.compression import gzip_body, takes_gzip
from server.transport.edge import InFlight, edge
from server.transport.request_ids import assign_request_id, raw_header
from server.transport.security_headers import security_headers

TEMPLATE = "/api/games/{game_id}/commands"
"""The route's template, as Litestar names it in the scope (and the metrics label it)."""
_PATH = re.compile(r"/api/games/([^/]+)/commands")
_JSON = (b"content-type", b"application/json")
_decoder = strict_decoder(requests.SendCommands)


def command_lane(
    litestar: ASGIApp,
    services: Services,
    budget: InFlight,
    *,
    max_body: int,
    cors: bool,
    access_log: bool = False,
) -> ASGIApp:
    """The ASGI handler that serves `POST /api/games/{id}/commands` and hands every other
    request to `litestar` (the app's own handler). `cors`: CORS is configured, so a request
    with an `Origin` is Litestar's (its CORS middleware answers it)."""
    path_headers = [
        (name.lower().encode(), value.encode())
        for name, value in security_headers(TEMPLATE).items()
    ]

    async def serve(scope: Any, receive: Any, send: Any) -> None:
        try:
            request_id = assign_request_id(scope)
            data = strict_json(
                await _body(scope, receive, max_body),
                raw_header(scope, b"content-type"),
                _decoder,
            )
            board = wants_board(_included(scope))
            token = bearer_token(scope)
            if token is None:
                raise Unauthorized("no token")
            player = await services.accounts.authenticate(token)
            game_id = scope["path_params"]["game_id"]
            body = await command_answer(services, game_id, player, data, board=board)
        except Exception as error:  # answered as Litestar's exception handler answers it
            await _refuse(scope, send, error)
            return
        await _answer(
            scope, send, body, [_JSON, (b"x-request-id", request_id.encode()), *path_headers]
        )

    door = edge(budget, access_log=access_log)(serve)

    async def lane(scope: Any, receive: Any, send: Any) -> None:
        matched = None
        if scope["type"] == "http" and scope["method"] == "POST":
            matched = _PATH.fullmatch(scope["path"])
        if matched is None or (cors and raw_header(scope, b"origin") is not None):
            await litestar(scope, receive, send)
            return
        scope["path_template"] = TEMPLATE
        scope["path_params"] = {"game_id": matched.group(1)}  # as Litestar's routing sets it
        try:
            await door(scope, receive, send)
        except Exception as error:  # the door's own refusal (too many in flight)
            await _refuse(scope, send, error)

    return cast(ASGIApp, lane)


def _included(scope: Any) -> list[str]:
    """The values of the query's `include` (none without a query)."""
    query = scope.get("query_string") or b""
    if not query:
        return []
    pairs = parse_qsl(query.decode("latin-1"), keep_blank_values=True)
    return [value for name, value in pairs if name == "include"]


async def _answer(scope: Any, send: Any, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    """The 200 with its body, gzipped for a client that takes it, as the app's compression
    would send it."""
    accepted = raw_header(scope, b"accept-encoding")
    if accepted is not None and takes_gzip(accepted):
        packed = gzip_body(body)
        if packed is not None:
            body = packed
            headers += ((b"content-encoding", b"gzip"), (b"vary", b"Accept-Encoding"))
    headers.append((b"content-length", str(len(body)).encode()))
    metrics.answered(200)
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})


async def _body(scope: Any, receive: Any, limit: int) -> bytes:
    """The request's body, refused beyond `limit` bytes (413) as Litestar refuses it: by its
    announced length before reading, else as it comes."""
    announced = raw_header(scope, b"content-length")
    if announced is not None:
        try:
            length = int(announced)
        except ValueError:
            raise ClientException(f"Invalid content-length: {announced!r}") from None
        if length > limit:
            raise RequestEntityTooLarge
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise InternalServerException("client disconnected prematurely")
        chunk = message.get("body", b"")
        if chunk:
            size += len(chunk)
            if size > limit:
                raise RequestEntityTooLarge
            chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


async def _refuse(scope: Any, send: Any, error: Exception) -> None:
    answer, headers = refusal(scope, error)
    body = msgspec.json.encode(answer)
    raw = [_JSON, *((name.lower().encode(), value.encode()) for name, value in headers.items())]
    raw.append((b"content-length", str(len(body)).encode()))
    await send({"type": "http.response.start", "status": answer.status, "headers": raw})
    await send({"type": "http.response.body", "body": body})
