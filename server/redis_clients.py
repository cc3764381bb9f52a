"""The Redis clients of a server process, built by the composition root (`server.app`): one
place that knows how the server talks to Redis (the embedded fakeredis, or a real one)."""

from __future__ import annotations

from typing import Any


def redis_clients(redis_url: str | None) -> tuple[Any, Any, Any]:
    """The Redis client for commands and reads, one for blocking follows (live streams hold a
    connection while they wait, so they must not starve the others), and a sync one for the
    jobs' queue (RQ is sync), which on the embedded store the workers in this process use too
    (with a real Redis the workers are `patrician worker` processes)."""
    if redis_url is None:
        import fakeredis

        server = fakeredis.FakeServer()
        return (
            fakeredis.FakeAsyncRedis(server=server),
            fakeredis.FakeAsyncRedis(server=server),
            fakeredis.FakeRedis(server=server),
        )
    import socket

    import redis as sync_redis
    import redis.asyncio as redis

    # No per-read timeout on the main client: redis-py arms one around every read, which
    # costs more CPU than the rest of a request. A dead peer is found by TCP keep-alive
    # (about 8 s) and the connect itself is bounded.
    keepalive = {socket.TCP_KEEPIDLE: 5, socket.TCP_KEEPINTVL: 1, socket.TCP_KEEPCNT: 3}
    return (
        redis.Redis.from_url(
            redis_url,
            max_connections=64,
            socket_timeout=None,
            socket_connect_timeout=5,
            socket_keepalive=True,
            socket_keepalive_options=keepalive,
            health_check_interval=30,
        ),
        # Blocking reads wait up to 5 s at a time: the socket must outwait them.
        redis.Redis.from_url(redis_url, max_connections=1000, socket_timeout=30),
        sync_redis.Redis.from_url(redis_url, socket_timeout=5),
    )
