"""The server's Redis client, `store.multiplexed.MultiplexedRedis`: every command of a process
on one connection, answered as redis-py answers it, on a real Redis.

What a player would feel if it were wrong: one request given another's reply (a board of
another game, a refusal meant for someone else), a server that stays broken after Redis
restarts, a live stream that holds up every command. So: replies equal redis-py's, in any
interleaving of concurrent callers (Hypothesis), errors stay with their command, a cancelled
caller shifts nothing, a lost connection fails only what was in flight and the next command
connects again, blocking reads and pipelines keep redis-py's own connections, and the URL's
password and database are honoured.
"""

from __future__ import annotations

import asyncio
import uuid
from pathlib import Path
from typing import Any

import pytest
import redis
import redis.asyncio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from store.multiplexed import MultiplexedRedis
from tests.store.conftest import run_async
from tests.store.servers import RedisServer

pytestmark = pytest.mark.redis

BUSY = "local t = redis.call('TIME')[1] + 2 while tonumber(redis.call('TIME')[1]) < t do end"
"""A script that keeps Redis busy for about two seconds: a command in flight."""


def _key() -> str:
    return f"test-mux-{uuid.uuid4().hex[:12]}"


async def _both(url: str, calls: list[tuple[str, tuple[Any, ...]]]) -> tuple[list[Any], list[Any]]:
    """The replies of redis-py's own client and of the multiplexed one to the same calls, on
    keys of their own."""
    answers: list[list[Any]] = []
    for kind in (redis.asyncio.Redis, MultiplexedRedis):
        client = kind.from_url(url)
        key = _key()
        try:
            replies = []
            for method, args in calls:
                try:
                    replies.append(await getattr(client, method)(key, *args))
                except redis.exceptions.ResponseError as error:
                    replies.append(type(error))
            answers.append(replies)
        finally:
            await client.delete(key)
            await client.aclose()
    return answers[0], answers[1]


@pytest.mark.parametrize(
    "calls",
    [
        [("hset", ("a", "1")), ("hset", ("b", b"\x00\xff")), ("hgetall", ()), ("hget", ("a",)),
         ("hexists", ("c",)), ("hlen", ()), ("hkeys", ()), ("hdel", ("a",))],
        [("xadd", ({"d": b"e1"}, "1-1")), ("xadd", ({"d": b"e2"}, "2-1")), ("xrange", ()),
         ("xrange", ("2-1", "+")), ("xlen", ()), ("xrevrange", ("+", "-", 1))],
        [("set", ("v",)), ("get", ()), ("exists", ()), ("expire", (60,)), ("ttl", ()),
         ("getdel", ()), ("get", ()), ("incr", ()), ("incrby", (5,)), ("hgetall", ())],
        [("zadd", ({"a": 1.5, "b": 2},)), ("zrange", (0, -1)), ("zscore", ("a",)),
         ("zrangebyscore", ("-inf", "+inf")), ("zcard", ()), ("zrem", ("a",))],
        [("set", ("x",)), ("hget", ("f",)), ("lpush", ("x",))],  # wrong types: errors
    ],
    ids=["hash", "stream", "strings", "sorted-set", "errors"],
)  # fmt: skip
def test_every_reply_is_the_one_redis_pys_own_client_gives(
    redis_url: str, calls: list[tuple[str, tuple[Any, ...]]]
) -> None:
    plain, multiplexed = run_async(_both(redis_url, calls))
    assert multiplexed == plain


def test_scripts_run_by_sha_and_an_unknown_one_is_refused_as_redis_py_refuses_it(
    redis_url: str,
) -> None:
    async def scenario() -> None:
        client = MultiplexedRedis.from_url(redis_url)
        try:
            sha = await client.script_load("return {KEYS[1], ARGV[1], 7}")
            assert await client.evalsha(sha, 1, "k", b"\x01v") == [b"k", b"\x01v", 7]
            with pytest.raises(redis.exceptions.NoScriptError):
                await client.evalsha("0" * 40, 0)
            assert await client.ping()  # the connection goes on
        finally:
            await client.aclose()

    run_async(scenario())


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    plans=st.lists(
        st.lists(st.sampled_from(["incr", "get", "set", "hincr", "bad"]), min_size=1, max_size=12),
        min_size=1,
        max_size=12,
    )
)
def test_concurrent_callers_each_get_their_own_replies_in_any_interleaving(
    redis_url: str, plans: list[list[str]]
) -> None:
    """Each task works on keys of its own, so the replies it must get are known whatever the
    other tasks do meanwhile; the tasks' commands go out together on the one connection."""

    async def task(client: Any, plan: list[str]) -> None:
        key, counter, field = _key(), 0, 0
        try:
            for step in plan:
                if step == "incr":
                    counter += 1
                    assert await client.incr(key) == counter
                elif step == "get":
                    got = await client.get(key)
                    assert got == (str(counter).encode() if counter else None)
                elif step == "set":
                    counter = 100 + counter
                    assert await client.set(key, counter) is True
                elif step == "hincr":
                    field += 2
                    assert await client.hincrby(f"{key}:h", "f", 2) == field
                else:  # an error reply (a hash is no list), meant for this task alone
                    await client.hset(f"{key}:h", "g", 1)
                    with pytest.raises(redis.exceptions.ResponseError, match="WRONGTYPE"):
                        await client.lpush(f"{key}:h", 1)
                await asyncio.sleep(0)
        finally:
            await client.delete(key, f"{key}:h")

    async def scenario() -> None:
        client = MultiplexedRedis.from_url(redis_url)
        try:
            await asyncio.gather(*(task(client, plan) for plan in plans))
        finally:
            await client.aclose()

    run_async(scenario())


