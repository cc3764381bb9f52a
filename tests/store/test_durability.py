"""Durability: a private redis-server with AOF and `appendfsync always` is killed with
SIGKILL in the middle of a stream of appends, 20 times, and restarted. Every acknowledged
append must be there after each restart, the chain must verify, and writes must resume
within 5 s. The writer retries an append whose outcome it did not learn with the same command
id, so an append that landed just before the kill is acknowledged by `DuplicateCommand`."""

from __future__ import annotations

import random
import threading
import time
from pathlib import Path

import pytest
import redis
from redis.backoff import NoBackoff
from redis.retry import Retry

from store.chain import verify
from store.client import EventStore
from store.errors import DuplicateCommand, StoreUnavailable
from tests.store.servers import REDIS_SERVER, RedisServer

KILLS = 20
GAMES = ("g1", "g2", "g3")


class Writer(threading.Thread):
    """Appends to the games in turn until stopped, remembering what was acknowledged."""

    def __init__(self, port: int) -> None:
        super().__init__(daemon=True)
        self.client = redis.Redis(port=port, socket_timeout=1, retry=Retry(NoBackoff(), 0))
        self.store = EventStore(self.client, prefix="durable")
        self.acknowledged: dict[str, list[bytes]] = {game: [] for game in GAMES}
        self.acks = 0
        self.stopping = threading.Event()
        self.lock = threading.Lock()

    def run(self) -> None:
        turn = 0
        while not self.stopping.is_set():
            game = GAMES[turn % len(GAMES)]
            turn += 1
            with self.lock:
                version = len(self.acknowledged[game])
            data = b'{"game":"%s","n":%d}' % (game.encode(), version + 1)
            while not self.stopping.is_set():  # until this append's fate is known
                try:
                    self.store.append(game, version, [data], f"{game}-{version + 1}")
                except DuplicateCommand:
                    pass  # it landed before the kill; its reply was lost
                except StoreUnavailable:
                    time.sleep(0.01)
                    continue
                with self.lock:
                    self.acknowledged[game].append(data)
                    self.acks += 1
                break

    def snapshot(self) -> dict[str, list[bytes]]:
        with self.lock:
            return {game: list(datas) for game, datas in self.acknowledged.items()}


@pytest.mark.slow
@pytest.mark.timeout(300)
def test_every_acknowledged_append_survives_twenty_kills(tmp_path: Path) -> None:
    assert REDIS_SERVER is not None, "the durability test needs redis-server (.ci/run installs it)"
    server = RedisServer(tmp_path, "--appendonly", "yes", "--appendfsync", "always")
    rng = random.Random(4)
    server.start()
    writer = Writer(server.port)
    writer.start()
    checker = redis.Redis(port=server.port, socket_timeout=5)
    try:
        for _ in range(KILLS):
            time.sleep(rng.uniform(0.05, 0.25))  # the writer is mid-flight
            before = writer.acks
            assert before > 0
            acknowledged = writer.snapshot()
            server.kill()
            restarted = time.monotonic()
            server.start(wait=False)
            server.wait_ready(timeout=5)
            store = EventStore(checker, prefix="durable")
            for game, datas in acknowledged.items():
                events = store.read(game)
                assert [e.data for e in events[: len(datas)]] == datas
                verify(events)
            while writer.acks <= before + 3:  # writes resume
                assert time.monotonic() - restarted < 5, "writes did not resume within 5 s"
                time.sleep(0.005)
        writer.stopping.set()
        writer.join(timeout=10)
        acknowledged = writer.snapshot()
        server.kill()
        server.start()
        store = EventStore(checker, prefix="durable")
        for game, datas in acknowledged.items():
            events = store.read(game)
            assert [e.data for e in events[: len(datas)]] == datas
            assert len(events) <= len(datas) + 1  # at most the one append left in flight
            verify(events)
    finally:
        writer.stopping.set()
        writer.join(timeout=10)
        writer.client.close()
        checker.close()
        server.stop()
    assert writer.acks > KILLS * 3
