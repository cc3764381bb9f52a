"""The Redis clients of a server or worker process, built by the composition root
(`server.app`, `server.cli.main`): one place that knows how the processes talk to Redis (the
embedded fakeredis, a real one, or a Redis Cluster for the event store with the jobs' queue on
a plain Redis of its own).

A cluster is named by the scheme `redis+cluster://` (`rediss+cluster://` with TLS) or by
`PATRICIAN_REDIS_CLUSTER=1` beside a plain `redis://` URL: redis-py has no scheme of its own
for one. Any node of the cluster will do, the clients find the others. RQ's jobs are not
cluster-safe (a job's keys lie in several slots and RQ writes them in one transaction), so
with a cluster the queue needs its URL (`PATRICIAN_QUEUE_URL`); without one the queue is on
the store's Redis.
"""

from __future__ import annotations

from typing import Any, cast

from store.cluster import AsyncStoreCluster, StoreCluster
from store.multiplexed import MultiplexedRedis

CLUSTER_SCHEMES = {"redis+cluster": "redis", "rediss+cluster": "rediss"}
"""The schemes that name a Redis Cluster, and the scheme redis-py takes for each."""


class RedisSettingsError(ValueError):
    """Redis settings that cannot be used (said in one line, without a password)."""


def _scheme(url: str) -> str:
    return url.partition("://")[0].lower()


def redis_settings(
    redis_url: str | None, cluster: bool, queue_url: str | None
) -> tuple[bool, str | None]:
    """Whether the store is on a cluster (by `cluster` or by the URL's scheme), and the
    queue's URL: the store's when it is a plain Redis and none is given, None for a cluster
    without one (`check_queue` refuses it where a queue is needed). A queue URL that names
    a cluster is refused."""
    if redis_url is None:  # the embedded store: it holds the queue too
        return cluster, queue_url
    cluster = cluster or _scheme(redis_url) in CLUSTER_SCHEMES
    if queue_url and _scheme(queue_url) in CLUSTER_SCHEMES:
        raise RedisSettingsError(
            "the queue URL must name a plain Redis, not a cluster: RQ's jobs are not cluster-safe"
        )
    return cluster, queue_url or (None if cluster else redis_url)


def check_queue(cluster: bool, queue_url: str | None) -> None:
    """Refuse a store on a cluster without a queue URL (the tools that only read or change
    stored games need none)."""
    if cluster and queue_url is None:
        raise RedisSettingsError(
            "the event store is on a Redis Cluster: set PATRICIAN_QUEUE_URL (--queue-url) to a "
            "plain Redis for the jobs' queue (RQ's jobs are not cluster-safe)"
        )


def node_url(url: str) -> str:
    """The URL in a scheme redis-py reads (a cluster's scheme written as its node's)."""
    scheme, _, rest = url.partition("://")
    return f"{CLUSTER_SCHEMES.get(scheme.lower(), scheme)}://{rest}"


def redis_clients(
    redis_url: str | None,
    *,
    cluster: bool = False,
    queue_url: str | None = None,
    gather: float = 0.0,
) -> tuple[Any, Any, Any]:
    """The Redis client for commands and reads, one for blocking follows (live streams hold a
    connection while they wait, so they must not starve the others), and a sync one for the
    jobs' queue (RQ is sync), which on the embedded store the workers in this process use too
    (with a real Redis the workers are `patrician worker` processes). `cluster` and
    `queue_url` as `redis_settings` makes them; `gather`, how long the commands client of a
    plain Redis holds the first command of a moment for others to go with it
    (`store.multiplexed`; on a cluster the store gathers them into pipelines itself)."""
    if redis_url is None:
        import fakeredis

        server = fakeredis.FakeServer()
        return (
            fakeredis.FakeAsyncRedis(server=server),
            fakeredis.FakeAsyncRedis(server=server),
            fakeredis.FakeRedis(server=server),
        )
    import redis as sync_redis

    check_queue(cluster, queue_url)
    queue = sync_redis.Redis.from_url(queue_url or redis_url, socket_timeout=5)
    if cluster:
        url = node_url(redis_url)
        return (
            # Per node: the cluster client keeps a pool for each master.
            AsyncStoreCluster.from_url(url, max_connections=64, socket_connect_timeout=5),
            AsyncStoreCluster.from_url(url, max_connections=1000, socket_timeout=30),
            queue,
        )
    return (*_plain_clients(redis_url, gather), queue)


def _plain_clients(redis_url: str, gather: float) -> tuple[Any, Any]:
    """The commands client and the blocking reads' client of a plain Redis."""
    import socket

    import redis.asyncio as redis

    # No per-read timeout on the main client: redis-py arms one around every read, which
    # costs more CPU than the rest of a request. A dead peer is found by TCP keep-alive
    # (about 8 s) and the connect itself is bounded.
    keepalive = {socket.TCP_KEEPIDLE: 5, socket.TCP_KEEPINTVL: 1, socket.TCP_KEEPCNT: 3}
    commands = cast(
        MultiplexedRedis,
        MultiplexedRedis.from_url(
            redis_url,
            max_connections=64,
            socket_timeout=None,
            socket_connect_timeout=5,
            socket_keepalive=True,
            socket_keepalive_options=keepalive,
            health_check_interval=30,
        ),
    )  # redis-py types `from_url` as making its own class
    commands.gather = gather
    return (
        commands,
        # Blocking reads wait up to 5 s at a time: the socket must outwait them.
        redis.Redis.from_url(redis_url, max_connections=1000, socket_timeout=30),
    )


def store_client(redis_url: str, *, cluster: bool = False) -> Any:
    """A sync client of the event store (a cluster by `cluster` or by the URL's scheme), for
    the workers and the tools that read or change stored games."""
    if cluster or _scheme(redis_url) in CLUSTER_SCHEMES:
        return StoreCluster.from_url(node_url(redis_url))
    import redis

    return redis.Redis.from_url(redis_url)


def worker_clients(redis_url: str, *, cluster: bool, queue_url: str | None) -> tuple[Any, Any]:
    """The sync clients of a worker process: the store's and the queue's, one client when
    both are the same plain Redis."""
    import redis

    cluster, queue_url = redis_settings(redis_url, cluster, queue_url)
    check_queue(cluster, queue_url)
    store = store_client(redis_url, cluster=cluster)
    if queue_url is None or queue_url == redis_url:
        return store, store
    return store, redis.Redis.from_url(queue_url)
