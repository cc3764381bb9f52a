"""`server.transport.joined_writes`: what uvicorn writes to a connection in one turn of the event
loop leaves in one send (a response's head and body together), a streamed body still leaves as it
comes, and nothing written before a close is lost."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from typing import Any

import uvicorn

from server.transport.joined_writes import HELD_AT_MOST, JoinedWritesProtocol, _JoinedWrites
from tests.processes import free_port


class RecordingTransport:
    """A transport that keeps what it is given: each write, and whether it was closed."""

    def __init__(self) -> None:
        self.writes: list[bytes] = []
        self.closed = False

    def write(self, data: bytes) -> None:
        assert not self.closed
        self.writes.append(data)

    def is_closing(self) -> bool:
        return self.closed

    def close(self) -> None:
        self.closed = True

    def get_write_buffer_size(self) -> int:
        return 0

    def get_extra_info(self, name: str) -> str:
        return f"extra {name}"


def test_the_writes_of_one_turn_of_the_loop_leave_in_one_send() -> None:
    async def scenario() -> list[bytes]:
        transport = RecordingTransport()
        joined = _JoinedWrites(transport, asyncio.get_running_loop())  # type: ignore[arg-type]
        joined.write(b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\n")
        joined.write(b"ok")
        assert transport.writes == []
        assert joined.get_write_buffer_size() == 40
        await asyncio.sleep(0)
        return transport.writes

    assert asyncio.run(scenario()) == [b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"]


def test_writes_of_different_turns_leave_one_after_the_other() -> None:
    async def scenario() -> list[bytes]:
        transport = RecordingTransport()
        joined = _JoinedWrites(transport, asyncio.get_running_loop())  # type: ignore[arg-type]
        for chunk in (b"first", b"second", b"third"):
            joined.write(chunk)
            await asyncio.sleep(0)
        return transport.writes

    assert asyncio.run(scenario()) == [b"first", b"second", b"third"]


def test_a_close_sends_what_was_written_before_it_and_nothing_goes_to_a_closed_connection() -> None:
    async def scenario() -> tuple[list[bytes], list[bytes]]:
        loop = asyncio.get_running_loop()
        closed_by_us = RecordingTransport()
        joined = _JoinedWrites(closed_by_us, loop)  # type: ignore[arg-type]
        joined.write(b"HTTP/1.1 400 Bad Request\r\n\r\n")
        joined.close()
        assert closed_by_us.closed
        lost = RecordingTransport()
        gone = _JoinedWrites(lost, loop)  # type: ignore[arg-type]
        gone.write(b"late")
        lost.closed = True  # the client went away before the loop's turn ended
        await asyncio.sleep(0)
        return closed_by_us.writes, lost.writes

    assert asyncio.run(scenario()) == ([b"HTTP/1.1 400 Bad Request\r\n\r\n"], [])


def test_everything_else_is_the_transports_own() -> None:
    async def scenario() -> Any:
        joined = _JoinedWrites(RecordingTransport(), asyncio.get_running_loop())  # type: ignore[arg-type]
        return joined.get_extra_info("peername")

    assert asyncio.run(scenario()) == "extra peername"


async def _app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    """A plain answer at any other path, after a wait at /slow-*, the request's body at /echo;
    at /stream a body in two chunks, the second sent only after the client says (at /go)
    that it has read the first; at /listen a first chunk, then nothing until the client goes."""
    if scope["type"] == "lifespan":
        while (await receive())["type"] != "lifespan.shutdown":
            await send({"type": "lifespan.startup.complete"})
        await send({"type": "lifespan.shutdown.complete"})
        return
    state = scope["state"]
    if scope["path"] == "/go":
        state["go"].set()
        await send({"type": "http.response.start", "status": 204, "headers": []})
        await send({"type": "http.response.body", "body": b""})
    elif scope["path"] == "/listen":  # a live stream: follows until the client goes away
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"first", "more_body": True})
        while (await receive())["type"] != "http.disconnect":
            pass
    elif scope["path"] == "/stream":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"first", "more_body": True})
        await state["go"].wait()
        await send({"type": "http.response.body", "body": b"second"})
    else:
        body = b"plain " + scope["path"].encode()
        if scope["path"].startswith("/slow"):
            await asyncio.sleep(0.02)  # as a request waits on Redis
        elif scope["path"] == "/echo":
            body = b""
            while (message := await receive())["type"] == "http.request":
                body += message["body"]
                if not message["more_body"]:
                    break
            else:
                return  # the client went away
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-length", str(len(body)).encode())],
            }
        )
        await send({"type": "http.response.body", "body": body})


@contextlib.asynccontextmanager
async def _served() -> AsyncIterator[int]:
    """`_app` under uvicorn on the joined writes' protocol: its port, while it serves."""
    port = free_port()
    config = uvicorn.Config(
        _app, host="127.0.0.1", port=port, http=JoinedWritesProtocol, log_level="warning",
        timeout_graceful_shutdown=2,  # an app left waiting fails its test, not hangs it
    )  # fmt: skip
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve())
    while not server.started:
        await asyncio.sleep(0.01)
    server.lifespan.state["go"] = asyncio.Event()
    try:
        yield port
    finally:
        server.should_exit = True
        await serving


async def _read_response(reader: asyncio.StreamReader) -> bytes:
    head = await reader.readuntil(b"\r\n\r\n")
    length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
    return await reader.readexactly(length)


