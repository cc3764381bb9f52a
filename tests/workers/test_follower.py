"""The followers: each append's notice followed once by one follower and acknowledged only
once its follow-up succeeded; a failed one tried again later, the game's later notices held
back behind it, given up on after too many deliveries; a dead follower's notices taken over;
acknowledged notices trimmed; the games of a batch followed at once, each game's notices in
turn. With a fake follow-up (what a notice calls for is `workers.follow_up`'s business), on
fakeredis and on the real Redis, and each with a follower of one thread and of four."""

from __future__ import annotations

import threading
import uuid
from collections.abc import Iterator
from typing import Any

import fakeredis
import msgspec
import pytest
import redis

from store import tracing
from store.client import EventStore
from store.errors import StoreUnavailable
from store.stored import AppendMeta, OutboxEntry
from tests.server.live import REDIS_URL, delete_prefix
from workers.follower import GROUP, Follower
from workers.game_chains import RedisOutOfReach, out_of_reach

E = b'{"type":"a"}'


@pytest.fixture(params=["fakeredis", pytest.param("redis", marks=pytest.mark.redis)])
def client(request: pytest.FixtureRequest) -> Iterator[Any]:
    if request.param == "fakeredis":
        yield fakeredis.FakeRedis()
        return
    real = redis.Redis.from_url(REDIS_URL)
    yield real
    real.close()


@pytest.fixture(params=[1, 4], ids=["one thread", "four threads"])
def threads(request: pytest.FixtureRequest) -> int:
    """How many games a follower of the test follows at once."""
    return int(request.param)


@pytest.fixture
def prefix(client: Any) -> Iterator[str]:
    name = f"test-follow-{uuid.uuid4().hex[:8]}"
    yield name
    if isinstance(client, redis.Redis) and not isinstance(client, fakeredis.FakeRedis):
        delete_prefix(name)


class Followed:
    """A fake follow-up: what it was given (with the request id it ran under), failing for
    the games in `failing`; safe to call from several threads."""

    def __init__(self) -> None:
        self.seen: list[tuple[OutboxEntry, str]] = []
        self.failing: set[str] = set()
        self.lock = threading.Lock()

    def __call__(self, notice: OutboxEntry) -> str:
        with self.lock:
            self.seen.append((notice, tracing.current.get()))
        if notice.game_id in self.failing:
            raise ConnectionError("the store went away")
        return "done"

    def versions(self, game_id: str) -> list[int]:
        return [n.last_version for n, _r in self.seen if n.game_id == game_id]


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _follower(
    client: Any, prefix: str, threads: int, consumer: str, follow: Any, **options: Any
) -> Follower:
    store = EventStore(client, prefix=prefix, shards=4)
    follower = Follower(client, store.keys, follow, consumer=consumer, threads=threads, **options)
    follower.ensure_groups()
    return follower


def _meta(request_id: str) -> bytes:
    return msgspec.json.encode(AppendMeta("commands", "p1", "2026-12-05T00:00:00Z",
                                          seat=0, request_id=request_id))  # fmt: skip


def _appends(client: Any, prefix: str, games: int) -> None:
    """Two appends to each of `games` games, each with its own request id."""
    store = EventStore(client, prefix=prefix, shards=4)
    for n in range(games):
        store.append(f"g{n}", 0, [E, E], "c1", metadata=_meta(f"req-{n}-1"))
        store.append(f"g{n}", 2, [E], "c2", metadata=_meta(f"req-{n}-2"))


