"""The ASGI servers `patrician serve` can run the app under: uvicorn (Python, uvloop and
httptools) or granian (its HTTP/1.1 in Rust, the app on a uvloop loop in Python).

uvicorn runs on `server.transport.joined_writes`' protocol: its own httptools protocol, with what a
turn of the event loop writes to a connection (a response's head and body) sent at once.

Both build the app in each worker process from the same factory
(`server.app:from_environment`), run its lifespan (`on_startup`, `on_shutdown`), bind the
address they are given, log no line per request, and stop on SIGTERM or SIGINT, letting the
requests in flight finish. bench/http.py measures them side by side.
"""

from __future__ import annotations

SERVERS = ("uvicorn", "granian")
FACTORY = "server.app:from_environment"

BACKPRESSURE = 256
"""At most this many requests in the app of one granian worker at once; the others wait in
the socket's backlog (its default, backlog / workers, is 512 on one worker: a burst that
large only makes every one of them late). uvicorn has no such bound."""


def serve(server: str, *, host: str, port: int, workers: int, factory: str = FACTORY) -> None:
    """Serve the app of `factory` (the game server's; bench/http.py serves its baselines the
    same way) under `server` (one of SERVERS) until SIGTERM or SIGINT."""
    if server == "granian":
        _granian(factory, host, port, workers)
    else:
        _uvicorn(factory, host, port, workers)


def _uvicorn(factory: str, host: str, port: int, workers: int) -> None:
    import uvicorn

    from server.transport.joined_writes import JoinedWritesProtocol

    uvicorn.run(
        factory,
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_level="info",
        access_log=False,
        # The client's address is the peer's: `X-Forwarded-For` is read by the app alone, from
        # the proxies of PATRICIAN_TRUSTED_PROXIES (`server.transport.rate_limits.ClientAddress`),
        # as under granian; uvicorn's own reading trusted it from any local process.
        proxy_headers=False,
        http=JoinedWritesProtocol,
    )


def _granian(factory: str, host: str, port: int, workers: int) -> None:
    from granian import Granian
    from granian.constants import HTTPModes, Interfaces, Loops
    from granian.log import LogLevels

    Granian(
        factory,
        factory=True,
        address=host,
        port=port,
        interface=Interfaces.ASGI,  # with the lifespan: the app's on_startup and on_shutdown
        workers=workers,
        loop=Loops.uvloop,
        http=HTTPModes.http1,
        websockets=False,  # the API has none: server-sent events are plain HTTP
        backpressure=BACKPRESSURE,
        # Granian's own lines (its workers' start and stop) at warning and above: the app
        # says itself what it starts with (server.app); no line per request.
        log_level=LogLevels.warning,
        log_access=False,
        # A worker that dies (its startup refused, say) stops the server, which says so:
        # never a loop of restarts that each fail the same way.
        respawn_failed_workers=False,
    ).serve()