def test_uvicorn_on_joined_writes_answers_in_full_and_streams_a_body_as_it_comes() -> None:
    async def scenario() -> tuple[list[bytes], bytes]:
        async with _served() as port:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            answers = []
            for path in ("/a", "/b"):  # one kept-alive connection
                writer.write(f"GET {path} HTTP/1.1\r\nhost: x\r\n\r\n".encode())
                answers.append(await asyncio.wait_for(_read_response(reader), 5))
            writer.write(b"GET /stream HTTP/1.1\r\nhost: x\r\n\r\n")
            await reader.readuntil(b"\r\n\r\n")
            # The first chunk comes while the app still waits: nothing held to the body's end.
            first = await asyncio.wait_for(reader.readuntil(b"first\r\n"), 5)
            _, go = await asyncio.open_connection("127.0.0.1", port)
            go.write(b"GET /go HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n")
            rest = await asyncio.wait_for(reader.readuntil(b"0\r\n\r\n"), 5)
            writer.close()
            go.close()
        return answers, first + rest

    answers, streamed = asyncio.run(scenario())
    assert answers == [b"plain /a", b"plain /b"]
    assert streamed == b"5\r\nfirst\r\n6\r\nsecond\r\n0\r\n\r\n"


def test_more_than_the_most_held_leaves_at_once_so_flow_control_still_sees_it() -> None:
    async def scenario() -> tuple[list[int], list[int]]:
        transport = RecordingTransport()
        joined = _JoinedWrites(transport, asyncio.get_running_loop())  # type: ignore[arg-type]
        piece = b"x" * (HELD_AT_MOST // 2 + 1)
        for _ in range(3):
            joined.write(piece)
        within_the_turn = [len(write) for write in transport.writes]
        await asyncio.sleep(0)
        return within_the_turn, [len(write) for write in transport.writes]

    within, after = asyncio.run(scenario())
    size = HELD_AT_MOST // 2 + 1
    assert within == [2 * size]  # the first two went as soon as they were too many
    assert after == [2 * size, size]


async def _half_closed(
    port: int, *requests: bytes
) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A connection whose client sent `requests`, then closed its side (`shutdown(SHUT_WR)`)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    for request in requests:
        writer.write(request)
    writer.write_eof()
    return reader, writer


def _get(path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nhost: x\r\n\r\n".encode()


def test_a_client_that_closes_its_side_after_its_request_still_gets_the_answer() -> None:
    """`shutdown(SHUT_WR)` after the request (as `nc -N` and some health checkers do), when
    the answer is written already: what is held goes out before the connection closes."""

    async def scenario() -> list[bytes]:
        answers = []
        async with _served() as port:
            for number in range(20):
                reader, writer = await _half_closed(port, _get(f"/half-{number}"))
                answers.append(await asyncio.wait_for(_read_response(reader), 5))
                writer.close()
        return answers

    assert asyncio.run(scenario()) == [b"plain /half-%d" % number for number in range(20)]


def test_a_client_that_closes_its_side_gets_an_answer_the_app_writes_later_then_the_close() -> None:
    """A request answered after a wait (as one waits on Redis), from a client that has closed
    its side already: the connection stays open for the answer, then closes (plain uvicorn
    closed it on the end of input, and the client got nothing)."""

    async def scenario() -> list[tuple[bytes, bytes]]:
        answers = []
        async with _served() as port:
            for number in range(20):
                reader, writer = await _half_closed(port, _get(f"/slow-{number}"))
                answer = await asyncio.wait_for(_read_response(reader), 5)
                answers.append((answer, await asyncio.wait_for(reader.read(), 5)))
                writer.close()
        return answers

    assert asyncio.run(scenario()) == [(b"plain /slow-%d" % number, b"") for number in range(20)]


def test_pipelined_requests_before_the_close_of_the_clients_side_are_all_answered() -> None:
    async def scenario() -> tuple[list[bytes], bytes]:
        async with _served() as port:
            paths = ("/slow-1", "/slow-2", "/slow-3")
            reader, writer = await _half_closed(port, *map(_get, paths))
            answers = [await asyncio.wait_for(_read_response(reader), 5) for _ in range(3)]
            rest = await asyncio.wait_for(reader.read(), 5)
            writer.close()
        return answers, rest

    assert asyncio.run(scenario()) == ([b"plain /slow-1", b"plain /slow-2", b"plain /slow-3"], b"")


def test_a_request_cut_short_by_the_close_of_the_clients_side_is_not_waited_for() -> None:
    """Its body can never come whole: the connection closes, the app is told the client
    went away, and nothing hangs."""

    async def scenario() -> tuple[bytes, bytes]:
        async with _served() as port:
            cut_short = b"POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 10\r\n\r\nabc"
            reader, writer = await _half_closed(port, cut_short)
            cut = await asyncio.wait_for(reader.read(), 5)
            writer.close()
            whole_body = b"POST /echo HTTP/1.1\r\nhost: x\r\ncontent-length: 3\r\n\r\nabc"
            reader, writer = await _half_closed(port, whole_body)
            whole = await asyncio.wait_for(_read_response(reader), 5)
            writer.close()
        return cut, whole

    assert asyncio.run(scenario()) == (b"", b"abc")


def test_a_stream_whose_client_closes_its_side_is_told_the_client_went_away() -> None:
    """An app that listens for the client's departure (a live stream) hears of it when the
    client closes its side, and the connection closes: the stream ends now, not when a later
    write finds the client gone (meanwhile it held its client's place in flight)."""

    async def scenario() -> bytes:
        async with _served() as port:
            reader, writer = await asyncio.open_connection("127.0.0.1", port)
            writer.write(_get("/listen"))
            await asyncio.wait_for(reader.readuntil(b"first\r\n"), 5)
            writer.write_eof()
            rest = await asyncio.wait_for(reader.read(), 5)
            writer.close()
        return rest

    assert asyncio.run(scenario()) == b""  # closed, the stream unfinished (no last chunk)
