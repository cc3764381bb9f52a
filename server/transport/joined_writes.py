"""uvicorn's HTTP/1.1 protocol with a response's writes joined (what one turn of the event
loop writes to a connection leaves in one send), and an answer for a client that closed its
side of the connection after its request.

Why: uvicorn writes a response's status line and headers, then its body, each at once, so
every answer cost two sends, two TCP segments and two wake-ups of the client; on loopback a
send is most of a small request's kernel time. Held until the end of the loop's turn, the
two leave as one (a streamed body's later chunks still leave as they come, one turn late at
most).

A client that closes its side while its request is answered still gets the answer (see
`JoinedWritesProtocol.eof_received`), but an app that listens for the client's departure (a
live stream: Litestar's streaming responses wait on `receive()` for `http.disconnect`) is told
of it then, and the connection closes: a follower that sends nothing more is gone, and its
stream would otherwise hold the client's place in flight (`server.transport.edge`) until a
keep-alive comment failed to reach it, 15 to 30 s later.
"""

from __future__ import annotations

import asyncio
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol, RequestResponseCycle

HELD_AT_MOST = 64 * 1024
"""Bytes held at most: more leave at once, whatever the turn, so that a body written in large
pieces without a pause still meets the transport's flow control (uvicorn pauses the app when
the socket's buffer is full) as it would unjoined."""


class _JoinedWrites:
    """A connection's transport whose writes of one loop turn are sent together; everything
    else is the transport's own."""

    __slots__ = ("_held", "_held_bytes", "_loop", "_transport")

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop) -> None:
        self._transport = transport
        self._loop = loop
        self._held: list[bytes] | None = None
        self._held_bytes = 0

    def write(self, data: bytes) -> None:
        if self._held is None:
            self._held = [data]
            self._held_bytes = len(data)
            self._loop.call_soon(self.flush)
        else:
            self._held.append(data)
            self._held_bytes += len(data)
        if self._held_bytes > HELD_AT_MOST:
            self.flush()

    def flush(self) -> None:
        """Send what is held now."""
        held, self._held, self._held_bytes = self._held, None, 0
        if held and not self._transport.is_closing():
            self._transport.write(held[0] if len(held) == 1 else b"".join(held))

    def close(self) -> None:
        self.flush()  # what was written before the close leaves first
        self._transport.close()

    def is_closing(self) -> bool:  # asked after every response: not through __getattr__
        return self._transport.is_closing()

    def get_write_buffer_size(self) -> int:
        return self._held_bytes + self._transport.get_write_buffer_size()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._transport, name)


class JoinedWritesProtocol(HttpToolsProtocol):
    """uvicorn's httptools protocol on a transport of joined writes."""

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._joined = _JoinedWrites(transport, self.loop)
        self._input_ended = False  # the client closed its side (`eof_received`)
        super().connection_made(self._joined)  # type: ignore[arg-type]

    def on_headers_complete(self) -> None:
        """A new request's cycle, its `receive` told of the end of the client's input (before
        its app starts, which is when the app is handed `receive`)."""
        before = self.cycle
        super().on_headers_complete()
        if self.cycle is not before:
            self.cycle.receive = self._told_of_the_end(self.cycle)  # type: ignore[method-assign]

    def _told_of_the_end(self, cycle: RequestResponseCycle) -> Any:
        """`cycle.receive`, but once the request's body was taken whole and the client has
        closed its side, the app asking for more is listening for the client's departure:
        it is told `http.disconnect`, and the connection closes (no answer is owed to a
        listener that the client left)."""
        receive = cycle.receive
        whole = False

        async def told_receive() -> Any:
            nonlocal whole
            while not (whole and self._input_ended):
                message = await receive()
                if message["type"] != "http.request":
                    return message  # the connection is lost, or the answer sent
                if not whole:
                    whole = not message.get("more_body", False)
                    return message
                # woken after the whole body: by the end of the client's input
            cycle.disconnected = True  # what the app sends now goes nowhere, as after a loss
            self._joined.close()
            return {"type": "http.disconnect"}

        return told_receive

    def shutdown(self) -> None:
        """The server stops (SIGINT, SIGTERM): a request being answered is finished as
        uvicorn finishes it, but an app listening for the client's departure (a live stream,
        which never ends by itself) is told of it now, as if the client had gone, so that
        the server stops within moments rather than waiting for every follower to leave."""
        cycle = self.cycle
        if cycle is not None and not cycle.response_complete and not cycle.more_body:
            self._input_ended = True
            cycle.message_event.set()
        super().shutdown()

    def eof_received(self) -> bool:  # type: ignore[override]  # asyncio.Protocol: bool | None
        """The client closed its side after its request (`shutdown(SHUT_WR)`, as `nc -N` and
        some health checkers do). A request it sent whole is still answered: the connection
        stays open for writing until that answer (or the last of the requests it pipelined)
        is sent, then closes; an app listening for the client's departure (a live stream)
        hears of it now (`_told_of_the_end`). Without one, the connection closes now, and what
        is held (an answer written already) leaves first, as it would have unjoined."""
        newest = self.cycle  # the last request read (any before it are answered first)
        if newest is not None and not newest.response_complete and not newest.more_body:
            newest.keep_alive = False  # its answer sent, the connection closes
            self._input_ended = True
            newest.message_event.set()  # wakes an app listening for the client's departure
            return True  # open for writing still (asyncio.Protocol.eof_received)
        self._joined.flush()
        return False
