"""The baselines of `bench/server.py`: bare Litestar endpoints served the same way as the game
server (uvicorn, same workers, same Redis), so that each figure has its floor beside it.

- `GET /bare`: returns a small Struct, no I/O.
- `POST /xadd`: one XADD of the request body to a stream, returns a small Struct.
"""

from __future__ import annotations

import os
import secrets
from typing import Any

import msgspec
import redis.asyncio as redis
from litestar import Litestar, Request, get, post


class Small(msgspec.Struct, frozen=True):
    status: str
    version: int


def create() -> Litestar:
    # The game server's client settings (server/app.py), so that only the endpoints differ.
    client = redis.Redis.from_url(
        os.environ["BENCH_REDIS_URL"],
        max_connections=64,
        socket_timeout=None,
        socket_connect_timeout=5,
        socket_keepalive=True,
        health_check_interval=30,
    )
    stream = f"{os.environ.get('BENCH_PREFIX', 'bench')}:baseline:{secrets.token_hex(4)}"

    @get("/bare", sync_to_thread=False)
    def bare() -> Small:
        return Small("ok", 1)

    @post("/xadd", status_code=200)
    async def xadd(request: Request[Any, Any, Any]) -> Small:
        body = await request.body()
        entry = await client.xadd(stream, {"d": body})
        return Small("ok", len(entry))

    async def close() -> None:
        await client.delete(stream)
        await client.aclose()

    # No logging set up: the baseline logs nothing, and in a test process (bench/inprocess.py)
    # it would take over the process's logging.
    return Litestar(
        route_handlers=[bare, xadd], on_shutdown=[close], openapi_config=None, logging_config=None
    )