def test_every_notice_is_followed_once_in_order_under_its_request_id_and_acknowledged(
    client: Any, prefix: str, threads: int
) -> None:
    _appends(client, prefix, 5)
    followed = Followed()
    first = _follower(client, prefix, threads, "one", followed)
    second = _follower(client, prefix, threads, "two", followed)
    assert first.step() + second.step() == 10, "each notice once, to one of the followers"
    assert sorted((n.game_id, n.last_version) for n, _r in followed.seen) == sorted(
        (f"g{n}", v) for n in range(5) for v in (2, 3)
    )
    assert all(followed.versions(f"g{n}") == [2, 3] for n in range(5)), "in order per game"
    notice, request_id = next((n, r) for n, r in followed.seen if n.game_id == "g3" and
                              n.last_version == 2)  # fmt: skip
    assert (notice.first_version, notice.last_version) == (1, 2), "the versions it added"
    assert notice.meta is not None and notice.meta.player == "p1", "its metadata, carried"
    assert request_id == "req-3-1", "run under the request id of its append"
    assert tracing.current.get() == "", "and no id left bound after it"
    assert first.health().pending == 0, "all acknowledged"


def test_a_failed_follow_up_stays_pending_holds_its_games_later_notices_and_runs_again(
    client: Any, prefix: str, threads: int
) -> None:
    """The store is out of reach for one game's follow-up: the other games go on; its two
    notices stay pending (the second held back behind the first, never run before it) and
    are followed, in order, once their time comes and the follow-up succeeds."""
    _appends(client, prefix, 3)
    followed, clock = Followed(), Clock()
    followed.failing.add("g1")
    follower = _follower(client, prefix, threads, "one", followed, clock=clock)
    follower.step()
    assert followed.versions("g1") == [2], "the second is not run after the first failed"
    assert followed.versions("g0") == followed.versions("g2") == [2, 3], "the others go on"
    assert follower.health().pending == 2, "both notices of g1 pending, unacknowledged"
    follower.step()
    assert followed.versions("g1") == [2], "not again before its time"
    clock.now += 1.0
    follower.step()
    assert followed.versions("g1") == [2, 2], "tried again after 1 s; the second held again"
    followed.failing.clear()
    clock.now += 2.0
    follower.step()
    assert followed.versions("g1") == [2, 2, 2, 3], "then both, in their order"
    assert follower.health().pending == 0 and follower.health().dead == 0


def test_a_games_notice_read_while_an_earlier_one_waits_is_held_back_whatever_comes_first(
    client: Any, prefix: str, threads: int
) -> None:
    """A game's failed notice waits to be tried again; a later read brings another game's
    notice first, then that game's next one (one feed): the next one is held back, never
    followed before the one it comes after, whatever the other games of the batch are."""
    store = EventStore(client, prefix=prefix, shards=1)
    followed, clock = Followed(), Clock()
    follower = Follower(client, store.keys, followed, consumer="one", threads=threads,
                        clock=clock)  # fmt: skip
    follower.ensure_groups()
    try:
        store.append("g1", 0, [E], "c1", metadata=_meta("g1-1"))
        followed.failing.add("g1")
        follower.step()
        followed.failing.clear()
        store.append("g0", 0, [E], "c1", metadata=_meta("g0-1"))
        store.append("g1", 1, [E], "c2", metadata=_meta("g1-2"))
        follower.step()  # its first is not due again yet
        assert followed.versions("g0") == [1], "the other game goes on"
        assert followed.versions("g1") == [1], "the second not before the first"
        clock.now += 1.0
        follower.step()
        assert followed.versions("g1") == [1, 1, 2], "then both, in their order"
        assert follower.health().pending == 0
    finally:
        follower.close()


class Outage:
    """A fake follow-up that finds Redis out of reach (as the store says it: its error
    translated, redis-py's as the cause) for the next `left` notices it is given."""

    def __init__(self, left: int) -> None:
        self.left = left
        self.followed = Followed()
        self.lock = threading.Lock()

    def __call__(self, notice: OutboxEntry) -> str:
        with self.lock:
            away, self.left = self.left > 0, max(self.left - 1, 0)
        if away:
            try:
                raise redis.exceptions.ConnectionError("Connection refused")
            except redis.exceptions.ConnectionError as error:
                raise StoreUnavailable("ConnectionError: Connection refused") from error
        return self.followed(notice)


