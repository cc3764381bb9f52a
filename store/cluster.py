"""The event store on a Redis Cluster: redis-py's cluster clients as the store needs them, and
whether a client is one, for the few reads that must differ there.

On a cluster a command's keys must lie in one slot: a script's keys, an MGET, an XREADGROUP
over several feeds. Every key of one game shares its shard's hash tag (`store.keys`), and the
timers share one of their own (`store.timers`), so nearly every operation is the same on both.
What is left reads keys of several slots at once, and does so one slot at a time on a cluster
only, so that a single Redis keeps its one round trip: the vacations of a game's players
(`store.vacations`) and the followers' read of the outbox feeds (`workers.follower`).

redis-py also refuses EVALSHA and SCRIPT LOAD in a cluster's pipelines, and the store
pipelines its scripts (`EventStore.gather`, the batches of concurrent requests of a pipelined
`AsyncEventStore`). So on a cluster the store's scripts are sent whole (EVAL), by
`StoreCluster` and `AsyncStoreCluster`, pipelined or not: a script is then never unknown to a
node either (NOSCRIPT after a restart or a failover), so it never needs loading, which would
have to reach every master. Redis keeps a script compiled by its SHA1; what it costs is its
bytes with each call, sent without its comment lines (append.lua: about 2 KB).
"""

from __future__ import annotations

from functools import partial
from typing import Any, get_args

from redis.asyncio.cluster import RedisCluster as AsyncRedisCluster
from redis.cluster import RedisCluster

from store.scripts import ScriptName, sha, source


def on_cluster(client: Any) -> bool:
    """Whether `client` is redis-py's cluster client (sync or asyncio)."""
    return isinstance(client, RedisCluster | AsyncRedisCluster)


def _sent(script: str) -> bytes:
    """A script as sent: without its comment lines (unless a long bracket could hold one)."""
    if "[[" in script:
        return script.encode()
    lines = (line for line in script.splitlines() if line.strip())
    return "\n".join(line for line in lines if not line.lstrip().startswith("--")).encode()


_BODIES = {sha(name): _sent(source(name)) for name in get_args(ScriptName)}
"""The store's scripts by their SHA1, as sent."""


def _whole_script(client: Any, digest: str, numkeys: int, *keys_and_args: Any) -> Any:
    """EVALSHA of one of the store's scripts, sent as EVAL with its body (any other SHA1 as
    it is)."""
    body = _BODIES.get(digest)
    if body is None:
        return client.execute_command("EVALSHA", digest, numkeys, *keys_and_args)
    return client.execute_command("EVAL", body, numkeys, *keys_and_args)


class StoreCluster(RedisCluster):
    """redis-py's cluster client, the store's scripts sent whole."""

    def evalsha(self, sha: str, numkeys: int, *keys_and_args: Any) -> Any:
        return _whole_script(self, sha, numkeys, *keys_and_args)

    def pipeline(self, transaction: Any = None, shard_hint: Any = None) -> Any:
        pipeline = super().pipeline(transaction, shard_hint)  # type: ignore[no-untyped-call]
        # On this pipeline only: redis-py sets its refusal on the class.
        setattr(pipeline, "evalsha", partial(_whole_script, pipeline))  # noqa: B010
        return pipeline


class AsyncStoreCluster(AsyncRedisCluster):
    """The asyncio twin of `StoreCluster`."""

    def evalsha(self, sha: str, numkeys: int, *keys_and_args: Any) -> Any:
        return _whole_script(self, sha, numkeys, *keys_and_args)

    def pipeline(self, transaction: Any = None, shard_hint: Any = None) -> Any:
        pipeline = super().pipeline(transaction, shard_hint)
        setattr(pipeline, "evalsha", partial(_whole_script, pipeline))  # noqa: B010
        return pipeline