def test_a_caller_that_gives_up_waiting_shifts_no_reply_onto_the_others(redis_url: str) -> None:
    async def scenario() -> None:
        client = MultiplexedRedis.from_url(redis_url)
        key = _key()
        try:
            await client.set(key, "mine")
            given_up = asyncio.ensure_future(client.incr(f"{key}:n"))
            await asyncio.sleep(0)  # sent, its reply not yet read
            given_up.cancel()
            assert await client.get(key) == b"mine"
            assert await client.get(f"{key}:n") == b"1"  # it ran; only its caller left
        finally:
            await client.delete(key, f"{key}:n")
            await client.aclose()

    run_async(scenario())


def test_a_blocking_read_keeps_its_own_connection_and_holds_up_nothing(redis_url: str) -> None:
    async def scenario() -> None:
        client: Any = MultiplexedRedis.from_url(redis_url)
        stream = _key()
        try:
            reading = asyncio.ensure_future(client.xread({stream: "$"}, block=3000))
            await asyncio.sleep(0.05)
            began = asyncio.get_running_loop().time()
            assert await client.set(f"{stream}:x", 1)
            assert asyncio.get_running_loop().time() - began < 1.0
            await client.xadd(stream, {"d": "e"})
            read = await reading
            assert read[0][1][0][1] == {b"d": b"e"}
            async with client.pipeline(transaction=True) as pipe:  # redis-py's own, pooled
                replies = await pipe.incr(f"{stream}:n").incr(f"{stream}:n").execute()
            assert replies == [1, 2]
        finally:
            await client.delete(stream, f"{stream}:x", f"{stream}:n")
            await client.aclose()

    run_async(scenario())


def test_a_redis_that_dies_fails_what_was_in_flight_and_the_next_command_connects_again(
    tmp_path: Path,
) -> None:
    server = RedisServer(tmp_path)
    server.start()

    async def scenario() -> None:
        client = MultiplexedRedis.from_url(f"redis://127.0.0.1:{server.port}/0")
        try:
            assert await client.set("k", "before") is True
            waiting = asyncio.ensure_future(client.eval(BUSY, 0))
            await asyncio.sleep(0.2)
            server.kill()
            with pytest.raises(redis.exceptions.ConnectionError):
                await waiting
            with pytest.raises(redis.exceptions.ConnectionError):
                await client.get("k")  # nobody there
            server.start()
            assert await client.set("k", "after") is True  # a new connection
            assert await client.get("k") == b"after"
        finally:
            await client.aclose()

    try:
        run_async(scenario())
    finally:
        server.stop()


def test_the_urls_password_and_database_are_used_and_a_wrong_password_is_refused(
    tmp_path: Path,
) -> None:
    server = RedisServer(tmp_path, "--requirepass", "s3cret")
    server.start()

    async def scenario() -> None:
        right = MultiplexedRedis.from_url(f"redis://:s3cret@127.0.0.1:{server.port}/3")
        wrong = MultiplexedRedis.from_url(f"redis://:nope@127.0.0.1:{server.port}/0")
        try:
            assert await right.set("in-three", 1) is True
            with pytest.raises(redis.exceptions.AuthenticationError):
                await wrong.get("in-three")
        finally:
            await right.aclose()
            await wrong.aclose()
        plain = redis.Redis(port=server.port, password="s3cret", db=3)
        try:
            assert plain.get("in-three") == b"1"
        finally:
            plain.close()

    try:
        run_async(scenario())
    finally:
        server.stop()


@pytest.mark.parametrize(("gather", "reads"), [(0.2, 1), (0.0, 5)])
def test_with_a_gather_window_the_commands_of_requests_made_within_it_reach_redis_in_one_read(
    tmp_path: Path, gather: float, reads: int
) -> None:
    """Five requests a few milliseconds apart, each with a command: held for the window they
    reach Redis together (one read of its, one turn of its loop), each answered its own; sent
    at the end of each loop turn, they come one by one."""
    server = RedisServer(tmp_path)
    server.start()
    watcher = redis.Redis(port=server.port)

    def reads_so_far() -> int:
        return int(watcher.info("stats")["total_reads_processed"])

    async def scenario() -> None:
        client: Any = MultiplexedRedis.from_url(f"redis://127.0.0.1:{server.port}/0")
        client.gather = gather
        try:
            await client.ping()  # connected
            before = reads_so_far()

            async def request(number: int) -> Any:
                await asyncio.sleep(number * 0.01)
                return await client.incrby(f"counter-{number}", number + 1)

            assert await asyncio.gather(*(request(n) for n in range(5))) == [1, 2, 3, 4, 5]
            assert reads_so_far() - before == reads + 1  # and the watcher's own INFO
        finally:
            await client.aclose()

    try:
        run_async(scenario())
    finally:
        watcher.close()
        server.stop()