def test_a_follow_up_that_finds_redis_away_runs_again_the_moment_it_answers_uncounted(
    client: Any, prefix: str, threads: int
) -> None:
    """Redis out of reach is not the notice's failure: the batch stops there, no other
    notice is started against a dead Redis, and the kept ones run again at once (not after the
    1, 2, 5 s of a failed follow-up), in their order, without counting towards the dead
    letters."""
    _appends(client, prefix, 3)
    outage, clock = Outage(left=1), Clock()
    follower = _follower(client, prefix, threads, "one", outage, clock=clock, max_deliveries=2)
    with pytest.raises(RedisOutOfReach):
        follower.step()
    if threads == 1:
        assert outage.followed.seen == [], "nothing tried after the first found Redis away"
    # on several threads, the other games' notices already under way were followed
    assert follower.health().pending == 6 - len(outage.followed.seen), "those acknowledged"
    follower.step()  # Redis answers again: no time has passed
    assert all(outage.followed.versions(f"g{n}") == [2, 3] for n in range(3)), (
        "all, in order, each once"
    )
    assert follower.health().pending == 0 and follower.health().dead == 0
    assert out_of_reach(StoreUnavailable("x")) is False, "an error of Redis's answer is not"


def test_a_notice_whose_follow_up_keeps_failing_goes_to_the_dead_letters(
    client: Any, prefix: str, threads: int
) -> None:
    store = EventStore(client, prefix=prefix, shards=4)
    store.append("gx", 0, [E], "c1", metadata=_meta("req-x"))
    followed, clock = Followed(), Clock()
    followed.failing.add("gx")
    follower = _follower(client, prefix, threads, "one", followed, clock=clock, max_deliveries=3)
    for _ in range(6):
        follower.step()
        clock.now += 60
    assert len(followed.seen) == 3, "delivered 3 times, then given up"
    assert follower.health().dead == 1 and follower.health().pending == 0
    dead = client.xrange(follower.dead_letters)
    assert dead[0][1][b"g"] == b"gx" and b"from" in dead[0][1], "kept with the id it had"


def test_the_notices_of_a_dead_follower_are_taken_over_and_too_many_deliveries_give_up(
    client: Any, prefix: str, threads: int
) -> None:
    _appends(client, prefix, 3)
    dead = _follower(client, prefix, threads, "dead", Followed())
    reply = client.xreadgroup(GROUP, "dead", dict.fromkeys(dead.feeds, ">"), count=100)
    assert sum(len(entries) for _, entries in reply) == 6  # read, then the process died
    assert dead.health().pending == 6
    followed = Followed()
    alive = _follower(client, prefix, threads, "alive", followed, claim_idle_ms=0)
    assert alive.reclaim() == 6
    assert len(followed.seen) == 6
    assert alive.health() == alive.health().__class__(pending=0, dead=0)
    # A notice whose followers keep dying: delivered again and again, then given up on.
    stuck = _follower(
        client, prefix, threads, "stuck", Followed(), claim_idle_ms=0, max_deliveries=2
    )
    client.xadd(stuck.feeds[0], {b"g": b"gx", b"c": b"1 1 00 n d"})
    client.xreadgroup(GROUP, "stuck", {stuck.feeds[0]: ">"}, count=100)
    for _ in range(2):  # two more followers took it and died
        client.xautoclaim(stuck.feeds[0], GROUP, "another", 0, "0-0", count=100)
    assert stuck.reclaim() == 0
    assert stuck.health().dead == 1 and stuck.health().pending == 0


def test_a_notice_written_before_notices_carried_metadata_is_followed_all_the_same(
    client: Any, prefix: str, threads: int
) -> None:
    """A deployment's feeds may hold notices of before: `g` and `c` only."""
    followed = Followed()
    follower = _follower(client, prefix, threads, "one", followed)
    client.xadd(follower.feeds[1], {b"g": b"gold", b"c": b"4 6 nonce digest"})
    assert follower.step() == 1
    notice, request_id = followed.seen[0]
    assert (notice.game_id, notice.first_version, notice.last_version) == ("gold", 4, 6)
    assert notice.meta is None and request_id == ""


