"""Each player's inbox, the projection the workers keep after every append: `/api/me/games`
reads it in one round trip however many games the player has, and `patrician
rebuild-projections` makes it again from the event streams, equal to the live one."""

from __future__ import annotations

import os
import random
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import redis

from tests.server.client import Api, Player
from tests.server.live import LiveServer, _patrician
from tests.store.servers import RedisServer

pytestmark = pytest.mark.redis

PREFIX = "inbox"


class Table:
    """`patrician serve` and one `patrician worker` on a Redis server of the test's own (so
    that its command counts are this test's alone)."""

    def __init__(self, tmp_path: Path) -> None:
        self.redis = RedisServer(tmp_path)
        self.url = f"redis://127.0.0.1:{self.redis.port}/0"
        self.server = LiveServer(PREFIX, tmp_path, redis_url=self.url)
        self.client = redis.Redis(port=self.redis.port)
        self.worker: subprocess.Popen[bytes] | None = None
        self.tmp_path = tmp_path

    def start(self) -> None:
        self.redis.start()
        self.server.start()
        env = {**os.environ, "PATRICIAN_PREFIX": PREFIX}
        with (self.tmp_path / "worker.log").open("wb") as out:
            command = [*_patrician(), "worker", "--redis-url", self.url]
            self.worker = subprocess.Popen(command, env=env, stdout=out, stderr=out)

    def stop_worker(self) -> None:
        if self.worker is not None:
            self.worker.terminate()
            self.worker.wait(timeout=20)
            self.worker = None

    def stop(self) -> None:
        self.stop_worker()
        self.server.stop()
        self.redis.stop()

    def inboxes(self) -> dict[bytes, dict[bytes, bytes]]:
        found: dict[bytes, dict[bytes, bytes]] = {}
        for key in self.client.scan_iter(f"{PREFIX}:inbox:*"):
            found[key] = self.client.hgetall(key)  # type: ignore[assignment]
        return found

    def commands(self) -> int:
        return sum(int(stat["calls"]) for stat in self.client.info("commandstats").values())


def _settled(table: Table, api: Api, players: list[Player], games: list[str]) -> None:
    """Wait until the inbox of each of `players` (all at every game) shows every game at its
    head version."""
    heads = {game_id: api.board(game_id)["version"] for game_id in games}
    deadline = time.monotonic() + 30
    while True:
        kept = {
            (key.decode().rsplit(":", 1)[1], game.decode()): int(value.split(b" ", 1)[0])
            for key, entries in table.inboxes().items()
            for game, value in entries.items()
        }
        if all(kept.get((p.player_id, g)) == v for g, v in heads.items() for p in players):
            return
        assert time.monotonic() < deadline, (kept, heads)
        time.sleep(0.1)


def _play(api: Api, game_id: str, players: list[Player], moves: int, rng: random.Random) -> None:
    for _ in range(moves):
        board = api.board(game_id, players[0])
        if board["phase"] != "playing":
            return
        seat = board["pending"]["seat"]
        for player in players:
            mine = api.board(game_id, player)
            if mine["viewer"] == seat:
                api.ok(
                    api.send(game_id, player, mine["version"], [rng.choice(mine["legal_commands"])])
                )
                break


def test_the_rebuilt_inboxes_equal_the_ones_the_workers_kept(table: Any) -> None:
    running, api = table
    rng = random.Random(5)
    ada, bea, cy = (api.create_player(name) for name in ("Ada", "Bea", "Cy"))
    games = []
    for seats, joiners, moves in ((2, [bea], 12), (3, [bea, cy], 7), (3, [bea], 0)):
        created = api.create_game(ada, seats)
        for player in joiners:
            api.join(player, created["game_id"], created["invite_code"])
        _play(api, created["game_id"], [ada, *joiners], moves, rng)
        games.append(created["game_id"])
    _settled(running, api, [ada, bea], games)
    live = running.inboxes()
    assert len(live) == 3 and len(live[f"{PREFIX}:inbox:{ada.player_id}".encode()]) == 3
    running.client.delete(f"{PREFIX}:inbox:{bea.player_id}")  # lost, say
    running.client.hset(f"{PREFIX}:inbox:{cy.player_id}", "no-such-game", b"1 {}")
    env = {**os.environ, "PATRICIAN_PREFIX": PREFIX}
    done = subprocess.run(
        [*_patrician(), "rebuild-projections", "--redis-url", running.url],
        env=env, capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    assert "3 players from 3 games" in done.stdout
    assert running.inboxes() == live


def test_a_players_games_are_read_in_one_round_trip_however_many_they_are(table: Any) -> None:
    running, api = table
    few, many = api.create_player("Few"), api.create_player("Many")
    games = [api.create_game(few, 2)["game_id"]]
    games += [api.create_game(many, 2)["game_id"] for _ in range(100)]
    _settled(running, api, [many], games[1:])
    _settled(running, api, [few], games[:1])
    # The worker's own rounds (its heartbeat, its queue, the outbox) would count too.
    running.stop_worker()
    counts = {}
    for player, expected in ((few, 1), (many, 100)):
        tries = []
        for _ in range(3):  # the fewest of three: a count is only ever inflated by others
            before = running.commands()
            listed = api.ok(api.request("GET", "/api/me/games", player=player))
            tries.append(running.commands() - before - 1)  # the INFO itself
            assert len(listed) == expected
        counts[player.name] = min(tries)
    assert counts["Many"] == counts["Few"], counts
    assert counts["Many"] <= 4, counts  # the token, the player, their list, their inbox


def test_the_workers_take_off_the_lobby_a_listing_whose_creation_never_landed() -> None:
    """A GET writes nothing; one of the workers repairs the lobby about once a minute (the
    embedded ones here, the first time at once)."""
    from litestar.testing import TestClient

    from server.config.settings import Settings
    from tests.server.live import build_app
    from workers.context import current

    with TestClient(build_app(Settings()), timeout=30) as client:
        api = Api(client)
        waiting = api.create_game(api.create_player("Ada"), 2)["game_id"]
        context = current()
        lobby = context.accounts.lobby()
        context.store.client.delete(f"{context.accounts.prefix}:repaired:lobby")
        context.store.client.zadd(lobby, {"g-never-landed": time.time() - 3600})
        deadline = time.monotonic() + 10
        while context.store.client.zscore(lobby, "g-never-landed") is not None:
            assert time.monotonic() < deadline, "the lobby was not repaired"
            time.sleep(0.05)
        assert [g["game_id"] for g in api.ok(api.request("GET", "/api/lobby"))] == [waiting]