def test_acknowledged_notices_are_trimmed_and_the_event_streams_never(
    client: Any, prefix: str, threads: int
) -> None:
    _appends(client, prefix, 6)
    follower = _follower(client, prefix, threads, "one", Followed())
    follower.step()
    follower.trim()
    left = sum(int(client.xlen(feed)) for feed in follower.feeds)
    assert left <= len(follower.feeds), "at most the last acknowledged notice of each feed"
    store = EventStore(client, prefix=prefix, shards=4)
    assert all(store.head(f"g{n}").version == 3 for n in range(6))


def test_notices_whose_ids_sort_otherwise_as_text_are_given_up_all_the_same(
    client: Any, prefix: str, threads: int
) -> None:
    """Stream ids compare as numbers: `1-10` comes after `1-9`, though not as text."""
    followed = Followed()
    stuck = _follower(client, prefix, threads, "stuck", followed, claim_idle_ms=0, max_deliveries=1)
    for sequence in (9, 10):
        client.xadd(stuck.feeds[0], {b"g": b"gx", b"c": b"1 1 00 n d"}, id=f"1-{sequence}")
    client.xreadgroup(GROUP, "dead", {stuck.feeds[0]: ">"}, count=100)
    client.xautoclaim(stuck.feeds[0], GROUP, "another", 0, "0-0", count=100)
    assert stuck.reclaim() == 0 and followed.seen == []
    assert stuck.health().dead == 2 and stuck.health().pending == 0


class AtOnce:
    """A fake follow-up that proves games are followed at the same time: the first notice of
    each of `games` games waits until all of them are being followed (a barrier, which a
    follower of one thread would break after its timeout); and that a game's notices never
    overlap (each notes the games being followed while it runs)."""

    def __init__(self, games: int) -> None:
        self.barrier = threading.Barrier(games, timeout=10)
        self.followed = Followed()
        self.running: set[str] = set()
        self.overlapped: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, notice: OutboxEntry) -> str:
        with self.lock:
            if notice.game_id in self.running:
                self.overlapped.append(notice.game_id)
            self.running.add(notice.game_id)
        try:
            if notice.last_version == 2:
                self.barrier.wait()
            return self.followed(notice)
        finally:
            with self.lock:
                self.running.discard(notice.game_id)


def test_the_games_of_a_batch_are_followed_at_once_and_each_games_notices_in_turn(
    client: Any, prefix: str
) -> None:
    """A follow-up mostly waits on Redis and on receivers: a follower's threads follow
    several games together, so that a notice waits for the slowest game of its batch, not for
    every notice before it; a game's own notices still run one after the other, in order."""
    store = EventStore(client, prefix=prefix, shards=1)  # one feed: one batch of them all
    for n in range(4):
        store.append(f"g{n}", 0, [E, E], "c1", metadata=_meta(f"req-{n}-1"))
    for n in range(4):
        for version in range(2, 6):
            store.append(f"g{n}", version, [E], f"c{version}", metadata=_meta(f"r{n}-{version}"))
    at_once = AtOnce(games=4)
    follower = Follower(client, store.keys, at_once, consumer="one", count=100, threads=4)
    follower.ensure_groups()
    try:
        assert follower.step() == 20, "the whole batch in one step"
    finally:
        follower.close()
    assert not at_once.barrier.broken, "the four games were followed at the same time"
    assert all(at_once.followed.versions(f"g{n}") == [2, 3, 4, 5, 6] for n in range(4)), (
        "each game's notices in their order"
    )
    assert at_once.overlapped == [], "never two notices of one game at once"
    assert follower.health().pending == 0, "all acknowledged"
